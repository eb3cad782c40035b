//! `sortBy` and `sortOrder` (RFC 7644 §3.4.2.3): ascending unless asked,
//! strings ignoring case unless the attribute is caseExact, a multi-valued
//! attribute by its primary value (else its first), and resources without
//! a value after the others when ascending.

use std::cmp::Ordering;

use serde_json::Value;

use crate::datetime::{self, Instant};
use crate::error::{ScimError, excerpt};
use crate::limits::MAX_PARAMETER_BYTES;
use crate::schema::{AttrType, Attribute, Found, Resolution, ResourceType, Schema, resolve_path};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sort {
    extension: Option<&'static Schema>,
    attr: &'static Attribute,
    sub: Option<&'static Attribute>,
    pub descending: bool,
}

/// `name.familyName descending`.
impl std::fmt::Display for Sort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(extension) = self.extension {
            write!(f, "{}:", extension.id)?;
        }
        f.write_str(self.attr.name)?;
        if let Some(sub) = self.sub {
            write!(f, ".{}", sub.name)?;
        }
        f.write_str(if self.descending { " descending" } else { " ascending" })
    }
}

#[derive(Debug, PartialEq, PartialOrd)]
enum Key {
    Bool(bool),
    Number(f64),
    Time(Instant),
    Text(String),
}

impl Sort {
    pub fn parse(resource_type: ResourceType, sort_by: &str, sort_order: Option<&str>) -> Result<Sort, ScimError> {
        if sort_by.len() > MAX_PARAMETER_BYTES {
            return Err(ScimError::invalid_value(format!("sortBy: {} bytes, over the limit {MAX_PARAMETER_BYTES}", sort_by.len())));
        }
        let descending = match sort_order {
            None => false,
            Some(order) if order.eq_ignore_ascii_case("ascending") => false,
            Some(order) if order.eq_ignore_ascii_case("descending") => true,
            Some(order) => return Err(ScimError::invalid_value(format!("sortOrder: {} is not ascending or descending", excerpt(order)))),
        };
        let Found { extension, attr, mut sub } =
            match resolve_path(resource_type, sort_by).map_err(|why| ScimError::invalid_value(format!("sortBy: {why}")))? {
                Resolution::Attribute(found) => found,
                Resolution::Extension(_) | Resolution::Unknown => {
                    return Err(ScimError::invalid_value(format!("sortBy: {} is not an attribute lattice keeps", excerpt(sort_by))));
                }
            };
        if sub.is_none() && attr.is_complex() {
            sub = Some(
                attr.value_sub_attribute()
                    .ok_or_else(|| ScimError::invalid_value(format!("sortBy: {} is complex; name a sub-attribute", attr.name)))?,
            );
        }
        Ok(Sort { extension, attr, sub, descending })
    }

    /// Sorts in place, stably: equal keys keep the route's order.
    pub fn sort(&self, resources: &mut [Value]) {
        let mut keyed: Vec<(Option<Key>, Value)> = resources.iter_mut().map(|r| (self.key(r), std::mem::take(r))).collect();
        keyed.sort_by(|(a, _), (b, _)| self.order(a.as_ref(), b.as_ref()));
        for (slot, (_, resource)) in resources.iter_mut().zip(keyed) {
            *slot = resource;
        }
    }

    fn order(&self, a: Option<&Key>, b: Option<&Key>) -> Ordering {
        match (a, b) {
            (None, None) => Ordering::Equal,
            // Unassigned sorts last ascending, so first descending.
            (None, Some(_)) => {
                if self.descending {
                    Ordering::Less
                } else {
                    Ordering::Greater
                }
            }
            (Some(_), None) => {
                if self.descending {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            }
            (Some(a), Some(b)) => {
                let ordering = a.partial_cmp(b).unwrap_or(Ordering::Equal);
                if self.descending { ordering.reverse() } else { ordering }
            }
        }
    }

    fn key(&self, resource: &Value) -> Option<Key> {
        let container = match self.extension {
            Some(extension) => resource.get(extension.id)?,
            None => resource,
        };
        let value = container.get(self.attr.name)?;
        let value = match value {
            Value::Array(items) => items.iter().find(|i| i.get("primary") == Some(&Value::Bool(true))).or(items.first())?,
            other => other,
        };
        let value = match self.sub {
            Some(sub) => value.get(sub.name)?,
            None => value,
        };
        let leaf = self.sub.unwrap_or(self.attr);
        match (leaf.kind, value) {
            (AttrType::Boolean, Value::Bool(b)) => Some(Key::Bool(*b)),
            (AttrType::Integer | AttrType::Decimal, Value::Number(n)) => n.as_f64().map(Key::Number),
            (AttrType::DateTime, Value::String(s)) => datetime::parse(s).map(Key::Time),
            (_, Value::String(s)) if leaf.case_exact => Some(Key::Text(s.clone())),
            (_, Value::String(s)) => Some(Key::Text(s.to_lowercase())),
            _ => None,
        }
    }
}

//! `attributes` and `excludedAttributes` (RFC 7644 §3.9) with the schema's
//! `returned` (RFC 7643 §7): `always` is always there, `never` never,
//! `default` unless excluded, `request` only when asked for.

use serde_json::{Map, Value};

use crate::error::ScimError;
use crate::limits::{MAX_PARAMETER_BYTES, MAX_PROJECTION_PATHS};
use crate::schema::{Attribute, COMMON_ATTRIBUTES, Found, Resolution, ResourceType, Returned, Schema, find_attribute, resolve_path};

/// Which attributes a response carries.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Projection {
    mode: Mode,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
enum Mode {
    #[default]
    Default,
    Include(Vec<Selected>),
    Exclude(Vec<Selected>),
}

/// One path of the list: an attribute, one of its sub-attributes, or a
/// whole extension (`attr` is `None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Selected {
    extension: Option<&'static Schema>,
    attr: Option<&'static Attribute>,
    sub: Option<&'static Attribute>,
}

/// How one attribute is to be written.
enum Keep {
    All,
    Nothing,
    /// Only these sub-attributes of it.
    Only(Vec<&'static str>),
    /// All but these sub-attributes.
    Without(Vec<&'static str>),
}

impl Projection {
    /// From the query parameters' values (comma-separated paths). Names
    /// lattice does not keep are skipped: a projection of nothing is nothing.
    pub fn parse(resource_type: ResourceType, attributes: Option<&str>, excluded_attributes: Option<&str>) -> Result<Self, ScimError> {
        let split = |name: &str, text: Option<&str>| -> Result<Vec<String>, ScimError> {
            let Some(text) = text else { return Ok(Vec::new()) };
            if text.len() > MAX_PARAMETER_BYTES {
                return Err(ScimError::invalid_value(format!("{name}: {} bytes, over the limit {MAX_PARAMETER_BYTES}", text.len())));
            }
            Ok(text.split(',').map(str::trim).filter(|p| !p.is_empty()).map(String::from).collect())
        };
        Self::from_lists(resource_type, &split("attributes", attributes)?, &split("excludedAttributes", excluded_attributes)?)
    }

    /// From lists of paths (a SearchRequest's `attributes` and `excludedAttributes`).
    pub fn from_lists(resource_type: ResourceType, attributes: &[String], excluded_attributes: &[String]) -> Result<Self, ScimError> {
        if !attributes.is_empty() && !excluded_attributes.is_empty() {
            return Err(ScimError::invalid_value("attributes and excludedAttributes are mutually exclusive"));
        }
        let (name, paths) = if attributes.is_empty() { ("excludedAttributes", excluded_attributes) } else { ("attributes", attributes) };
        if paths.len() > MAX_PROJECTION_PATHS {
            return Err(ScimError::invalid_value(format!("{name}: {} paths, over the limit {MAX_PROJECTION_PATHS}", paths.len())));
        }
        let mut selected = Vec::with_capacity(paths.len());
        for path in paths {
            match resolve_path(resource_type, path).map_err(|why| ScimError::invalid_value(format!("{name}: {why}")))? {
                Resolution::Attribute(Found { extension, attr, sub }) => selected.push(Selected { extension, attr: Some(attr), sub }),
                Resolution::Extension(schema) => selected.push(Selected { extension: Some(schema), attr: None, sub: None }),
                Resolution::Unknown => {}
            }
        }
        let mode = match (attributes.is_empty(), excluded_attributes.is_empty()) {
            (true, true) => Mode::Default,
            (false, _) => Mode::Include(selected),
            (true, false) => Mode::Exclude(selected),
        };
        Ok(Projection { mode })
    }

    /// Projects a resource rendered in full (as `render` with the default
    /// projection writes it), and lists in `schemas` what is left.
    pub fn project(&self, resource_type: ResourceType, resource: Value) -> Value {
        let Value::Object(mut fields) = resource else { return resource };
        self.apply(resource_type, &mut fields);
        let schemas: Vec<Value> = std::iter::once(resource_type.schema())
            .chain(resource_type.extensions().iter().copied().filter(|e| fields.contains_key(e.id)))
            .map(|s| Value::from(s.id))
            .collect();
        fields.insert("schemas".into(), Value::Array(schemas));
        Value::Object(fields)
    }

    /// Projects a full rendering: its top-level keys are the common
    /// attributes, the core schema's and the extensions' URNs. Rebuilt
    /// rather than edited in place, so what stays keeps its order.
    fn apply(&self, resource_type: ResourceType, resource: &mut Map<String, Value>) {
        let core = resource_type.schema();
        let mut out = Map::new();
        for (key, value) in std::mem::take(resource) {
            if let Some(extension) = resource_type.extension_by_urn(&key) {
                if let Value::Object(fields) = value {
                    let fields = self.apply_fields(Some(extension), extension.attributes, fields);
                    if !fields.is_empty() {
                        out.insert(key, Value::Object(fields));
                    }
                }
                continue;
            }
            let attr = COMMON_ATTRIBUTES.iter().copied().find(|a| a.name == key).or_else(|| find_attribute(core.attributes, &key));
            match attr {
                Some(attr) => {
                    if let Some(value) = self.apply_one(None, attr, value) {
                        out.insert(key, value);
                    }
                }
                None => {
                    out.insert(key, value);
                }
            }
        }
        *resource = out;
    }

    fn apply_fields(&self, extension: Option<&'static Schema>, attributes: &'static [Attribute], fields: Map<String, Value>) -> Map<String, Value> {
        fields
            .into_iter()
            .filter_map(|(key, value)| {
                let attr = find_attribute(attributes, &key)?;
                self.apply_one(extension, attr, value).map(|value| (key, value))
            })
            .collect()
    }

    fn apply_one(&self, extension: Option<&'static Schema>, attr: &'static Attribute, value: Value) -> Option<Value> {
        match self.keep(extension, attr) {
            Keep::All => Some(value),
            Keep::Nothing => None,
            Keep::Only(subs) => retain_subs(value, |name| subs.contains(&name)),
            Keep::Without(subs) => retain_subs(value, |name| !subs.contains(&name)),
        }
    }

    fn keep(&self, extension: Option<&'static Schema>, attr: &'static Attribute) -> Keep {
        match attr.returned {
            Returned::Always => return Keep::All,
            Returned::Never => return Keep::Nothing,
            Returned::Default | Returned::Request => {}
        }
        let same_extension = |s: &Selected| s.extension.map(|e| e.id) == extension.map(|e| e.id);
        let whole = |s: &Selected| same_extension(s) && (s.attr.is_none() || (s.attr.is_some_and(|a| a.name == attr.name) && s.sub.is_none()));
        let subs = |list: &[Selected]| -> Vec<&'static str> {
            list.iter()
                .filter(|s| same_extension(s) && s.attr.is_some_and(|a| a.name == attr.name))
                .filter_map(|s| s.sub.map(|sub| sub.name))
                .collect()
        };
        match &self.mode {
            Mode::Default if attr.returned == Returned::Request => Keep::Nothing,
            Mode::Default => Keep::All,
            Mode::Include(list) if list.iter().any(whole) => Keep::All,
            Mode::Include(list) => match subs(list) {
                subs if subs.is_empty() => Keep::Nothing,
                subs => Keep::Only(subs),
            },
            Mode::Exclude(_) if attr.returned == Returned::Request => Keep::Nothing,
            Mode::Exclude(list) if list.iter().any(whole) => Keep::Nothing,
            Mode::Exclude(list) => match subs(list) {
                subs if subs.is_empty() => Keep::All,
                subs => Keep::Without(subs),
            },
        }
    }
}

/// Keeps the sub-attributes `keep` accepts, in one value or in each of
/// many; what is left empty is gone.
fn retain_subs(value: Value, keep: impl Fn(&str) -> bool) -> Option<Value> {
    let retain = |item: Value| match item {
        Value::Object(subs) => {
            let subs: Map<String, Value> = subs.into_iter().filter(|(name, _)| keep(name)).collect();
            (!subs.is_empty()).then_some(Value::Object(subs))
        }
        other => Some(other),
    };
    match value {
        Value::Array(items) => {
            let items: Vec<Value> = items.into_iter().filter_map(retain).collect();
            (!items.is_empty()).then_some(Value::Array(items))
        }
        other => retain(other),
    }
}

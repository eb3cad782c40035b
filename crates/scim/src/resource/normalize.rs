//! A POST or PUT body (RFC 7644 §3.3, §3.5.1) to the document lattice
//! stores: only the attributes of the schemas, in their canonical names
//! and order, typed, bounded, with `id`, `meta` and the other readOnly
//! attributes dropped. The stored document has no `schemas`, `id` or
//! `meta`: those are the route's columns, and `render` writes them.

use serde_json::{Map, Value};

use crate::error::ScimError;
use crate::schema::{Attribute, Mutability, Resolution, ResourceType, Schema, find_attribute, resolve_key};
use crate::value::{self, Ignored};

/// What a body became: the document to store, and the names it carried
/// that lattice does not keep (for the route to log; they are not stored).
#[derive(Debug, Clone, PartialEq)]
pub struct Normalized {
    pub document: Value,
    pub ignored: Vec<String>,
}

/// The body of a POST.
pub fn normalize_create(resource_type: ResourceType, body: &Value) -> Result<Normalized, ScimError> {
    normalize(resource_type, body, None)
}

/// The body of a PUT, which replaces `existing` (the stored document):
/// every attribute it omits is cleared, and an immutable one that has a
/// value keeps it (RFC 7644 §3.5.1).
pub fn normalize_replace(resource_type: ResourceType, body: &Value, existing: &Value) -> Result<Normalized, ScimError> {
    normalize(resource_type, body, Some(existing))
}

fn normalize(resource_type: ResourceType, body: &Value, existing: Option<&Value>) -> Result<Normalized, ScimError> {
    let Value::Object(fields) = body else { return Err(ScimError::invalid_syntax("the body is not a JSON object")) };
    check_schemas(resource_type, fields)?;
    let mut ignored = Ignored::new();
    // Attributes found, by the schema holding them (None: the core schema
    // and the common attributes).
    let mut found: Vec<(Option<&'static Schema>, &'static Attribute, Value)> = Vec::new();
    for (key, value) in fields {
        if key.eq_ignore_ascii_case("schemas") {
            continue;
        }
        match resolve_key(resource_type, key) {
            Resolution::Attribute(at) => {
                let shown = shown_name(at.extension, at.attr);
                take(&mut found, at.extension, at.attr, value, &shown, &mut ignored)?;
            }
            Resolution::Extension(extension) => {
                let inner = match value {
                    Value::Null => continue,
                    Value::Object(inner) => inner,
                    _ => return Err(ScimError::invalid_value(format!("{}: expected an object", extension.id))),
                };
                for (key, value) in inner {
                    if key.eq_ignore_ascii_case("schemas") {
                        continue;
                    }
                    match find_attribute(extension.attributes, key) {
                        Some(attr) => take(&mut found, Some(extension), attr, value, &shown_name(Some(extension), attr), &mut ignored)?,
                        None => ignored.push(format!("{}:{key}", extension.id)),
                    }
                }
            }
            Resolution::Unknown => ignored.push(key.clone()),
        }
    }
    let document = assemble(resource_type, found);
    check_document(resource_type, &document, existing)?;
    Ok(Normalized { document, ignored: value::reported(ignored) })
}

/// RFC 7643 §3: `schemas` lists the resource's core schema.
fn check_schemas(resource_type: ResourceType, fields: &Map<String, Value>) -> Result<(), ScimError> {
    let core = resource_type.schema().id;
    let listed = fields.iter().find(|(k, _)| k.eq_ignore_ascii_case("schemas")).map(|(_, v)| v);
    let lists_core = match listed {
        Some(Value::Array(urns)) => urns.iter().any(|urn| urn.as_str().is_some_and(|u| u.eq_ignore_ascii_case(core))),
        _ => false,
    };
    if !lists_core {
        return Err(ScimError::invalid_syntax(format!("schemas: must be a list holding {core:?}")));
    }
    Ok(())
}

fn shown_name(extension: Option<&Schema>, attr: &Attribute) -> String {
    match extension {
        Some(extension) => format!("{}:{}", extension.id, attr.name),
        None => attr.name.to_string(),
    }
}

fn take(
    found: &mut Vec<(Option<&'static Schema>, &'static Attribute, Value)>,
    extension: Option<&'static Schema>,
    attr: &'static Attribute,
    value: &Value,
    shown: &str,
    ignored: &mut Ignored,
) -> Result<(), ScimError> {
    // RFC 7644 §3.3 and §3.5.1: readOnly values in a request are ignored
    // (`id`, `meta`, `groups`; Entra ID sends `meta.resourceType`).
    if attr.mutability == Mutability::ReadOnly {
        return Ok(());
    }
    if found.iter().any(|(e, a, _)| e.map(|e| e.id) == extension.map(|e| e.id) && a.name == attr.name) {
        return Err(ScimError::invalid_syntax(format!("{shown} is given twice")));
    }
    if let Some(value) = value::normalize(attr, value, shown, ignored)? {
        found.push((extension, attr, value));
    }
    Ok(())
}

/// In a fixed order (`externalId`, the core schema's attributes, each
/// extension's), so the same content is the same bytes and the same version.
fn assemble(resource_type: ResourceType, mut found: Vec<(Option<&'static Schema>, &'static Attribute, Value)>) -> Value {
    let mut take_named = |extension: Option<&'static Schema>, name: &str| {
        let i = found.iter().position(|(e, a, _)| e.map(|e| e.id) == extension.map(|e| e.id) && a.name == name)?;
        Some(found.swap_remove(i).2)
    };
    let mut document = Map::new();
    if let Some(value) = take_named(None, "externalId") {
        document.insert("externalId".into(), value);
    }
    for attr in resource_type.schema().attributes {
        if let Some(value) = take_named(None, attr.name) {
            document.insert(attr.name.into(), value);
        }
    }
    for extension in resource_type.extensions() {
        let mut inner = Map::new();
        for attr in extension.attributes {
            if let Some(value) = take_named(Some(extension), attr.name) {
                inner.insert(attr.name.into(), value);
            }
        }
        if !inner.is_empty() {
            document.insert(extension.id.into(), Value::Object(inner));
        }
    }
    Value::Object(document)
}

/// What holds of every stored document, whichever way it was written
/// (POST, PUT, PATCH): required attributes there, immutable ones unchanged,
/// the whole within its size.
fn check_document(resource_type: ResourceType, document: &Value, existing: Option<&Value>) -> Result<(), ScimError> {
    let schemas = std::iter::once((None, resource_type.schema())).chain(resource_type.extensions().iter().map(|e| (Some(e.id), *e)));
    for (urn, schema) in schemas {
        let container = match urn {
            Some(urn) => document.get(urn),
            None => Some(document),
        };
        let before = existing.and_then(|existing| match urn {
            Some(urn) => existing.get(urn),
            None => Some(existing),
        });
        for attr in schema.attributes {
            let value = container.and_then(|c| c.get(attr.name));
            if attr.required && !value.is_some_and(crate::filter::is_present) {
                return Err(ScimError::invalid_value(format!("{} is required", shown_name(urn.map(|_| schema), attr))));
            }
            check_immutable(attr, &shown_name(urn.map(|_| schema), attr), before.and_then(|b| b.get(attr.name)), value)?;
        }
    }
    let bytes = serde_json::to_vec(document).map(|b| b.len()).unwrap_or(usize::MAX);
    let limit = resource_type.max_document_bytes();
    if bytes > limit {
        return Err(ScimError::invalid_value(format!("the {} is {bytes} bytes, over the limit {limit}", resource_type.name())));
    }
    Ok(())
}

/// RFC 7643 §2.2: an immutable value, once set, stays. A multi-valued
/// attribute's values are added and removed whole (a group's members), so
/// only single values are held to it.
fn check_immutable(attr: &'static Attribute, shown: &str, before: Option<&Value>, after: Option<&Value>) -> Result<(), ScimError> {
    if attr.multi_valued {
        return Ok(());
    }
    if attr.mutability == Mutability::Immutable && before.is_some() && before != after {
        return Err(ScimError::mutability(format!("{shown} is immutable, and has a value")));
    }
    for sub in attr.sub_attributes.iter().filter(|s| s.mutability == Mutability::Immutable) {
        let had = before.and_then(|b| b.get(sub.name));
        if had.is_some() && had != after.and_then(|a| a.get(sub.name)) {
            return Err(ScimError::mutability(format!("{shown}.{} is immutable, and has a value", sub.name)));
        }
    }
    Ok(())
}

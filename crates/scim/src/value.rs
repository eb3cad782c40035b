//! One attribute's value against its definition: types checked, names of
//! sub-attributes put in their canonical case and order, canonical values
//! in their declared spelling, strings and counts bounded. What a POST, a
//! PUT and each PATCH operation store all passes through here.

use serde_json::{Map, Value};

use crate::error::{ScimError, excerpt};
use crate::limits::MAX_STRING_BYTES;
use crate::schema::{AttrType, Attribute, Mutability, find_sub_attribute};

/// Unknown names met on the way (`emails[0].label`): not stored, reported.
pub(crate) type Ignored = Vec<String>;

/// How many unknown names a report lists: a body of 100 000 junk keys is
/// refused by nothing else, and a log line should not carry them all.
const MAX_REPORTED: usize = 32;

/// The report of what was ignored, cut to [`MAX_REPORTED`] names.
pub(crate) fn reported(mut ignored: Ignored) -> Vec<String> {
    if ignored.len() > MAX_REPORTED {
        let more = ignored.len() - MAX_REPORTED;
        ignored.truncate(MAX_REPORTED);
        ignored.push(format!("and {more} more"));
    }
    ignored
}

/// `Ok(None)` is an unassigned value: `null`, `[]`, `{}` (RFC 7643 §2.5).
pub(crate) fn normalize(attr: &'static Attribute, value: &Value, path: &str, ignored: &mut Ignored) -> Result<Option<Value>, ScimError> {
    if !attr.multi_valued {
        return normalize_one(attr, value, path, ignored);
    }
    let items = match value {
        Value::Null => return Ok(None),
        Value::Array(items) => items.as_slice(),
        // One value where a list is due: read as a list of one.
        single => std::slice::from_ref(single),
    };
    if items.len() > attr.max_values {
        return Err(ScimError::invalid_value(format!("{path}: {} values, over the limit {}", items.len(), attr.max_values)));
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        if let Some(item) = normalize_one(attr, item, &format!("{path}[{i}]"), ignored)? {
            out.push(item);
        }
    }
    check_one_primary(path, &out)?;
    Ok((!out.is_empty()).then_some(Value::Array(out)))
}

/// RFC 7643 §2.4: `primary` is true for one value at most.
pub(crate) fn check_one_primary(path: &str, items: &[Value]) -> Result<(), ScimError> {
    let primaries = items.iter().filter(|item| item.get("primary") == Some(&Value::Bool(true))).count();
    if primaries > 1 {
        return Err(ScimError::invalid_value(format!("{path}: {primaries} values are primary, and one at most may be")));
    }
    Ok(())
}

/// One value of the attribute (an element, for a multi-valued one).
pub(crate) fn normalize_one(attr: &'static Attribute, value: &Value, path: &str, ignored: &mut Ignored) -> Result<Option<Value>, ScimError> {
    if !attr.is_complex() {
        return normalize_scalar(attr, value, path);
    }
    let fields = match value {
        Value::Null => return Ok(None),
        Value::Object(fields) => fields,
        // Entra ID sends the manager as a bare id: `"manager": "26118915"`.
        Value::String(_) if attr.value_sub_attribute().is_some() => {
            return normalize_one(attr, &Value::Object(Map::from_iter([("value".to_string(), value.clone())])), path, ignored);
        }
        _ => return Err(ScimError::invalid_value(format!("{path}: expected an object of {}", sub_names(attr)))),
    };
    let mut found: Vec<(&'static Attribute, Value)> = Vec::new();
    for (key, value) in fields {
        let Some(sub) = find_sub_attribute(attr, key) else {
            ignored.push(format!("{path}.{key}"));
            continue;
        };
        // RFC 7644 §3.3: values of readOnly attributes in a request are ignored.
        if sub.mutability == Mutability::ReadOnly {
            continue;
        }
        if found.iter().any(|(seen, _)| seen.name == sub.name) {
            return Err(ScimError::invalid_syntax(format!("{path}.{} is given twice", sub.name)));
        }
        if let Some(value) = normalize_scalar(sub, value, &format!("{path}.{}", sub.name))? {
            found.push((sub, value));
        }
    }
    let mut out = Map::new();
    for sub in attr.sub_attributes {
        if let Some(i) = found.iter().position(|(seen, _)| seen.name == sub.name) {
            out.insert(sub.name.to_string(), found.swap_remove(i).1);
        }
    }
    if out.is_empty() {
        return Ok(None);
    }
    if let Some(sub) = attr.sub_attributes.iter().find(|sub| sub.required && !out.contains_key(sub.name)) {
        return Err(ScimError::invalid_value(format!("{path}.{} is required", sub.name)));
    }
    Ok(Some(Value::Object(out)))
}

fn sub_names(attr: &Attribute) -> String {
    attr.sub_attributes.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
}

pub(crate) fn normalize_scalar(attr: &'static Attribute, value: &Value, path: &str) -> Result<Option<Value>, ScimError> {
    let wrong = |expected: &str| Err(ScimError::invalid_value(format!("{path}: expected {expected}, found {}", kind_of(value))));
    match (attr.kind, value) {
        (_, Value::Null) => Ok(None),
        (AttrType::String | AttrType::Reference | AttrType::Binary, Value::String(s)) => {
            if s.len() > MAX_STRING_BYTES {
                return Err(ScimError::invalid_value(format!("{path}: {} bytes, over the limit {MAX_STRING_BYTES}", s.len())));
            }
            if attr.canonical_values.is_empty() {
                return Ok(Some(value.clone()));
            }
            match attr.canonical_values.iter().find(|c| c.eq_ignore_ascii_case(s)) {
                Some(canonical) => Ok(Some(Value::from(*canonical))),
                None => Err(ScimError::invalid_value(format!("{path}: {} is not one of {}", excerpt(s), attr.canonical_values.join(", ")))),
            }
        }
        (AttrType::String | AttrType::Reference | AttrType::Binary, _) => wrong("a string"),
        (AttrType::Boolean, Value::Bool(_)) => Ok(Some(value.clone())),
        // Entra ID sends `"active": "False"`, a string, in PATCH operations.
        (AttrType::Boolean, Value::String(s)) if s.eq_ignore_ascii_case("true") => Ok(Some(Value::Bool(true))),
        (AttrType::Boolean, Value::String(s)) if s.eq_ignore_ascii_case("false") => Ok(Some(Value::Bool(false))),
        (AttrType::Boolean, _) => wrong("true or false"),
        (AttrType::DateTime, Value::String(s)) if crate::datetime::parse(s).is_some() => Ok(Some(value.clone())),
        (AttrType::DateTime, _) => wrong("a date-time such as \"2011-05-13T04:42:34Z\""),
        (AttrType::Integer, Value::Number(n)) if n.is_i64() || n.is_u64() => Ok(Some(value.clone())),
        (AttrType::Integer, _) => wrong("an integer"),
        (AttrType::Decimal, Value::Number(_)) => Ok(Some(value.clone())),
        (AttrType::Decimal, _) => wrong("a number"),
        (AttrType::Complex, _) => wrong("a simple value"),
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

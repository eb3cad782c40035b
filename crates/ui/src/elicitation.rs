//! Which forms an MCP client can ask itself, through form elicitation: the
//! flat subset of MCP 2025-11-25 (`requestedSchema`), an object of
//! primitive properties — strings (with `date`, `date-time`, `email` or
//! `uri` formats and length bounds), numbers and integers (with bounds),
//! booleans, single-choice enums of strings, and multi-choice arrays of
//! such enums. A form with anything else (a nested object, an array of
//! objects, a pattern, a property the client cannot bound the way lattice
//! does) does not fit: it is asked in lattice, and the caller gets a handle.

use serde_json::{Map, Value, json};

/// What every property may say besides its shape.
const ANNOTATIONS: [&str; 3] = ["title", "description", "default"];

/// The form's schema as an elicitation's `requestedSchema`, if it fits.
pub fn requested_schema(schema: &Value) -> Option<Value> {
    let object = schema.as_object()?;
    if object.get("type").and_then(Value::as_str) != Some("object") {
        return None;
    }
    if object.keys().any(|k| !matches!(k.as_str(), "type" | "properties" | "required" | "title" | "description" | "$schema")) {
        return None;
    }
    let mut properties = Map::new();
    for (name, property) in object.get("properties")?.as_object()? {
        properties.insert(name.clone(), primitive(property.as_object()?)?);
    }
    let mut requested = json!({"type": "object", "properties": properties});
    if let Some(required) = object.get("required") {
        requested["required"] = required.clone();
    }
    Some(requested)
}

/// One property, if it is one elicitation knows.
fn primitive(p: &Map<String, Value>) -> Option<Value> {
    let only = |allowed: &[&str]| p.keys().all(|k| allowed.contains(&k.as_str()) || ANNOTATIONS.contains(&k.as_str()));
    let strings = |v: &Value| v.as_array().is_some_and(|a| !a.is_empty() && a.iter().all(Value::is_string));
    let kind = p.get("type").and_then(Value::as_str);
    let fits = match kind {
        None => p.get("enum").is_some_and(strings) && only(&["enum"]),
        Some("string") if p.contains_key("enum") => p.get("enum").is_some_and(strings) && only(&["type", "enum"]),
        Some("string") => {
            p.get("format").and_then(Value::as_str).is_none_or(|f| matches!(f, "date" | "date-time" | "email" | "uri"))
                && only(&["type", "format", "minLength", "maxLength"])
        }
        Some("number" | "integer") => only(&["type", "minimum", "maximum"]),
        Some("boolean") => only(&["type"]),
        Some("array") => {
            let items = p.get("items").and_then(Value::as_object);
            items.is_some_and(|i| i.get("enum").is_some_and(strings) && i.keys().all(|k| matches!(k.as_str(), "enum" | "type")))
                && only(&["type", "items", "minItems", "maxItems", "uniqueItems"])
        }
        Some(_) => false,
    };
    if !fits {
        return None;
    }
    let mut shown = Value::Object(p.clone());
    // A bare enum is a string's.
    if kind.is_none() {
        shown["type"] = json!("string");
    }
    if kind == Some("array") {
        shown["items"]["type"] = json!("string");
        if let Some(map) = shown.as_object_mut() {
            map.remove("uniqueItems");
        }
    }
    Some(shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flat_form_fits_and_anything_nested_does_not() {
        let flat = json!({"type": "object", "required": ["date", "severity"], "properties": {
            "date": {"type": "string", "format": "date", "title": "When?"},
            "severity": {"type": "string", "enum": ["low", "high"]},
            "kind": {"enum": ["a", "b"]},
            "affected": {"type": "array", "items": {"enum": ["API", "Web"]}, "uniqueItems": true},
            "days": {"type": "integer", "minimum": 1, "maximum": 30},
            "ok": {"type": "boolean", "default": true},
            "note": {"type": "string", "maxLength": 2000}}});
        let requested = requested_schema(&flat).expect("a flat form fits");
        assert_eq!(requested["required"], json!(["date", "severity"]));
        assert_eq!(requested["properties"]["kind"]["type"], "string");
        assert_eq!(requested["properties"]["affected"]["items"], json!({"enum": ["API", "Web"], "type": "string"}));
        assert!(requested["properties"]["affected"].get("uniqueItems").is_none());

        for unfit in [
            json!({"type": "object", "properties": {"address": {"type": "object", "properties": {"city": {"type": "string"}}}}}),
            json!({"type": "object", "properties": {"rows": {"type": "array", "items": {"type": "object"}}}}),
            json!({"type": "object", "properties": {"code": {"type": "string", "pattern": "^[A-Z]+$"}}}),
            json!({"type": "object", "properties": {"n": {"type": "number", "multipleOf": 5}}}),
            json!({"type": "object", "properties": {"when": {"type": "string", "format": "time"}}}),
            // A file is uploaded in the chat: elicitation has no way to send one.
            json!({"type": "object", "properties": {"shot": {"type": "string", "format": "file"}}}),
            json!({"type": "object", "properties": {"logs": {"type": "array", "items": {"type": "string", "format": "file"}}}}),
            json!({"type": "object", "properties": {"x": {"type": "string"}}, "if": {}}),
            json!({"type": "array"}),
        ] {
            assert_eq!(requested_schema(&unfit), None, "{unfit}");
        }
    }
}

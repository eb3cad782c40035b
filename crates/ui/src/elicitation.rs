//! Which forms an MCP client can ask itself, through form elicitation: the
//! flat subset of MCP 2025-11-25 (`requestedSchema`), an object of
//! primitive properties — strings (with `date`, `date-time`, `email` or
//! `uri` formats and length bounds), numbers and integers (with bounds),
//! booleans, single-choice enums of strings, and multi-choice arrays of
//! such enums. A form with anything else (a nested object, an array of
//! objects, a pattern, a property the client cannot bound the way lattice
//! does) does not fit: it is asked in lattice, and the caller gets a handle.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::hints::{FieldHints, UiHints};

/// What every property may say besides its shape.
const ANNOTATIONS: [&str; 3] = ["title", "description", "default"];

/// The form's schema as an elicitation's `requestedSchema`, if it fits;
/// choices its hints label (`ui.fields.<name>.labels`, every choice of the
/// property) are offered titled (`oneOf` / `anyOf` of `const` and
/// `title`), as the client then shows them.
pub fn requested_schema(schema: &Value, ui: Option<&Value>) -> Option<Value> {
    let hints: Option<UiHints> = ui.and_then(|ui| serde_json::from_value(ui.clone()).ok());
    let object = schema.as_object()?;
    if object.get("type").and_then(Value::as_str) != Some("object") {
        return None;
    }
    if object.keys().any(|k| !matches!(k.as_str(), "type" | "properties" | "required" | "title" | "description" | "$schema")) {
        return None;
    }
    let mut properties = Map::new();
    for (name, property) in object.get("properties")?.as_object()? {
        let mut shown = primitive(property.as_object()?)?;
        if let Some(labels) = hints.as_ref().and_then(|h| h.fields.get(name)).map(|f| &f.labels).filter(|l| !l.is_empty()) {
            offer_titled(&mut shown, labels);
        }
        properties.insert(name.clone(), shown);
    }
    let mut requested = json!({"type": "object", "properties": properties});
    if let Some(required) = object.get("required") {
        requested["required"] = required.clone();
    }
    Some(requested)
}

/// A choice property offered titled, when `labels` names every choice
/// (else untitled: a choice with no title reads as nothing).
fn offer_titled(shown: &mut Value, labels: &BTreeMap<String, String>) {
    let titles = |choices: &Value| -> Option<Vec<Value>> {
        choices.as_array()?.iter().map(|c| Some(json!({"const": c, "title": labels.get(c.as_str()?)?}))).collect()
    };
    if let Some(one_of) = shown.get("enum").and_then(titles) {
        if let Some(map) = shown.as_object_mut() {
            map.remove("enum");
        }
        shown["oneOf"] = json!(one_of);
    } else if let Some(any_of) = shown.pointer("/items/enum").and_then(titles) {
        shown["items"] = json!({"anyOf": any_of});
    }
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

/// A server's `requestedSchema` (elicitation, MCP 2025-11-25) as a lattice
/// form: its schema, and the labels of its titled choices (`oneOf` /
/// `anyOf` of `const` and `title`, or the legacy `enumNames`). The inverse
/// of [`requested_schema`], over the same flat subset; anything else is
/// refused, saying what. The form is then checked as every form is.
pub fn form_of(requested: &Value) -> Result<(Value, UiHints), String> {
    let object = requested.as_object().ok_or("the requested schema is not an object")?;
    if object.get("type").and_then(Value::as_str) != Some("object") {
        return Err("the requested schema is not of type object".into());
    }
    if let Some(k) = object.keys().find(|k| !matches!(k.as_str(), "type" | "properties" | "required" | "title" | "description" | "$schema")) {
        return Err(format!("the requested schema says {k:?}, which a flat form does not have"));
    }
    let mut properties = Map::new();
    let mut hints = UiHints::default();
    let given = object.get("properties").and_then(Value::as_object).ok_or("the requested schema has no properties")?;
    if given.len() > crate::schema::limits::PROPERTIES {
        return Err(format!("{} fields, a form has at most {}", given.len(), crate::schema::limits::PROPERTIES));
    }
    for (name, property) in given {
        let (schema, labels) = field_of(property).map_err(|why| format!("{name}: {why}"))?;
        properties.insert(name.clone(), schema);
        if !labels.is_empty() {
            hints.fields.insert(name.clone(), FieldHints { labels, ..FieldHints::default() });
        }
    }
    let mut schema = json!({"type": "object", "properties": properties});
    if let Some(required) = object.get("required") {
        schema["required"] = required.clone();
    }
    Ok((schema, hints))
}

/// One of a requested schema's properties: its schema in a form, and its
/// choices' labels.
fn field_of(p: &Value) -> Result<(Value, BTreeMap<String, String>), String> {
    let p = p.as_object().ok_or("not an object")?;
    let mut labels = BTreeMap::new();
    let mut out = Map::new();
    for key in ANNOTATIONS {
        if let Some(v) = p.get(key) {
            out.insert(key.to_owned(), v.clone());
        }
    }
    let kind = p.get("type").and_then(Value::as_str).ok_or("no type")?;
    let copy = |out: &mut Map<String, Value>, keys: &[&str]| {
        for key in keys {
            if let Some(v) = p.get(*key) {
                out.insert((*key).to_owned(), v.clone());
            }
        }
    };
    let known: &[&str] = match kind {
        "string" if p.contains_key("oneOf") => {
            out.insert("enum".into(), json!(titled(p.get("oneOf"), &mut labels)?));
            &["type", "oneOf"]
        }
        "string" if p.contains_key("enum") => {
            let values = strings(p.get("enum")).ok_or("its enum is not a list of strings")?;
            if let Some(names) = p.get("enumNames") {
                let names = strings(Some(names)).filter(|n| n.len() == values.len()).ok_or("its enumNames do not name each choice")?;
                labels.extend(values.iter().cloned().zip(names));
            }
            out.insert("enum".into(), json!(values));
            &["type", "enum", "enumNames"]
        }
        "string" => {
            if let Some(format) = p.get("format").and_then(Value::as_str).filter(|f| !matches!(*f, "date" | "date-time" | "email" | "uri")) {
                return Err(format!("the format {format:?} is not one elicitation has"));
            }
            copy(&mut out, &["format", "minLength", "maxLength"]);
            &["type", "format", "minLength", "maxLength"]
        }
        "number" | "integer" => {
            copy(&mut out, &["minimum", "maximum"]);
            &["type", "minimum", "maximum"]
        }
        "boolean" => &["type"],
        "array" => {
            let items = p.get("items").and_then(Value::as_object).ok_or("an array without items")?;
            let values = match (items.get("enum"), items.get("anyOf")) {
                (Some(e), None) => strings(Some(e)).ok_or("its items' enum is not a list of strings")?,
                (None, Some(_)) => titled(items.get("anyOf"), &mut labels)?,
                _ => return Err("an array's items are one enum of strings".into()),
            };
            out.insert("items".into(), json!({"type": "string", "enum": values}));
            out.insert("uniqueItems".into(), json!(true));
            copy(&mut out, &["minItems", "maxItems"]);
            &["type", "items", "minItems", "maxItems", "uniqueItems"]
        }
        other => return Err(format!("the type {other:?} is not one elicitation has")),
    };
    if let Some(k) = p.keys().find(|k| !known.contains(&k.as_str()) && !ANNOTATIONS.contains(&k.as_str())) {
        return Err(format!("it says {k:?}, which a flat form does not have"));
    }
    out.insert("type".into(), json!(kind));
    Ok((Value::Object(out), labels))
}

/// The values of `oneOf` / `anyOf` choices (`{"const", "title"}`), their
/// titles kept as labels.
fn titled(choices: Option<&Value>, labels: &mut BTreeMap<String, String>) -> Result<Vec<String>, String> {
    let choices = choices.and_then(Value::as_array).filter(|c| !c.is_empty()).ok_or("its choices are not a list")?;
    let mut values = Vec::with_capacity(choices.len());
    for choice in choices {
        let value = choice.get("const").and_then(Value::as_str).ok_or("a choice without a string const")?;
        if let Some(title) = choice.get("title").and_then(Value::as_str) {
            labels.insert(value.to_owned(), title.to_owned());
        }
        values.push(value.to_owned());
    }
    Ok(values)
}

fn strings(v: Option<&Value>) -> Option<Vec<String>> {
    v?.as_array().filter(|a| !a.is_empty())?.iter().map(|s| s.as_str().map(str::to_owned)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server's question with every kind elicitation has becomes a form
    /// lattice takes, its titled choices' labels kept as hints.
    #[test]
    fn a_requested_schema_becomes_a_form_with_its_labels() {
        let requested = json!({"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string", "title": "Name", "minLength": 1, "maxLength": 50},
            "check": {"type": "boolean", "default": false},
            "email": {"type": "string", "format": "email"},
            "when": {"type": "string", "format": "date"},
            "n": {"type": "integer", "minimum": 1, "maximum": 100},
            "plain": {"type": "string", "enum": ["a", "b"]},
            "titled": {"type": "string", "oneOf": [{"const": "hero-1", "title": "Superman"}, {"const": "hero-2", "title": "Batman"}]},
            "legacy": {"type": "string", "enum": ["pet-1", "pet-2"], "enumNames": ["Cat", "Dog"]},
            "many": {"type": "array", "items": {"anyOf": [{"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}]}, "maxItems": 2},
        }});
        let (schema, hints) = form_of(&requested).unwrap();
        let compiled = crate::compile(&schema).expect("lattice takes the form");
        hints.check(&compiled).expect("and its hints");
        assert_eq!(schema["properties"]["titled"], json!({"type": "string", "enum": ["hero-1", "hero-2"]}));
        assert_eq!(hints.fields["titled"].labels["hero-2"], "Batman");
        assert_eq!(hints.fields["legacy"].labels["pet-2"], "Dog");
        assert_eq!(schema["properties"]["many"]["items"], json!({"type": "string", "enum": ["r", "g"]}));
        assert_eq!(hints.fields["many"].labels["g"], "Green");
        assert_eq!(schema["required"], json!(["name"]));
        // The way back gives the client what it asked, its titles too.
        let back = requested_schema(&schema, Some(&serde_json::to_value(&hints).unwrap())).expect("the way back");
        assert_eq!(back["properties"]["titled"], requested["properties"]["titled"]);
        assert_eq!(back["properties"]["many"]["items"], requested["properties"]["many"]["items"]);
        assert_eq!(back["properties"]["legacy"]["oneOf"], json!([{"const": "pet-1", "title": "Cat"}, {"const": "pet-2", "title": "Dog"}]));
        // Without its hints, or with a choice unlabelled, untitled.
        assert_eq!(requested_schema(&schema, None).unwrap()["properties"]["titled"]["enum"], json!(["hero-1", "hero-2"]));
        let partly = json!({"fields": {"titled": {"labels": {"hero-1": "Superman"}}}});
        assert_eq!(requested_schema(&schema, Some(&partly)).unwrap()["properties"]["titled"]["enum"], json!(["hero-1", "hero-2"]));

        for (unfit, said) in [
            (json!({"type": "object", "properties": {"a": {"type": "object"}}}), "the type \"object\""),
            (json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "x"}}}), "\"pattern\""),
            (json!({"type": "object", "properties": {"a": {"type": "string", "enum": ["x"], "enumNames": []}}}), "enumNames"),
            (json!({"type": "object", "properties": {"a": {"type": "string", "format": "time"}}}), "format"),
            (json!({"type": "object", "properties": {}, "additionalProperties": false}), "additionalProperties"),
            (json!({"type": "array"}), "type object"),
        ] {
            let refused = form_of(&unfit).unwrap_err();
            assert!(refused.contains(said), "{unfit}: {refused}");
        }
    }

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
        let requested = requested_schema(&flat, None).expect("a flat form fits");
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
            assert_eq!(requested_schema(&unfit, None), None, "{unfit}");
        }
    }
}

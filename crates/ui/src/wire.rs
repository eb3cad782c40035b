//! The wire schema of every payload (REQUIREMENTS.md U10), generated from the Rust
//! types and committed as `schemas/ui.v1.json`.

use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use crate::app::App;
use crate::dashboard::Dashboard;
use crate::form::Form;
use crate::hints::UiHints;
use crate::submission::Submission;

/// The document: one `$defs` entry per payload, keyed by artifact kind.
pub fn ui_schema() -> Value {
    let mut generator = SchemaSettings::draft2020_12().into_generator();
    let mut kinds = Map::new();
    kinds.insert("form".into(), generator.subschema_for::<Form>().to_value());
    kinds.insert("dashboard".into(), generator.subschema_for::<Dashboard>().to_value());
    kinds.insert("submission".into(), generator.subschema_for::<Submission>().to_value());
    kinds.insert("app".into(), generator.subschema_for::<App>().to_value());
    kinds.insert("ui_hints".into(), generator.subschema_for::<UiHints>().to_value());
    let defs: Map<String, Value> = generator.take_definitions(true).into_iter().collect();
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:lattice:schemas:ui.v1",
        "title": "lattice UI model payloads, v1",
        "description": "The data of lattice's form, dashboard, submission and app artifacts. Generated from crates/ui; do not edit.",
        "kinds": kinds,
        "$defs": defs,
    })
}

/// The schema of a field that holds any JSON value. schemars writes a bare
/// `true` for `serde_json::Value`, which model servers (llama.cpp's
/// grammar converter) and strict clients (the MCP Inspector's portability
/// check) refuse: here each JSON type is named, which says the same.
pub fn any_value(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"anyOf": [
        {"type": "string"}, {"type": "number"}, {"type": "boolean"}, {"type": "null"}, {"type": "array"}, {"type": "object"}
    ]})
}

/// A metric's figure: a number or a string (`kinds` refuses anything else).
pub fn figure(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"anyOf": [{"type": "number"}, {"type": "string"}]})
}

/// A table's cell: any JSON value, as [`any_value`].
pub fn cells(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "array", "items": {"type": "array", "items": any_value(generator)}})
}

/// The places of `schema` where a bare boolean stands for a schema: what
/// [`any_value`] exists to avoid. Every schema lattice publishes (tools,
/// wire) is checked against it.
pub fn boolean_subschemas(schema: &Value) -> Vec<String> {
    // Keywords whose value is a schema, a list of schemas, or a map of them.
    const ONE: &[&str] = &[
        "items",
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "additionalItems",
    ];
    const OPEN_OR_CLOSED: &[&str] = &["additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems"];
    const LIST: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];
    const MAP: &[&str] = &["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
    fn walk(node: &Value, path: String, out: &mut Vec<String>, depth: usize) {
        let Some(map) = node.as_object() else { return };
        if depth > 64 {
            return;
        }
        for (key, value) in map {
            let here = format!("{path}/{key}");
            if ONE.contains(&key.as_str()) {
                // `additionalProperties: false` and its kin are how JSON
                // Schema says closed or open: every client reads those.
                match value {
                    Value::Bool(_) if OPEN_OR_CLOSED.contains(&key.as_str()) => {}
                    Value::Array(items) => items.iter().enumerate().for_each(|(i, s)| check(s, format!("{here}/{i}"), out, depth)),
                    other => check(other, here, out, depth),
                }
            } else if LIST.contains(&key.as_str()) {
                for (i, s) in value.as_array().into_iter().flatten().enumerate() {
                    check(s, format!("{here}/{i}"), out, depth);
                }
            } else if MAP.contains(&key.as_str()) || (key == "kinds" && path.is_empty()) {
                // `kinds`: the wire document's own map of payloads.
                for (name, s) in value.as_object().into_iter().flatten() {
                    check(s, format!("{here}/{name}"), out, depth);
                }
            }
        }
    }
    fn check(schema: &Value, path: String, out: &mut Vec<String>, depth: usize) {
        match schema {
            Value::Bool(_) => out.push(path),
            other => walk(other, path, out, depth + 1),
        }
    }
    let mut out = Vec::new();
    check(schema, String::new(), &mut out, 0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wire_schema_names_a_type_wherever_a_value_may_be_anything() {
        assert_eq!(boolean_subschemas(&ui_schema()), Vec::<String>::new());
        // The check finds what it is for, at any depth.
        let bare = json!({"properties": {"a": {"type": "array", "items": true}, "b": {"anyOf": [{"type": "string"}, false]}},
            "additionalProperties": false});
        assert_eq!(boolean_subschemas(&bare), ["/properties/a/items", "/properties/b/anyOf/1"]);
    }
}

//! Values against a compiled form: an error per field.

use expect_test::expect;
use lattice_ui::compile;
use serde_json::json;

use crate::render;

fn incident() -> lattice_ui::CompiledForm {
    compile(&json!({
        "type": "object",
        "properties": {
            "date": {"type": "string", "format": "date", "title": "When"},
            "severity": {"type": "string", "enum": ["low", "medium", "high"]},
            "areas": {"type": "array", "items": {"enum": ["api", "web", "db"]}, "uniqueItems": true, "minItems": 1, "maxItems": 2},
            "note": {"type": "string", "maxLength": 10},
            "count": {"type": "integer", "minimum": 0, "multipleOf": 5},
            "ack": {"type": "boolean"}
        },
        "required": ["date", "severity"]
    }))
    .unwrap()
}

#[test]
fn valid_values_pass() {
    let form = incident();
    let ok = json!({"date": "2026-02-28", "severity": "high", "areas": ["api"], "note": "short", "count": 10, "ack": true});
    assert_eq!(form.validate(&ok), Ok(()));
    assert!(form.is_valid(&ok));
    assert_eq!(form.validate(&json!({"date": "2024-02-29", "severity": "low", "count": 5.0})), Ok(()));
}

#[test]
fn every_fault_is_reported_at_its_field() {
    let form = incident();
    let bad = json!({
        "date": "2026-02-30", "areas": ["api", "api", "cloud"], "note": "far too long a note",
        "count": 7, "ack": "yes", "colour": "red"
    });
    expect![[r#"
        colour: is not a field of this form [additionalProperties]
        date: must be a calendar date such as 2026-11-29 [format]
        severity: is required [required]
        areas: choose at most 2 [maxItems]
        areas: "api" is chosen twice [uniqueItems]
        areas.2: must be one of: api, web, db [enum]
        note: 19 characters exceed the limit 10 [maxLength]
        count: must be a multiple of 5 [multipleOf]
        ack: must be true or false (boolean) [type]"#]]
    .assert_eq(&render(form.validate(&bad)));
    expect![": the values must be an object of the form's fields [type]"].assert_eq(&render(form.validate(&json!([1]))));
    assert!(!form.is_valid(&bad));
}

#[test]
fn values_are_limited_to_64_kb() {
    let form = compile(&json!({"type": "object", "properties": {"t": {"type": "string"}}})).unwrap();
    let sized = |bytes: usize| json!({"t": "x".repeat(bytes - r#"{"t":""}"#.len())});
    assert_eq!(form.validate(&sized(64 * 1024)), Ok(()));
    expect![[r#"{"type":"TooLarge","code":"document_too_large","limit":65536,"size":65537}"#]]
        .assert_eq(&render(form.validate(&sized(64 * 1024 + 1))));
}

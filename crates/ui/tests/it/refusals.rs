//! Each refused keyword and each limit, at the limit and one past it.

use expect_test::{Expect, expect};
use lattice_ui::compile;
use serde_json::{Value, json};

use crate::render;

fn check(schema: Value, expect: Expect) {
    expect.assert_eq(&render(compile(&schema).map(|_| ())));
}

fn one(property: Value) -> Value {
    json!({"type": "object", "properties": {"zip": property}})
}

#[test]
fn every_refused_keyword_is_named_where_it_stands() {
    check(
        one(json!({"type": "string", "pattern": "^[0-9]{5}$"})),
        expect![[r#"properties.zip.pattern: keyword not allowed: patterns are not allowed (use format or enum) [pattern]"#]],
    );
    check(one(json!({"$ref": "#/$defs/zip"})), expect![[r#"properties.zip.$ref: keyword not allowed: a form is one self-contained schema [$ref]"#]]);
    check(
        json!({"type": "object", "$defs": {"zip": {"type": "string"}}, "properties": {}}),
        expect![[r#"$defs: keyword not allowed: a form is one self-contained schema [$defs]"#]],
    );
    check(
        one(json!({"type": "object", "properties": {"a": {"type": "string"}}})),
        expect![[r#"
        properties.zip.properties: keyword not allowed: nested objects are not allowed [properties]
        properties.zip.type: "object": nested objects are not allowed [type]"#]],
    );
    check(
        one(json!({"if": {"const": 1}, "then": {"minimum": 2}, "else": {"maximum": 0}})),
        expect![[r#"
        properties.zip.if: keyword not allowed: no conditional or combined schemas [if]
        properties.zip.then: keyword not allowed: no conditional or combined schemas [then]
        properties.zip.else: keyword not allowed: no conditional or combined schemas [else]"#]],
    );
    for combinator in ["allOf", "anyOf", "oneOf"] {
        let got = render(compile(&one(json!({combinator: [{"type": "string"}]}))).map(|_| ()));
        assert_eq!(got, format!("properties.zip.{combinator}: keyword not allowed: no conditional or combined schemas [{combinator}]"));
    }
    check(one(json!({"not": {"type": "string"}})), expect![[r#"properties.zip.not: keyword not allowed: no conditional or combined schemas [not]"#]]);
    check(
        one(json!({"type": "string", "format": "password"})),
        expect![[r#"properties.zip.format: format "password" is refused: a form never asks for a password [format]"#]],
    );
    check(
        one(json!({"type": "string", "format": "hostname"})),
        expect![[r#"properties.zip.format: format "hostname" is not one of date, time, date-time, email, uri, file [format]"#]],
    );
    check(one(json!({"type": "string", "x-widget": "fancy"})), expect![[r#"properties.zip.x-widget: keyword not allowed [x-widget]"#]]);
    check(
        one(json!({"type": "array", "items": {"type": "integer"}})),
        expect![[r#"
        properties.zip.items.type: array items are strings [type]
        properties.zip.items.enum: array items need an enum of strings (multi-choice) [enum]"#]],
    );
    check(
        json!({"type": "object", "properties": {}, "minimum": 3}),
        expect![[r#"minimum: keyword not allowed at the root: a form's root is an object of properties [minimum]"#]],
    );
    check(json!({"type": "array"}), expect![[r#"type: a form's root must be of type "object" [type]"#]]);
    check(
        json!({"type": "object", "properties": {}, "additionalProperties": true}),
        expect![[r#"additionalProperties: only false is allowed: values carry only the form's properties [additionalProperties]"#]],
    );
    check(json!({"properties": {"a": {}}, "required": ["b"]}), expect![[r#"required.0: "b" is not a property of this form [required]"#]]);
}

#[test]
fn limits_hold_at_their_edge() {
    let props = |n: usize| {
        let map: serde_json::Map<String, Value> = (0..n).map(|i| (format!("p{i}"), json!({"type": "string"}))).collect();
        json!({"type": "object", "properties": map})
    };
    check(props(50), expect![[r#"ok"#]]);
    check(props(51), expect![[r#"properties: 51 properties exceed the limit 50 [maxProperties]"#]]);

    let choices = |n: usize| one(json!({"type": "string", "enum": (0..n).map(|i| format!("c{i}")).collect::<Vec<_>>()}));
    check(choices(64), expect![[r#"ok"#]]);
    check(choices(65), expect![[r#"properties.zip.enum: 65 choices exceed the limit 64 [enum]"#]]);
    let items = |n: usize| one(json!({"type": "array", "items": {"enum": (0..n).map(|i| format!("c{i}")).collect::<Vec<_>>()}}));
    check(items(64), expect![[r#"ok"#]]);
    check(items(65), expect![[r#"properties.zip.items.enum: 65 choices exceed the limit 64 [enum]"#]]);

    // 32 KB of schema: one byte over is TooLarge before anything else is read.
    let sized = |bytes: usize| {
        let base = serde_json::to_vec(&one(json!({"type": "string", "description": ""}))).unwrap().len();
        one(json!({"type": "string", "description": "x".repeat(bytes - base)}))
    };
    check(sized(32 * 1024 + 1), expect![[r#"{"type":"TooLarge","code":"document_too_large","limit":32768,"size":32769}"#]]);
    // Exactly 32 KB, spread over 50 short descriptions, compiles.
    let many_small = |bytes: usize| {
        let mut schema = props(50);
        let base = serde_json::to_vec(&schema).unwrap().len();
        let pad = bytes - base;
        let per = pad / 50;
        let extra = pad - per * 50;
        for i in 0..50 {
            let n = per + if i < extra { 1 } else { 0 };
            // `"description":""` plus a comma costs 17 bytes before the text.
            schema["properties"][format!("p{i}")]["description"] = json!("d".repeat(n - 17));
        }
        schema
    };
    let at = many_small(32 * 1024);
    assert_eq!(serde_json::to_vec(&at).unwrap().len(), 32 * 1024);
    check(at, expect![[r#"ok"#]]);
    check(many_small(32 * 1024 + 1), expect![[r#"{"type":"TooLarge","code":"document_too_large","limit":32768,"size":32769}"#]]);
}

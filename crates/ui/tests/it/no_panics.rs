//! No input panics the compiler or the validator (property-based: the
//! fuzzing available on the stable toolchain).

use proptest::prelude::*;
use serde_json::{Value, json};

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| json!(f)),
        "[a-z0-9:/.@ -]{0,12}".prop_map(Value::String),
        prop_oneof![
            Just("string"),
            Just("number"),
            Just("integer"),
            Just("boolean"),
            Just("array"),
            Just("object"),
            Just("date"),
            Just("email"),
            Just("uri"),
            Just("date-time"),
            Just("time")
        ]
        .prop_map(|s| Value::String(s.into())),
    ];
    let keys = prop_oneof![
        Just("type"),
        Just("enum"),
        Just("const"),
        Just("minimum"),
        Just("maximum"),
        Just("exclusiveMinimum"),
        Just("exclusiveMaximum"),
        Just("multipleOf"),
        Just("minLength"),
        Just("maxLength"),
        Just("format"),
        Just("items"),
        Just("minItems"),
        Just("maxItems"),
        Just("uniqueItems"),
        Just("properties"),
        Just("required"),
        Just("title"),
        Just("default"),
        Just("pattern"),
        Just("v"),
        Just("w"),
    ];
    leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(keys.clone().prop_map(str::to_owned), inner, 0..6).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn compiling_and_validating_never_panics(schema in json_value(), property in json_value(), values in json_value()) {
        let _ = lattice_ui::compile(&schema);
        let form = json!({"type": "object", "properties": {"v": property, "w": {"type": "string"}}});
        if let Ok(compiled) = lattice_ui::compile(&form) {
            let _ = compiled.validate(&values);
            // The fast path and the full report always agree.
            let wrapped = json!({"v": values});
            prop_assert_eq!(compiled.is_valid(&wrapped), compiled.validate(&wrapped).is_ok());
            prop_assert_eq!(compiled.is_valid(&values), compiled.validate(&values).is_ok());
        }
        let _ = lattice_ui::app::external_reference(&values.to_string());
    }
}

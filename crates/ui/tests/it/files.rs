//! The file field's cases (tests/data/file-field): values the compiled
//! validator takes or refuses, and schemas the compiler refuses.

use std::path::Path;

use lattice_ui::compile;
use serde_json::{Value, json};

fn read(name: &str) -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/file-field").join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

#[test]
fn the_validator_agrees_with_every_file_case() {
    let mut run = 0;
    for group in read("cases.json") {
        let form = compile(&group["schema"]).unwrap_or_else(|e| panic!("{}: {e:?}", group["description"]));
        for case in group["tests"].as_array().unwrap() {
            let valid = form.validate(&case["data"]).is_ok();
            assert_eq!(valid, case["valid"].as_bool().unwrap(), "{} / {}", group["description"], case["description"]);
            assert_eq!(form.is_valid(&case["data"]), valid, "the hot path agrees: {}", case["description"]);
            run += 1;
        }
    }
    assert_eq!(run, 19);
}

#[test]
fn the_compiler_refuses_every_bad_file_field_naming_the_keyword() {
    let cases = read("refusals.json");
    assert_eq!(cases.len(), 14);
    for case in cases {
        let schema = json!({"type": "object", "properties": {"f": case["schema"]}});
        let Err(lattice_core::Error::ValidationFailed { errors, .. }) = compile(&schema) else {
            panic!("{} was compiled", case["description"]);
        };
        assert!(errors.iter().any(|e| e.keyword == case["keyword"].as_str().unwrap()), "{}: {errors:?}", case["description"]);
    }
}

#[test]
fn a_file_fields_rule_is_what_the_server_checks_files_against() {
    let form = compile(&json!({"type": "object", "properties": {
        "one": {"type": "string", "format": "file", "accept": ["image/*"], "maxSize": 5},
        "many": {"type": "array", "items": {"type": "string", "format": "file"}}
    }}))
    .unwrap();
    let one = form.property("one").unwrap().file.clone().unwrap();
    assert_eq!((one.accept.as_slice(), one.max_size, one.many), (["image/*".to_owned()].as_slice(), Some(5), false));
    assert!(one.admits("image/webp", 5).is_ok() && one.admits("image/webp", 6).is_err() && one.admits("text/plain", 1).is_err());
    let many = form.property("many").unwrap().file.clone().unwrap();
    assert!(many.many && many.accept.is_empty() && many.max_size.is_none());
    assert_eq!(lattice_ui::hints::widgets(&form, None).values().collect::<Vec<_>>(), [&lattice_ui::hints::Widget::File; 2]);
}

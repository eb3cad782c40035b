//! Our compiled FormSchema validator against the `jsonschema` crate (0.61)
//! on the same schemas and values, in one run.
//!
//! Both check the same thing: the form's schema with
//! `additionalProperties: false` (our values carry only the form's
//! properties) and formats asserted (`should_validate_formats(true)`). The
//! figure is the time of one `is_valid` call, the hot path of a submission
//! check; the full error report is measured too.

use std::hint::black_box;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

const ROUND: Duration = Duration::from_millis(100);
const ROUNDS: usize = 15;

fn small_form() -> (Value, Value, Value) {
    let schema = json!({
        "type": "object",
        "properties": {
            "date": {"type": "string", "format": "date"},
            "severity": {"type": "string", "enum": ["low", "medium", "high", "critical"]},
            "areas": {"type": "array", "items": {"enum": ["api", "web", "db"]}, "uniqueItems": true, "maxItems": 3},
            "note": {"type": "string", "maxLength": 500}
        },
        "required": ["date", "severity"],
        "additionalProperties": false
    });
    let valid = json!({"date": "2026-11-29", "severity": "high", "areas": ["api", "db"], "note": "the database stopped answering"});
    let invalid = json!({"date": "2026-02-30", "severity": "urgent", "areas": ["api", "api"], "note": 5});
    (schema, valid, invalid)
}

fn wide_form() -> (Value, Value, Value) {
    let mut properties = Map::new();
    let mut valid = Map::new();
    let mut invalid = Map::new();
    for i in 0..50 {
        let (schema, good, bad) = match i % 5 {
            0 => (json!({"type": "string", "minLength": 1, "maxLength": 80}), json!(format!("answer {i}")), json!("")),
            1 => (json!({"type": "integer", "minimum": 0, "maximum": 1000}), json!(i * 3), json!(-1)),
            2 => (json!({"type": "string", "enum": ["a", "b", "c", "d"]}), json!("c"), json!("z")),
            3 => (json!({"type": "boolean"}), json!(true), json!("yes")),
            _ => (json!({"type": "string", "format": "email"}), json!(format!("person{i}@example.com")), json!("nobody")),
        };
        properties.insert(format!("field_{i:02}"), schema);
        valid.insert(format!("field_{i:02}"), good);
        invalid.insert(format!("field_{i:02}"), bad);
    }
    let schema = json!({"type": "object", "properties": properties, "additionalProperties": false});
    (schema, Value::Object(valid), Value::Object(invalid))
}

/// Nanoseconds per call of `a` and of `b`, measured in alternating rounds
/// (so that a change in the machine's speed affects both alike); the
/// fastest round of each, the least disturbed by everything else running.
fn ns_per_call(mut a: impl FnMut() -> bool, mut b: impl FnMut() -> bool) -> (f64, f64) {
    let round = |f: &mut dyn FnMut() -> bool| {
        let mut calls = 0u64;
        let start = Instant::now();
        while start.elapsed() < ROUND {
            for _ in 0..256 {
                black_box(f());
            }
            calls += 256;
        }
        start.elapsed().as_nanos() as f64 / calls as f64
    };
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        xs.push(round(&mut a));
        ys.push(round(&mut b));
    }
    (fastest(xs), fastest(ys))
}

fn fastest(v: Vec<f64>) -> f64 {
    v.into_iter().fold(f64::INFINITY, f64::min)
}

pub fn run() {
    let mut ratios = Vec::new();
    for (name, (schema, valid, invalid)) in [("small form", small_form()), ("50-property form", wide_form())] {
        let ours = lattice_ui::compile(&schema).expect("our subset accepts the form");
        let theirs = jsonschema::options().should_validate_formats(true).build(&schema).expect("jsonschema accepts the form");
        for (label, values, expected) in [("valid", &valid, true), ("invalid", &invalid, false)] {
            assert_eq!(ours.is_valid(values), expected, "{name} {label}: ours");
            assert_eq!(theirs.is_valid(values), expected, "{name} {label}: jsonschema");
            let (ours_ns, theirs_ns) = ns_per_call(|| ours.is_valid(black_box(values)), || theirs.is_valid(black_box(values)));
            println!("validator {name} {label} values: ours {ours_ns:.0} ns, jsonschema {theirs_ns:.0} ns per is_valid");
            let ratio = theirs_ns / ours_ns;
            println!("ratio {ratio:.2} validator is_valid, {name}, {label} values");
            ratios.push(ratio);
            let (ours_ns, theirs_ns) =
                ns_per_call(|| ours.validate(black_box(values)).is_ok(), || theirs.iter_errors(black_box(values)).count() == 0);
            println!("validator {name} {label} values: ours {ours_ns:.0} ns, jsonschema {theirs_ns:.0} ns per full error report");
        }
    }
    let worst = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    println!("ratio {worst:.2} validator vs jsonschema 0.61 (the lowest of the is_valid figures)");
}

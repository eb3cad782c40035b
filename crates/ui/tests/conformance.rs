//! REQUIREMENTS.md U5: the validator agrees with the official JSON Schema Test Suite
//! (draft 2020-12) on every case whose schema uses only allowed keywords,
//! and refuses at compilation every case that uses a refused one.
//!
//! One test per case, read as data from the vendored copy in
//! `tests/data/json-schema-test-suite` (its LICENSE and SOURCE beside it). A case whose
//! root is not a form is wrapped as the single required property `v`
//! (`{"v": data}`); a form-shaped case whose data is not an object is not a
//! form's values and is not run. Deliberate differences are listed, each
//! with its reason, in `conformance-differences.txt`; a difference missing
//! from the list fails, and so does a listed one that no longer differs.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use lattice_ui::schema::{compile, property_keywords, root_keywords};
use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::{Value, json};

/// The suite, vendored (its LICENSE and SOURCE beside it).
const REQUIRED: &str = "tests/data/json-schema-test-suite/tests/draft2020-12";
const FORMATS: &[&str] = &["date", "time", "date-time", "email", "uri"];

fn suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(REQUIRED)
}

/// Every keyword our tables name somewhere.
fn known_keywords() -> BTreeSet<&'static str> {
    root_keywords().iter().chain(property_keywords()).copied().collect()
}

/// Whether the schema uses a keyword outside our tables (or is a boolean
/// schema, which a form cannot be).
fn uses_refused_keyword(schema: &Value, known: &BTreeSet<&str>) -> Option<String> {
    match schema {
        Value::Bool(_) => Some("a boolean schema".into()),
        Value::Object(map) => {
            for (k, v) in map {
                if !known.contains(k.as_str()) {
                    return Some(k.clone());
                }
                let nested: Vec<&Value> = match k.as_str() {
                    "properties" => v.as_object().map(|m| m.values().collect()).unwrap_or_default(),
                    "items" => vec![v],
                    _ => vec![],
                };
                for n in nested {
                    if let Some(found) = uses_refused_keyword(n, known) {
                        return Some(found);
                    }
                }
            }
            None
        }
        _ => None,
    }
}

fn is_form_shaped(schema: &Value) -> bool {
    schema.as_object().is_some_and(|m| {
        m.contains_key("properties")
            || m.contains_key("required")
            || m.contains_key("additionalProperties")
            || m.get("type") == Some(&json!("object"))
    })
}

struct Difference {
    kind: String,
    file: String,
    group: String,
    test: String,
}

fn differences() -> Vec<Difference> {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance-differences.txt"))
        .expect("tests/conformance-differences.txt");
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let parts: Vec<&str> = l.split(" | ").collect();
            assert!(parts.len() >= 4, "a difference line has kind | file | group | test | reason: {l}");
            Difference { kind: parts[0].into(), file: parts[1].into(), group: parts[2].into(), test: parts[3].into() }
        })
        .collect()
}

fn main() {
    let args = Arguments::from_args();
    let known = known_keywords();
    let listed = differences();
    let is_listed = |kind: &str, file: &str, group: &str, test: &str| {
        listed.iter().any(|d| d.kind == kind && d.file == file && d.group == group && (d.test == "*" || d.test == test))
    };
    let mut files: Vec<(String, PathBuf)> = std::fs::read_dir(suite_dir())
        .unwrap_or_else(|e| panic!("the JSON Schema Test Suite at {}: {e}", suite_dir().display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), p))
        .collect();
    for f in FORMATS {
        files.push((format!("optional/format/{f}.json"), suite_dir().join(format!("optional/format/{f}.json"))));
    }
    files.sort();

    let mut trials = Vec::new();
    let (mut run, mut agreed, mut refused, mut narrowed, mut different, mut not_values) = (0, 0, 0, 0, 0, 0);
    let mut used_listings = BTreeSet::new();
    for (file, path) in &files {
        let groups: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        for group in groups {
            let gdesc = group["description"].as_str().unwrap().to_owned();
            let schema = group["schema"].clone();
            let wrap = !is_form_shaped(&schema);
            let form = if wrap {
                // The suite's `$schema` belongs at the root, where we wrap.
                let mut inner = schema.clone();
                let dialect = inner.as_object_mut().and_then(|m| m.remove("$schema"));
                let mut root = json!({"type": "object", "properties": {"v": inner}, "required": ["v"]});
                if let Some(d) = dialect {
                    root["$schema"] = d;
                }
                root
            } else {
                schema.clone()
            };
            let compiled = compile(&form);
            if let Some(keyword) = uses_refused_keyword(&schema, &known) {
                refused += 1;
                let ok = compiled.is_err();
                trials.push(Trial::test(format!("{file} :: {gdesc} :: refused ({keyword})"), move || {
                    if ok { Ok(()) } else { Err(Failed::from(format!("compiled a schema that uses {keyword}"))) }
                }));
                continue;
            }
            let compiled = match compiled {
                Ok(c) => c,
                Err(e) => {
                    narrowed += 1;
                    if !is_listed("refused", file, &gdesc, "*") {
                        eprintln!("UNLISTED refused | {file} | {gdesc} | * | {e}");
                    }
                    let listed = is_listed("refused", file, &gdesc, "*");
                    used_listings.insert(("refused".to_owned(), file.clone(), gdesc.clone(), "*".to_owned()));
                    trials.push(Trial::test(format!("{file} :: {gdesc} :: refused by the subset"), move || {
                        if listed { Ok(()) } else { Err(Failed::from(format!("refused at compilation but not listed as deliberate: {e}"))) }
                    }));
                    continue;
                }
            };
            for test in group["tests"].as_array().unwrap() {
                let tdesc = test["description"].as_str().unwrap().to_owned();
                let data = test["data"].clone();
                if !wrap && !data.is_object() {
                    not_values += 1;
                    continue;
                }
                run += 1;
                let values = if wrap { json!({"v": data}) } else { data };
                let ours = compiled.validate(&values).is_ok();
                assert_eq!(ours, compiled.is_valid(&values), "the fast path and the full path disagree on {file} / {gdesc} / {tdesc}");
                let expected = test["valid"].as_bool().unwrap();
                let name = format!("{file} :: {gdesc} :: {tdesc}");
                if ours == expected {
                    agreed += 1;
                    let listed = is_listed("verdict", file, &gdesc, &tdesc);
                    trials.push(Trial::test(name, move || {
                        if listed { Err(Failed::from("listed as a deliberate difference, but now agrees: remove it from the list")) } else { Ok(()) }
                    }));
                } else {
                    different += 1;
                    let listed = is_listed("verdict", file, &gdesc, &tdesc);
                    if !listed {
                        eprintln!("UNLISTED verdict | {file} | {gdesc} | {tdesc} | ours={ours} suite={expected}");
                    }
                    used_listings.insert(("verdict".to_owned(), file.clone(), gdesc.clone(), tdesc.clone()));
                    trials.push(Trial::test(name, move || {
                        if listed {
                            Ok(())
                        } else {
                            Err(Failed::from(format!("ours says valid={ours}, the suite says valid={expected}, and it is not listed")))
                        }
                    }));
                }
            }
        }
    }
    for d in &listed {
        let used = used_listings.iter().any(|(k, f, g, t)| *k == d.kind && *f == d.file && *g == d.group && (d.test == "*" || *t == d.test));
        let name = format!("differences list :: {} | {} | {} | {}", d.kind, d.file, d.group, d.test);
        trials.push(Trial::test(name, move || if used { Ok(()) } else { Err(Failed::from("this listed difference does not occur")) }));
    }
    println!(
        "conformance: {run} value cases run, {agreed} agreed, {different} deliberately different; \
         {refused} schemas refused at compilation for a refused keyword, {narrowed} refused by the subset's narrower rules (listed); \
         {not_values} cases not run (their data is not a form's values)"
    );
    libtest_mimic::run(&args, trials).exit();
}

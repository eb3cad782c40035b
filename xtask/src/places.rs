//! The rows of docs/ARCHITECTURE.md's "Where to change what" that no
//! crate's own test guards: each test here fails when one of the places a
//! change must touch is forgotten. They read the source as text, as
//! `layers.rs` reads the docs.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask sits in the workspace").to_path_buf()
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Every `.rs` file under `dir`, with its path from the root.
fn sources(dir: &Path, found: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(root()).unwrap_or(&path).display().to_string();
            found.push((rel, std::fs::read_to_string(&path).unwrap_or_default()));
        }
    }
}

/// The rows of the Markdown table under `heading`: each row's cells, the
/// header's first, the separator left out.
fn table(doc: &str, heading: &str) -> Vec<Vec<String>> {
    let start = doc.find(heading).unwrap_or_else(|| panic!("no `{heading}` section"));
    let section = &doc[start + heading.len()..];
    let section = section.find("\n## ").map_or(section, |end| &section[..end]);
    section
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with('|') && !l.starts_with("|--") && !l.starts_with("|:-"))
        .map(|l| l.trim_matches('|').split('|').map(|c| c.trim().trim_matches('`').to_owned()).collect())
        .collect()
}

/// A switch key is `lattice_core::SwitchKey`'s: the web front end names one
/// only through it (`SwitchKey::Forms.as_str()`, a match on the enum), so a
/// renamed or added key is a compile error there, not a string that
/// silently matches nothing.
#[test]
fn the_web_front_end_writes_no_switch_key_by_hand() {
    let mut files = Vec::new();
    sources(&root().join("apps/web/src"), &mut files);
    let by_hand: Vec<String> = files
        .iter()
        .flat_map(|(path, text)| {
            text.lines()
                .enumerate()
                .filter(|(_, l)| l.contains("\"ui:") || l.contains("\"mcp:"))
                .map(move |(n, l)| format!("{path}:{}: {}", n + 1, l.trim()))
        })
        .collect();
    assert!(by_hand.is_empty(), "switch keys written by hand (use lattice_core::SwitchKey):\n{}", by_hand.join("\n"));
}

/// The readers of events that pick the types they handle, each with the
/// column docs/LOG.md gives it. A reader handles a type when its file
/// names the variant (`Event::MessagePosted`) or, in SQL, the type
/// (`'message_posted'`).
const READERS: [(&str, &str); 6] = [
    ("unread", "crates/log/src/store/unread.rs"),
    ("AG-UI", "crates/api/src/routes/agui/translate.rs"),
    ("transcript", "crates/agent/src/transcript.rs"),
    ("MCP resources", "crates/mcp/src/subscriptions.rs"),
    ("chat", "apps/web/src/data/thread_fold.rs"),
    ("access", "crates/log/src/fanout.rs"),
];

/// `Variant => "name",` lines of `events!`.
fn event_types() -> Vec<(String, String)> {
    let text = read("crates/core/src/event.rs");
    let start = text.find("\nevents! {").expect("crates/core/src/event.rs calls events!");
    let block = &text[start..];
    let block = &block[..block.find("\n}").expect("events! closes")];
    block
        .lines()
        .filter_map(|l| l.trim().split_once(" => "))
        .map(|(variant, name)| (variant.to_owned(), name.trim_end_matches(',').trim_matches('"').to_owned()))
        .collect()
}

fn names_in(text: &str, variant: &str, name: &str) -> bool {
    let pattern = format!("Event::{variant}");
    let by_variant = text.match_indices(&pattern).any(|(at, _)| !text[at + pattern.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_'));
    by_variant || text.contains(&format!("'{name}'"))
}

/// A new event type is a decision in each reader: docs/LOG.md's table says
/// which handle it, and each reader's code agrees with its column.
#[test]
fn every_event_type_is_placed_in_each_reader() {
    let rows = table(&read("docs/LOG.md"), "## Who reads each event");
    let header: Vec<&str> = rows.first().expect("the table has a header").iter().map(String::as_str).collect();
    let expected: Vec<&str> = std::iter::once("event").chain(READERS.iter().map(|(column, _)| *column)).collect();
    assert_eq!(header, expected, "docs/LOG.md's readers table has these columns");
    let types = event_types();
    assert!(types.len() > 20, "events! read: {types:?}");
    let mut wrong = Vec::new();
    for (_, name) in &types {
        if !rows.iter().skip(1).any(|r| r[0] == *name) {
            wrong.push(format!("{name}: no row in docs/LOG.md's `Who reads each event`"));
        }
    }
    for row in rows.iter().skip(1) {
        let Some((variant, name)) = types.iter().find(|(_, n)| *n == row[0]) else {
            wrong.push(format!("{}: a row for no event type", row[0]));
            continue;
        };
        for (cell, (column, file)) in row.iter().skip(1).zip(READERS) {
            let said = match cell.as_str() {
                "yes" => true,
                "—" | "-" => false,
                other => panic!("{name}, {column}: `{other}` (write yes or —)"),
            };
            if names_in(&read(file), variant, name) != said {
                wrong.push(format!(
                    "{name}: docs/LOG.md says {column} ({file}) {}",
                    if said { "handles it, and it does not" } else { "leaves it, and it handles it" }
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Each chat route in `App` is in docs/WEB.md's routes table, and each
/// route there is one `App` has.
#[test]
fn every_route_of_the_chat_is_documented() {
    let shell = read("apps/web/src/pages/shell.rs");
    let mut mounted: Vec<String> = shell
        .split("path!(\"")
        .skip(1)
        .filter_map(|rest| rest.split_once('"').map(|(path, _)| path.to_owned()))
        .map(|path| path.split('/').map(|seg| seg.strip_prefix(':').map_or(seg.to_owned(), |p| format!("{{{p}}}"))).collect::<Vec<_>>().join("/"))
        .collect();
    mounted.sort();
    let mut documented: Vec<String> = table(&read("docs/WEB.md"), "## Routes")
        .into_iter()
        .skip(1)
        .map(|r| r[0].clone())
        .filter(|r| r.starts_with('/') && !r.contains('#'))
        .collect();
    documented.sort();
    assert!(mounted.len() >= 5, "routes read from shell.rs: {mounted:?}");
    assert_eq!(mounted, documented, "the routes of `App` (apps/web/src/pages/shell.rs) and docs/WEB.md's `## Routes` table");
}

/// A benchmark is run by `cargo xtask bench NAME` (`NAMES`), has its arm in
/// `lattice-bench`'s `main` (the chat's runs in a browser,
/// `e2e/src/bin/bench-web.rs`), and its section in docs/BENCHMARKS.md.
#[test]
fn every_benchmark_is_run_and_documented() {
    let xtask = read("xtask/src/bench.rs");
    let line = xtask.lines().find(|l| l.starts_with("const NAMES")).expect("xtask/src/bench.rs has NAMES");
    // `soak` takes its own arguments and is matched before NAMES.
    let names: Vec<&str> = line.split('"').skip(1).step_by(2).chain(["soak"]).collect();
    assert!(names.len() > 5, "NAMES read: {names:?}");
    let main = read("crates/bench/src/main.rs");
    // The hot thread's server: a process the fanout benchmark starts, no benchmark.
    let helpers = ["serve-hot"];
    let arms: Vec<&str> = main.lines().filter_map(|l| l.trim().strip_prefix('"')?.split_once("\" =>").map(|(a, _)| a)).collect();
    let docs = read("docs/BENCHMARKS.md");
    let headed =
        |name: &str| docs.lines().any(|l| l.starts_with('#') && matches!(l.trim_start_matches('#').trim().split(':').next(), Some(h) if h == name));
    let mut wrong = Vec::new();
    for name in &names {
        let runs = if *name == "web" { root().join("e2e/src/bin/bench-web.rs").exists() } else { arms.contains(name) };
        if !runs {
            wrong.push(format!("{name}: no arm in crates/bench/src/main.rs"));
        }
        if !headed(name) {
            wrong.push(format!("{name}: no `## {name}` section in docs/BENCHMARKS.md"));
        }
    }
    for arm in arms.iter().filter(|a| !helpers.contains(a) && !names.contains(a)) {
        wrong.push(format!("{arm}: not in NAMES (xtask/src/bench.rs), so `cargo xtask bench {arm}` refuses it"));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Each `ArtifactKind` of crates/ui is registered (`kinds()`) and each
/// kind's name is in the committed wire schema.
#[test]
fn every_artifact_kind_is_registered_and_in_the_wire_schema() {
    let kinds = read("crates/ui/src/kinds.rs");
    let registered = kinds.split("pub fn kinds()").nth(1).and_then(|rest| rest.split("\n}").next()).expect("crates/ui/src/kinds.rs has kinds()");
    let impls: Vec<&str> = kinds.split("impl ArtifactKind for ").skip(1).filter_map(|rest| rest.split_whitespace().next()).collect();
    assert!(impls.len() >= 4, "kinds read: {impls:?}");
    let schema: serde_json::Value = serde_json::from_str(&read("schemas/ui.v1.json")).expect("schemas/ui.v1.json is JSON");
    let mut wrong = Vec::new();
    for kind in &impls {
        if !registered.contains(&format!("Arc::new({kind})")) {
            wrong.push(format!("{kind}: not in kinds() (crates/ui/src/kinds.rs), so the log never registers it"));
        }
    }
    let names: Vec<&str> =
        kinds.lines().filter_map(|l| l.strip_prefix("pub const ")?.split_once(": &str = \"")).map(|(_, v)| v.trim_end_matches("\";")).collect();
    assert_eq!(names.len(), impls.len(), "a name constant per kind in crates/ui/src/kinds.rs");
    for name in names {
        if schema["kinds"].get(name).is_none() {
            wrong.push(format!("{name}: not in schemas/ui.v1.json's kinds (ui_schema(), then `cargo xtask schema`)"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Each handler `router` mounts (`crates/api/src/lib.rs`) is in `ApiDoc`'s
/// `paths(...)` (`crates/api/src/openapi.rs`): the access suite walks the
/// OpenAPI document, so a route left out of it would be walked by nothing.
#[test]
fn every_route_of_the_api_is_in_the_openapi_document() {
    let lib = read("crates/api/src/lib.rs");
    let router = lib.split("pub fn router(").nth(1).and_then(|rest| rest.split("\n}\n").next()).expect("crates/api/src/lib.rs has router");
    // The route modules, as `use routes::{…};` names them.
    let areas: Vec<&str> = lib
        .split("use routes::{")
        .nth(1)
        .and_then(|rest| rest.split('}').next())
        .expect("crates/api/src/lib.rs uses its routes")
        .split(',')
        .map(str::trim)
        .collect();
    let handler = |word: &str| {
        let word = word.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'));
        let (area, name) = word.split_once("::")?;
        (areas.contains(&area) && !name.is_empty() && !name.contains(':')).then(|| word.to_owned())
    };
    let mounted: std::collections::BTreeSet<String> = router
        .lines()
        .filter(|l| l.trim_start().starts_with(".route(\"/"))
        .flat_map(|l| l.split(['(', ')', ',', '.', ' ']).filter_map(handler).collect::<Vec<_>>())
        .collect();
    assert!(mounted.len() > 30, "handlers read from router: {mounted:?}");
    let openapi = read("crates/api/src/openapi.rs");
    let paths = openapi.split("paths(").nth(1).and_then(|rest| rest.split("),\n").next()).expect("ApiDoc has paths(...)");
    let listed: std::collections::BTreeSet<String> = paths.split([',', ' ', '\n']).filter_map(handler).collect();
    let missing: Vec<&String> = mounted.difference(&listed).collect();
    let extra: Vec<&String> = listed.difference(&mounted).collect();
    assert!(missing.is_empty() && extra.is_empty(), "mounted but not in ApiDoc's paths: {missing:?}; in paths but not mounted: {extra:?}");
}

/// Each payload the bridge publishes under a subject of its own (a struct of
/// `crates/bridge/src/payloads.rs` that carries the envelope's `Origin`) is
/// in `bridge_schema()`, so `schemas/bridge.v1.json` describes it.
#[test]
fn every_bridged_payload_is_in_the_subject_schemas() {
    let payloads = read("crates/bridge/src/payloads.rs");
    let published: Vec<&str> = payloads
        .split("pub struct ")
        .skip(1)
        .filter(|rest| rest.split("\n}").next().is_some_and(|body| body.contains("origin: Origin")))
        .filter_map(|rest| rest.split_whitespace().next())
        .collect();
    assert!(published.len() >= 2, "payloads read: {published:?}");
    let schema = payloads.split("pub fn bridge_schema()").nth(1).and_then(|rest| rest.split("\n}\n").next()).expect("payloads.rs has bridge_schema");
    let missing: Vec<&&str> = published.iter().filter(|p| !schema.contains(&format!("subject_schema::<{p}>"))).collect();
    assert!(missing.is_empty(), "published payloads not in bridge_schema() (then `cargo xtask schema`): {missing:?}");
}

//! The layers, enforced: every normal dependency between two workspace
//! crates (an arrow) must be one docs/ARCHITECTURE.md's "Allowed
//! dependencies" table allows, and every workspace crate must have its row.
//! Dev-dependencies are free. Runs with `cargo test` (xtask's own tests).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const SECTION: &str = "## Allowed dependencies";

/// Each crate's row: the internal crates it may depend on.
type Table = BTreeMap<String, BTreeSet<String>>;

/// The table under [`SECTION`]: `| crate | allowed, allowed |` rows, names
/// in backticks or not, `—` for none.
fn read_table(doc: &str) -> Result<Table, String> {
    let start = doc.find(SECTION).ok_or_else(|| format!("docs/ARCHITECTURE.md has no `{SECTION}` section"))?;
    let section = &doc[start + SECTION.len()..];
    let section = section.find("\n## ").map_or(section, |end| &section[..end]);
    let mut table = Table::new();
    for line in section.lines().map(str::trim).filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let [name, allowed, ..] = cells[..] else { continue };
        let name = name.trim_matches('`');
        // The header row and the separator row name no crate.
        if name.eq_ignore_ascii_case("crate") || name.chars().all(|c| c == '-' || c == ':') {
            continue;
        }
        let allowed =
            allowed.split(',').map(|a| a.trim().trim_matches('`')).filter(|a| !a.is_empty() && *a != "—" && *a != "-").map(str::to_owned).collect();
        if table.insert(name.to_owned(), allowed).is_some() {
            return Err(format!("docs/ARCHITECTURE.md's `{SECTION}` lists {name} twice"));
        }
    }
    Ok(table)
}

/// The workspace's crates and their arrows (normal and build dependencies
/// on other workspace crates), from `cargo metadata`.
fn arrows(root: &Path) -> Result<BTreeMap<String, BTreeSet<String>>, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps", "--manifest-path"])
        .arg(root.join("Cargo.toml"))
        .output()
        .map_err(|e| format!("cargo metadata did not start: {e}"))?;
    if !out.status.success() {
        return Err(format!("cargo metadata failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|e| format!("cargo metadata's output: {e}"))?;
    let packages = metadata["packages"].as_array().ok_or("cargo metadata lists no packages")?;
    let members: BTreeSet<&str> = packages.iter().filter_map(|p| p["name"].as_str()).collect();
    let mut arrows = BTreeMap::new();
    for package in packages {
        let name = package["name"].as_str().ok_or("a package without a name")?;
        let to = package["dependencies"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|d| d["kind"].as_str() != Some("dev"))
            .filter_map(|d| d["name"].as_str())
            .filter(|d| members.contains(d))
            .map(str::to_owned)
            .collect();
        arrows.insert(name.to_owned(), to);
    }
    Ok(arrows)
}

/// What the arrows break of the table, one line each; empty when nothing.
fn violations(arrows: &BTreeMap<String, BTreeSet<String>>, table: &Table) -> Vec<String> {
    let mut found = Vec::new();
    for (from, to) in arrows {
        let Some(allowed) = table.get(from) else {
            found.push(format!("{from} has no row in the table"));
            continue;
        };
        for to in to.difference(allowed) {
            found.push(format!("{from} → {to} is not allowed"));
        }
    }
    for name in table.keys().filter(|n| !arrows.contains_key(*n)) {
        found.push(format!("{name} has a row but is no workspace crate"));
    }
    found
}

#[test]
fn every_arrow_between_crates_is_one_the_architecture_allows() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask sits in the workspace");
    let doc = std::fs::read_to_string(root.join("docs/ARCHITECTURE.md")).expect("docs/ARCHITECTURE.md reads");
    let table = read_table(&doc).unwrap();
    let arrows = arrows(root).unwrap();
    let found = violations(&arrows, &table);
    assert!(
        found.is_empty(),
        "the crates' dependencies break docs/ARCHITECTURE.md's `{SECTION}` (fix the dependency, or the table if the layer is meant):\n  {}",
        found.join("\n  ")
    );
}

#[test]
fn the_table_is_read_as_written() {
    let doc = "# A\n\n## Allowed dependencies\n\n| Crate | May depend on |\n|---|---|\n| `lattice-core` | — |\n| `lattice-ui` | `lattice-core` |\n\n## Next\n\n| `lattice-x` | y |\n";
    let table = read_table(doc).unwrap();
    let arrows = BTreeMap::from([
        ("lattice-core".to_owned(), BTreeSet::from(["lattice-ui".to_owned()])),
        ("lattice-ui".to_owned(), BTreeSet::from(["lattice-core".to_owned()])),
        ("lattice-log".to_owned(), BTreeSet::new()),
    ]);
    assert_eq!(violations(&arrows, &table), ["lattice-core → lattice-ui is not allowed", "lattice-log has no row in the table"]);
}

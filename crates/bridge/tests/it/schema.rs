//! REQUIREMENTS.md B5: `schemas/bridge.v1.json` is what the payload types generate.
//! `cargo xtask schema` (or LATTICE_UPDATE_SCHEMAS=1) regenerates it.

use std::path::Path;

#[test]
fn the_committed_subject_schemas_match_the_types() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas/bridge.v1.json");
    let generated = serde_json::to_string_pretty(&lattice_bridge::bridge_schema()).unwrap() + "\n";
    if std::env::var_os("LATTICE_UPDATE_SCHEMAS").is_some() {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(committed == generated, "schemas/bridge.v1.json differs from what crates/bridge generates: run `cargo xtask schema`");
}

//! REQUIREMENTS.md U10: `schemas/ui.v1.json` is what the types generate. Run
//! `cargo xtask schema` (or set LATTICE_UPDATE_SCHEMAS=1) after changing a
//! payload type, and commit the file.

use std::path::Path;

#[test]
fn the_committed_wire_schema_matches_the_types() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas/ui.v1.json");
    let generated = serde_json::to_string_pretty(&lattice_ui::wire::ui_schema()).unwrap() + "\n";
    if std::env::var_os("LATTICE_UPDATE_SCHEMAS").is_some() {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(committed == generated, "schemas/ui.v1.json differs from what crates/ui generates: run `cargo xtask schema` and commit the result");
}

#[test]
fn the_wire_schema_describes_every_kind() {
    let doc = lattice_ui::wire::ui_schema();
    for kind in ["form", "dashboard", "submission", "app"] {
        assert!(doc["kinds"].get(kind).is_some(), "{kind} missing");
    }
    assert!(doc["$defs"].get("Panel").is_some());
}

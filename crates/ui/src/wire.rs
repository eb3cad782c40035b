//! The wire schema of every payload (REQUIREMENTS.md U10), generated from the Rust
//! types and committed as `schemas/ui.v1.json`.

use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use crate::app::App;
use crate::dashboard::Dashboard;
use crate::form::Form;
use crate::hints::UiHints;
use crate::submission::Submission;

/// The document: one `$defs` entry per payload, keyed by artifact kind.
pub fn ui_schema() -> Value {
    let mut generator = SchemaSettings::draft2020_12().into_generator();
    let mut kinds = Map::new();
    kinds.insert("form".into(), generator.subschema_for::<Form>().to_value());
    kinds.insert("dashboard".into(), generator.subschema_for::<Dashboard>().to_value());
    kinds.insert("submission".into(), generator.subschema_for::<Submission>().to_value());
    kinds.insert("app".into(), generator.subschema_for::<App>().to_value());
    kinds.insert("ui_hints".into(), generator.subschema_for::<UiHints>().to_value());
    let defs: Map<String, Value> = generator.take_definitions(true).into_iter().collect();
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:lattice:schemas:ui.v1",
        "title": "lattice UI model payloads, v1",
        "description": "The data of lattice's form, dashboard, submission and app artifacts. Generated from crates/ui; do not edit.",
        "kinds": kinds,
        "$defs": defs,
    })
}

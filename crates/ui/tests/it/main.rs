//! The UI model's tests: refusals and limits as snapshots, values, apps,
//! the committed wire schema, and no panics on any input.

mod apps;
mod files;
mod no_panics;
mod refusals;
mod values;
mod wire;

use lattice_core::Error;

/// An error as a reviewer reads it: one line per field.
pub fn render(result: Result<(), Error>) -> String {
    match result {
        Ok(()) => "ok".into(),
        Err(Error::ValidationFailed { errors, .. }) => {
            errors.iter().map(|e| format!("{}: {} [{}]", e.path, e.message, e.keyword)).collect::<Vec<_>>().join("\n")
        }
        Err(other) => serde_json::to_string(&other).unwrap(),
    }
}

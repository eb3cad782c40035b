//! The UI model: the artifact kinds forms, dashboards and their shapes.
//!
//! Pure data and checks: no I/O, no HTTP, no SQL, so the same verdicts run
//! in the server and, compiled to wasm32, in the browser.

pub mod dashboard;
pub mod form;
mod kinds;

pub use kinds::{DashboardKind, FormKind, kinds};

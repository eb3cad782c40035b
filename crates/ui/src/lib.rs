//! The UI model: what forms, dashboards, mini apps and submissions may hold,
//! and the checks the write path runs on them.
//!
//! Pure data and checks: no I/O, no HTTP, no SQL, so the same verdicts run
//! in the server and, compiled to wasm32, in the browser before sending.

pub mod app;
pub mod app_domains;
pub mod app_policy;
pub mod asks;
pub mod attached;
pub mod checks;
pub mod dashboard;
pub mod elicitation;
mod external;
pub mod form;
pub mod hints;
mod kinds;
pub mod schema;
pub mod submission;
pub mod tool_names;
pub mod wire;

pub use checks::checks;
pub use kinds::{APP, AppKind, DASHBOARD, DashboardKind, FORM, FormKind, SUBMISSION, SubmissionKind, kinds};
pub use schema::{CompiledForm, compile};

//! The `/v1` API's bodies, written once: `lattice-api` answers with these
//! types and `apps/web` reads them, so a renamed field fails to compile
//! instead of reading empty. Requests refuse unknown fields. Errors are
//! lattice-core's typed [`lattice_core::Error`] under `error`
//! ([`ErrorBody`]).
//!
//! With the `openapi` feature every type derives its OpenAPI schema.

mod csv;
mod requests;
mod responses;

pub use csv::audit_csv;
/// The switch audit's rows: the log's own type, read and answered as it is.
pub use lattice_core::switch_audit::AuditEntry;
pub use requests::*;
pub use responses::*;

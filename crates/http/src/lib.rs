//! What every HTTP surface of lattice shares, whichever service it is in
//! (the `/v1` API, the MCP exporter, the edge): the one mapping of
//! `lattice_core::Error` to a status and a JSON body (`error.rs`), and the
//! guard every request passes first (`guard.rs`), and whose forwarded
//! headers are believed (`forwarded.rs`). It knows no route and no service.

pub mod error;
pub mod error_docs;
pub mod error_link;
pub mod forwarded;
pub mod guard;

pub use error::{ApiError, ApiResult, status_of};
pub use error_link::{ERRORS_PATH, link_of};
pub use forwarded::TrustedProxies;

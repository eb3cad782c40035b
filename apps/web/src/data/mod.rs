//! The bottom layer: data and transport. `/v1` over `fetch` with the
//! session's token, the reads started before the page is built, the live
//! streams, the session (signing in at a provider, the token's renewal
//! while the person is active) and the viewer's preferences kept in this browser,
//! and what is read from the wire (a thread folded for showing, the host
//! context an app is told), the files people upload, and the person's own
//! sign-ins to connected servers. Nothing here names a component or a page.

pub mod api_client;
pub mod connections;
pub mod drafts;
pub mod early_reads;
pub mod host_context;
pub mod page_config;
pub mod paths;
pub mod renewal;
pub mod request;
pub mod session;
pub mod sign_in;
pub mod stream;
pub mod text;
pub mod theme;
pub mod thread_fold;
pub mod times;
pub mod token;
pub mod uploads;
pub mod waiting;

//! What every handler shares.

use lattice_log::LogService;

#[derive(Clone)]
pub struct AppState {
    pub log: LogService,
    pub runner: lattice_agent::Runner,
    /// `POST /v1/dev/token` answers only in the embedded and local profiles.
    pub dev_sign_in: bool,
    pub max_body_bytes: usize,
    /// Turns true when the server begins to shut down, so that live streams
    /// end and graceful shutdown does not wait on them.
    pub shutdown: tokio::sync::watch::Receiver<bool>,
}

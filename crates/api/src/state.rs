//! What every handler shares.

use lattice_log::LogService;

#[derive(Clone)]
pub struct AppState {
    pub log: LogService,
    pub runner: lattice_agent::Runner,
    /// Apps' tool calls, decided and audited here for the chat host.
    pub apps: lattice_app_calls::AppCalls,
    /// `POST /v1/dev/token` answers only in the embedded and local profiles.
    pub dev_sign_in: bool,
    /// The identity providers people sign in with (R6), if any.
    pub identity: Option<lattice_identity::Providers>,
    /// The portal's origin as browsers reach it: where a provider sends a
    /// person back, and where signing out lands.
    pub portal_origin: String,
    pub max_body_bytes: usize,
    /// Per-caller limits: writes per second, open live streams, deadlines.
    pub guard: std::sync::Arc<crate::guard::Guard>,
    /// How often the switch stream says it is alive: a chat that stops
    /// hearing it for three of these turns governed UI off (fails closed).
    pub switch_heartbeat: std::time::Duration,
    /// What else `/readyz` waits for besides the database (the in-process
    /// bridge, when there is one).
    pub readiness: Option<Readiness>,
    /// Turns true when the server begins to shut down, so that live streams
    /// end and graceful shutdown does not wait on them.
    pub shutdown: tokio::sync::watch::Receiver<bool>,
}

/// A readiness check: `Err` says why the service is not ready.
pub type Readiness = std::sync::Arc<dyn Fn() -> Result<(), String> + Send + Sync>;

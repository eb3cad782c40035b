//! MCP sessions that every replica can serve: rmcp keeps each session's
//! handshake in the log's shared session table and replays it on a replica
//! that has not seen the session, so a client need not know which replica
//! it talks to. Chosen over rmcp's stateless mode because a session carries
//! what a single request cannot: elicitation for an app's `ask`, progress
//! while `form_submissions` waits, and `tools/list_changed` after a flip.
//!
//! The table decides which sessions live, and memory follows it: a session
//! whose row is gone (forgotten for its owner's newer ones, closed, its
//! person signed out) is closed in rmcp's manager here, at once where this
//! replica ended it or a request names it, and by the sweep otherwise (an
//! open event stream names nothing again).

use std::collections::HashSet;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use lattice_log::Sessions;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::store::{SessionState, SessionStore, SessionStoreError};

/// How often a replica asks the table which of its sessions still live.
pub(crate) const SWEEP_EVERY: Duration = Duration::from_secs(5);

pub struct SharedSessions(pub Sessions);

#[async_trait::async_trait]
impl SessionStore for SharedSessions {
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        let Some(state) = self.0.state(session_id).await? else { return Ok(None) };
        Ok(Some(serde_json::from_str(&state)?))
    }

    async fn store(&self, session_id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        Ok(self.0.keep_state(session_id, &serde_json::to_string(state)?).await?)
    }

    async fn delete(&self, session_id: &str) -> Result<(), SessionStoreError> {
        Ok(self.0.close(session_id).await?)
    }
}

/// The sessions this replica holds in rmcp's manager, kept to the table.
pub(crate) struct Served {
    pub(crate) table: Sessions,
    pub(crate) manager: Arc<LocalSessionManager>,
    /// Sessions served here whose row was seen with its owner (opened or
    /// admitted here): the ones the sweep asks about. A session in memory
    /// but not here is being opened by the request that made it, which
    /// confirms it or ends it.
    confirmed: Mutex<HashSet<String>>,
}

impl Served {
    /// Keeps `manager` to `table`, sweeping every [`SWEEP_EVERY`] while
    /// the answer is alive.
    pub(crate) fn start(table: Sessions, manager: Arc<LocalSessionManager>) -> Arc<Self> {
        let served = Arc::new(Self { table, manager, confirmed: Mutex::default() });
        // A router built outside a runtime (none of lattice's) would only
        // lose the sweep, never a request's own check.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(sweep(Arc::downgrade(&served)));
        }
        served
    }

    /// `id` was seen in the table with its owner.
    pub(crate) fn confirm(&self, id: &str) {
        self.confirmed.lock().expect("never poisoned").insert(id.to_owned());
    }

    /// Ends `id` here: rmcp closes it (its streams end, its waits are
    /// dropped) and forgets it.
    pub(crate) async fn end(&self, id: &str) {
        self.confirmed.lock().expect("never poisoned").remove(id);
        if let Err(e) = self.manager.close_session(&id.into()).await {
            tracing::debug!(error = %e, session = id, "closing an ended MCP session");
        }
    }

    /// Closes the confirmed sessions whose row is gone; forgets those rmcp
    /// closed itself (idle, deleted).
    pub(crate) async fn sweep_once(&self) -> Result<(), lattice_core::Error> {
        let in_memory: HashSet<String> = self.manager.sessions.read().await.keys().map(|id| id.to_string()).collect();
        let asked: Vec<String> = {
            let mut confirmed = self.confirmed.lock().expect("never poisoned");
            confirmed.retain(|id| in_memory.contains(id));
            confirmed.iter().cloned().collect()
        };
        if asked.is_empty() {
            return Ok(());
        }
        let living: HashSet<String> = self.table.living(&asked).await?.into_iter().collect();
        for id in asked.iter().filter(|id| !living.contains(*id)) {
            tracing::debug!(session = %id, "an MCP session ended elsewhere; closing it here");
            self.end(id).await;
        }
        Ok(())
    }
}

async fn sweep(served: Weak<Served>) {
    loop {
        tokio::time::sleep(SWEEP_EVERY).await;
        let Some(served) = served.upgrade() else { return };
        if let Err(e) = served.sweep_once().await {
            tracing::warn!(error = %e, "the MCP sessions' sweep cannot read the session table; trying again");
        }
    }
}

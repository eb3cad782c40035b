//! MCP sessions that every replica can serve: rmcp keeps each session's
//! handshake in the log's shared session table and replays it on a replica
//! that has not seen the session, so a client need not know which replica
//! it talks to. Chosen over rmcp's stateless mode because a session carries
//! what a single request cannot: elicitation for an app's `ask`, progress
//! while `form_submissions` waits, and `tools/list_changed` after a flip.

use lattice_log::Sessions;
use rmcp::transport::streamable_http_server::session::store::{SessionState, SessionStore, SessionStoreError};

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

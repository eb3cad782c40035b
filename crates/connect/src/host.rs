//! lattice as the client of one session: what it says of itself when it
//! connects, and what it does when the server says, unasked, that what it
//! offers changed (`notifications/tools/list_changed`): the session's
//! listing of tools is marked stale, so the next model call lists them
//! again.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use rmcp::ClientHandler;
use rmcp::model::ClientConfig;
use rmcp::service::{NotificationContext, RoleClient};
use serde_json::json;

/// The extension a host declares when it renders MCP Apps.
pub const APPS_EXTENSION: &str = "io.modelcontextprotocol/ui";
/// The type of an MCP App's document.
pub const APP_MIME: &str = "text/html;profile=mcp-app";

/// The owners (sessions) whose listing of tools the server said is out of
/// date: listed again when next asked for.
#[derive(Clone, Default)]
pub(crate) struct Stale(Arc<Mutex<HashSet<String>>>);

impl Stale {
    fn mark(&self, owner: &str) {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(owner.to_owned());
    }

    /// Whether `owner`'s listing was marked stale, unmarking it.
    pub(crate) fn take(&self, owner: &str) -> bool {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(owner)
    }

    /// Keeps the marks of live sessions only: a session that ended takes
    /// its mark with it (its next session lists afresh anyway).
    pub(crate) fn keep(&self, live: impl Fn(&str) -> bool) {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).retain(|owner| live(owner));
    }
}

/// One session's handler.
pub(crate) struct Host {
    info: ClientConfig,
    stale: Stale,
    /// Whose session it is.
    owner: String,
}

impl Host {
    pub(crate) fn new(stale: Stale, owner: &str) -> Self {
        Self { info: info(), stale, owner: owner.to_owned() }
    }
}

/// What lattice says of itself to a server: a host of MCP Apps.
fn info() -> ClientConfig {
    serde_json::from_value(json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {"extensions": {APPS_EXTENSION: {"mimeTypes": [APP_MIME]}}},
        "clientInfo": {"name": "lattice", "version": env!("CARGO_PKG_VERSION")},
    }))
    .expect("the host's info is a ClientConfig")
}

impl ClientHandler for Host {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::debug!(owner = %self.owner, "a connected server's tools changed: listed again when next needed");
        self.stale.mark(&self.owner);
    }
}

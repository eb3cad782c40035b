//! lattice as the client of one session: what it says of itself when it
//! connects (a host of MCP Apps that lets servers ask, in form mode); what
//! it does when the server says, unasked, that what it offers changed
//! (`notifications/tools/list_changed`): the session's listing of tools is
//! marked stale, so the next model call lists them again; and a server's
//! question (`elicitation/create`), put to whoever its call's caller
//! named (`asking`).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use rmcp::model::{ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction};
use rmcp::service::{InboundStreamOrigin, NotificationContext, RequestContext, RoleClient};
use rmcp::{ClientHandler, ErrorData};
use serde_json::json;

use crate::asking::{Answer, Calls, Question};

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
    /// The calls under way on it, whose questions it puts to a person.
    pub(crate) calls: Calls,
}

impl Host {
    pub(crate) fn new(stale: Stale, owner: &str) -> Self {
        Self { info: info(), stale, owner: owner.to_owned(), calls: Calls::default() }
    }
}

/// What lattice says of itself to a server: a host of MCP Apps, which
/// lets it ask a person in form mode (`"elicitation": {}` would say the
/// same; the mode is named so that nobody reads it as URL mode too).
fn info() -> ClientConfig {
    serde_json::from_value(json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {
            "elicitation": {"form": {}},
            "extensions": {APPS_EXTENSION: {"mimeTypes": [APP_MIME]}},
        },
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

    /// A server's question: put to whoever the call it belongs to names,
    /// the call's time bound stopped meanwhile. Refused (`-32602`) when it
    /// belongs to no call lattice can tell, or to one with nobody to ask
    /// (an app's call), or is in a mode lattice did not declare: nobody
    /// declined it, so it is not answered as if they had.
    async fn create_elicitation(&self, request: ElicitRequestParams, context: RequestContext<RoleClient>) -> Result<ElicitResult, ErrorData> {
        let question = match request {
            ElicitRequestParams::FormElicitationParams { message, requested_schema, .. } => {
                let requested = serde_json::to_value(&requested_schema).map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
                Question::Form { message, requested }
            }
            _ => return Err(ErrorData::invalid_params("lattice asks people in form mode only", None)),
        };
        let Some(call) = self.calls.of(context.extensions.get::<InboundStreamOrigin>()).await else {
            tracing::info!(owner = %self.owner, "a server asked a question that belongs to no call under way: refused");
            return Err(ErrorData::invalid_params("lattice puts a question to a person only for the one call of a tool it belongs to", None));
        };
        let Some(asker) = call.asker else {
            return Err(ErrorData::invalid_params("this call has nobody to ask (only the agent's calls may ask the person it acts for)", None));
        };
        let _paused = call.clock.pause();
        let withdrawn = Box::pin(context.ct.clone().cancelled_owned());
        Ok(match asker.ask(question, withdrawn).await {
            Answer::Accept(content) => ElicitResult::new(ElicitationAction::Accept).with_content(content),
            Answer::Decline => ElicitResult::new(ElicitationAction::Decline),
            Answer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        })
    }
}

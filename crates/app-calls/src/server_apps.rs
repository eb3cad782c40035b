//! The calls of a connected MCP server's app, sent back to that server:
//! decided by the server's policy with the `mcp-app:<server>` overlay
//! first, refused to a reader, asked of the person (bound to the exact
//! arguments) when the policy says ask, every decision an audit row, and
//! only while mini apps and the server's key are both on. The browser never
//! reaches the server: the call leaves from here.

use lattice_connect::policy::{Caller, Decided, decide};
use lattice_connect::{Server, ServerTool};
use lattice_core::{Decision, Error, SwitchKey};
use lattice_log::{ArtifactRow, Authenticated};
use lattice_wire::{Outcome, Via};
use serde_json::{Value, json};

use crate::refused::{Known, NOT_OFFERED, OrRefused, Refused};
use crate::{AppCalls, CallAudit, READ_ONLY, count, title};

/// The most of an app's arguments a person is shown and the row keeps.
const ASKED_MAX_BYTES: usize = 48 * 1024;

impl CallAudit {
    /// A call sent to `server`, decided by `policy`.
    fn of_server(self, server: &str, policy: &str) -> Self {
        Self { server: Some(server.to_owned()), policy: Some(policy.to_owned()), ..self }
    }
}

impl Known {
    /// A call of the app of `server`, decided (or refused) by `policy`.
    fn of_server(&self, server: &str, policy: Option<&str>) -> Self {
        let row = CallAudit { server: Some(server.to_owned()), policy: policy.map(str::to_owned), ..self.row.clone() };
        Self { thread: self.thread.clone(), row, offered: self.offered }
    }

    /// The server offers the tool (it listed it).
    fn listed(self) -> Self {
        Self { offered: true, ..self }
    }
}

impl AppCalls {
    /// `tool` of the server `head`'s app came from, called by the app.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn server_call(
        &self,
        who: &Authenticated,
        head: &ArtifactRow,
        tool: &str,
        arguments: &Value,
        via: Via,
        reader: bool,
        known: Known,
    ) -> Result<Outcome, Refused> {
        let name = head.data.pointer("/server/name").and_then(Value::as_str).unwrap_or_default();
        let known = known.of_server(name, None);
        let server = self.server_of(who, head, name).await.or_refused(&known)?;
        let listed = match self.listed(who, &server, tool).await {
            Ok(listed) => listed,
            // A tool for the model alone is refused to an app (MCP Apps'
            // visibility), and the refusal is a decision like any other.
            Err(refused @ Error::Forbidden { .. }) => {
                return Err(known.of_server(server.name(), Some("visibility")).listed().refuse("deny", refused));
            }
            Err(refused @ Error::ValidationFailed { .. }) => return Err(known.refuse(NOT_OFFERED, refused)),
            Err(other) => return Err(known.failed(other)),
        };
        let Decided { decision, policy } = decide(server.name(), server.config(), &listed.name, Caller::App);
        let known = known.of_server(server.name(), Some(&policy)).listed();
        let base = CallAudit::new(head, tool, via).digested(arguments).of_server(server.name(), &policy);
        match decision {
            Decision::Deny => Err(known.answer("deny", Ok(Outcome::Refused { reason: format!("{policy} denies {tool} to the server's apps") }))),
            // What a server's tool does, lattice cannot know: a reader's
            // app calls none of them.
            _ if reader => Err(known.refuse(
                READ_ONLY,
                Error::forbidden(lattice_core::Code::ReadOnly, format!("{tool} is the {} server's; this caller may only read here", server.name())),
            )),
            Decision::Ask => {
                lattice_core::document::check(arguments, "arguments", ASKED_MAX_BYTES).or_refused(&known)?;
                count(tool, "ask", via);
                let asked = CallAudit { arguments: Some(arguments.clone()), ..base };
                let row = self.record(who, &head.thread, asked.decided("ask"), None).await.map_err(Refused::unrecorded)?;
                Ok(Outcome::Confirm {
                    confirmation: row,
                    app: head.id.clone(),
                    title: title(head),
                    tool: tool.to_owned(),
                    arguments: arguments.clone(),
                })
            }
            Decision::Allow => {
                count(tool, "allow", via);
                self.send(who, head, &server, tool, arguments, base.decided("allow")).await.map_err(Refused::unrecorded)
            }
        }
    }

    /// Makes an allowed or confirmed call; its audit row says how it went.
    /// A confirmed call's confirmation was used before (its `confirmed`
    /// row took the once key): this row is what came of it.
    pub(crate) async fn send(
        &self,
        who: &Authenticated,
        head: &ArtifactRow,
        server: &Server,
        tool: &str,
        arguments: &Value,
        mut row: Value,
    ) -> Result<Outcome, Error> {
        match server.call(lattice_connect::Behalf::of(who.principal()), tool, arguments.clone()).await {
            Ok(result) => {
                row["result_bytes"] = json!(lattice_core::document::size(&result));
                self.record(who, &head.thread, row, None).await?;
                let mut result = result;
                if let Some(map) = result.as_object_mut() {
                    map.remove("_meta");
                }
                let text = result
                    .pointer("/content/0/text")
                    .and_then(Value::as_str)
                    .map_or_else(|| format!("{tool} answered"), |t| t.chars().take(2000).collect());
                Ok(Outcome::Done { text, result })
            }
            Err(e) => {
                row["failed"] = json!(e.to_string());
                self.record(who, &head.thread, row, None).await?;
                Ok(Outcome::Refused { reason: e.to_string() })
            }
        }
    }

    /// The connected server an app came from, while its key is on where
    /// the app lives (fail closed).
    pub(crate) async fn server_of(&self, who: &Authenticated, head: &ArtifactRow, name: &str) -> Result<std::sync::Arc<Server>, Error> {
        let server =
            self.connections.get(name).cloned().ok_or_else(|| Error::NotEnabled { key: format!("{}{name}", lattice_core::ServerKey::PREFIX) })?;
        let key = SwitchKey::Server(server.key());
        let effective = self.log.effective(who, &head.workspace).await?;
        if effective.get(&key).is_none_or(|e| !e.enabled) {
            return Err(Error::NotEnabled { key: key.as_str().to_owned() });
        }
        Ok(server)
    }

    /// The server's tool an app may call: one it lists, for apps.
    async fn listed(&self, who: &Authenticated, server: &Server, tool: &str) -> Result<ServerTool, Error> {
        let tools = server.tools(lattice_connect::Behalf::of(who.principal())).await.map_err(|e| Error::Unavailable { reason: e.to_string() })?;
        let found = tools.iter().find(|t| t.name == tool).cloned();
        match found {
            Some(t) if t.for_app => Ok(t),
            Some(_) => Err(Error::forbidden(
                lattice_core::Code::ModelOnlyTool,
                format!("{tool} is for the model only: the {} server's apps do not call it", server.name()),
            )),
            None => Err(Error::field("tool", "enum", format!("the {} server offers no tool {tool:?}", server.name()))),
        }
    }
}

//! The agent's calls of connected MCP servers' tools (docs/MCP.md,
//! "Connecting a server"): offered as `<server>__<tool>` where the
//! server's key is on, each call decided by the server's policy (a person
//! asked in the chat when it says ask), bounded in number per run, in time
//! and in answer size, and recorded: an audit row (`mcp_tool_call`) with
//! the decision, the arguments' digest and size and the answer's size,
//! then the run's own step. A call refused before the server is asked has
//! its row too: `not_offered`, `switched_off`, `limit` (the run's calls of
//! the server are spent), besides the policy's `deny`, `ask`, `declined`. A result naming an MCP App puts the app in the
//! thread, remembering its server.

use std::collections::BTreeMap;

use lattice_connect::policy::{Caller, decide};
use lattice_connect::{CallError, Connections, Server, ServerTool, naming};
use lattice_core::{Audit, Command, Decision, DeferredRequest, Error, SignInNeeded, SwitchKey, ThreadId, ToolCall};
use lattice_log::{Authenticated, LogService};
use serde_json::{Value, json};

use crate::tools::ToolDefinition;

/// The audit rows' name.
pub const AUDIT_NAME: &str = "mcp_tool_call";

/// What the connected servers offer a model call: their tools, and what
/// each said of itself (`instructions`), fenced as untrusted data.
#[derive(Debug, Default)]
pub struct Offered {
    pub tools: Vec<ToolDefinition>,
    pub instructions: Vec<String>,
}

/// The tools of every server offered to the caller's tenant whose key is
/// on, as the model is given them, and their instructions. A server that
/// cannot list its tools now offers none (and the next model call asks
/// again).
pub async fn offered(connections: &Connections, who: &Authenticated, enabled: &BTreeMap<SwitchKey, bool>) -> Offered {
    let mut out = Offered::default();
    for server in connections.offered_to(&who.principal().tenant) {
        if !enabled.get(&SwitchKey::Server(server.key())).copied().unwrap_or(false) {
            continue;
        }
        match server.tools(behalf(who)).await {
            Ok(tools) => {
                out.tools.extend(
                    tools.iter().filter(|t| t.for_model && !(server.signs_in() && t.name == SIGN_IN_TOOL)).filter_map(|t| definition(server, t)),
                );
                if let Ok(Some(said)) = server.instructions(behalf(who)).await {
                    let source = format!("instructions of the {} server", server.name());
                    out.instructions.push(crate::transcript::untrusted(&source, server.name(), &Value::String(said)));
                }
            }
            // Its tools are the person's to list: until they sign in, the
            // model is offered the one call that asks them to.
            Err(CallError::NeedsSignIn { .. }) => out.tools.extend(sign_in_definition(server)),
            Err(e) => tracing::warn!(server = server.name(), error = %e, "cannot list the server's tools; none offered"),
        }
    }
    out
}

/// The tool offered for a server the person has not signed in to: calling
/// it asks them to ("Connect <server>"), and answers the server's tools
/// once they have. A server's own tool of this name is never offered as it.
pub const SIGN_IN_TOOL: &str = "lattice_sign_in";

fn sign_in_definition(server: &Server) -> Option<ToolDefinition> {
    Some(ToolDefinition {
        name: naming::offered(server.name(), SIGN_IN_TOOL)?,
        description: format!(
            "[{0} server] The person has not connected {0} (signed in to it with their own account): call this to ask them to; \
             its tools are offered once they have.",
            server.name()
        ),
        parameters: json!({"type": "object", "properties": {}}),
    })
}

/// Whether `name` is the sign-in call of a server people sign in to that
/// is offered now: a paused one goes on once they have, though the
/// server's own tools are offered in its place by then.
pub fn is_sign_in_call(connections: &Connections, name: &str, offered: &[ToolDefinition]) -> bool {
    naming::split(name).is_some_and(|(server, tool)| {
        tool == SIGN_IN_TOOL
            && connections.get(server).is_some_and(|s| s.signs_in())
            && offered.iter().any(|t| naming::split(&t.name).is_some_and(|(s, _)| s == server))
    })
}

/// Whom a run's request to a server is made for: the person it acts for,
/// in their tenant (the session is theirs, or their tenant's).
pub fn behalf(who: &Authenticated) -> lattice_connect::Behalf<'_> {
    lattice_connect::Behalf::of(who.principal())
}

fn definition(server: &Server, tool: &ServerTool) -> Option<ToolDefinition> {
    let name = naming::offered(server.name(), &tool.name)?;
    let about: String = tool.description.chars().take(1024).collect();
    let parameters = if tool.input_schema.is_object() { tool.input_schema.clone() } else { json!({"type": "object"}) };
    Some(ToolDefinition { name, description: format!("[{} server] {about}", server.name()), parameters })
}

/// What a call of a server's tool came to.
pub enum Called {
    /// The server answered: the result the model reads, and an error flag.
    Returned { result: Value, is_error: bool },
    /// Refused before or by the call: the reason the model reads.
    Refused(String),
    /// A person is asked first.
    Asked(DeferredRequest),
}

/// One call of `server`'s `tool` in a run, as the model made it.
pub struct Call<'a> {
    pub log: &'a LogService,
    pub who: &'a Authenticated,
    pub thread: &'a ThreadId,
    pub server: &'a Server,
    pub tool: &'a str,
    pub call: &'a ToolCall,
    /// What a person said of it, if it was put to one.
    pub approval: Option<bool>,
    /// Whether what was put to the person was a sign-in to the server.
    pub asked_sign_in: bool,
    /// The server's calls the run made before this one.
    pub made: usize,
    /// Whether mini apps are on here: a result's app is shown only then.
    pub apps_on: bool,
}

impl Call<'_> {
    pub async fn run(self) -> Result<Called, Error> {
        if self.server.signs_in() && self.tool == SIGN_IN_TOOL {
            return self.sign_in().await;
        }
        // A word on a sign-in is not one on the call: a person who would
        // not sign in is not asked again, and one who did is still asked
        // for a call the policy puts to them.
        let approval = match (self.asked_sign_in, self.approval) {
            (true, Some(false)) => {
                self.audit("sign_in", "declined", None, None).await?;
                return Ok(Called::Refused(format!("the person did not connect {}", self.server.name())));
            }
            (true, _) => None,
            (false, said) => said,
        };
        let decided = decide(self.server.name(), self.server.config(), self.tool, Caller::Agent);
        let limit = self.server.config().calls_per_run;
        if self.made >= limit {
            self.audit(&decided.policy, "limit", None, None).await?;
            return Ok(Called::Refused(format!("this run has made its {limit} calls of the {} server", self.server.name())));
        }
        match (decided.decision, approval) {
            (Decision::Deny, _) => {
                self.audit(&decided.policy, "deny", None, None).await?;
                Ok(Called::Refused(format!("{} denies {} to the agent", decided.policy, self.tool)))
            }
            (Decision::Ask, None) => {
                self.audit(&decided.policy, "ask", None, None).await?;
                Ok(Called::Asked(self.request(None)))
            }
            (Decision::Ask, Some(false)) => {
                self.audit(&decided.policy, "declined", None, None).await?;
                Ok(Called::Refused("the person declined this call".into()))
            }
            (Decision::Ask, Some(true)) => self.make(&decided.policy, "confirmed").await,
            (Decision::Allow, _) => self.make(&decided.policy, "allow").await,
        }
    }

    /// Records a call refused before the server's policy was asked:
    /// `decision` says why (`not_offered`: the server does not offer the
    /// tool to the agent here now; `switched_off`: its key is off here).
    /// The caller tells the model.
    pub async fn refuse(&self, decision: &str) -> Result<(), Error> {
        let decided = decide(self.server.name(), self.server.config(), self.tool, Caller::Agent);
        self.audit(&decided.policy, decision, None, None).await
    }

    /// The sign-in call: answered with the server's tools once the person
    /// has signed in, else a request that they do.
    async fn sign_in(&self) -> Result<Called, Error> {
        match (self.server.tools(behalf(self.who)).await, self.approval) {
            (Ok(tools), _) => {
                let names: Vec<String> = tools.iter().filter(|t| t.for_model).filter_map(|t| naming::offered(self.server.name(), &t.name)).collect();
                self.audit("sign_in", "connected", None, None).await?;
                Ok(Called::Returned { result: json!({"connected": self.server.name(), "tools": names}), is_error: false })
            }
            (Err(CallError::NeedsSignIn { .. }), Some(false)) => {
                self.audit("sign_in", "declined", None, None).await?;
                Ok(Called::Refused(format!("the person did not connect {}", self.server.name())))
            }
            (Err(e @ CallError::NeedsSignIn { .. }), _) => Ok(self.asks_sign_in(e).await?),
            (Err(e), _) => Ok(Called::Refused(e.to_string())),
        }
    }

    /// The run waits for the person it acts for to sign in to the server.
    async fn asks_sign_in(&self, needs: CallError) -> Result<Called, Error> {
        let CallError::NeedsSignIn { server, scope } = &needs else { return Ok(Called::Refused(needs.to_string())) };
        self.audit("sign_in", "needs_sign_in", None, None).await?;
        Ok(Called::Asked(self.request(Some(SignInNeeded { server: server.clone(), scope: scope.clone() }))))
    }

    /// The call put to a person, as the run's pause records it: with no
    /// deadline, and what they must sign in to first, if anything.
    fn request(&self, sign_in: Option<SignInNeeded>) -> DeferredRequest {
        DeferredRequest {
            tool_call_id: self.call.id.clone(),
            tool_name: self.call.name.clone(),
            args: self.call.arguments.clone(),
            expires_in_secs: None,
            expires_at: None,
            sign_in,
        }
    }

    async fn make(&self, policy: &str, decision: &str) -> Result<Called, Error> {
        let answer = self.server.call_asking(behalf(self.who), self.tool, self.call.arguments.clone(), self.asker()).await;
        let result = match answer {
            Ok(result) => result,
            Err(e @ CallError::NeedsSignIn { .. }) => return self.asks_sign_in(e).await,
            Err(e) => {
                self.audit(policy, decision, None, Some(&e)).await?;
                return Ok(Called::Refused(e.to_string()));
            }
        };
        let is_error = result.get("isError").and_then(Value::as_bool).unwrap_or(false);
        let app = self.app_of(&result).await?;
        self.audit(policy, decision, Some((&result, app.as_ref())), None).await?;
        let mut told = json!({
            "content": result.get("content").cloned().unwrap_or(json!([])),
            "structuredContent": result.get("structuredContent").cloned().unwrap_or(Value::Null),
        });
        match app {
            Some(Ok(id)) => told["app"] = json!({"id": id, "shown": "in the thread"}),
            Some(Err(why)) => told["app"] = json!({"shown": false, "why": why}),
            None => {}
        }
        Ok(Called::Returned { result: told, is_error })
    }

    /// Who the server's questions during the call go to: the person the
    /// run acts for (a run's agent always has its run).
    fn asker(&self) -> Option<std::sync::Arc<dyn lattice_connect::Asker>> {
        let run = self.who.principal().run.clone()?;
        Some(std::sync::Arc::new(crate::elicit::RunAsker {
            log: self.log.clone(),
            who: self.who.clone(),
            run,
            thread: self.thread.clone(),
            server: self.server.name().to_owned(),
            tool: self.tool.to_owned(),
            call: self.call.id.clone(),
        }))
    }

    /// The app the result names (or its tool does), put in the thread:
    /// `None` when it names none; `Err` (said to the model) when it could
    /// not be shown.
    async fn app_of(&self, result: &Value) -> Result<Option<Result<String, String>>, Error> {
        let named = result.pointer("/_meta/ui/resourceUri").and_then(Value::as_str).map(str::to_owned);
        let listed = match self.server.tools(behalf(self.who)).await {
            Ok(tools) => tools.iter().find(|t| t.name == self.tool).cloned(),
            Err(_) => None,
        };
        let Some(uri) = named.or_else(|| listed.as_ref().and_then(|t| t.app.clone())) else { return Ok(None) };
        if !self.apps_on {
            return Ok(Some(Err(format!("{} is off here: the app is not shown", SwitchKey::MiniApps))));
        }
        let document = match self.server.read_app(behalf(self.who), &uri).await {
            Ok(document) => document,
            Err(e) => return Ok(Some(Err(e.to_string()))),
        };
        let about = listed.map(|t| t.description).filter(|d| !d.trim().is_empty());
        let data = lattice_ui::app::server_app(
            self.server.name(),
            self.tool,
            about.as_deref(),
            &document.uri,
            document.html,
            document.ui,
            &self.call.arguments,
            result,
        );
        let command = Command::CreateArtifact { thread: self.thread.clone(), id: None, kind: lattice_ui::APP.into(), data };
        match self.log.execute(self.who, command).await {
            Ok(done) => Ok(Some(Ok(done.id.unwrap_or_default()))),
            Err(Error::Unavailable { reason }) => Err(Error::Unavailable { reason }),
            Err(refused) => Ok(Some(Err(refused.to_string()))),
        }
    }

    /// The decision's audit row, in the thread the run acts in.
    async fn audit(
        &self,
        policy: &str,
        decision: &str,
        returned: Option<(&Value, Option<&Result<String, String>>)>,
        failed: Option<&CallError>,
    ) -> Result<(), Error> {
        let mut data = json!({
            "server": self.server.name(),
            "tool": self.tool,
            "policy": policy,
            "decision": decision,
            "caller": "agent",
            "run": self.who.principal().run.as_ref().map(ToString::to_string),
            "tool_call_id": self.call.id,
            "arguments_digest": lattice_log::digest(&self.call.arguments),
            "arguments_bytes": lattice_core::document::size(&self.call.arguments),
        });
        if let Some((result, app)) = returned {
            data["result_bytes"] = json!(lattice_core::document::size(result));
            data["is_error"] = json!(result.get("isError").and_then(Value::as_bool).unwrap_or(false));
            match app {
                Some(Ok(id)) => data["app"] = json!(id),
                Some(Err(why)) => data["app_refused"] = json!(why),
                None => {}
            }
        }
        if let Some(e) = failed {
            data["failed"] = json!(e.to_string());
        }
        let audit = Audit { name: AUDIT_NAME.into(), data, once: None };
        self.log.execute(self.who, Command::RecordAudit { thread: self.thread.clone(), audit }).await.map(drop)
    }
}

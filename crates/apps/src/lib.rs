//! A mini app's tool calls (REQUIREMENTS.md M5), decided and carried out on the server,
//! once, for every host: lattice's chat host hands an app's `tools/call` to
//! `POST /v1/artifacts/{app}/calls`, and the MCP exporter calls the same
//! [`AppCalls`].
//!
//! A call is decided with the deployment's [`AppToolPolicy`]. Every
//! decision is an audit row (`audit.app_tool_call`) written in the same
//! transaction as the call's effect: no row, no call. `ask` records the
//! exact arguments and answers with a confirmation; the person's answer is
//! its own command ([`AppCalls::confirm`]), which acts on the recorded
//! arguments, not on any sent with it, and can be used once.

mod state_writes;

use std::sync::Arc;
use std::time::Duration;

use lattice_core::{ArtifactId, Audit, Command, Error, SwitchKey, ThreadId};
use lattice_log::{ArtifactRow, Authenticated, LogService};
use lattice_ui::app_policy::{APP_TOOLS, AppToolPolicy, Decision};
use lattice_ui::form::Submissions;
use lattice_ui::SUBMISSION;
use lattice_ui::submission::Submission;
use lattice_core::event::Event;
pub use lattice_wire::{CallRecord, Outcome, Via};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::state_writes::StateWrites;

/// The audit rows' name.
pub const AUDIT_NAME: &str = "app_tool_call";
/// How long a person has to confirm an `ask`.
pub const CONFIRM_WITHIN: Duration = Duration::from_secs(600);

/// What an `app_tool_call` audit row holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct CallAudit {
    app: String,
    version: u64,
    tool: String,
    via: Via,
    decision: String,
    /// The row of the `ask` a `confirmed` or `declined` answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    confirmation: Option<String>,
    /// What an `ask` asked the person to confirm.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    arguments: Option<Value>,
}

impl CallAudit {
    /// The call decided `decision`.
    fn decided(&self, decision: &str) -> Value {
        serde_json::to_value(Self { decision: decision.into(), ..self.clone() }).expect("an audit row serializes")
    }

    /// An audit row of app calls, if `event` is one.
    fn of(event: &Event) -> Option<Self> {
        match event {
            Event::AuditRecorded(audit) if audit.name == AUDIT_NAME => serde_json::from_value(audit.data.clone()).ok(),
            _ => None,
        }
    }
}

/// App tool calls, for one deployment's policy.
#[derive(Clone)]
pub struct AppCalls {
    log: LogService,
    policy: Arc<AppToolPolicy>,
    state_writes: StateWrites,
}

impl AppCalls {
    pub fn new(log: LogService, policy: AppToolPolicy) -> Self {
        Self { log, policy: Arc::new(policy), state_writes: StateWrites::default() }
    }

    pub fn policy(&self) -> &AppToolPolicy {
        &self.policy
    }

    /// An app's call of `tool` with `arguments`, by `who`.
    pub async fn call(&self, who: &Authenticated, app: &ArtifactId, tool: &str, arguments: &Value, via: Via) -> Result<Outcome, Error> {
        if !APP_TOOLS.contains(&tool) {
            return Err(Error::field("tool", "enum", format!("{tool:?} is not a tool an app may call ({})", APP_TOOLS.join(", "))));
        }
        let head = self.app(who, app).await?;
        let decision = self.policy.decide(who.principal().tenant.as_str(), &head.id, tool);
        let base = CallAudit { app: head.id.clone(), version: head.version, tool: tool.into(), via, decision: String::new(), confirmation: None, arguments: None };
        match decision {
            Decision::Deny => {
                self.record(who, &head, base.decided("deny"), None).await?;
                Ok(Outcome::Refused { reason: "the deployment's policy denies this tool to apps".into() })
            }
            Decision::Allow => self.act(who, &head, tool, arguments, base.decided("allow"), None).await,
            Decision::Ask => {
                let arguments = bounded_arguments(tool, arguments)?;
                let asked = CallAudit { arguments: Some(arguments.clone()), ..base };
                let row = self.record(who, &head, asked.decided("ask"), None).await?;
                Ok(Outcome::Confirm {
                    confirmation: row,
                    app: head.id.clone(),
                    title: title(&head),
                    tool: tool.to_owned(),
                    arguments,
                })
            }
        }
    }

    /// The person's answer to an `ask`: `accept` carries out the call with
    /// the arguments recorded then; either answer is usable once.
    pub async fn confirm(&self, who: &Authenticated, confirmation: &str, accept: bool, via: Via) -> Result<Outcome, Error> {
        let asked = self.log.audit_record(who, confirmation).await?;
        let p = who.principal();
        let Some(call) = CallAudit::of(&asked.event).filter(|call| call.decision == "ask") else { return Err(Error::NotFound) };
        // Only the person who was asked answers.
        if asked.actor.name() != p.user.as_str() || asked.actor.is_agent() != p.agent {
            return Err(Error::NotFound);
        }
        let asked_at = time_ms(&asked.at);
        if lattice_log::now_ms() - asked_at > CONFIRM_WITHIN.as_millis() as i64 {
            return Err(Error::invalid_state("the confirmation has expired: the app must call again"));
        }
        let head = self.app(who, &ArtifactId::from_trusted(call.app.clone())).await?;
        let arguments = call.arguments.clone().unwrap_or_else(|| json!({}));
        let answer = CallAudit { version: head.version, via, confirmation: Some(confirmation.to_owned()), arguments: None, ..call };
        if !accept {
            self.record(who, &head, answer.decided("declined"), Some(confirmation)).await?;
            return Ok(Outcome::Refused { reason: "the person declined".into() });
        }
        let tool = answer.tool.clone();
        self.act(who, &head, &tool, &arguments, answer.decided("confirmed"), Some(confirmation)).await
    }

    /// The app's calls, newest first, for its workspace's admins.
    pub async fn calls_of(&self, who: &Authenticated, app: &ArtifactId) -> Result<Vec<CallRecord>, Error> {
        let head = self.log.artifact(who, app, None).await?;
        let rows = self.log.audit_records(who, &head.workspace, AUDIT_NAME, 2000).await?;
        Ok(rows
            .into_iter()
            .filter_map(|e| {
                let call = CallAudit::of(&e.event).filter(|call| call.app == head.id)?;
                Some(CallRecord { seq: e.seq, at: e.at, actor: e.actor.name().to_owned(), tool: call.tool, decision: call.decision, via: call.via, confirmation: call.confirmation })
            })
            .collect())
    }

    /// The app, if the caller can read it, it is an app, it is not
    /// archived, and mini apps are on where it lives (fail closed: a switch
    /// that cannot be read refuses).
    async fn app(&self, who: &Authenticated, app: &ArtifactId) -> Result<ArtifactRow, Error> {
        let head = self.log.artifact(who, app, None).await?;
        if head.kind != lattice_ui::APP {
            return Err(Error::field("app", "kind", format!("{} is a {}, not an app", head.id, head.kind)));
        }
        if head.archived {
            return Err(Error::invalid_state("the app is archived"));
        }
        let effective = self.log.effective(who, &head.workspace).await?;
        if effective.get(&SwitchKey::MiniApps).is_none_or(|e| !e.enabled) {
            return Err(Error::NotEnabled { key: SwitchKey::MiniApps.as_str().to_owned() });
        }
        Ok(head)
    }

    /// An audit row alone; answers its envelope id.
    async fn record(&self, who: &Authenticated, head: &ArtifactRow, data: Value, once: Option<&str>) -> Result<String, Error> {
        let audit = Audit { name: AUDIT_NAME.into(), data, once: once.map(str::to_owned) };
        let done = self.log.execute(who, Command::RecordAudit { thread: ThreadId::from_trusted(head.thread.clone()), audit }).await?;
        Ok(done.envelope_id)
    }

    /// Carries out an allowed or confirmed call; its audit row goes with
    /// its effect.
    async fn act(&self, who: &Authenticated, head: &ArtifactRow, tool: &str, arguments: &Value, audit: Value, once: Option<&str>) -> Result<Outcome, Error> {
        let audit = Audit { name: AUDIT_NAME.into(), data: audit, once: once.map(str::to_owned) };
        match tool {
            "get_state" => {
                let done = self.log.execute(who, Command::RecordAudit { thread: ThreadId::from_trusted(head.thread.clone()), audit }).await;
                done?;
                let state = head.data.get("state").cloned().unwrap_or(Value::Null);
                Ok(Outcome::Done { text: state.to_string(), result: json!({"state": state}) })
            }
            "set_state" => {
                let ops = match lattice_ui::app::state_patch(arguments) {
                    Ok(ops) => ops,
                    Err(why) => return Err(Error::field("arguments.patch", "patch", why)),
                };
                let receipt = if once.is_some() {
                    // A confirmed write is the person's own: written at once.
                    state_writes::write_now(&self.log, who, &head.id, ops, audit).await?
                } else {
                    self.state_writes.write(&self.log, who, &head.id, ops, audit).await?
                };
                Ok(Outcome::Done { text: format!("state saved as version {}", receipt["version"]), result: json!({"version": receipt["version"], "receipt": receipt}) })
            }
            "submit" => {
                let values = arguments.get("values").cloned().unwrap_or_else(|| json!({}));
                // An app takes many submissions.
                let (id, submission) = Submission::to_form(&head.id, head.version, Submissions::Many, who.principal().user.as_str(), values, server_nonce);
                let command = Command::CreateArtifact {
                    thread: ThreadId::from_trusted(head.thread.clone()),
                    id: Some(ArtifactId::from_trusted(id)),
                    kind: SUBMISSION.into(),
                    data: submission.data(),
                };
                let done = self.log.execute_audited(who, command, audit).await?;
                let receipt = json!({"id": done.id, "version": done.version, "digest": done.digest});
                Ok(Outcome::Done { text: format!("Sent as {}.", done.id.clone().unwrap_or_default()), result: json!({"id": receipt["id"], "submission": receipt}) })
            }
            other => Err(Error::field("tool", "enum", format!("{other:?} is not a tool an app may call"))),
        }
    }
}

/// What a person is asked to confirm: the values of a submit, the whole
/// arguments otherwise.
fn bounded_arguments(tool: &str, arguments: &Value) -> Result<Value, Error> {
    let shown = match tool {
        "submit" => json!({"values": arguments.get("values").cloned().unwrap_or_else(|| json!({}))}),
        _ => arguments.clone(),
    };
    lattice_core::document::check(&shown, "arguments", 48 * 1024)?;
    Ok(shown)
}

fn title(head: &ArtifactRow) -> String {
    head.data.get("title").and_then(Value::as_str).unwrap_or("An app").to_owned()
}

/// A submission's nonce made on the server (an app's or a view's submit
/// through a host): the random part of a new artifact id.
pub fn server_nonce() -> String {
    ArtifactId::generate().as_str().trim_start_matches(ArtifactId::PREFIX).to_owned()
}

/// Milliseconds since the epoch of an envelope's RFC 3339 time.
fn time_ms(at: &str) -> i64 {
    lattice_log::parse_rfc3339(at).unwrap_or(0)
}

//! A mini app's tool calls (REQUIREMENTS.md M5), decided and carried out on the server,
//! once, for every host: lattice's chat host hands an app's `tools/call` to
//! `POST /v1/artifacts/{app}/calls`, and the MCP exporter calls the same
//! [`AppCalls::call`].
//!
//! One rule lets a call in, however it arrives: it carries the capability
//! its view was given ([`AppCalls::call`] verifies it, bound to the exact
//! caller and to the app). An MCP host hands it to the app's view in a
//! tool result's `_meta`; lattice's chat host asks for it
//! ([`AppCalls::host_capability`]) for the app it shows. A model that
//! holds the same bearer token through its host is given neither.
//!
//! A call is decided with the deployment's [`AppToolPolicy`]. Every
//! decision of a caller who may change the app is an audit row
//! (`audit.app_tool_call`) written in the same transaction as the call's
//! effect: no row, no call. `ask` records the exact arguments and answers
//! with a confirmation; the person's answer is its own command
//! ([`AppCalls::confirm`]), which acts on the recorded arguments, not on
//! any sent with it, and can be used once.
//!
//! A reader (a viewer, a respondent, an outsider with a read-only share)
//! changes no app: its calls are decided and counted like anyone's, but
//! what the log keeps of them is bounded. Its `get_state` is a read and
//! leaves no row (as no read does); its `set_state` or `submit` is
//! refused before any `ask`, with a row holding the tool, the decision and
//! the arguments' digest and size, never the arguments.
//!
//! Every refusal of a call to an app the caller can read is a row the same
//! way, written in one place ([`AppCalls::refuse`], `refused.rs`) and then
//! answered exactly as before: mini apps or the server's key switched off
//! (`switched_off`), the app archived (`archived`), a tool its host does
//! not offer (`not_offered`), arguments refused (`invalid_arguments`,
//! `too_large`), the server's tools unavailable (`unavailable`), a
//! reader's change (`read_only`), a policy's denial (`deny`), what the
//! write path refused; and of an answer to an `ask`: not the person asked
//! (`not_asked`), another host (`wrong_host`), an agent in the chat
//! (`not_a_person`), too late (`expired`), used before (`used`). Each
//! holds the arguments' digest and size, never the arguments. A call whose
//! capability names no app the caller can read leaves no row.

mod form_views;
mod refused;
mod server_apps;
mod state_writes;

use std::sync::Arc;
use std::time::Duration;

use lattice_core::event::Event;
use lattice_core::{ArtifactId, Audit, Command, Error, SwitchKey, ThreadId};
use lattice_log::{ArtifactRow, Authenticated, LogService};
use lattice_ui::SUBMISSION;
use lattice_ui::app_policy::{APP_TOOLS, AppToolPolicy, Decision, GET_STATE, SET_STATE, SUBMIT};
use lattice_ui::checks::writes_to_apps;
use lattice_ui::form::Submissions;
use lattice_ui::submission::Submission;
pub use lattice_wire::{AppCapability, CallRecord, Outcome, Via};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::refused::{Known, NOT_OFFERED, OrRefused, Refused, SWITCHED_OFF, decision_of};
use crate::state_writes::StateWrites;

/// The audit rows' name.
pub const AUDIT_NAME: &str = "app_tool_call";
/// How long a person has to confirm an `ask`.
pub const CONFIRM_WITHIN: Duration = Duration::from_secs(600);
/// The decision recorded when a reader calls a tool that changes the app.
pub const READ_ONLY: &str = "read_only";

/// Every call, by tool, decision and host, whatever the log keeps of it.
static CALLS: lattice_telemetry::Counter = lattice_telemetry::Counter::new("lattice.app_calls");

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
    /// What a reader's refused call sent, instead of what it sent: the
    /// arguments' digest and size in bytes of JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    arguments_digest: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    arguments_bytes: Option<u64>,
    /// The connected server a server's app called, and the policy that
    /// decided (`mcp:<server>` or its `mcp-app:<server>` overlay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    server: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    policy: Option<String>,
    /// The size of the server's answer, in bytes of JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    result_bytes: Option<u64>,
}

impl CallAudit {
    /// A call of `tool` on `head`, not yet decided.
    fn new(head: &ArtifactRow, tool: &str, via: Via) -> Self {
        Self {
            app: head.id.clone(),
            version: head.version,
            tool: tool.into(),
            via,
            decision: String::new(),
            confirmation: None,
            arguments: None,
            arguments_digest: None,
            arguments_bytes: None,
            server: None,
            policy: None,
            result_bytes: None,
        }
    }

    /// The row says what was sent by its digest and size only.
    fn digested(self, arguments: &Value) -> Self {
        Self { arguments_digest: Some(lattice_log::digest(arguments)), arguments_bytes: Some(lattice_core::document::size(arguments) as u64), ..self }
    }

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

/// Whether an app tool changes the app (its state, its submissions).
fn changes_the_app(tool: &str) -> bool {
    tool != GET_STATE
}

fn count(tool: &str, decision: &str, via: Via) {
    let via = match via {
        Via::Chat => "chat",
        Via::Mcp => "mcp",
    };
    CALLS.add(&[
        lattice_telemetry::KeyValue::new("tool", tool.to_owned()),
        lattice_telemetry::KeyValue::new("decision", decision.to_owned()),
        lattice_telemetry::KeyValue::new("via", via),
    ]);
}

/// App tool calls, for one deployment's policy.
#[derive(Clone)]
pub struct AppCalls {
    log: LogService,
    policy: Arc<AppToolPolicy>,
    state_writes: StateWrites,
    /// The servers whose apps' calls go back to them.
    connections: lattice_connect::Connections,
}

impl AppCalls {
    pub fn new(log: LogService, policy: AppToolPolicy) -> Self {
        Self { log, policy: Arc::new(policy), state_writes: StateWrites::default(), connections: Default::default() }
    }

    /// Sends the calls of connected servers' apps back to their servers.
    pub fn with_connections(mut self, connections: lattice_connect::Connections) -> Self {
        self.connections = connections;
        self
    }

    pub fn policy(&self) -> &AppToolPolicy {
        &self.policy
    }

    /// An app's call of `tool` with `arguments`, by `who`, carrying the
    /// `capability` its view was given: the one door of every host (the
    /// chat host's `POST /v1/artifacts/{app}/calls`, the MCP exporter's
    /// app-only tools). `app`, when the call names one, must be the
    /// capability's. A refusal is recorded ([`AppCalls::refuse`]) and
    /// answered as its step answered.
    pub async fn call(
        &self,
        who: &Authenticated,
        capability: Option<&str>,
        app: Option<&str>,
        tool: &str,
        arguments: &Value,
        via: Via,
    ) -> Result<Outcome, Error> {
        match self.try_call(who, capability, app, tool, arguments, via).await {
            Ok(outcome) => Ok(outcome),
            Err(refused) => self.refuse(who, refused).await,
        }
    }

    async fn try_call(
        &self,
        who: &Authenticated,
        capability: Option<&str>,
        app: Option<&str>,
        tool: &str,
        arguments: &Value,
        via: Via,
    ) -> Result<Outcome, Refused> {
        // Until the capability names an app this caller may read, there is
        // no app and no thread to write a row in.
        let app = self.granted(who, capability, app, tool).map_err(Refused::unrecorded)?;
        let head = self.log.artifact(who, &app, None).await.map_err(Refused::unrecorded)?;
        an_app(&head).map_err(Refused::unrecorded)?;
        let known =
            Known { thread: head.thread.clone(), row: CallAudit::new(&head, tool, via).digested(arguments), offered: APP_TOOLS.contains(&tool) };
        self.open(who, &head).await.map_err(|(decision, e)| known.refuse(decision, e))?;
        if head.data.get("server").is_some() {
            let reader = !writes_to_apps(self.log.thread(who, &ThreadId::from_trusted(head.thread.clone())).await.or_refused(&known)?.role);
            return self.server_call(who, &head, tool, arguments, via, reader, known).await;
        }
        if !APP_TOOLS.contains(&tool) {
            let offered = Error::field("tool", "enum", format!("{tool:?} is not a tool an app may call ({})", APP_TOOLS.join(", ")));
            return Err(known.refuse(NOT_OFFERED, offered));
        }
        let decision = self.policy.decide(who.principal().tenant.as_str(), &head.id, tool);
        let base = CallAudit::new(&head, tool, via);
        let reader = !writes_to_apps(self.log.thread(who, &ThreadId::from_trusted(head.thread.clone())).await.or_refused(&known)?.role);
        match decision {
            Decision::Deny => Err(known.answer("deny", Ok(Outcome::Refused { reason: "the deployment's policy denies this tool to apps".into() }))),
            // A reader changes nothing: refused before anything is asked of
            // anyone, and the row says what was sent only by its digest and
            // size (the caller chose those bytes; the log keeps none).
            _ if reader && changes_the_app(tool) => Err(known.refuse(
                READ_ONLY,
                Error::forbidden(lattice_core::Code::ReadOnly, format!("{tool} changes the app, and this caller may only read it here")),
            )),
            // A reader's read is a read: like any other it leaves no row.
            Decision::Allow if reader => {
                count(tool, "allow", via);
                Ok(state_of(&head))
            }
            Decision::Allow => {
                count(tool, "allow", via);
                self.act(who, &head, tool, arguments, base.decided("allow"), None, &known).await
            }
            Decision::Ask => {
                let arguments = asked_arguments(tool, arguments).or_refused(&known)?;
                count(tool, "ask", via);
                let asked = CallAudit { arguments: Some(arguments.clone()), ..base };
                let row = self.record(who, &head.thread, asked.decided("ask"), None).await.map_err(Refused::unrecorded)?;
                Ok(Outcome::Confirm { confirmation: row, app: head.id.clone(), title: title(&head), tool: tool.to_owned(), arguments })
            }
        }
    }

    /// The artifact an app-only call may act on: the one its capability was
    /// given for, to this very caller (person or agent:
    /// `Authenticator::capability_artifact`). The one check of every
    /// app-only call: an app's ([`AppCalls::call`]) and a form view's (the MCP
    /// exporter's `submit_form`, then [`AppCalls::submit_form`]).
    pub fn granted(&self, who: &Authenticated, capability: Option<&str>, named: Option<&str>, tool: &str) -> Result<ArtifactId, Error> {
        let Some(capability) = capability else {
            return Err(Error::forbidden(
                lattice_core::Code::CapabilityMissing,
                format!("{tool} is app-only: it is called by a view with the capability its host was given for it"),
            ));
        };
        let granted = self.log.authenticator().capability_artifact(capability, who)?;
        if named.is_some_and(|named| named != granted) {
            return Err(Error::forbidden(lattice_core::Code::CapabilityInvalid, "the capability was given for another artifact"));
        }
        ArtifactId::parse("capability", &granted)
    }

    /// The capability lattice's chat host passes with the calls of an app it
    /// shows, as an MCP host's view gets its own in a tool result: bound to
    /// the caller and the app, for [`lattice_log::CAPABILITY_TTL`]. Only a
    /// person's session asks for one: the chat host is a person's, and an
    /// agent's token (a program's) gets an app's capability only in the
    /// result of the MCP tool that showed the app, where its host keeps it
    /// from the model. The chat host keeps it to itself: the app's frame
    /// never sees it.
    pub async fn host_capability(&self, who: &Authenticated, app: &ArtifactId) -> Result<AppCapability, Error> {
        if who.principal().agent {
            return Err(Error::forbidden(
                lattice_core::Code::AgentNotAllowed,
                "an agent's app views get their capability in the MCP tool result that shows them",
            ));
        }
        let head = self.app(who, app).await?;
        Ok(AppCapability {
            capability: self.log.authenticator().capability(who.principal(), &head.id),
            expires_in_secs: lattice_log::CAPABILITY_TTL.as_secs(),
        })
    }

    /// The person's answer to an `ask`: `accept` carries out the call with
    /// the arguments recorded then; either answer is usable once.
    ///
    /// Why the answer is the person's own: it needs the bearer token of
    /// exactly the caller who was asked (person or agent alike), and an
    /// app's frame never holds one. In lattice's chat the token lives in the
    /// portal origin's `localStorage`; the app runs on the apps origin, in a
    /// sandboxed frame whose policy closes the network, and reaches the host
    /// only by `postMessage`, which has no message that confirms: the chat
    /// host sends this request only from its own dialog, after the person
    /// pressed its button. It does not take the app's capability, which is
    /// what a view can hold. An ask is answered where it was put to the
    /// person (`via`): one asked over MCP only by the answer to its host's
    /// elicitation, which a model cannot give, never by a request that
    /// holds the same token; and in lattice's chat only by a person, since
    /// there a person's click is what answers.
    pub async fn confirm(&self, who: &Authenticated, confirmation: &str, accept: bool, via: Via) -> Result<Outcome, Error> {
        let answer = if accept { Answer::Accept } else { Answer::Decline };
        match self.try_confirm(who, confirmation, answer, via).await {
            Ok(outcome) => Ok(outcome),
            Err(refused) => self.refuse(who, refused).await,
        }
    }

    /// An ask its host cannot put to the person (an MCP host without
    /// elicitation): answered `cannot_ask`, which uses the confirmation up,
    /// and refused to the app.
    pub async fn cannot_ask(&self, who: &Authenticated, confirmation: &str, via: Via) -> Result<Outcome, Error> {
        match self.try_confirm(who, confirmation, Answer::CannotAsk, via).await {
            Ok(outcome) => Ok(outcome),
            Err(refused) => self.refuse(who, refused).await,
        }
    }

    async fn try_confirm(&self, who: &Authenticated, confirmation: &str, answer: Answer, via: Via) -> Result<Outcome, Refused> {
        let asked = self.log.audit_record(who, confirmation).await.map_err(Refused::unrecorded)?;
        let p = who.principal();
        // What names no ask of an app names nothing to record a refusal of.
        let Some(call) = CallAudit::of(&asked.event).filter(|call| call.decision == "ask") else { return Err(Refused::unrecorded(Error::NotFound)) };
        // The app's row as it is now, for the rows of this answer; what it
        // must be to be answered is checked below, in its turn.
        let head = self.log.artifact(who, &ArtifactId::from_trusted(call.app.clone()), None).await;
        let arguments = call.arguments.clone().unwrap_or_else(|| json!({}));
        let asked_via = call.via;
        let version = head.as_ref().map_or(call.version, |head| head.version);
        let row = CallAudit { version, via, confirmation: Some(confirmation.to_owned()), arguments: None, ..call };
        let known = head.as_ref().ok().map(|head| Known { thread: head.thread.clone(), row: row.clone().digested(&arguments), offered: true });
        let refuse = |decision: &'static str, error: Error| match &known {
            Some(known) => known.refuse(decision, error),
            None => Refused::unrecorded(error),
        };
        // Only the caller who was asked answers.
        if asked.actor.name() != p.user.as_str() || asked.actor.is_agent() != p.agent {
            return Err(refuse("not_asked", Error::NotFound));
        }
        if asked_via != via {
            return Err(refuse(
                "wrong_host",
                Error::invalid_state(lattice_core::Code::WrongHost, "this call was put to the person through another host: it is answered there"),
            ));
        }
        if via == Via::Chat && p.agent {
            return Err(refuse(
                "not_a_person",
                Error::forbidden(lattice_core::Code::PersonMustConfirm, "in lattice's chat a person confirms an app's call"),
            ));
        }
        let asked_at = time_ms(&asked.at);
        if self.log.clock().now_ms() - asked_at > CONFIRM_WITHIN.as_millis() as i64 {
            return Err(refuse(
                "expired",
                Error::invalid_state(lattice_core::Code::ConfirmationExpired, "the confirmation has expired: the app must call again"),
            ));
        }
        let head = head.map_err(Refused::unrecorded)?;
        an_app(&head).map_err(Refused::unrecorded)?;
        let Some(known) = known else { return Err(Refused::unrecorded(Error::NotFound)) };
        self.open(who, &head).await.map_err(|(decision, e)| known.refuse(decision, e))?;
        let tool = row.tool.clone();
        match answer {
            Answer::Decline => {
                self.record(who, &head.thread, row.decided("declined"), Some(confirmation)).await.or_refused(&known)?;
                count(&tool, "declined", via);
                Ok(Outcome::Refused { reason: "the person declined".into() })
            }
            Answer::CannotAsk => {
                self.record(who, &head.thread, row.decided("cannot_ask"), Some(confirmation)).await.or_refused(&known)?;
                count(&tool, "cannot_ask", via);
                Ok(Outcome::Refused { reason: "this call needs a person's confirmation, and the host offers no way to ask (elicitation)".into() })
            }
            Answer::Accept => match row.server.clone() {
                Some(server) => {
                    let server = self.server_of(who, &head, &server).await.or_refused(&known)?;
                    // The confirmation is used before the server is called:
                    // its row takes the once key (atomically, in the log), so
                    // a replayed or concurrent answer is refused here and
                    // calls nothing. What the server answered is the next row.
                    self.record(who, &head.thread, row.decided("confirmed"), Some(confirmation)).await.or_refused(&known)?;
                    count(&tool, "confirmed", via);
                    self.send(who, &head, &server, &tool, &arguments, row.decided("called")).await.map_err(Refused::unrecorded)
                }
                None => {
                    let outcome = self.act(who, &head, &tool, &arguments, row.decided("confirmed"), Some(confirmation), &known).await?;
                    count(&tool, "confirmed", via);
                    Ok(outcome)
                }
            },
        }
    }

    /// The app's calls, newest first, for its workspace's admins.
    pub async fn calls_of(&self, who: &Authenticated, app: &ArtifactId) -> Result<Vec<CallRecord>, Error> {
        let head = self.log.artifact(who, app, None).await?;
        // Who reads the app is told, by the policy, that its audit is for
        // the workspace's admins (a listed reader learns no more than that).
        let here = self.log.thread(who, &lattice_core::ThreadId::from_trusted(head.thread.clone())).await?;
        lattice_core::policy::decide(here.role, lattice_core::policy::Action::Administer)?;
        let rows = self.log.audit_records(who, &head.workspace, AUDIT_NAME, 2000).await?;
        Ok(rows
            .into_iter()
            .filter_map(|e| {
                let call = CallAudit::of(&e.event).filter(|call| call.app == head.id)?;
                Some(CallRecord {
                    seq: e.seq,
                    at: e.at,
                    actor: e.actor.name().to_owned(),
                    tool: call.tool,
                    decision: call.decision,
                    via: call.via,
                    confirmation: call.confirmation,
                })
            })
            .collect())
    }

    /// The app, if the caller can read it, it is an app, it is not
    /// archived, and mini apps are on where it lives (fail closed: a switch
    /// that cannot be read refuses).
    async fn app(&self, who: &Authenticated, app: &ArtifactId) -> Result<ArtifactRow, Error> {
        let head = self.log.artifact(who, app, None).await?;
        an_app(&head)?;
        self.open(who, &head).await.map_err(|(_, e)| e)?;
        Ok(head)
    }

    /// Whether `head`'s calls are open: it is not archived and mini apps
    /// are on where it lives; if not, the refusal's decision and error.
    async fn open(&self, who: &Authenticated, head: &ArtifactRow) -> Result<(), (&'static str, Error)> {
        if head.archived {
            return Err(("archived", Error::invalid_state(lattice_core::Code::ArtifactArchived, "the app is archived")));
        }
        let effective = self.log.effective(who, &head.workspace).await.map_err(|e| (decision_of(&e), e))?;
        if effective.get(&SwitchKey::MiniApps).is_none_or(|e| !e.enabled) {
            return Err((SWITCHED_OFF, Error::NotEnabled { key: SwitchKey::MiniApps.as_str().to_owned() }));
        }
        Ok(())
    }

    /// An audit row alone, in `thread`; answers its envelope id.
    async fn record(&self, who: &Authenticated, thread: &str, data: Value, once: Option<&str>) -> Result<String, Error> {
        let audit = Audit { name: AUDIT_NAME.into(), data, once: once.map(str::to_owned) };
        let done = self.log.execute(who, Command::RecordAudit { thread: ThreadId::from_trusted(thread.to_owned()), audit }).await?;
        Ok(done.envelope_id)
    }

    /// Puts in a receipt the sealed proof of its envelope, once sealed
    /// (`LogService::proof`): a submission or a confirmed call
    /// answers with what proves it is in the log.
    async fn prove(&self, who: &Authenticated, receipt: &mut Value) -> Result<(), Error> {
        let Some(seq) = receipt["seq"].as_i64() else { return Ok(()) };
        receipt["proof"] = json!(self.log.proof(who, seq).await?);
        Ok(())
    }

    /// Carries out an allowed or confirmed call; its audit row goes with
    /// its effect. What the write path refuses writes neither (its
    /// transaction, the row with it, is rolled back): it is refused as
    /// `known`, with the decision its error names (a confirmation used
    /// before is `used`). What fails once the effect is written is no
    /// refusal and is not recorded as one.
    #[allow(clippy::too_many_arguments)]
    async fn act(
        &self,
        who: &Authenticated,
        head: &ArtifactRow,
        tool: &str,
        arguments: &Value,
        audit: Value,
        once: Option<&str>,
        known: &Known,
    ) -> Result<Outcome, Refused> {
        let audit = Audit { name: AUDIT_NAME.into(), data: audit, once: once.map(str::to_owned) };
        match tool {
            GET_STATE => {
                self.log.execute(who, Command::RecordAudit { thread: ThreadId::from_trusted(head.thread.clone()), audit }).await.or_refused(known)?;
                Ok(state_of(head))
            }
            SET_STATE => {
                let ops = match lattice_ui::app::state_patch(arguments) {
                    Ok(ops) => ops,
                    Err(why) => return Err(known.refuse("invalid_arguments", Error::field("arguments.patch", "patch", why))),
                };
                let receipt = if once.is_some() {
                    // A confirmed write is the person's own: written at once,
                    // and its receipt proves it (docs/SEAL.md).
                    let mut receipt = state_writes::write_now(&self.log, who, &head.id, ops, audit).await.or_refused(known)?;
                    self.prove(who, &mut receipt).await.map_err(Refused::unrecorded)?;
                    receipt
                } else {
                    self.state_writes.write(&self.log, who, &head.id, ops, audit).await.or_refused(known)?
                };
                Ok(Outcome::Done {
                    text: format!("state saved as version {}", receipt["version"]),
                    result: json!({"version": receipt["version"], "receipt": receipt}),
                })
            }
            SUBMIT => {
                let values = arguments.get("values").cloned().unwrap_or_else(|| json!({}));
                // An app takes many submissions.
                let (id, submission) =
                    Submission::to_form(&head.id, head.version, Submissions::Many, who.principal().user.as_str(), values, server_nonce);
                let command = Command::CreateArtifact {
                    thread: ThreadId::from_trusted(head.thread.clone()),
                    id: Some(ArtifactId::from_trusted(id)),
                    kind: SUBMISSION.into(),
                    data: submission.data(),
                };
                let done = self.log.execute_audited(who, command, audit).await.or_refused(known)?;
                let mut receipt = done.receipt();
                self.prove(who, &mut receipt).await.map_err(Refused::unrecorded)?;
                Ok(Outcome::Done {
                    text: format!("Sent as {}.", done.id.clone().unwrap_or_default()),
                    result: json!({"id": receipt["id"], "submission": receipt}),
                })
            }
            other => Err(known.refuse(NOT_OFFERED, Error::field("tool", "enum", format!("{other:?} is not a tool an app may call")))),
        }
    }
}

/// An artifact an app's call may name: an app (a capability of another
/// kind's view names no app, and its refusal no row).
fn an_app(head: &ArtifactRow) -> Result<(), Error> {
    if head.kind != lattice_ui::APP {
        return Err(Error::field("app", "kind", format!("{} is a {}, not an app", head.id, head.kind)));
    }
    Ok(())
}

/// How a person's answer to an `ask` came.
#[derive(Clone, Copy)]
enum Answer {
    Accept,
    Decline,
    /// The host had no way to put it to the person.
    CannotAsk,
}

/// What a person is asked to confirm, and what the `ask` row keeps: the
/// arguments the tool reads and nothing else a caller added (a submit's
/// values, a set_state's patch, nothing of a get_state), within 48 KiB.
fn asked_arguments(tool: &str, arguments: &Value) -> Result<Value, Error> {
    let read = |key: &str, empty: Value| json!({key: arguments.get(key).cloned().unwrap_or(empty)});
    let shown = match tool {
        SUBMIT => read("values", json!({})),
        // A patch the state cannot take is refused now, not once confirmed.
        SET_STATE => {
            lattice_ui::app::state_patch(arguments).map_err(|why| Error::field("arguments.patch", "patch", why))?;
            read("patch", json!([]))
        }
        _ => json!({}),
    };
    lattice_core::document::check(&shown, "arguments", 48 * 1024)?;
    Ok(shown)
}

/// `get_state`'s answer: the app's state at its head.
fn state_of(head: &ArtifactRow) -> Outcome {
    let state = head.data.get("state").cloned().unwrap_or(Value::Null);
    Outcome::Done { text: state.to_string(), result: json!({"state": state}) }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ask_keeps_only_what_its_tool_reads() {
        let junk = json!("x".repeat(1000));
        let patch = json!([{"op": "replace", "path": "/count", "value": 2}]);
        let check = |tool: &str, arguments: Value, kept: Value| assert_eq!(asked_arguments(tool, &arguments).unwrap(), kept, "{tool}");
        check(SUBMIT, json!({"values": {"n": 1}, "junk": junk}), json!({"values": {"n": 1}}));
        check(SUBMIT, json!({"junk": junk}), json!({"values": {}}));
        check(SET_STATE, json!({"patch": patch, "junk": junk}), json!({"patch": patch}));
        check(GET_STATE, json!({"junk": junk}), json!({}));
        // A patch the state cannot take is refused before anyone is asked.
        let outside = asked_arguments(SET_STATE, &json!({"patch": [{"op": "replace", "path": "html", "value": "x"}]}));
        assert!(matches!(outside, Err(Error::ValidationFailed { .. })), "{outside:?}");
        let large = asked_arguments(SUBMIT, &json!({"values": {"n": "x".repeat(49 * 1024)}}));
        assert!(matches!(large, Err(Error::TooLarge { .. })), "{large:?}");
    }

    #[test]
    fn a_readers_row_holds_no_arguments() {
        let arguments = json!({"patch": [{"op": "add", "path": "/junk", "value": "x".repeat(40 * 1024)}]});
        let row = CallAudit {
            app: "art_01".into(),
            version: 1,
            tool: SET_STATE.into(),
            via: Via::Chat,
            decision: String::new(),
            confirmation: None,
            arguments: None,
            arguments_digest: Some(lattice_log::digest(&arguments)),
            arguments_bytes: Some(lattice_core::document::size(&arguments) as u64),
            server: None,
            policy: None,
            result_bytes: None,
        }
        .decided(READ_ONLY);
        assert!(row.to_string().len() < 256, "{row}");
        assert!(row["arguments_bytes"].as_u64().unwrap() > 40 * 1024);
    }
}

//! Calls a view or an app makes through its host (SPEC M4, M5). A form's
//! view sends its values with `submit_form`, a submission as the caller. An
//! app's `get_state`, `set_state` and `submit` pass the app tool policy
//! first (allow, deny or ask, with its per-app overlay); `ask` is put to the
//! person through the host's elicitation, and without one the call is
//! refused. Every decision is written to the log as an
//! `audit.app_tool_call` event before the call runs: a call whose decision
//! cannot be recorded is not made.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use lattice_core::{ArtifactId, Command, SwitchKey, ThreadId, WorkspaceId};
use lattice_log::{Authenticated, LogService};
use lattice_ui::app_policy::Decision;
use lattice_ui::form::Submissions;
use lattice_ui::submission::submission_id;
use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResult, ContentBlock, ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};
use tokio::sync::{Mutex, oneshot};

use crate::Exporter;
use crate::calls::{not_offered, tool_error};
use crate::listing::{GET_STATE, SET_STATE, SUBMIT, SUBMIT_FORM};
use crate::scope::{Scope, refused};

/// An app's state changes are merged to at most one version per this.
const SET_STATE_EVERY: Duration = Duration::from_secs(5);
/// How long a person has to answer an `ask`.
const ASK_TIMEOUT: Duration = Duration::from_secs(300);

pub(crate) async fn call(
    ex: &Exporter,
    who: &Authenticated,
    name: &str,
    args: &Value,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResult, McpError> {
    if name == SUBMIT_FORM {
        return submit_form(&ex.log, who, args).await;
    }
    let app = match find_app(&ex.log, who, args).await {
        Ok(app) => app,
        Err(why) => return Ok(tool_error(why)),
    };
    let effective = ex.log.effective(who, &app.workspace).await.map_err(refused)?;
    if effective.get(&SwitchKey::MiniApps).is_none_or(|e| !e.enabled) {
        return Ok(tool_error(not_offered(name)));
    }
    let decision = match ex.policy.decide(&app.id, name) {
        Decision::Allow => "allow",
        Decision::Deny => "deny",
        Decision::Ask => ask(&app, name, args, context).await,
    };
    let audit = Command::AppEvent {
        workspace: WorkspaceId::from_trusted(app.workspace.clone()),
        namespace: "audit".into(),
        name: "app_tool_call".into(),
        data: json!({"app": app.id, "version": app.version, "tool": name, "decision": decision, "via": "mcp"}),
    };
    if let Err(e) = ex.log.execute(who, audit).await {
        return Ok(tool_error(format!("the call was not made: its audit row was refused ({e})")));
    }
    match decision {
        "allow" | "confirmed" => {}
        "deny" => return Ok(tool_error("the deployment's policy denies this tool to apps")),
        "declined" => return Ok(tool_error("the person declined")),
        _ => return Ok(tool_error("this call needs a person's confirmation, and the host offers no way to ask (elicitation)")),
    }
    match name {
        GET_STATE => {
            let state = app.data.get("state").cloned().unwrap_or(Value::Null);
            let mut result = CallToolResult::success(vec![ContentBlock::text(state.to_string())]);
            result.structured_content = Some(json!({"state": state}));
            Ok(result)
        }
        SET_STATE => {
            let ops = match lattice_ui::app::state_patch(args) {
                Ok(ops) => ops,
                Err(why) => return Ok(tool_error(why)),
            };
            Ok(match ex.state_writes.write(&ex.log, who, &app.id, ops).await {
                Ok(receipt) => {
                    let mut result = CallToolResult::success(vec![ContentBlock::text(format!("state saved as version {}", receipt["version"]))]);
                    // The contract's shape ({"version"}), as in lattice's chat, and the receipt.
                    result.structured_content = Some(json!({"version": receipt["version"], "receipt": receipt}));
                    result
                }
                Err(why) => tool_error(why),
            })
        }
        SUBMIT => {
            let values = args.get("values").cloned().unwrap_or_else(|| json!({}));
            let nonce = ArtifactId::generate().as_str().trim_start_matches(ArtifactId::PREFIX).to_owned();
            let id = submission_id(&app.id, Submissions::Many, who.principal().user.as_str(), Some(&nonce));
            let data = json!({"form_id": app.id, "form_version": app.version, "values": values, "nonce": nonce});
            submit(&ex.log, who, &app.thread, id, data).await
        }
        other => Ok(tool_error(not_offered(other))),
    }
}

/// The app a call names, or the most recent app of the thread it names.
async fn find_app(log: &LogService, who: &Authenticated, args: &Value) -> Result<lattice_log::ArtifactRow, String> {
    let row = match args.get("app").and_then(Value::as_str) {
        Some(id) => {
            let id = ArtifactId::parse("app", id).map_err(|e| e.to_string())?;
            log.artifact(who, &id, None).await.map_err(|e| format!("app: {e}"))?
        }
        None => {
            let scope = Scope::find(log, who, args.get("thread").and_then(Value::as_str)).await.map_err(|e| format!("thread: {e}"))?;
            let (thread, _) = scope.here.ok_or("app: the caller has no thread, so no app")?;
            let apps = log.artifacts(who, &thread, Some("app"), None).await.map_err(|e| e.to_string())?;
            apps.into_iter().rfind(|a| !a.archived).ok_or("app: there is no app in the thread")?
        }
    };
    if row.kind != "app" {
        return Err(format!("app: {} is a {}, not an app", row.id, row.kind));
    }
    if row.archived {
        return Err(format!("app: {} is archived", row.id));
    }
    Ok(row)
}

/// Puts an `ask` to the person through the host: "confirmed", "declined",
/// or "unconfirmed" when the host cannot ask.
async fn ask(app: &lattice_log::ArtifactRow, tool: &str, args: &Value, context: &RequestContext<RoleServer>) -> &'static str {
    let title = app.data.get("title").and_then(Value::as_str).unwrap_or("An app");
    let shown = match tool {
        SUBMIT => serde_json::to_string_pretty(args.get("values").unwrap_or(&Value::Null)).unwrap_or_default(),
        _ => serde_json::to_string_pretty(args).unwrap_or_default(),
    };
    let message = match tool {
        SUBMIT => format!("{title} (a mini app made by an agent) will send exactly this, as you:\n{shown}"),
        _ => format!("Allow {title} (a mini app made by an agent) to call {tool} with:\n{shown}"),
    };
    let params = ElicitRequestParams::FormElicitationParams { meta: None, message, requested_schema: ElicitationSchema::new(Default::default()) };
    match context.peer.create_elicitation_with_timeout(params, Some(ASK_TIMEOUT)).await {
        Ok(answer) if answer.action == ElicitationAction::Accept => "confirmed",
        Ok(_) => "declined",
        Err(e) => {
            tracing::debug!(error = %e, "no elicitation from the host");
            "unconfirmed"
        }
    }
}

/// A form's view sends values: a submission to the form, as the caller,
/// with the id the form's policy derives.
async fn submit_form(log: &LogService, who: &Authenticated, args: &Value) -> Result<CallToolResult, McpError> {
    let Some(form_id) = args.get("form").and_then(Value::as_str).and_then(|f| ArtifactId::parse("form", f).ok()) else {
        return Ok(tool_error("form: the form's artifact id is needed"));
    };
    let form = match log.artifact(who, &form_id, None).await {
        Ok(form) if form.kind == "form" => form,
        Ok(other) => return Ok(tool_error(format!("form: {} is a {}, not a form", other.id, other.kind))),
        Err(e) => return Ok(tool_error(format!("form: {e}"))),
    };
    let effective = log.effective(who, &form.workspace).await.map_err(refused)?;
    if effective.get(&SwitchKey::Forms).is_none_or(|e| !e.enabled) {
        return Ok(tool_error(not_offered(SUBMIT_FORM)));
    }
    let policy: Submissions = serde_json::from_value(form.data.get("submissions").cloned().unwrap_or(json!("once"))).unwrap_or(Submissions::Once);
    let nonce = (policy == Submissions::Many).then(|| ArtifactId::generate().as_str().trim_start_matches(ArtifactId::PREFIX).to_owned());
    let id = submission_id(&form.id, policy, who.principal().user.as_str(), nonce.as_deref());
    let mut data = json!({"form_id": form.id, "form_version": args.get("form_version").cloned().unwrap_or(Value::Null),
        "values": args.get("values").cloned().unwrap_or_else(|| json!({}))});
    if let Some(nonce) = nonce {
        data["nonce"] = json!(nonce);
    }
    submit(log, who, &form.thread, id, data).await
}

async fn submit(log: &LogService, who: &Authenticated, thread: &str, id: String, data: Value) -> Result<CallToolResult, McpError> {
    let command = Command::CreateArtifact {
        thread: ThreadId::from_trusted(thread),
        id: Some(ArtifactId::from_trusted(id)),
        kind: "submission".into(),
        data,
    };
    match log.execute(who, command).await {
        Ok(done) => {
            let receipt = json!({"id": done.id, "version": done.version, "digest": done.digest});
            let mut result = CallToolResult::success(vec![ContentBlock::text(format!("Sent as {}.", done.id.unwrap_or_default()))]);
            // The contract's shape ({"id": "sub_…"}), as in lattice's chat, and the receipt.
            result.structured_content = Some(json!({"id": receipt["id"], "submission": receipt}));
            Ok(result)
        }
        Err(lattice_core::Error::Unavailable { reason }) => Err(McpError::internal_error(reason, None)),
        Err(refusal) => Ok(tool_error(refusal.to_string())),
    }
}

/// `set_state` calls waiting to be written, per app and caller, so a busy
/// app makes at most one version per [`SET_STATE_EVERY`].
#[derive(Clone, Default)]
pub(crate) struct StateWrites(Arc<Mutex<HashMap<(String, String), Pending>>>);

#[derive(Default)]
struct Pending {
    ops: Vec<Value>,
    waiting: Vec<oneshot::Sender<Result<Value, String>>>,
    scheduled: bool,
    last_write: Option<Instant>,
}

impl StateWrites {
    async fn write(&self, log: &LogService, who: &Authenticated, app: &str, ops: Vec<Value>) -> Result<Value, String> {
        let key = (app.to_owned(), who.principal().user.to_string());
        let (tx, rx) = oneshot::channel();
        let delay = {
            let mut all = self.0.lock().await;
            let pending = all.entry(key.clone()).or_default();
            pending.ops.extend(ops);
            pending.waiting.push(tx);
            if pending.scheduled {
                None
            } else {
                pending.scheduled = true;
                Some(pending.last_write.map_or(Duration::ZERO, |at| (at + SET_STATE_EVERY).saturating_duration_since(Instant::now())))
            }
        };
        if let Some(delay) = delay {
            let (writes, log, who) = (self.clone(), log.clone(), who.clone());
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                writes.flush(&log, &who, key).await;
            });
        }
        rx.await.unwrap_or_else(|_| Err("the state write was dropped".into()))
    }

    async fn flush(&self, log: &LogService, who: &Authenticated, key: (String, String)) {
        let (ops, waiting) = {
            let mut all = self.0.lock().await;
            let pending = all.entry(key.clone()).or_default();
            pending.scheduled = false;
            pending.last_write = Some(Instant::now());
            (std::mem::take(&mut pending.ops), std::mem::take(&mut pending.waiting))
        };
        let outcome = apply(log, who, &key.0, ops).await;
        for w in waiting {
            let _ = w.send(outcome.clone());
        }
    }
}

async fn apply(log: &LogService, who: &Authenticated, app: &str, ops: Vec<Value>) -> Result<Value, String> {
    let id = ArtifactId::from_trusted(app);
    let head = log.artifact(who, &id, None).await.map_err(|e| e.to_string())?;
    let patch = serde_json::from_value(Value::Array(ops)).map_err(|e| format!("patch: {e}"))?;
    let done = log.execute(who, Command::EditArtifact { id, expected_version: head.version, patch }).await.map_err(|e| e.to_string())?;
    Ok(json!({"id": done.id, "version": done.version, "digest": done.digest}))
}

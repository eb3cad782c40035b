//! Calls a view or an app makes through its host (REQUIREMENTS.md M4, M5). A form's
//! view sends its values with `submit_form`, a submission as the caller. An
//! app's `get_state`, `set_state` and `submit` are `lattice-app-calls`' calls,
//! the same as in lattice's chat: let in by the view's capability (bound to
//! the caller and the app), decided by the app tool policy, audited with
//! their effect. `ask` is put to the person through the host's
//! elicitation, and the answer is their confirmation; without elicitation
//! the call is refused and its confirmation answered `cannot_ask`.

use std::time::Duration;

use lattice_app_calls::server_nonce;
use lattice_app_calls::{Outcome, Via};
use lattice_core::{ArtifactId, Command, Error, SwitchKey, ThreadId};
use lattice_log::{Authenticated, LogService};
use lattice_ui::app_policy::SUBMIT;
use lattice_ui::form::Form;
use lattice_ui::submission::Submission;
use lattice_ui::{FORM, SUBMISSION};
use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResult, ContentBlock, ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

use crate::Exporter;
use crate::calls::{not_offered, tool_error};
use crate::listing::SUBMIT_FORM;
use crate::scope::refused;

/// How long a person has to answer an `ask`.
const ASK_TIMEOUT: Duration = Duration::from_secs(300);

pub(crate) async fn call(
    ex: &Exporter,
    who: &Authenticated,
    name: &str,
    args: &Value,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResult, McpError> {
    let capability = args.get("capability").and_then(Value::as_str);
    if name == SUBMIT_FORM {
        // App-only: the caller must hold its view's capability for the
        // form it sends to.
        let granted = match capability {
            Some(token) => match ex.log.authenticator().capability_artifact(token, who) {
                Ok(artifact) => artifact,
                Err(e) => return Ok(tool_error(e.to_string())),
            },
            None => {
                return Ok(tool_error(
                    Error::forbidden(format!("{name} is app-only: it is called by a view with the capability its tool result gave it")).to_string(),
                ));
            }
        };
        // Refused in the words of lattice-app-calls' door: a refusal says so.
        if args.get("form").and_then(Value::as_str) != Some(granted.as_str()) {
            return Ok(tool_error(Error::forbidden("the capability was given for another artifact").to_string()));
        }
        return submit_form(&ex.log, who, args).await;
    }
    // An app's calls pass lattice-app-calls' one door, as the chat host's do: the
    // capability, then the policy. The tool's own arguments are what is
    // left once what names the app and the capability (this exporter's)
    // is taken out.
    let app = args.get("app").and_then(Value::as_str);
    let mut tool_args = args.clone();
    if let Some(map) = tool_args.as_object_mut() {
        for key in ["app", "thread", "capability"] {
            map.remove(key);
        }
    }
    let mut outcome = ex.apps.call(who, capability, app, name, &tool_args, Via::Mcp).await;
    if let Ok(Outcome::Confirm { confirmation, title, tool, arguments, .. }) = &outcome {
        outcome = match ask(title, tool, arguments, context).await {
            Some(accept) => ex.apps.confirm(who, confirmation, accept, Via::Mcp).await,
            // Answered `cannot_ask` (a row, the confirmation used up), and
            // refused.
            None => ex.apps.cannot_ask(who, confirmation, Via::Mcp).await,
        };
    }
    match outcome {
        Ok(Outcome::Done { result, text }) => {
            let mut answer = CallToolResult::success(vec![ContentBlock::text(text)]);
            answer.structured_content = Some(result);
            Ok(answer)
        }
        Ok(Outcome::Refused { reason }) => Ok(tool_error(reason)),
        Ok(Outcome::Confirm { .. }) => Ok(tool_error("the call was not confirmed")),
        Err(Error::NotEnabled { .. }) => Ok(tool_error(not_offered(name))),
        Err(Error::Unavailable { reason }) => Err(McpError::internal_error(reason, None)),
        Err(refusal) => Ok(tool_error(refusal.to_string())),
    }
}

/// Puts an `ask` to the person through the host, with the exact
/// arguments: `Some(accept)`, or `None` when the host cannot ask.
async fn ask(title: &str, tool: &str, arguments: &Value, context: &RequestContext<RoleServer>) -> Option<bool> {
    let shown = match tool {
        SUBMIT => serde_json::to_string_pretty(arguments.get("values").unwrap_or(&Value::Null)).unwrap_or_default(),
        _ => serde_json::to_string_pretty(arguments).unwrap_or_default(),
    };
    let message = match tool {
        SUBMIT => format!("{title} (a mini app made by an agent) will send exactly this, as you:\n{shown}"),
        _ => format!("Allow {title} (a mini app made by an agent) to call {tool} with:\n{shown}"),
    };
    let params = ElicitRequestParams::FormElicitationParams { meta: None, message, requested_schema: ElicitationSchema::new(Default::default()) };
    match context.peer.create_elicitation_with_timeout(params, Some(ASK_TIMEOUT)).await {
        Ok(answer) => Some(answer.action == ElicitationAction::Accept),
        Err(e) => {
            tracing::debug!(error = %e, "no elicitation from the host");
            None
        }
    }
}

/// A form's view sends values: a submission to the form, as the caller,
/// with the id the form's policy derives.
pub(crate) async fn submit_form(log: &LogService, who: &Authenticated, args: &Value) -> Result<CallToolResult, McpError> {
    let Some(form_id) = args.get("form").and_then(Value::as_str).and_then(|f| ArtifactId::parse("form", f).ok()) else {
        return Ok(tool_error("form: the form's artifact id is needed"));
    };
    let form = match log.artifact(who, &form_id, None).await {
        Ok(form) if form.kind == FORM => form,
        Ok(other) => return Ok(tool_error(format!("form: {} is a {}, not a form", other.id, other.kind))),
        Err(e) => return Ok(tool_error(format!("form: {e}"))),
    };
    let effective = log.effective(who, &form.workspace).await.map_err(refused)?;
    if effective.get(&SwitchKey::Forms).is_none_or(|e| !e.enabled) {
        return Ok(tool_error(not_offered(SUBMIT_FORM)));
    }
    let policy = serde_json::from_value::<Form>(form.data.clone()).map(|f| f.submissions).unwrap_or_default();
    let Some(version) = args.get("form_version").and_then(Value::as_u64) else {
        return Ok(tool_error("form_version: the version the values were filled against is needed"));
    };
    let values = args.get("values").cloned().unwrap_or_else(|| json!({}));
    let (id, submission) = Submission::to_form(&form.id, version, policy, who.principal().user.as_str(), values, server_nonce);
    let data = submission.data();
    submit(log, who, &form.thread, id, data).await
}

async fn submit(log: &LogService, who: &Authenticated, thread: &str, id: String, data: Value) -> Result<CallToolResult, McpError> {
    let command =
        Command::CreateArtifact { thread: ThreadId::from_trusted(thread), id: Some(ArtifactId::from_trusted(id)), kind: SUBMISSION.into(), data };
    match log.execute(who, command).await {
        Ok(done) => {
            // The submission's receipt, with its sealed proof once sealed.
            let mut receipt = done.receipt();
            receipt["proof"] = json!(lattice_log::seal::proof(log.db(), who.principal(), done.seq).await.map_err(refused)?);
            let mut result = CallToolResult::success(vec![ContentBlock::text(format!("Sent as {}.", done.id.unwrap_or_default()))]);
            // The contract's shape ({"id": "sub_…"}), as in lattice's chat, and the receipt.
            result.structured_content = Some(json!({"id": receipt["id"], "submission": receipt}));
            Ok(result)
        }
        Err(lattice_core::Error::Unavailable { reason }) => Err(McpError::internal_error(reason, None)),
        Err(refusal) => Ok(tool_error(refusal.to_string())),
    }
}

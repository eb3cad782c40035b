//! Calls a view or an app makes through its host (REQUIREMENTS.md M4, M5). A form's
//! view sends its values with `submit_form`, a submission as the caller
//! (`form_answers.rs`), let in by the same capability check as an app's. An
//! app's `get_state`, `set_state` and `submit` are `lattice-app-calls`' calls,
//! the same as in lattice's chat: let in by the view's capability (bound to
//! the caller and the app), decided by the app tool policy, audited with
//! their effect. `ask` is put to the person through the host's
//! elicitation, and the answer is their confirmation; without elicitation
//! the call is refused and its confirmation answered `cannot_ask`.

use std::time::Duration;

use lattice_app_calls::{Outcome, Via};
use lattice_core::Error;
use lattice_log::Authenticated;
use lattice_ui::app_policy::SUBMIT;
use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResult, ContentBlock, ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;

use crate::listing::SUBMIT_FORM;
use crate::tool_errors::{not_offered, refused, tool_error};
use crate::{Exporter, form_answers};

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
        // App-only, as an app's calls are: lattice-app-calls' one check, the
        // capability its view was given for this very form (a call that
        // names no form names another than the capability's).
        let form = args.get("form").and_then(Value::as_str).unwrap_or_default();
        if let Err(refusal) = ex.apps.granted(who, capability, Some(form), name) {
            return Ok(refused(&refusal));
        }
        return form_answers::submit(ex, who, args).await;
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
        Err(refusal) => Ok(refused(&refusal)),
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

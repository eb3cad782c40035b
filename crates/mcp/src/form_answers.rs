//! A form's answer sent through MCP: from the form's view (`submit_form`,
//! let in by lattice-app-calls' capability check in `app_calls.rs`), or
//! given in the client's own form (elicitation: `calls.rs`, `rounds.rs`).
//! Both are [`lattice_app_calls::AppCalls::submit_form`]: the caller's
//! submission through the write path, whose gate refuses it while forms are
//! switched off where the form lives.

use lattice_core::{ArtifactId, Error};
use lattice_log::Authenticated;
use lattice_ui::FORM;
use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

use crate::Exporter;
use crate::elicited::Elicited;
use crate::listing::SUBMIT_FORM;
use crate::tool_errors::{not_offered, refused, tool_error};

/// `submit_form`'s values (`form`, `form_version`, `values`), sent as the
/// caller's submission, with the id the form's policy derives.
pub(crate) async fn submit(ex: &Exporter, who: &Authenticated, args: &Value) -> Result<CallToolResult, McpError> {
    let Some(form_id) = args.get("form").and_then(Value::as_str).and_then(|f| ArtifactId::parse("form", f).ok()) else {
        return Ok(tool_error("form: the form's artifact id is needed"));
    };
    let form = match ex.log.artifact(who, &form_id, None).await {
        Ok(form) if form.kind == FORM => form,
        Ok(other) => return Ok(tool_error(format!("form: {} is a {}, not a form", other.id, other.kind))),
        Err(e) => return Ok(tool_error(format!("form: {e}"))),
    };
    let Some(version) = args.get("form_version").and_then(Value::as_u64) else {
        return Ok(tool_error("form_version: the version the values were filled against is needed"));
    };
    let values = args.get("values").cloned().unwrap_or_else(|| json!({}));
    match ex.apps.submit_form(who, &form, version, values).await {
        Ok(receipt) => {
            let sent = format!("Sent as {}.", receipt["id"].as_str().unwrap_or_default());
            let mut result = CallToolResult::success(vec![ContentBlock::text(sent)]);
            // The contract's shape ({"id": "sub_…"}), as in lattice's chat, and the receipt.
            result.structured_content = Some(json!({"id": receipt["id"], "submission": receipt}));
            Ok(result)
        }
        Err(Error::NotEnabled { .. }) => Ok(tool_error(not_offered(SUBMIT_FORM))),
        Err(Error::Unavailable { reason, .. }) => Err(McpError::internal_error(reason, None)),
        Err(refusal) => Ok(refused(&refusal)),
    }
}

/// The person's answer in the client's form, filled against `version` of
/// `form`: sent as theirs, or why it was refused (the form then waits in
/// lattice).
pub(crate) async fn answered(ex: &Exporter, who: &Authenticated, form: &str, version: u64, values: Value) -> Result<Elicited, McpError> {
    let sent = submit(ex, who, &json!({"form": form, "form_version": version, "values": values})).await?;
    if sent.is_error == Some(true) {
        let why = sent.content.first().and_then(|c| c.as_text()).map(|t| t.text.clone()).unwrap_or_default();
        return Ok(Elicited::NotAsked(Some(format!("The answer given in the client was refused: {why}"))));
    }
    let submission = sent.structured_content.and_then(|s| s.get("submission").cloned()).unwrap_or(Value::Null);
    Ok(Elicited::Answered { values, submission })
}

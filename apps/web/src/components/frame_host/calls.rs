//! An app's requests that reach past its frame: its tool calls, handed to
//! the server with the app's capability (the person confirms when the
//! server says so), what it wants the model to know, a message it asks to
//! post and a link it asks to open, each only once the person agreed.

use lattice_ui::app_policy::SUBMIT;
use lattice_wire::{AppCall, AppCapability, Confirmation, Outcome};
use serde_json::{Value, json};

use super::frames::{answer, now, refuse, with_frame};
use crate::components::confirm;
use crate::data::api_client;

/// The text of content blocks (the kinds this host takes: text).
fn text_of(content: Option<&Value>) -> String {
    content
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// Keeps what the app wants the model to know, on the server: the last one
/// wins, and the thread's next model call reads it as untrusted data.
pub(super) async fn update_model_context(id: u64, rid: Value, params: Value) {
    let Some(app) = with_frame(id, |f| f.app.clone()) else { return };
    let body = lattice_wire::AppContext { text: text_of(params.get("content")), structured: params.get("structuredContent").cloned() };
    match api_client::put::<lattice_wire::AppContextKept>(&format!("/v1/artifacts/{}/context", app.id), &body).await {
        Ok(_) => answer(id, &rid, json!({})),
        Err(e) => refuse(id, &rid, -32000, &e.message()),
    }
}

/// Posts what the app asks to say in the thread, as the person, once the
/// person has read it and agreed.
pub(super) async fn post_message(id: u64, rid: Value, params: Value) {
    let Some(app) = with_frame(id, |f| f.app.clone()) else { return };
    let text = text_of(params.get("content"));
    if params.get("role").and_then(Value::as_str) != Some("user") || text.trim().is_empty() {
        return refuse(id, &rid, -32602, "ui/message takes role \"user\" and text content");
    }
    if !confirm::ask(&format!("{} wants to post in the thread", app.title), "The app will post this message as you:", &text, "Post").await {
        return answer(id, &rid, json!({"isError": true}));
    }
    match api_client::post::<lattice_wire::Posted>(&format!("/v1/threads/{}/messages", app.thread), &lattice_wire::PostMessage { text }).await {
        Ok(_) => answer(id, &rid, json!({})),
        Err(_) => answer(id, &rid, json!({"isError": true})),
    }
}

pub(super) async fn open_link(id: u64, rid: Value, url: String) {
    let lower = url.to_ascii_lowercase();
    if !(lower.starts_with("https://") || lower.starts_with("http://")) {
        refuse(id, &rid, -32000, "Invalid URL: only http and https links open");
        return;
    }
    let title = with_frame(id, |f| f.app.title.clone()).unwrap_or_default();
    if confirm::ask(&format!("{title} wants to open a link"), "The app asks to open this address in a new tab:", &url, "Open link").await {
        if let Some(w) = web_sys::window() {
            let _ = w.open_with_url_and_target_and_features(&url, "_blank", "noopener,noreferrer");
        }
        answer(id, &rid, json!({}));
    } else {
        refuse(id, &rid, -32000, "Link opening denied by user");
    }
}

/// Hands an app's call to the server and answers the app with what it
/// says; when the person must confirm, asks them with the exact arguments
/// the server recorded, and sends their answer back.
pub(super) async fn call_tool(id: u64, rid: Value, name: String, arguments: Value) {
    let Some(app) = with_frame(id, |f| f.app.clone()) else { return };
    let capability = match capability_for(id, &app.id).await {
        Ok(capability) => capability,
        Err(e) => return answer(id, &rid, tool_error(&e.message())),
    };
    let body = AppCall { tool: name.clone(), arguments, capability: Some(capability) };
    let mut outcome = match api_client::post::<Outcome>(&format!("/v1/artifacts/{}/calls", app.id), &body).await {
        Ok(outcome) => outcome,
        // A server's app is refused a call it may not make (a tool for the
        // model only, one its server does not list) as MCP Apps says: a
        // JSON-RPC error, not a result.
        Err(e) if app.server.is_some() => return refuse(id, &rid, -32602, &e.message()),
        Err(e) => return answer(id, &rid, tool_error(&e.message())),
    };
    if let Outcome::Confirm { confirmation, arguments: asked, .. } = &outcome {
        let (title, lead, button, shown) = match name.as_str() {
            _ if app.server.is_some() => (
                format!("Allow {} to call {name} on the {} server?", app.title, app.server.as_ref().map_or("", |s| s.name.as_str())),
                "With exactly these arguments:".to_owned(),
                "Allow",
                serde_json::to_string_pretty(asked).unwrap_or_default(),
            ),
            SUBMIT => (
                format!("Send from {}?", app.title),
                "The app will send exactly this, as you:".to_owned(),
                "Send",
                serde_json::to_string_pretty(asked.get("values").unwrap_or(&Value::Null)).unwrap_or_default(),
            ),
            _ => (
                format!("Allow {} to call {name}?", app.title),
                "With these arguments:".to_owned(),
                "Allow",
                serde_json::to_string_pretty(asked).unwrap_or_default(),
            ),
        };
        // The confirmation is the person's: it goes out only from this
        // page's own dialog, with the session's token, which the app's frame
        // has no way to reach (no message from a frame confirms).
        let accept = confirm::ask(&title, &lead, &shown, button).await;
        outcome = match api_client::post::<Outcome>(&format!("/v1/app-calls/{confirmation}"), &Confirmation { accept }).await {
            Ok(outcome) => outcome,
            Err(e) => return answer(id, &rid, tool_error(&e.message())),
        };
    }
    match outcome {
        // A server's answer is its own tool result, passed on as it is.
        Outcome::Done { result, .. } if app.server.is_some() => answer(id, &rid, result),
        Outcome::Done { text, result } => answer(id, &rid, json!({"content": [{"type": "text", "text": text}], "structuredContent": result})),
        Outcome::Refused { reason } => answer(id, &rid, tool_error(&reason)),
        Outcome::Confirm { .. } => answer(id, &rid, tool_error("the call was not confirmed")),
    }
}

/// The capability to make the calls of the app a frame runs: given by the
/// server to this page, the person's session, for an app it shows; kept
/// with the frame and asked for again a minute before it expires.
async fn capability_for(id: u64, app: &str) -> crate::data::request::Result<String> {
    let kept = with_frame(id, |f| f.capability.clone()).flatten().filter(|(_, until)| now() < *until);
    if let Some((capability, _)) = kept {
        return Ok(capability);
    }
    let given: AppCapability = api_client::post(&format!("/v1/artifacts/{app}/capability"), &json!({})).await?;
    let until = now() + (given.expires_in_secs as f64 - 60.0).max(0.0) * 1000.0;
    with_frame(id, |f| f.capability = Some((given.capability.clone(), until)));
    Ok(given.capability)
}

fn tool_error(why: &str) -> Value {
    json!({"content": [{"type": "text", "text": why}], "isError": true})
}

//! Deterministic models for the demo and the tests (CONTRACT): each plays a
//! fixed script, reading only what the transcript already holds.

use std::sync::Arc;

use lattice_core::ToolCall;
use serde_json::{Value, json};

use crate::model::{ChatMessage, Model, ModelError, ModelReply, ModelRequest, Models};
use crate::tools;

/// The model a run of [`Models::scripted`] uses when it names none.
const DEFAULT: &str = "scripted:ask_form";

impl Models {
    /// The scripted models of CONTRACT (`scripted:ask_form`,
    /// `scripted:dashboard`, `scripted:app`), with `scripted:ask_form` the
    /// default until another is added.
    pub fn scripted() -> Self {
        all().into_iter().fold(Self::default(), |models, (name, model)| models.with(name, model, name == DEFAULT))
    }
}

pub fn all() -> Vec<(&'static str, Arc<dyn Model>)> {
    vec![
        ("scripted:ask_form", Arc::new(AskForm)),
        ("scripted:dashboard", Arc::new(ShowDashboard)),
        ("scripted:app", Arc::new(MakeApp)),
        ("scripted:call", Arc::new(CallTool)),
        ("scripted:context", Arc::new(SaysTheContext)),
    ]
}

fn offered(request: &ModelRequest, name: &str) -> bool {
    request.tools.iter().any(|t| t.name == name)
}

fn last_tool_result(request: &ModelRequest) -> Option<&str> {
    request.messages.iter().rev().find_map(|m| match m {
        ChatMessage::Tool { content, .. } => Some(content.as_str()),
        _ => None,
    })
}

/// A `name=<number>` word in the run's prompt: how a test asks a scripted
/// model for a variant (`expires_in_secs=2`).
fn prompt_option(request: &ModelRequest, name: &str) -> Option<u64> {
    let prompt = request.messages.iter().find_map(|m| match m {
        ChatMessage::User { content } => Some(content.as_str()),
        _ => None,
    })?;
    prompt.split_whitespace().find_map(|word| word.strip_prefix(name)?.strip_prefix('=')?.trim_end_matches(['.', ',']).parse().ok())
}

/// A `name=<word>` in the run's prompt (`tool=basic__get-time`).
fn prompt_word<'a>(request: &'a ModelRequest, name: &str) -> Option<&'a str> {
    let prompt = request.messages.iter().find_map(|m| match m {
        ChatMessage::User { content } => Some(content.as_str()),
        _ => None,
    })?;
    prompt.split_whitespace().find_map(|word| word.strip_prefix(name)?.strip_prefix('=').map(|w| w.trim_end_matches(['.', ','])))
}

fn call(name: &str, arguments: Value) -> ModelReply {
    ModelReply { text: None, tool_calls: vec![ToolCall { id: format!("call_{name}_1"), name: name.into(), arguments }], tokens: None }
}

fn say(text: impl Into<String>) -> ModelReply {
    ModelReply { text: Some(text.into()), tool_calls: vec![], tokens: None }
}

/// The incident form of the demo: a date, a severity, three checkboxes, a note.
pub fn incident_form() -> Value {
    json!({
        "title": "Report an incident",
        "schema": {
            "type": "object",
            "properties": {
                "date": {"type": "string", "format": "date", "title": "When did it start?"},
                "severity": {"type": "string", "title": "Severity", "enum": ["low", "medium", "high", "critical"]},
                "affected": {"type": "array", "title": "What is affected?", "items": {"enum": ["API", "Web app", "Database"]},
                    "uniqueItems": true},
                "note": {"type": "string", "title": "What happened?", "maxLength": 2000}
            },
            "required": ["date", "severity"]
        },
        "ui": {
            "order": ["date", "severity", "affected", "note"],
            "submit_label": "Send report",
            "fields": {
                "severity": {"widget": "radio"},
                "affected": {"widget": "checkboxes"},
                "note": {"widget": "textarea", "placeholder": "A line or two is enough", "help": "Plain text; no secrets."}
            }
        }
    })
}

struct AskForm;

#[async_trait::async_trait]
impl Model for AskForm {
    async fn reply(&self, request: ModelRequest) -> Result<ModelReply, ModelError> {
        match last_tool_result(&request) {
            None if offered(&request, tools::ASK_FORM) => {
                let mut form = incident_form();
                if let Some(secs) = prompt_option(&request, "expires_in_secs") {
                    form["expires_in_secs"] = secs.into();
                }
                Ok(call(tools::ASK_FORM, form))
            }
            None => Ok(say("Forms are switched off here, so tell me in a message: when did it start, and how bad is it?")),
            Some(answer) if answer.starts_with("expired") => Ok(say("Nobody sent the report in time, so I have closed it.")),
            Some(answer) => Ok(say(format!("Thanks, I have the report. You sent:\n\n{answer}"))),
        }
    }
}

struct ShowDashboard;

#[async_trait::async_trait]
impl Model for ShowDashboard {
    async fn reply(&self, request: ModelRequest) -> Result<ModelReply, ModelError> {
        match last_tool_result(&request) {
            None if offered(&request, tools::SHOW_DASHBOARD) => Ok(call(
                tools::SHOW_DASHBOARD,
                json!({
                    "title": "Service health",
                    "panels": [
                        {"type": "metric", "label": "Open incidents", "value": 3, "delta": -1},
                        {"type": "line", "title": "Requests per minute", "x": ["09:00", "10:00", "11:00", "12:00"],
                            "series": [{"name": "api", "values": [1200, 1350, 1280, 1410]},
                                       {"name": "web", "values": [800, 870, 910, 880]}]},
                        {"type": "table", "title": "Slowest endpoints", "columns": ["endpoint", {"label": "p99", "format": "number", "unit": "ms"}],
                            "rows": [["/v1/search", 412], ["/v1/export", 388], ["/v1/login", 120]]}
                    ]
                }),
            )),
            None => Ok(say("Dashboards are switched off here, so in words: 3 open incidents, traffic steady.")),
            Some(_) => Ok(say("Here is the dashboard of service health.")),
        }
    }
}

/// A counter that keeps its count in the app's state and submits it.
pub const COUNTER_APP: &str = r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Counter</title>
<style>body{font:16px system-ui,sans-serif;margin:1rem;color:var(--fg,#111);background:var(--paper,#fff)}
button{font:inherit;padding:.4rem .8rem;margin-right:.5rem}</style></head>
<body><p>Count: <output id="count">0</output></p>
<button id="plus">Add one</button><button id="send">Submit the count</button>
<script>
let id = 0; const waiting = new Map(); let count = 0;
function rpc(method, params) {
  return new Promise((resolve, reject) => {
    const n = ++id; waiting.set(n, {resolve, reject});
    window.parent.postMessage({jsonrpc: "2.0", id: n, method, params}, "*");
  });
}
window.addEventListener("message", (e) => {
  const m = e.data; if (!m || m.jsonrpc !== "2.0" || !waiting.has(m.id)) return;
  const w = waiting.get(m.id); waiting.delete(m.id);
  m.error ? w.reject(m.error) : w.resolve(m.result);
});
function show() { document.getElementById("count").textContent = String(count); }
async function start() {
  await rpc("ui/initialize", {appInfo: {name: "counter", version: "1"}, appCapabilities: {}, protocolVersion: "2026-01-26"});
  window.parent.postMessage({jsonrpc: "2.0", method: "ui/notifications/initialized", params: {}}, "*");
  const got = await rpc("tools/call", {name: "get_state", arguments: {}});
  count = (got.structuredContent && got.structuredContent.state && got.structuredContent.state.count) || 0; show();
}
document.getElementById("plus").onclick = async () => {
  count += 1; show();
  await rpc("tools/call", {name: "set_state", arguments: {patch: [{op: "add", path: "/count", value: count}]}});
};
document.getElementById("send").onclick = () => rpc("tools/call", {name: "submit", arguments: {values: {count}}});
start();
</script></body></html>"#;

struct MakeApp;

#[async_trait::async_trait]
impl Model for MakeApp {
    async fn reply(&self, request: ModelRequest) -> Result<ModelReply, ModelError> {
        match last_tool_result(&request) {
            None if offered(&request, tools::CREATE_APP) => Ok(call(
                tools::CREATE_APP,
                json!({"title": "Counter", "summary": "Counts your clicks, keeps the count, and submits it when you ask.",
                       "html": COUNTER_APP}),
            )),
            None => Ok(say("Mini apps are switched off here, so I can't make one.")),
            Some(_) => Ok(say("I made a small counter app.")),
        }
    }
}

/// Calls the tool the prompt names (`tool=<name>`, a connected server's
/// `<server>__<tool>`) with no arguments, once, and says what came back.
struct CallTool;

#[async_trait::async_trait]
impl Model for CallTool {
    async fn reply(&self, request: ModelRequest) -> Result<ModelReply, ModelError> {
        let Some(tool) = prompt_word(&request, "tool") else { return Ok(say("Name the tool to call: tool=<name>.")) };
        match last_tool_result(&request) {
            None if offered(&request, tool) => Ok(call(tool, json!({}))),
            None => Ok(say(format!("{tool} is not offered here."))),
            Some(result) if result.starts_with("error:") => Ok(say(format!("{tool} failed: {}", result.trim_start_matches("error: ")))),
            Some(_) => Ok(say(format!("I called {tool}."))),
        }
    }
}

/// Says back what the thread's apps told it (their model context, as the
/// model call carries it), or that none did: what a host's conformance
/// check of `ui/update-model-context` needs of a model.
struct SaysTheContext;

#[async_trait::async_trait]
impl Model for SaysTheContext {
    async fn reply(&self, request: ModelRequest) -> Result<ModelReply, ModelError> {
        let told: Vec<&str> = request
            .messages
            .iter()
            .filter_map(|m| match m {
                ChatMessage::User { content } if content.starts_with("An app in this thread says what it shows now:") => Some(content.as_str()),
                _ => None,
            })
            .collect();
        Ok(match told.is_empty() {
            true => say("No app in this thread told me anything."),
            false => say(format!("The apps in this thread told me:\n\n{}", told.join("\n\n"))),
        })
    }
}

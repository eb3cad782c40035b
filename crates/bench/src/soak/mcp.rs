//! An MCP host: every few seconds a session over Streamable HTTP at the
//! edge's `/mcp` (protocol 2025-11-25, with a session): `initialize` and
//! `notifications/initialized`, `tools/list`, `tools/call show_dashboard`
//! in one of the tenant's threads, then the session closed (`DELETE`).
//! A minimal JSON-RPC client: answers come as JSON or as one SSE event.

use std::sync::Arc;
use std::time::Instant;

use reqwest::Method;
use serde_json::{Value, json};
use tokio::sync::watch;

use super::client::{Api, Exchange, Request};
use super::scene::Scene;
use super::stats::Outcome;
use crate::rng::Rng;

const PROTOCOL: &str = "2025-11-25";

pub async fn host(api: Api, scene: Arc<Scene>, mut stop: watch::Receiver<bool>) {
    let mut rng = Rng::new(11);
    loop {
        if !super::pause::pause(rng.millis(3_000, 6_000), &mut stop).await {
            return;
        }
        let person = rng.pick(&scene.mcp);
        let threads = scene.threads_of(person.tenant);
        let th = &rng.pick(&threads).id;
        session(&api, &person.token, th).await;
    }
}

async fn session(api: &Api, token: &str, th: &str) {
    let start = Instant::now();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "lattice-soak", "version": "1"}}});
    let Some((session, _, retried)) = rpc(api, "mcp_init", token, None, &init).await else { return };
    let Some(session) = session else { return api.stats.fail("mcp_init", "no Mcp-Session-Id".into()) };
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let Some((_, _, again)) = rpc(api, "mcp_init", token, Some(&session), &initialized).await else { return };
    api.stats.record("mcp_init", start.elapsed(), if retried || again { Outcome::Recovered } else { Outcome::Ok });

    let start = Instant::now();
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let Some((_, listed, retried)) = rpc(api, "mcp_list", token, Some(&session), &list).await else { return };
    let offered = listed["result"]["tools"].as_array().is_some_and(|tools| tools.iter().any(|t| t["name"] == "show_dashboard"));
    api.stats.record("mcp_list", start.elapsed(), verdict(offered, retried, || format!("show_dashboard not listed: {listed}")));

    let start = Instant::now();
    let dashboard = json!({"title": "Soak figures", "thread": th, "panels": [
        {"type": "metric", "label": "Sessions", "value": 1},
        {"type": "table", "title": "Seen", "columns": ["what", "n"], "rows": [["mcp", 1]]},
    ]});
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "show_dashboard", "arguments": dashboard}});
    let Some((_, called, retried)) = rpc(api, "mcp_call", token, Some(&session), &call).await else { return };
    let shown = called["result"].is_object() && called["result"]["isError"] != true;
    api.stats.record("mcp_call", start.elapsed(), verdict(shown, retried, || format!("{called}")));

    // Closed as a host closes it; a refusal here is nobody's error.
    let close = Request::new(Method::DELETE, "/mcp", token, None).header("mcp-session-id", session).header("mcp-protocol-version", PROTOCOL);
    let _ = api.exchange(&close).await;
}

fn verdict(ok: bool, retried: bool, why: impl FnOnce() -> String) -> Outcome {
    match (ok, retried) {
        (true, false) => Outcome::Ok,
        (true, true) => Outcome::Recovered,
        (false, _) => Outcome::Failed(why().chars().take(200).collect()),
    }
}

/// One JSON-RPC message posted to `/mcp`: the session id the answer
/// named, the answer (a response; `Null` for a notification's 202), and
/// whether it took a retry. A refusal or a JSON-RPC error is counted under
/// `kind` and gives `None`.
async fn rpc(api: &Api, kind: &'static str, token: &str, session: Option<&str>, message: &Value) -> Option<(Option<String>, Value, bool)> {
    let start = Instant::now();
    let mut request = Request::post("/mcp", token, message).header("accept", "application/json, text/event-stream");
    if let Some(session) = session {
        request = request.header("mcp-session-id", session).header("mcp-protocol-version", PROTOCOL);
    }
    let (headers, body, retried) = match api.exchange(&request).await {
        Exchange::Answered { headers, body, retried } => (headers, body, retried),
        Exchange::Refused(why) | Exchange::Failed(why) => {
            api.stats.record(kind, start.elapsed(), Outcome::Failed(why));
            return None;
        }
    };
    let session = headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let answer = response_in(&body, &message["id"]);
    if !answer["error"].is_null() {
        api.stats.record(kind, start.elapsed(), Outcome::Failed(format!("JSON-RPC error {}", answer["error"])));
        return None;
    }
    Some((session, answer, retried))
}

/// The response to `id` in a body that is JSON or SSE (`data:` lines).
fn response_in(body: &str, id: &Value) -> Value {
    if let Ok(value) = serde_json::from_str::<Value>(body) {
        return value;
    }
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|m| &m["id"] == id)
        .unwrap_or(Value::Null)
}

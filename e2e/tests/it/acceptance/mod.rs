//! The acceptance suite (REQUIREMENTS.md X1, X2) against the multi-process stack:
//! PostgreSQL, NATS, and `lattice serve log | bridge | mcp | edge` each its
//! own process (`lattice_e2e::stack`), driven in headless Chromium, over
//! MCP and from a NATS consumer.

mod ask_form;
mod compose;
mod just;
mod killswitch;
mod telemetry;

use lattice_e2e::stack::Stack;
use serde_json::{Value, json};

/// A stack on free ports in a folder of its own; stopped when dropped.
pub async fn stack() -> Stack {
    let stack = tokio::task::spawn_blocking(Stack::temporary).await.unwrap().unwrap_or_else(|e| panic!("the stack did not start: {e}"));
    println!("acceptance: {}", stack.engine());
    stack
}

/// A tools/list over `/mcp` of `base` as `token`, by hand: initialize, then
/// the list; the tool names.
pub async fn mcp_tool_names(base: &str, token: &str) -> Vec<String> {
    let http = lattice_e2e::http();
    let post = |body: Value, session: Option<String>| {
        let mut r = http.post(format!("{base}/mcp")).bearer_auth(token).header("accept", "application/json, text/event-stream").json(&body);
        if let Some(s) = session {
            r = r.header("mcp-session-id", s).header("mcp-protocol-version", "2025-06-18");
        }
        r.send()
    };
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "acceptance", "version": "1"}}});
    let r = post(init, None).await.unwrap();
    let session = r.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let _ = r.text().await;
    let _ = post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}), session.clone()).await.unwrap().text().await;
    // One JSON-RPC answer, as JSON or as an event of a stream.
    let answer = lattice_e2e::sse::json_rpc_answer(post(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}), session).await.unwrap()).await;
    assert_eq!(answer["id"], 2, "tools/list answered {answer}");
    answer["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("tools/list answered {answer}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// X1: the harness picks testcontainers for NATS when a container engine
/// answers (`cargo xtask test` starts one and builds the image), native
/// processes otherwise, and says which; either way the bridge publishes
/// into that NATS.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_harness_says_how_it_runs_nats_and_the_bridge_reaches_it() {
    use futures_util::StreamExt;
    let engine = lattice_e2e::stack::container_engine();
    let stack = stack().await;
    match &engine {
        Ok(host) => assert!(
            stack.nats_engine.starts_with("testcontainers") && stack.nats_engine.contains(host.as_str()),
            "an engine answers at {host}, yet: {}",
            stack.nats_engine
        ),
        Err(why) => assert!(stack.nats_engine.starts_with("a native process"), "no engine ({why}), yet: {}", stack.nats_engine),
    }
    let rules = async_nats::ConnectOptions::with_user_and_password("rules".into(), lattice_e2e::stack::NATS_USERS[1].1.into());
    let nats = rules.connect(&stack.nats_url).await.unwrap();
    let mut heard = nats.subscribe("lattice.acme.>").await.unwrap();
    let ana = lattice_e2e::Client::sign_in(&stack.portal, "acme", "ana").await;
    ana.ok("POST", "/v1/workspaces", json!({"name": "Heard"})).await;
    let message = tokio::time::timeout(std::time::Duration::from_secs(10), heard.next()).await.expect("the bridge published").unwrap();
    assert!(message.subject.ends_with(".log.workspace_created"), "{}", message.subject);
    println!("harness: {}; heard {}", stack.engine(), message.subject);
}

//! Two `lattice serve mcp` replicas on one PostgreSQL database: a session
//! opened on one is served by the other (its handshake is in the shared
//! session table), and only to the caller who opened it; behind the edge,
//! a replica killed under use leaves its sessions to the other.

use lattice_agent::tools::SHOW_DASHBOARD;
use serde_json::{Value, json};

use super::ServeMcp;

const LEGACY: &str = "2025-06-18";

/// One JSON-RPC message to `base/mcp`: the status, the session header and
/// the JSON answer (read from the SSE body when the server streams it).
async fn post(base: &str, token: &str, session: Option<&str>, message: Value) -> (u16, Option<String>, Value) {
    let mut request = lattice_e2e::http()
        .post(format!("{base}/mcp"))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", LEGACY)
        .json(&message);
    if let Some(id) = session {
        request = request.header("mcp-session-id", id);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let session = response.headers().get("mcp-session-id").map(|v| v.to_str().unwrap().to_owned());
    (status, session, lattice_e2e::sse::json_rpc_answer(response).await)
}

fn token(user: &str) -> String {
    let out = std::process::Command::new(lattice_e2e::binary())
        .args(["token", "--tenant", "acme", "--user", user])
        .env("LATTICE_AUTH_SECRET", lattice_e2e::SECRET)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

#[tokio::test]
async fn a_session_opened_on_one_replica_is_served_by_another_to_its_opener_only() {
    let url = lattice_testkit::fresh_url(lattice_log::Backend::Postgres).await;
    let a = ServeMcp::start(&url, &[]).await;
    let b = ServeMcp::start(&url, &[]).await;
    let (ana, bob) = (token("ana"), token("bob"));

    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "replica-test", "version": "1"}}});
    let (status, session, answer) = post(&a.base, &ana, None, initialize).await;
    assert_eq!(status, 200, "{answer}");
    let session = session.expect("a session id from replica A");
    assert_eq!(answer["result"]["serverInfo"]["name"].as_str().map(|n| !n.is_empty()), Some(true), "{answer}");

    // The rest of the session goes to replica B, which never saw it.
    let (status, _, _) = post(&b.base, &ana, Some(&session), json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    assert_eq!(status, 202);
    let (status, _, listed) = post(&b.base, &ana, Some(&session), json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).await;
    assert_eq!(status, 200, "{listed}");
    let names: Vec<&str> = listed["result"]["tools"].as_array().expect("tools").iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&SHOW_DASHBOARD), "{names:?}");

    // Another caller naming ana's session finds nothing, on either replica.
    for base in [&a.base, &b.base] {
        let (status, _, _) = post(base, &bob, Some(&session), json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})).await;
        assert_eq!(status, 404, "bob used ana's session on {base}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_mcp_replica_behind_the_edge_leaves_its_sessions_to_the_other() {
    let url = lattice_testkit::fresh_url(lattice_log::Backend::Postgres).await;
    let log = lattice_e2e::LogProcess::start_with(&url, &[]).await;
    let mut a = ServeMcp::start(&url, &[]).await;
    let b = ServeMcp::start(&url, &[]).await;
    let edge = lattice_e2e::EdgeProcess::start(&log.base, Some(&format!("{},{}", a.base, b.base))).await;
    let ana = token("ana");

    // Four sessions through the edge, which deals them to A and B in turn.
    let mut sessions = Vec::new();
    for i in 0..4 {
        let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": format!("edge-{i}"), "version": "1"}}});
        let (status, session, answer) = post(&edge.base, &ana, None, initialize).await;
        assert_eq!(status, 200, "{answer}");
        let session = session.expect("a session id");
        let (status, _, _) = post(&edge.base, &ana, Some(&session), json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        assert_eq!(status, 202);
        sessions.push(session);
    }
    a.kill();
    // Every session goes on, each request answered (the edge passes the
    // dead replica over; the other has every session's handshake).
    let mut answered = 0;
    for round in 0..3 {
        for session in &sessions {
            let (status, _, listed) =
                post(&edge.base, &ana, Some(session), json!({"jsonrpc": "2.0", "id": 10 + round, "method": "tools/list"})).await;
            assert_eq!(status, 200, "session {session} after the SIGKILL: {listed}");
            assert!(listed["result"]["tools"].as_array().is_some_and(|t| !t.is_empty()), "{listed}");
            answered += 1;
        }
    }
    println!("mcp replicas: {} sessions through the edge, replica A killed, {answered} requests after it all answered by B", sessions.len());
    drop(b);
}

//! The agent as an MCP client: a connected server's tools offered where its
//! key is on, each call decided by the server's policy (asked in the chat
//! when it says ask), recorded as an audit row, bounded, and its app put
//! in the thread remembering its server; the hostile calls contained.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use lattice_agent::{ChatMessage, ModelReply, Models, Runner};
use lattice_connect::{Connections, ServerConfig};
use lattice_core::event::Event;
use lattice_core::{Command, Level, RunStatus, SwitchKey, SwitchState, TenantRole, ThreadId, ToolCall, WorkspaceId};
use lattice_log::{Authenticated, LogService};
use lattice_testkit::who;
use serde_json::{Value, json};

use crate::{Script, wait_for};

fn call(name: &str, arguments: Value) -> ModelReply {
    ModelReply { text: None, tool_calls: vec![ToolCall { id: format!("c_{name}"), name: name.into(), arguments }], tokens: None }
}

fn say(text: &str) -> ModelReply {
    ModelReply { text: Some(text.into()), tool_calls: vec![], tokens: None }
}

/// The fixture server connected as `clock` for tenant t1, with calls bounded
/// to a second and 64 KiB.
fn connections(url: &str) -> Connections {
    let config: ServerConfig = serde_json::from_value(json!({
        "url": url,
        "tenants": ["t1"],
        "allow_internal": true,
        "timeout_secs": 1,
        "max_result_bytes": 65536,
        "calls_per_run": 6,
        "policy": {"default": "allow", "tools": {"write_note": "ask"}},
    }))
    .unwrap();
    Connections::configure(&BTreeMap::from([("clock".to_owned(), config)])).unwrap()
}

struct Here {
    log: LogService,
    alice: Authenticated,
    ws: WorkspaceId,
    th: ThreadId,
}

async fn here(backend: lattice_log::Backend, connections: &Connections) -> Here {
    let log = lattice_testkit::builder_on(lattice_testkit::fresh_db(backend).await).connected(connections.connected().clone()).start();
    let alice = who("t1", "alice", TenantRole::Member);
    let ws = WorkspaceId::parse("ws", &log.execute(&alice, Command::CreateWorkspace { name: "W".into() }).await.unwrap().id.unwrap()).unwrap();
    let th = log.execute(&alice, Command::CreateThread { workspace: ws.clone(), title: "T".into(), restricted: false }).await.unwrap().id.unwrap();
    let ops = who("t1", "olga", TenantRole::DeploymentAdmin);
    let on = Command::SetSwitch { level: Level::Deployment, key: SwitchKey::MiniApps, state: SwitchState::On, reason: "opt in".into() };
    log.execute(&ops, on).await.unwrap();
    Here { log, alice, ws, th: ThreadId::parse("th", &th).unwrap() }
}

/// The thread's `mcp_tool_call` audit rows, as (tool, decision).
async fn audited(here: &Here) -> Vec<(String, String, Value)> {
    let rows = here.log.audit_records(&here.alice_admin(), here.ws.as_str(), lattice_agent::servers::AUDIT_NAME, 100).await.unwrap();
    let mut out: Vec<(String, String, Value)> = rows
        .into_iter()
        .filter_map(|e| match e.event {
            Event::AuditRecorded(a) => Some((a.data["tool"].as_str()?.to_owned(), a.data["decision"].as_str()?.to_owned(), a.data)),
            _ => None,
        })
        .collect();
    out.reverse();
    out
}

/// What each tool call of `run` returned: (tool, is an error, result as JSON).
async fn returned(here: &Here, run: &lattice_core::RunId) -> Vec<(String, bool, String)> {
    lattice_testkit::trusted(&here.log)
        .run_log(&here.alice.principal().tenant, run)
        .await
        .unwrap()
        .into_iter()
        .filter_map(|e| match e.event {
            Event::ToolReturned(r) => Some((r.tool_name, r.is_error, r.result.to_string())),
            _ => None,
        })
        .collect()
}

impl Here {
    /// alice made the workspace: she is its admin.
    fn alice_admin(&self) -> Authenticated {
        self.alice.clone()
    }
}

lattice_testkit::both_backends! {
    async fn a_connected_servers_tool_is_offered_called_recorded_and_its_app_shown(backend: Backend) {
        let server = lattice_testkit::mcp_server::start().await;
        let connections = connections(&server.url);
        let here = here(backend, &connections).await;
        let script = Script::new(vec![call("clock__get_time", json!({})), say("It is noon.")]);
        let runner = Runner::new(lattice_testkit::trusted(&here.log), Models::default().with("m", Arc::new(script.clone()), true))
            .with_connections(connections.clone());
        let run = runner.start(&here.alice, here.th.clone(), "What time is it?".into(), None, None).await.unwrap();
        wait_for(&here.log, &here.alice, &run, RunStatus::Finished).await;

        let offered = script.offered.lock().unwrap()[0].clone();
        for name in ["ask_form", "clock__get_time", "clock__write_note", "clock__ask_form", "clock__reset"] {
            assert!(offered.contains(&name.to_owned()), "{name} in {offered:?}");
        }
        assert!(!offered.contains(&"clock__refresh".to_owned()), "a tool for apps only is not the model's: {offered:?}");

        // The model read the server's answer fenced as a program's words.
        let seen = script.seen.lock().unwrap()[1].messages.clone();
        let told = seen.iter().find_map(|m| match m { ChatMessage::Tool { content, .. } => Some(content.clone()), _ => None }).unwrap();
        assert!(told.starts_with("<untrusted-data source=\"tool result\" author=\"clock__get_time\""), "{told}");
        assert!(told.contains("12:00") && told.contains("shown"), "{told}");

        // One audit row: the decision, the arguments' digest and size, the answer's size, the app.
        let rows = audited(&here).await;
        assert_eq!(rows.iter().map(|(t, d, _)| (t.as_str(), d.as_str())).collect::<Vec<_>>(), vec![("get_time", "allow")]);
        let row = &rows[0].2;
        assert_eq!(row["policy"], "mcp:clock");
        assert_eq!(row["arguments_digest"], lattice_log::digest(&json!({})));
        assert!(row["result_bytes"].as_u64().unwrap() > 10, "{row}");

        // The app is in the thread as an app that remembers its server.
        let app = lattice_core::ArtifactId::parse("app", row["app"].as_str().unwrap()).unwrap();
        let head = here.log.artifact(&here.alice, &app, None).await.unwrap();
        assert_eq!(head.kind, "app");
        assert_eq!(head.data["server"]["name"], "clock");
        assert_eq!(head.data["server"]["uri"], "ui://clock/app.html");
        assert_eq!(head.data["server"]["result"]["structuredContent"], json!({"time": "12:00"}));
        assert_eq!(head.data["html"], lattice_testkit::mcp_server::CLOCK_APP);

        // Nobody edits it, not even an agent; no token can make one.
        let edit = Command::EditArtifact { id: app.clone(), expected_version: head.version, patch: serde_json::from_value(json!([{"op": "replace", "path": "/html", "value": "<p>x</p>"}])).unwrap() };
        let agent = lattice_testkit::trusted(&here.log).vouch(lattice_core::Principal { agent: true, ..here.alice.principal().clone() });
        assert!(matches!(here.log.execute(&agent, edit).await, Err(lattice_core::Error::Forbidden { .. })));
        let forged = Command::CreateArtifact { thread: here.th.clone(), id: None, kind: "app".into(), data: head.data.clone() };
        let refused = here.log.execute(&agent, forged).await.unwrap_err().to_string();
        assert!(refused.contains("lattice's runner only"), "{refused}");

        // The server's key off in the workspace: its tools are gone from the
        // next model call, and a call of one is refused without reaching it.
        let off = Command::SetSwitch { level: Level::Workspace(here.ws.clone()), key: SwitchKey::Server(connections.get("clock").unwrap().key()), state: SwitchState::Off, reason: "incident".into() };
        here.log.execute(&here.alice, off).await.unwrap();
        let calls_before = server.counts.calls.load(std::sync::atomic::Ordering::SeqCst);
        script.replies.lock().unwrap().splice(.., [call("clock__get_time", json!({})), say("ok")]);
        let run = runner.start(&here.alice, here.th.clone(), "Again".into(), None, None).await.unwrap();
        let view = wait_for(&here.log, &here.alice, &run, RunStatus::Finished).await;
        let offered = script.offered.lock().unwrap().last().unwrap().clone();
        assert!(offered.iter().all(|t| !t.starts_with("clock__")), "{offered:?}");
        assert_eq!(server.counts.calls.load(std::sync::atomic::Ordering::SeqCst), calls_before, "the server was not called");
        let log = lattice_testkit::trusted(&here.log).run_log(&here.alice.principal().tenant, &run).await.unwrap();
        let refused = log.iter().find_map(|e| match &e.event { Event::ToolReturned(r) if r.is_error => r.result.as_str().map(str::to_owned), _ => None }).unwrap();
        assert!(refused.contains("mcp:clock is switched off here"), "{refused} {view:?}");
    }
}

/// A server that says its tools changed (`notifications/tools/list_changed`)
/// has them listed again for the next model call, not a minute later; what
/// it said of itself (`instructions`) reaches the model fenced as data,
/// even its line that closes a fence and passes for lattice's.
#[tokio::test]
async fn a_servers_changed_tools_are_offered_at_the_next_model_call_and_its_instructions_are_fenced() {
    let server = lattice_testkit::mcp_server::start().await;
    let connections = connections(&server.url);
    let here = here(lattice_log::Backend::Sqlite, &connections).await;
    let script = Script::new(vec![call("clock__grow", json!({})), call("clock__get_time", json!({})), say("done")]);
    let runner = Runner::new(lattice_testkit::trusted(&here.log), Models::default().with("m", Arc::new(script.clone()), true))
        .with_connections(connections.clone());
    let run = runner.start(&here.alice, here.th.clone(), "Grow".into(), None, None).await.unwrap();
    wait_for(&here.log, &here.alice, &run, RunStatus::Finished).await;
    let offered = script.offered.lock().unwrap().clone();
    assert!(!offered[0].contains(&"clock__grown".to_owned()), "{:?}", offered[0]);
    assert!(offered[2].contains(&"clock__grown".to_owned()), "the tool the server added, listed again: {:?}", offered[2]);

    let seen = script.seen.lock().unwrap()[0].messages.clone();
    let systems: Vec<String> = seen
        .iter()
        .filter_map(|m| match m {
            ChatMessage::System { content } => Some(content.clone()),
            _ => None,
        })
        .collect();
    let said = systems.iter().find(|s| s.contains("Call get_time")).unwrap_or_else(|| panic!("the instructions reach the model: {systems:?}"));
    assert!(said.starts_with("<untrusted-data source=\"instructions of the clock server\" author=\"clock\""), "{said}");
    assert_eq!(said.matches("</untrusted-data").count(), 1, "the server's own closing tag is escaped: {said}");
    assert!(systems[0].starts_with("You are lattice's agent"), "lattice's own word comes first: {systems:?}");
}

lattice_testkit::both_backends! {
    async fn a_call_the_policy_asks_about_waits_for_a_person_bound_to_its_arguments(backend: Backend) {
        let server = lattice_testkit::mcp_server::start().await;
        let connections = connections(&server.url);
        let here = here(backend, &connections).await;
        let note = |text: &str| call("clock__write_note", json!({"note": text}));
        let script = Script::new(vec![note("first"), say("declined, fine"), note("second"), say("written")]);
        let runner = Runner::new(lattice_testkit::trusted(&here.log), Models::default().with("m", Arc::new(script.clone()), true))
            .with_connections(connections.clone());
        let run = runner.start(&here.alice, here.th.clone(), "Write a note".into(), None, None).await.unwrap();
        let view = wait_for(&here.log, &here.alice, &run, RunStatus::Paused).await;
        assert_eq!(view.requests[0].tool_name, "clock__write_note");
        assert_eq!(view.requests[0].args, json!({"note": "first"}));
        assert_eq!(server.counts.calls.load(std::sync::atomic::Ordering::SeqCst), 0, "nothing reached the server before a person said yes");
        // An answer that is not a yes or a no is refused; a viewer cannot give one.
        let odd = runner.answer(&here.alice, &run, "c_clock__write_note".into(), json!("sure")).await.unwrap_err();
        assert!(odd.to_string().contains("approved"), "{odd}");
        runner.approve(&here.alice, &run, "c_clock__write_note".into(), false).await.unwrap();
        let view = wait_for(&here.log, &here.alice, &run, RunStatus::Finished).await;
        assert_eq!(server.counts.calls.load(std::sync::atomic::Ordering::SeqCst), 0, "declined: never called");
        let _ = view;

        let run = runner.start(&here.alice, here.th.clone(), "Write another".into(), None, None).await.unwrap();
        wait_for(&here.log, &here.alice, &run, RunStatus::Paused).await;
        runner.approve(&here.alice, &run, "c_clock__write_note".into(), true).await.unwrap();
        wait_for(&here.log, &here.alice, &run, RunStatus::Finished).await;
        assert_eq!(server.counts.calls.load(std::sync::atomic::Ordering::SeqCst), 1);
        let seen = script.seen.lock().unwrap().last().unwrap().messages.clone();
        assert!(seen.iter().any(|m| matches!(m, ChatMessage::Tool { content, .. } if content.contains("noted: second"))), "{seen:?}");
        let rows = audited(&here).await;
        let decisions: Vec<(&str, &str)> = rows.iter().map(|(t, d, _)| (t.as_str(), d.as_str())).collect();
        assert_eq!(decisions, vec![("write_note", "ask"), ("write_note", "declined"), ("write_note", "ask"), ("write_note", "confirmed")]);
    }
}

lattice_testkit::both_backends! {
    async fn a_hostile_server_is_contained_within_the_runs_bounds(backend: Backend) {
        let server = lattice_testkit::mcp_server::start().await;
        let connections = connections(&server.url);
        let here = here(backend, &connections).await;
        let script = Script::new(vec![
            call("clock__slow", json!({})),
            call("clock__huge", json!({})),
            call("clock__probe", json!({})),
            call("clock__ask_form", json!({})),
            say("done"),
        ]);
        let runner = Runner::new(lattice_testkit::trusted(&here.log), Models::default().with("m", Arc::new(script.clone()), true))
            .with_connections(connections.clone());
        let started = Instant::now();
        let run = runner.start(&here.alice, here.th.clone(), "Try them all".into(), None, None).await.unwrap();
        wait_for(&here.log, &here.alice, &run, RunStatus::Finished).await;
        assert!(started.elapsed() < Duration::from_secs(8), "the slow tool was cut at its bound: {:?}", started.elapsed());
        let results = returned(&here, &run).await;
        assert_eq!(results.len(), 4, "{results:?}");
        assert!(results[0].1 && results[0].2.contains("did not answer within 1 s"), "{:?}", results[0]);
        assert!(results[1].1 && results[1].2.contains("passed the 65536 bytes it may send"), "{:?}", results[1]);
        // The probe's answer comes back, its app is not shown: the filter refused its markup.
        assert!(!results[2].1 && results[2].2.contains("\"shown\":false") && results[2].2.contains("external address"), "{:?}", results[2]);
        // A tool named like lattice's own is the server's, under its own name.
        assert!(!results[3].1 && results[3].2.contains("not lattice's ask_form"), "{:?}", results[3]);
        let apps = here.log.artifacts(&here.alice, &here.th, Some("app"), None).await.unwrap();
        assert!(apps.is_empty(), "no app was shown: {apps:?}");
        let rows = audited(&here).await;
        let refused = rows.iter().find(|(tool, _, _)| tool == "probe").map(|(_, _, row)| row["app_refused"].clone()).unwrap();
        assert!(refused.as_str().is_some_and(|why| why.contains("external address")), "the row says why its app was not shown: {refused}");
        let failed = rows.iter().filter(|(_, _, row)| row.get("failed").is_some()).count();
        assert_eq!(failed, 2, "the timeout and the flood are recorded as failed calls: {rows:?}");
    }
}

lattice_testkit::both_backends! {
    async fn a_server_not_offered_to_a_tenant_is_nothing_there(backend: Backend) {
        let server = lattice_testkit::mcp_server::start().await;
        let connections = connections(&server.url);
        let log = lattice_testkit::builder_on(lattice_testkit::fresh_db(backend).await).connected(connections.connected().clone()).start();
        let bob = who("t2", "bob", TenantRole::Member);
        let ws = log.execute(&bob, Command::CreateWorkspace { name: "W".into() }).await.unwrap().id.unwrap();
        let effective = log.effective(&bob, &ws).await.unwrap();
        assert!(effective.keys().all(|k| !matches!(k, SwitchKey::Server(_))), "{effective:?}");
        let th = ThreadId::parse("th", &log.execute(&bob, Command::CreateThread { workspace: WorkspaceId::parse("w", &ws).unwrap(), title: "T".into(), restricted: false }).await.unwrap().id.unwrap()).unwrap();
        let script = Script::new(vec![call("clock__get_time", json!({})), say("ok")]);
        let runner = Runner::new(lattice_testkit::trusted(&log), Models::default().with("m", Arc::new(script.clone()), true)).with_connections(connections);
        let run = runner.start(&bob, th, "time?".into(), None, None).await.unwrap();
        wait_for(&log, &bob, &run, RunStatus::Finished).await;
        assert!(script.offered.lock().unwrap()[0].iter().all(|t| !t.starts_with("clock__")));
        assert_eq!(server.counts.calls.load(std::sync::atomic::Ordering::SeqCst), 0);
    }
}

lattice_testkit::both_backends! {
    async fn a_server_that_lies_gets_typed_errors_and_the_run_goes_on(backend: Backend) {
        let liar = lattice_testkit::mcp_server::start_liar().await;
        let config: ServerConfig = serde_json::from_value(json!({"url": liar.url, "allow_internal": true, "timeout_secs": 1, "policy": {"default": "allow"}})).unwrap();
        let connections = Connections::configure(&BTreeMap::from([("liar".to_owned(), config)])).unwrap();
        let here = here(backend, &connections).await;
        let script = Script::new(vec![call("liar__lie", json!({})), call("liar__garbage", json!({})), call("liar__wrong_id", json!({})), say("done")]);
        let runner = Runner::new(lattice_testkit::trusted(&here.log), Models::default().with("m", Arc::new(script.clone()), true)).with_connections(connections);
        let started = Instant::now();
        let run = runner.start(&here.alice, here.th.clone(), "Ask the liar".into(), None, None).await.unwrap();
        wait_for(&here.log, &here.alice, &run, RunStatus::Finished).await;
        assert!(started.elapsed() < Duration::from_secs(8), "{:?}", started.elapsed());
        assert!(script.offered.lock().unwrap()[0].contains(&"liar__lie".to_owned()), "its tool list was taken");
        let results: Vec<(bool, String)> = returned(&here, &run).await.into_iter().map(|(_, e, r)| (e, r)).collect();
        assert_eq!(results.len(), 3, "{results:?}");
        assert!(results[1].1.contains("not JSON-RPC") && !results[1].1.contains("jsonrpc"), "none of its bytes: {:?}", results[1]);
        for (is_error, said) in &results {
            assert!(*is_error, "{said}");
            assert!(said.contains("the server"), "a typed error in words: {said}");
        }
        assert!(results[2].1.contains("did not answer within 1 s"), "an answer to another request is no answer: {:?}", results[2]);
        assert_eq!(audited(&here).await.iter().filter(|(_, _, row)| row.get("failed").is_some()).count(), 3);
    }
}

lattice_testkit::both_backends! {
    async fn a_run_makes_at_most_its_calls_of_a_server(backend: Backend) {
        let server = lattice_testkit::mcp_server::start().await;
        let connections = connections(&server.url);
        let here = here(backend, &connections).await;
        // Seven calls in one reply; the server allows six a run.
        let calls: Vec<ToolCall> = (0..7).map(|i| ToolCall { id: format!("c{i}"), name: "clock__ask_form".into(), arguments: json!({}) }).collect();
        let script = Script::new(vec![ModelReply { text: None, tool_calls: calls, tokens: None }, say("done")]);
        let runner = Runner::new(lattice_testkit::trusted(&here.log), Models::default().with("m", Arc::new(script.clone()), true)).with_connections(connections);
        let run = runner.start(&here.alice, here.th.clone(), "Call it seven times".into(), None, None).await.unwrap();
        wait_for(&here.log, &here.alice, &run, RunStatus::Finished).await;
        let results: Vec<(bool, String)> = returned(&here, &run).await.into_iter().map(|(_, e, r)| (e, r)).collect();
        assert_eq!(results.iter().filter(|(e, _)| !e).count(), 6, "{results:?}");
        assert!(results[6].0 && results[6].1.contains("this run has made its 6 calls of the clock server"), "{:?}", results[6]);
        assert_eq!(server.counts.calls.load(std::sync::atomic::Ordering::SeqCst), 6);
    }
}

lattice_testkit::both_backends! {
    async fn a_servers_key_turned_off_ends_its_sessions_and_processes_there(backend: Backend) {
        let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
        assert!(root.join("e2e/node_modules/@modelcontextprotocol/sdk").exists(), "the MCP SDK: run `npm ci` in e2e/ (`cargo xtask test` does)");
        let config: ServerConfig =
            serde_json::from_value(json!({"command": ["/usr/bin/node", root.join("e2e/mcp/probe-server.mjs")], "policy": {"default": "allow"}})).unwrap();
        let connections = Connections::configure(&BTreeMap::from([("probe".to_owned(), config)])).unwrap();
        let here = here(backend, &connections).await;
        let runner = Runner::new(lattice_testkit::trusted(&here.log), Models::scripted()).with_connections(connections.clone());
        runner.end_sessions_when_switched_off();
        let probe = connections.get("probe").unwrap();
        let t2 = lattice_connect::Behalf { tenant: "t2", user: "mal" };
        for who in [lattice_connect::Behalf::of(here.alice.principal()), t2] {
            probe.call(who, "count", json!({})).await.unwrap();
        }
        assert_eq!(probe.sessions().await, 2);

        // Off for tenant t1: its session ends, t2's stands.
        let admin = who("t1", "root", TenantRole::TenantAdmin);
        let off = Command::SetSwitch { level: Level::Tenant(admin.principal().tenant.clone()), key: SwitchKey::Server(probe.key()), state: SwitchState::Off, reason: "incident".into() };
        here.log.execute(&admin, off).await.unwrap();
        let at = Instant::now();
        lattice_testkit::eventually_within(Duration::from_secs(1), "t1's session to end with its key", async || {
            (probe.session_tenants().await == ["t2"]).then_some(())
        })
        .await;
        // Off for the deployment: every session ends.
        let ops = who("t1", "olga", TenantRole::DeploymentAdmin);
        let off = Command::SetSwitch { level: Level::Deployment, key: SwitchKey::Server(probe.key()), state: SwitchState::Off, reason: "incident".into() };
        here.log.execute(&ops, off).await.unwrap();
        let left = Duration::from_secs(2).saturating_sub(at.elapsed());
        lattice_testkit::eventually_within(left, "every session to end with the deployment's key", async || (probe.sessions().await == 0).then_some(())).await;
    }
}

lattice_testkit::both_backends! {
    async fn calls_refused_before_the_policy_is_asked_are_recorded_too(backend: Backend) {
        let server = lattice_testkit::mcp_server::start().await;
        let connections = connections(&server.url);
        let here = here(backend, &connections).await;
        // A tool the server keeps for apps (not offered to the model), then,
        // the run's calls spent, one call too many.
        let mut calls: Vec<ToolCall> = vec![ToolCall { id: "c_refresh".into(), name: "clock__refresh".into(), arguments: json!({}) }];
        calls.extend((0..7).map(|i| ToolCall { id: format!("c{i}"), name: "clock__get_time".into(), arguments: json!({}) }));
        let script = Script::new(vec![ModelReply { text: None, tool_calls: calls, tokens: None }, say("done")]);
        let runner = Runner::new(lattice_testkit::trusted(&here.log), Models::default().with("m", Arc::new(script.clone()), true))
            .with_connections(connections.clone());
        let run = runner.start(&here.alice, here.th.clone(), "Call it".into(), None, None).await.unwrap();
        wait_for(&here.log, &here.alice, &run, RunStatus::Finished).await;
        let results = returned(&here, &run).await;
        assert!(results[0].1 && results[0].2.contains("the clock server does not offer it here now"), "{:?}", results[0]);
        assert!(results[7].1 && results[7].2.contains("this run has made its 6 calls"), "{:?}", results[7]);

        // The server's key off here: refused without reaching it.
        let off = Command::SetSwitch { level: Level::Workspace(here.ws.clone()), key: SwitchKey::Server(connections.get("clock").unwrap().key()), state: SwitchState::Off, reason: "incident".into() };
        here.log.execute(&here.alice, off).await.unwrap();
        script.replies.lock().unwrap().splice(.., [call("clock__get_time", json!({})), say("ok")]);
        let run = runner.start(&here.alice, here.th.clone(), "Again".into(), None, None).await.unwrap();
        wait_for(&here.log, &here.alice, &run, RunStatus::Finished).await;
        assert!(returned(&here, &run).await[0].2.contains("mcp:clock is switched off here"));

        let rows = audited(&here).await;
        let refused: Vec<(&str, &str, &str)> = rows
            .iter()
            .filter(|(_, d, _)| d != "allow")
            .map(|(t, d, row)| (t.as_str(), d.as_str(), row["tool_call_id"].as_str().unwrap()))
            .collect();
        assert_eq!(refused, [("refresh", "not_offered", "c_refresh"), ("get_time", "limit", "c6"), ("get_time", "switched_off", "c_clock__get_time")]);
        for (_, _, row) in rows.iter().filter(|(_, d, _)| d != "allow") {
            assert_eq!(row["policy"], "mcp:clock", "{row}");
            assert_eq!(row["caller"], "agent", "{row}");
            assert_eq!(row["arguments_digest"], lattice_log::digest(&json!({})), "{row}");
            assert!(row.get("result_bytes").is_none(), "nothing was called: {row}");
        }
        assert_eq!(rows.iter().filter(|(_, d, _)| d == "allow").count(), 6);
        assert_eq!(server.counts.calls.load(std::sync::atomic::Ordering::SeqCst), 6);
    }
}

lattice_testkit::both_backends! {
    async fn calls_approved_out_of_order_are_made_in_the_models_order(backend: Backend) {
        let server = lattice_testkit::mcp_server::start().await;
        let connections = connections(&server.url);
        let here = here(backend, &connections).await;
        let note = |id: &str, text: &str| ToolCall { id: id.into(), name: "clock__write_note".into(), arguments: json!({"note": text}) };
        let script = Script::new(vec![ModelReply { text: None, tool_calls: vec![note("c_b", "first"), note("c_a", "second")], tokens: None }, say("written")]);
        let runner = Runner::new(lattice_testkit::trusted(&here.log), Models::default().with("m", Arc::new(script.clone()), true))
            .with_connections(connections.clone());
        let run = runner.start(&here.alice, here.th.clone(), "Write two notes".into(), None, None).await.unwrap();
        wait_for(&here.log, &here.alice, &run, RunStatus::Paused).await;
        // The second call is approved first.
        runner.approve(&here.alice, &run, "c_a".into(), true).await.unwrap();
        runner.approve(&here.alice, &run, "c_b".into(), true).await.unwrap();
        wait_for(&here.log, &here.alice, &run, RunStatus::Finished).await;

        let made: Vec<String> = lattice_testkit::trusted(&here.log)
            .run_log(&here.alice.principal().tenant, &run)
            .await
            .unwrap()
            .into_iter()
            .filter_map(|e| match e.event {
                Event::ToolReturned(r) => Some(r.tool_call_id),
                _ => None,
            })
            .collect();
        assert_eq!(made, ["c_b", "c_a"], "made in the model's order");
        let confirmed: Vec<String> =
            audited(&here).await.into_iter().filter(|(_, d, _)| d == "confirmed").map(|(_, _, row)| row["tool_call_id"].as_str().unwrap().to_owned()).collect();
        assert_eq!(confirmed, ["c_b", "c_a"]);
        let seen = script.seen.lock().unwrap().last().unwrap().messages.clone();
        let told: Vec<&str> = seen.iter().filter_map(|m| match m { ChatMessage::Tool { tool_call_id, .. } => Some(tool_call_id.as_str()), _ => None }).collect();
        assert_eq!(told, ["c_b", "c_a"]);
    }
}

/// The run's open question of a connected server, once it is asked.
async fn question(here: &Here, run: &lattice_core::RunId) -> lattice_log::RequestRow {
    lattice_testkit::eventually_within(Duration::from_secs(30), "the server's question", async || {
        let view = here.log.run(&here.alice, run).await.unwrap();
        assert_eq!(view.run.status, RunStatus::Running, "the run goes on while it asks");
        view.requests.into_iter().find(|r| r.tool_name == lattice_core::run::ELICITATION && r.answered_by.is_none())
    })
    .await
}

/// The thread's `mcp_elicitation` audit rows' decisions, oldest first.
async fn asked(here: &Here) -> Vec<String> {
    let rows = here.log.audit_records(&here.alice_admin(), here.ws.as_str(), "mcp_elicitation", 100).await.unwrap();
    let mut out: Vec<String> = rows
        .into_iter()
        .filter_map(|e| match e.event {
            Event::AuditRecorded(a) => a.data["decision"].as_str().map(str::to_owned),
            _ => None,
        })
        .collect();
    out.reverse();
    out
}

lattice_testkit::both_backends! {
    async fn a_servers_question_is_a_form_only_its_person_answers_and_the_server_gets_exactly_that(backend: Backend) {
        let server = lattice_testkit::mcp_server::start().await;
        let connections = connections(&server.url);
        let here = here(backend, &connections).await;
        let script = Script::new(vec![call("clock__ask", json!({})), say("asked"), call("clock__ask", json!({})), say("asked again")]);
        let runner = Runner::new(lattice_testkit::trusted(&here.log), Models::default().with("m", Arc::new(script.clone()), true))
            .with_connections(connections.clone());
        let run = runner.start(&here.alice, here.th.clone(), "Ask me".into(), None, None).await.unwrap();
        let q = question(&here, &run).await;
        // The server's form, as a lattice form: titled choices as labels.
        assert_eq!(q.args["server"], "clock");
        assert_eq!(q.args["mode"], "form");
        assert_eq!(q.args["message"], "Which size?");
        assert_eq!(q.args["schema"]["properties"]["size"]["enum"], json!(["s", "l"]));
        assert_eq!(q.args["ui"]["fields"]["size"]["labels"], json!({"s": "Small", "l": "Large"}));
        assert!(q.tool_call_id.starts_with("c_clock__ask:elicit:"), "{}", q.tool_call_id);

        // Only the person the run acts for answers, with values the form takes.
        let agent = lattice_testkit::trusted(&here.log).vouch(lattice_core::Principal { agent: true, ..here.alice.principal().clone() });
        let by_agent = runner.answer(&agent, &run, q.tool_call_id.clone(), json!({"action": "accept", "content": {"size": "s"}})).await.unwrap_err();
        assert!(matches!(by_agent, lattice_core::Error::Forbidden { .. }), "{by_agent}");
        let wrong = runner.answer(&here.alice, &run, q.tool_call_id.clone(), json!({"action": "accept", "content": {"size": "m"}})).await.unwrap_err();
        assert!(matches!(wrong, lattice_core::Error::ValidationFailed { .. }), "{wrong}");
        let odd = runner.answer(&here.alice, &run, q.tool_call_id.clone(), json!({"action": "decline", "content": {"size": "s"}})).await.unwrap_err();
        assert!(matches!(odd, lattice_core::Error::ValidationFailed { .. }), "{odd}");
        // Longer than the call's bound (a second): the person's time is
        // not the server's, and the call holds.
        tokio::time::sleep(Duration::from_millis(1500)).await;
        runner.answer(&here.alice, &run, q.tool_call_id.clone(), json!({"action": "accept", "content": {"size": "l", "count": 2}})).await.unwrap();
        wait_for(&here.log, &here.alice, &run, RunStatus::Finished).await;
        let results = returned(&here, &run).await;
        assert_eq!(results.len(), 1, "{results:?}");
        let (tool, is_error, result) = &results[0];
        assert_eq!((tool.as_str(), *is_error), ("clock__ask", false), "{result}");
        // Exactly the validated answer reached the server.
        assert!(result.contains(r#"\"action\":\"accept\",\"content\":{\"size\":\"l\",\"count\":2}"#), "{result}");

        // Declined: the server hears a decline, and nothing else.
        let run = runner.start(&here.alice, here.th.clone(), "Ask me again".into(), None, None).await.unwrap();
        let q = question(&here, &run).await;
        runner.answer(&here.alice, &run, q.tool_call_id.clone(), json!({"action": "decline"})).await.unwrap();
        wait_for(&here.log, &here.alice, &run, RunStatus::Finished).await;
        let results = returned(&here, &run).await;
        assert!(results[0].2.contains(r#"{\"action\":\"decline\"}"#), "{results:?}");
        assert_eq!(asked(&here).await, vec!["asked", "accepted", "asked", "declined"]);
    }
}

lattice_testkit::both_backends! {
    async fn a_servers_prompt_runs_as_a_command_and_its_resources_reach_the_model_fenced_within_their_bound(backend: Backend) {
        use lattice_agent::context;
        use lattice_wire::{RunAttachment, RunCommand};
        let server = lattice_testkit::mcp_server::start().await;
        let connections = connections(&server.url);
        let here = here(backend, &connections).await;
        let script = Script::new(vec![say("Hello, Ana.")]);
        let runner = Runner::new(lattice_testkit::trusted(&here.log), Models::default().with("m", Arc::new(script.clone()), true))
            .with_connections(connections.clone());

        // Offered: the prompt as a command with its argument; the resources
        // a person may attach (never an app's document).
        let offers = context::offers(&connections, &here.log, &here.alice, &here.th).await.unwrap();
        let greet = offers.prompts.iter().find(|p| p.name == "greet").unwrap();
        assert_eq!((greet.command.as_str(), greet.arguments[0].name.as_str(), greet.arguments[0].required), ("/clock:greet", "name", true));
        let uris: Vec<&str> = offers.resources.iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(uris, [lattice_testkit::mcp_server::NOTE, lattice_testkit::mcp_server::BIG_NOTE]);

        // The command and an attachment, read as the run starts.
        let command = RunCommand { server: "clock".into(), prompt: "greet".into(), arguments: json!({"name": "Ana"}).as_object().unwrap().clone() };
        let note = RunAttachment { server: "clock".into(), uri: lattice_testkit::mcp_server::NOTE.into() };
        let read = context::read(&connections, &here.log, &here.alice, &here.th, Some(&command), std::slice::from_ref(&note)).await.unwrap();
        let run = runner.start_with(&here.alice, here.th.clone(), "/clock:greet".into(), None, None, read).await.unwrap();
        wait_for(&here.log, &here.alice, &run, RunStatus::Finished).await;
        let seen = script.seen.lock().unwrap()[0].messages.clone();
        let users: Vec<String> = seen.iter().filter_map(|m| match m { ChatMessage::User { content } => Some(content.clone()), _ => None }).collect();
        assert_eq!(users[0], "/clock:greet");
        assert!(users[1].starts_with("<untrusted-data source=\"prompt greet of the clock server\" author=\"clock\""), "{}", users[1]);
        assert!(users[1].contains("user: Say hello to Ana."), "{}", users[1]);
        assert!(users[2].starts_with("<untrusted-data source=\"resource note://greeting of the clock server\""), "{}", users[2]);
        assert_eq!(users[2].matches("</untrusted-data").count(), 1, "the resource's own closing tag is escaped: {}", users[2]);

        // Over the server's bound: refused, saying the bound; a prompt
        // without its argument: the server's refusal, said.
        let big = RunAttachment { server: "clock".into(), uri: lattice_testkit::mcp_server::BIG_NOTE.into() };
        let refused = context::read(&connections, &here.log, &here.alice, &here.th, None, &[big]).await.unwrap_err();
        assert!(matches!(refused, lattice_core::Error::ValidationFailed { .. }), "{refused}");
        assert!(refused.to_string().contains("65536") && refused.to_string().contains("max_result_bytes"), "{refused}");
        let bare = RunCommand { arguments: serde_json::Map::new(), ..command.clone() };
        let refused = context::read(&connections, &here.log, &here.alice, &here.th, Some(&bare), &[]).await.unwrap_err();
        assert!(refused.to_string().contains("greet takes a name"), "{refused}");

        // The server's key off in the workspace: nothing offered, nothing read.
        let off = Command::SetSwitch { level: Level::Workspace(here.ws.clone()), key: SwitchKey::Server(connections.get("clock").unwrap().key()), state: SwitchState::Off, reason: "incident".into() };
        here.log.execute(&here.alice, off).await.unwrap();
        let offers = context::offers(&connections, &here.log, &here.alice, &here.th).await.unwrap();
        assert!(offers.prompts.is_empty() && offers.resources.is_empty(), "{offers:?}");
        let refused = context::read(&connections, &here.log, &here.alice, &here.th, None, &[note]).await.unwrap_err();
        assert!(refused.to_string().contains("no server \"clock\" is on here"), "{refused}");
    }
}

lattice_testkit::both_backends! {
    async fn a_servers_question_is_closed_when_its_run_is_cancelled_and_nobody_answers_it_late(backend: Backend) {
        let server = lattice_testkit::mcp_server::start().await;
        let connections = connections(&server.url);
        let here = here(backend, &connections).await;
        let script = Script::new(vec![call("clock__ask", json!({})), say("asked")]);
        let runner = Runner::new(lattice_testkit::trusted(&here.log), Models::default().with("m", Arc::new(script.clone()), true))
            .with_connections(connections.clone());
        let run = runner.start(&here.alice, here.th.clone(), "Ask me".into(), None, None).await.unwrap();
        let q = question(&here, &run).await;
        runner.cancel(&here.alice, &run).await.unwrap();
        // lattice closes the question for nobody, and says why.
        let closed = lattice_testkit::eventually_within(Duration::from_secs(30), "the question closed", async || {
            let view = here.log.run(&here.alice, &run).await.unwrap();
            view.requests.into_iter().find(|r| r.tool_call_id == q.tool_call_id && r.answered_by.is_some())
        })
        .await;
        assert_eq!(closed.answered_by.as_deref(), Some(lattice_log::QUESTION_ACTOR));
        assert_eq!(closed.answer, Some(json!({"action": "cancel", "reason": "the run ended"})));
        let late = runner.answer(&here.alice, &run, q.tool_call_id.clone(), json!({"action": "accept", "content": {"size": "s"}})).await.unwrap_err();
        assert!(matches!(late, lattice_core::Error::InvalidState { .. }), "{late}");
        lattice_testkit::eventually_within(Duration::from_secs(30), "the audit row", async || {
            asked(&here).await.ends_with(&["run_ended".to_owned()]).then_some(())
        })
        .await;
    }
}

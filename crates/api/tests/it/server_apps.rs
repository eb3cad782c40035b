//! A connected server's app in the chat: its calls, made by the chat host
//! with the app's capability, go back to its server through the server's
//! policy with the `mcp-app:<server>` overlay first, each decision an
//! audit row, a person confirming exactly the arguments when it asks, a
//! reader refused, and nothing at all while the server's key is off.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::http::StatusCode;
use lattice_agent::{Model, ModelError, ModelReply, ModelRequest, Models};
use lattice_core::{RunStatus, TenantRole, ToolCall};
use serde_json::{Value, json};

use crate::App;

/// Calls the clock's tool once, then says it is done.
struct ShowsTheClock;

#[async_trait::async_trait]
impl Model for ShowsTheClock {
    async fn reply(&self, request: ModelRequest) -> Result<ModelReply, ModelError> {
        let called = request.messages.iter().any(|m| matches!(m, lattice_agent::ChatMessage::Tool { .. }));
        Ok(if called {
            ModelReply { text: Some("There is the clock.".into()), tool_calls: vec![], tokens: None }
        } else {
            let call = ToolCall { id: "c1".into(), name: "clock__get_time".into(), arguments: json!({}) };
            ModelReply { text: None, tool_calls: vec![call], tokens: None }
        })
    }
}

fn connections(url: &str) -> lattice_connect::Connections {
    let config: lattice_connect::ServerConfig = serde_json::from_value(json!({
        "url": url,
        "allow_internal": true,
        "timeout_secs": 2,
        "policy": {"default": "allow", "tools": {"write_note": "ask"}},
        "app_policy": {"tools": {"slow": "deny"}},
    }))
    .unwrap();
    lattice_connect::Connections::configure(&BTreeMap::from([("clock".to_owned(), config)])).unwrap()
}

lattice_testkit::both_backends! {
    async fn a_servers_apps_calls_go_back_to_it_decided_and_audited(backend: Backend) {
        let server = lattice_testkit::mcp_server::start().await;
        let models = Models::default().with("clock", Arc::new(ShowsTheClock), true);
        let app = App::connected(backend, connections(&server.url), models).await;
        let ops = app.token("t1", "olga", TenantRole::DeploymentAdmin, false).await;
        let on = app.send_put("/v1/integrations/deployment/ui:mini-apps", &ops, json!({"state": "on", "reason": "opt in"})).await;
        assert_eq!(on.status, StatusCode::OK, "{:?}", on.body);
        let alice = app.token("t1", "alice", TenantRole::Member, false).await;
        let (ws, th) = app.workspace_with_thread(&alice).await;
        let vera = app.token("t1", "vera", TenantRole::Member, false).await;
        let added = app.post(&format!("/v1/workspaces/{ws}/members"), &alice, json!({"user": "vera", "role": "viewer"})).await;
        assert_eq!(added.status, StatusCode::OK, "{:?}", added.body);

        // The agent calls the clock; its app is in the thread.
        let started = app.post(&format!("/v1/threads/{th}/runs"), &alice, json!({"prompt": "What time is it?"})).await;
        assert_eq!(started.status, StatusCode::OK, "{:?}", started.body);
        let run = started.body["run_id"].as_str().unwrap().to_owned();
        lattice_testkit::until("the run to finish", async || app.get(&format!("/v1/runs/{run}"), &alice).await.body["status"] == json!(RunStatus::Finished.as_str())).await;
        let apps = app.get(&format!("/v1/threads/{th}/artifacts?kind=app"), &alice).await;
        let listed = apps.body.as_array().or(apps.body["artifacts"].as_array()).cloned().unwrap_or_default();
        assert_eq!(listed.len(), 1, "{:?}", apps.body);
        let id = listed[0]["id"].as_str().unwrap().to_owned();
        assert_eq!(listed[0]["data"]["server"]["name"], "clock");

        let capability = |token: String| {
            let (app, id) = (&app, id.clone());
            async move { app.post(&format!("/v1/artifacts/{id}/capability"), &token, json!({})).await.body["capability"].as_str().map(str::to_owned) }
        };
        let cap = capability(alice.clone()).await.unwrap();
        let call = |token: String, cap: String, tool: &'static str, arguments: Value| {
            let (app, id) = (&app, id.clone());
            async move { app.post(&format!("/v1/artifacts/{id}/calls"), &token, json!({"tool": tool, "arguments": arguments, "capability": cap})).await }
        };
        let before = server.counts.calls.load(Ordering::SeqCst);

        // Allowed: the server's own answer comes back.
        let done = call(alice.clone(), cap.clone(), "get_time", json!({})).await;
        assert_eq!(done.status, StatusCode::OK, "{:?}", done.body);
        assert_eq!(done.body["status"], "done", "{:?}", done.body);
        assert_eq!(done.body["result"]["structuredContent"]["time"], "12:00");
        // A tool for apps only is the app's to call.
        let refreshed = call(alice.clone(), cap.clone(), "refresh", json!({})).await;
        assert_eq!(refreshed.body["status"], "done", "{:?}", refreshed.body);
        // The overlay denies one.
        let denied = call(alice.clone(), cap.clone(), "slow", json!({})).await;
        assert_eq!(denied.body["status"], "refused", "{:?}", denied.body);
        assert!(denied.body["reason"].as_str().unwrap().contains("mcp-app:clock denies slow"), "{:?}", denied.body);
        // A tool for the model alone is refused to the app, with its row.
        let model_only = call(alice.clone(), cap.clone(), "reset", json!({})).await;
        assert_eq!(model_only.status, StatusCode::FORBIDDEN, "{:?}", model_only.body);
        // A tool the server does not list is refused before anything is sent.
        let unknown = call(alice.clone(), cap.clone(), "format_disk", json!({})).await;
        assert_eq!(unknown.status, StatusCode::UNPROCESSABLE_ENTITY, "{:?}", unknown.body);
        assert_eq!(server.counts.calls.load(Ordering::SeqCst), before + 2, "two calls reached the server");

        // Ask: the person confirms exactly the recorded arguments.
        let asked = call(alice.clone(), cap.clone(), "write_note", json!({"note": "hi"})).await;
        assert_eq!(asked.body["status"], "confirm", "{:?}", asked.body);
        assert_eq!(asked.body["arguments"], json!({"note": "hi"}));
        let confirmation = asked.body["confirmation"].as_str().unwrap().to_owned();
        assert_eq!(server.counts.calls.load(Ordering::SeqCst), before + 2, "nothing sent before the person said yes");
        let confirmed = app.post(&format!("/v1/app-calls/{confirmation}"), &alice, json!({"accept": true})).await;
        assert_eq!(confirmed.body["status"], "done", "{:?}", confirmed.body);
        assert_eq!(confirmed.body["result"]["content"][0]["text"], "noted: hi");
        let again = app.post(&format!("/v1/app-calls/{confirmation}"), &alice, json!({"accept": true})).await;
        assert_ne!(again.body["status"], "done", "a confirmation is used once: {:?}", again.body);
        assert_eq!(server.counts.calls.load(Ordering::SeqCst), before + 3, "the replayed confirmation called nothing");

        // A viewer's app calls none of the server's tools.
        let vcap = capability(vera.clone()).await.unwrap();
        let read_only = call(vera.clone(), vcap, "get_time", json!({})).await;
        assert_eq!(read_only.status, StatusCode::FORBIDDEN, "{:?}", read_only.body);

        // Every decision is a row the workspace's admins read.
        let rows = app.get(&format!("/v1/artifacts/{id}/calls"), &alice).await;
        let mut decided: Vec<(String, String)> = rows.body.as_array().unwrap().iter()
            .map(|r| (r["tool"].as_str().unwrap().to_owned(), r["decision"].as_str().unwrap().to_owned())).collect();
        decided.reverse();
        let expected: Vec<(String, String)> = [("get_time", "allow"), ("refresh", "allow"), ("slow", "deny"), ("reset", "deny"),
            ("format_disk", "not_offered"), ("write_note", "ask"), ("write_note", "confirmed"), ("write_note", "called"), ("write_note", "used"),
            ("get_time", "read_only")]
            .iter().map(|(t, d)| (t.to_string(), d.to_string())).collect();
        assert_eq!(decided, expected);

        // The console's list: the server, whether it answers, its calls here.
        let listed = app.get("/v1/integrations/servers", &alice).await;
        assert_eq!(listed.status, StatusCode::OK, "{:?}", listed.body);
        let clock = &listed.body[0];
        assert_eq!((clock["name"].clone(), clock["key"].clone(), clock["transport"].clone(), clock["address"].clone(), clock["tools"].clone()),
            (json!("clock"), json!("mcp:clock"), json!("http"), json!("127.0.0.1"), json!(11)), "{clock}");
        let calls = clock["calls"].as_array().unwrap();
        assert_eq!(calls.len(), 11, "the agent's call and the app's ten rows: {calls:?}");
        assert_eq!((calls[0]["tool"].clone(), calls[0]["decision"].clone(), calls[0]["caller"].clone()), (json!("get_time"), json!("read_only"), json!("app")));
        assert_eq!((calls[10]["tool"].clone(), calls[10]["caller"].clone()), (json!("get_time"), json!("agent")));
        // vera administers nothing: she sees the server, and no call.
        let hers = app.get("/v1/integrations/servers", &vera).await;
        assert_eq!(hers.body[0]["calls"], json!([]), "{:?}", hers.body);

        // The server's key off in the workspace: the app's calls stop there.
        let off = app.send_put(&format!("/v1/integrations/workspace:{ws}/mcp:clock"), &alice, json!({"state": "off", "reason": "incident"})).await;
        assert_eq!(off.status, StatusCode::OK, "{:?}", off.body);
        let stopped = call(alice.clone(), cap.clone(), "get_time", json!({})).await;
        assert_eq!(stopped.status, StatusCode::LOCKED, "{:?}", stopped.body);
        assert_eq!(stopped.body["error"]["key"], "mcp:clock", "{:?}", stopped.body);
        let effective = app.get(&format!("/v1/integrations/effective?workspace={ws}"), &alice).await;
        assert_eq!(effective.body["mcp:clock"]["enabled"], false, "{:?}", effective.body);
    }
}

/// The clock's app in alice's thread, shown by her agent's run, with mini
/// apps on and bob an editor there.
struct ClockApp {
    app: App,
    alice: String,
    bob: String,
    ws: String,
    id: String,
}

async fn clock_app(backend: lattice_log::Backend, url: &str, isolation: &str) -> ClockApp {
    let config: lattice_connect::ServerConfig = serde_json::from_value(json!({
        "url": url,
        "allow_internal": true,
        "timeout_secs": 2,
        "isolation": isolation,
        "policy": {"default": "allow", "tools": {"write_note": "ask"}},
    }))
    .unwrap();
    let connections = lattice_connect::Connections::configure(&BTreeMap::from([("clock".to_owned(), config)])).unwrap();
    let models = Models::default().with("clock", Arc::new(ShowsTheClock), true);
    let app = App::connected(backend, connections, models).await;
    let ops = app.token("t1", "olga", TenantRole::DeploymentAdmin, false).await;
    let on = app.send_put("/v1/integrations/deployment/ui:mini-apps", &ops, json!({"state": "on", "reason": "opt in"})).await;
    assert_eq!(on.status, StatusCode::OK, "{:?}", on.body);
    let alice = app.token("t1", "alice", TenantRole::Member, false).await;
    let bob = app.token("t1", "bob", TenantRole::Member, false).await;
    let (ws, th) = app.workspace_with_thread(&alice).await;
    let added = app.post(&format!("/v1/workspaces/{ws}/members"), &alice, json!({"user": "bob", "role": "editor"})).await;
    assert_eq!(added.status, StatusCode::OK, "{:?}", added.body);
    let started = app.post(&format!("/v1/threads/{th}/runs"), &alice, json!({"prompt": "What time is it?"})).await;
    assert_eq!(started.status, StatusCode::OK, "{:?}", started.body);
    let run = started.body["run_id"].as_str().unwrap().to_owned();
    lattice_testkit::until("the run to finish", async || {
        app.get(&format!("/v1/runs/{run}"), &alice).await.body["status"] == json!(RunStatus::Finished.as_str())
    })
    .await;
    let apps = app.get(&format!("/v1/threads/{th}/artifacts?kind=app"), &alice).await;
    let listed = apps.body.as_array().or(apps.body["artifacts"].as_array()).cloned().unwrap_or_default();
    assert_eq!(listed.len(), 1, "{:?}", apps.body);
    let id = listed[0]["id"].as_str().unwrap().to_owned();
    ClockApp { app, alice, bob, ws, id }
}

impl ClockApp {
    async fn capability(&self, token: &str) -> String {
        let given = self.app.post(&format!("/v1/artifacts/{}/capability", self.id), token, json!({})).await;
        assert_eq!(given.status, StatusCode::OK, "{:?}", given.body);
        given.body["capability"].as_str().unwrap().to_owned()
    }

    /// `token`'s app's call, through `app` (this one's router or another's over the same log).
    async fn call_through(&self, app: &App, token: &str, tool: &str, arguments: Value) -> crate::Reply {
        let capability = self.capability(token).await;
        app.post(&format!("/v1/artifacts/{}/calls", self.id), token, json!({"tool": tool, "arguments": arguments, "capability": capability})).await
    }

    async fn call(&self, token: &str, tool: &str, arguments: Value) -> crate::Reply {
        self.call_through(&self.app, token, tool, arguments).await
    }

    async fn confirm(&self, confirmation: &str) -> crate::Reply {
        self.app.post(&format!("/v1/app-calls/{confirmation}"), &self.alice, json!({"accept": true})).await
    }

    /// The app's rows, oldest first: (actor, tool, decision).
    async fn rows(&self) -> Vec<(String, String, String)> {
        self.app.call_rows(&self.id, &self.alice).await
    }

    /// The rows `step` added.
    async fn added_by<F: Future<Output = crate::Reply>>(&self, step: F) -> (crate::Reply, Vec<(String, String, String)>) {
        let before = self.rows().await.len();
        let reply = step.await;
        (reply, self.rows().await.split_off(before))
    }
}

fn one(actor: &str, tool: &str, decision: &str) -> Vec<(String, String, String)> {
    vec![(actor.into(), tool.into(), decision.into())]
}

lattice_testkit::both_backends! {
    async fn a_server_apps_refused_calls_are_each_one_row_and_answer_as_before(backend: Backend) {
        let server = lattice_testkit::mcp_server::start().await;
        let c = clock_app(backend, &server.url, "tenant").await;
        let before = server.counts.calls.load(Ordering::SeqCst);

        // A tool the server does not offer.
        let (r, added) = c.added_by(c.call(&c.alice, "format_disk", json!({}))).await;
        assert_eq!((r.status, crate::error_type(&r)), (StatusCode::UNPROCESSABLE_ENTITY, "ValidationFailed"), "{:?}", r.body);
        assert_eq!(added, one("alice", "format_disk", "not_offered"));
        // An ask too large to show the person.
        let (r, added) = c.added_by(c.call(&c.alice, "write_note", json!({"note": "x".repeat(49 * 1024)}))).await;
        assert_eq!((r.status, crate::error_type(&r)), (StatusCode::PAYLOAD_TOO_LARGE, "TooLarge"), "{:?}", r.body);
        assert_eq!(added, one("alice", "write_note", "too_large"));
        // The server not connected where the call is made (another
        // replica's configuration, the same log).
        let bare = App::over(c.app.log.clone(), Models::default());
        let (r, added) = c.added_by(c.call_through(&bare, &c.alice, "get_time", json!({}))).await;
        assert_eq!((r.status, crate::error_type(&r)), (StatusCode::LOCKED, "NotEnabled"), "{:?}", r.body);
        assert_eq!(r.body["error"]["key"], "mcp:clock", "{:?}", r.body);
        assert_eq!(added, one("alice", "get_time", "switched_off"));
        // The server's key switched off.
        let off = c.app.send_put(&format!("/v1/integrations/workspace:{}/mcp:clock", c.ws), &c.alice, json!({"state": "off", "reason": "incident"})).await;
        assert_eq!(off.status, StatusCode::OK, "{:?}", off.body);
        let (r, added) = c.added_by(c.call(&c.bob, "get_time", json!({}))).await;
        assert_eq!((r.status, crate::error_type(&r)), (StatusCode::LOCKED, "NotEnabled"), "{:?}", r.body);
        assert_eq!(r.body["error"]["key"], "mcp:clock", "{:?}", r.body);
        assert_eq!(added, one("bob", "get_time", "switched_off"));
        assert_eq!(server.counts.calls.load(Ordering::SeqCst), before, "no refused call reached the server");

        // Each row names its server and holds no arguments.
        let events = c.app.get(&format!("/v1/workspaces/{}/events?format=json", c.ws), &c.alice).await;
        let refusals: Vec<&Value> = events.body["events"].as_array().unwrap().iter()
            .filter(|e| e["payload"]["name"] == "app_tool_call" && e["payload"]["data"]["decision"] != "allow")
            .map(|e| &e["payload"]["data"]).collect();
        assert_eq!(refusals.len(), 4, "{refusals:?}");
        for data in refusals {
            assert_eq!(data["server"], "clock", "{data}");
            assert!(data.get("arguments").is_none() && data["arguments_digest"].is_string(), "{data}");
            assert!(data.to_string().len() < 1024, "{data}");
        }
    }
}

lattice_testkit::both_backends! {
    async fn a_server_apps_confirmation_reaches_the_server_once(backend: Backend) {
        let server = lattice_testkit::mcp_server::start().await;
        let c = clock_app(backend, &server.url, "tenant").await;
        let asked = c.call(&c.alice, "write_note", json!({"note": "once"})).await;
        assert_eq!(asked.body["status"], "confirm", "{:?}", asked.body);
        let confirmation = asked.body["confirmation"].as_str().unwrap().to_owned();
        let before = server.counts.calls.load(Ordering::SeqCst);
        let rows = c.rows().await.len();

        // Two answers at once: one calls the server, the other is refused
        // before anything is sent.
        let (first, second) = tokio::join!(c.confirm(&confirmation), c.confirm(&confirmation));
        let mut answers = [(first.status, first.body["status"].clone()), (second.status, second.body["status"].clone())];
        answers.sort_by_key(|(status, _)| *status);
        assert_eq!(answers, [(StatusCode::OK, json!("done")), (StatusCode::CONFLICT, Value::Null)], "{:?} {:?}", first.body, second.body);
        let refused = if first.status == StatusCode::CONFLICT { &first } else { &second };
        assert_eq!(crate::error_type(refused), "Conflict", "{:?}", refused.body);
        assert_eq!(server.counts.calls.load(Ordering::SeqCst), before + 1, "the server was called once");
        // Made again: refused, and nothing sent.
        let (again, added) = c.added_by(c.confirm(&confirmation)).await;
        assert_eq!((again.status, crate::error_type(&again)), (StatusCode::CONFLICT, "Conflict"), "{:?}", again.body);
        assert_eq!(added, one("alice", "write_note", "used"));
        assert_eq!(server.counts.calls.load(Ordering::SeqCst), before + 1, "the replay called nothing");

        // The confirmation (which took the once key), what the server
        // answered, and one row per refused answer.
        let mut decided: Vec<String> = c.rows().await.split_off(rows).into_iter().map(|(_, _, d)| d).collect();
        decided.sort();
        assert_eq!(decided, ["called", "confirmed", "used", "used"]);
    }
}

/// A loopback TCP proxy to `to`; aborting its task closes it and every
/// connection through it at once.
async fn proxy(to: &str) -> (String, tokio::task::JoinHandle<()>) {
    let to: std::net::SocketAddr = to.trim_start_matches("http://").trim_end_matches("/mcp").parse().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let at = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let mut open = tokio::task::JoinSet::new();
        while let Ok((mut inbound, _)) = listener.accept().await {
            open.spawn(async move {
                if let Ok(mut outbound) = tokio::net::TcpStream::connect(to).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    });
    (format!("http://{at}/mcp"), task)
}

lattice_testkit::both_backends! {
    async fn a_server_apps_call_whose_tools_cannot_be_listed_is_one_row(backend: Backend) {
        let server = lattice_testkit::mcp_server::start().await;
        let (url, through) = proxy(&server.url).await;
        // Each person's own session: bob's listing is not alice's.
        let c = clock_app(backend, &url, "person").await;
        through.abort();
        let _ = through.await;
        let (r, added) = c.added_by(c.call(&c.bob, "get_time", json!({}))).await;
        assert_eq!((r.status, crate::error_type(&r)), (StatusCode::SERVICE_UNAVAILABLE, "Unavailable"), "{:?}", r.body);
        assert_eq!(added, one("bob", "get_time", "unavailable"));
    }
}

/// One AG-UI request's whole stream, as its events.
async fn agui(app: &App, token: &str, th: &str, body: Value) -> Vec<Value> {
    let sent = app.send("POST", &format!("/v1/agui/threads/{th}"), Some(token), Some(&body.to_string())).await;
    assert_eq!(sent.status, StatusCode::OK, "{:?}", sent.body);
    sent.body.as_str().expect("an event stream").lines().filter_map(|l| l.strip_prefix("data: ")).map(|d| serde_json::from_str(d).unwrap()).collect()
}

lattice_testkit::both_backends! {
    async fn a_servers_question_is_an_agui_interrupt_and_its_offers_reach_a_run_over_http(backend: Backend) {
        let server = lattice_testkit::mcp_server::start().await;
        // Its answers bounded to 64 KiB: the big note is over.
        let config: lattice_connect::ServerConfig =
            serde_json::from_value(json!({"url": server.url, "allow_internal": true, "max_result_bytes": 65536, "policy": {"default": "allow"}})).unwrap();
        let connections = lattice_connect::Connections::configure(&BTreeMap::from([("clock".to_owned(), config)])).unwrap();
        let app = App::connected(backend, connections, lattice_agent::Models::scripted()).await;
        let alice = app.token("t1", "alice", TenantRole::Member, false).await;
        let (_, th) = app.workspace_with_thread(&alice).await;

        // Over AG-UI the server's question ends the stream as an interrupt
        // (the run goes on); resumed with the answer, the stream follows
        // the run to its end, and the server got exactly that answer.
        let start = json!({"threadId": th, "runId": "r1", "messages": [{"id": "u1", "role": "user", "content": "tool=clock__ask"}],
            "tools": [], "context": [], "state": {}, "forwardedProps": {"model": "scripted:call"}});
        let events = agui(&app, &alice, &th, start).await;
        let finished = events.last().unwrap();
        let interrupt = &finished["outcome"]["interrupts"][0];
        assert_eq!(interrupt["reason"], "lattice.elicitation", "{finished}");
        assert_eq!(interrupt["message"], "The clock server asks: Which size?", "{finished}");
        assert_eq!(interrupt["responseSchema"]["properties"]["content"]["properties"]["size"]["enum"], json!(["s", "l"]), "{finished}");
        let id = interrupt["id"].as_str().unwrap();
        let resume = json!({"threadId": th, "runId": "r2", "messages": [], "tools": [], "context": [], "state": {},
            "resume": [{"interruptId": id, "status": "resolved", "payload": {"action": "accept", "content": {"size": "s"}}}]});
        let events = agui(&app, &alice, &th, resume).await;
        let result = events.iter().find(|e| e["type"] == "TOOL_CALL_RESULT").unwrap_or_else(|| panic!("{events:?}"));
        assert!(result["content"].as_str().unwrap().contains(r#"\"content\":{\"size\":\"s\"}"#), "{result}");
        assert_eq!(events.last().unwrap()["outcome"]["type"], "success", "{events:?}");

        // What the server offers, over HTTP, and a run that brings it.
        let offers = app.get(&format!("/v1/threads/{th}/offers"), &alice).await;
        assert_eq!(offers.status, StatusCode::OK, "{:?}", offers.body);
        assert_eq!(offers.body["prompts"][0]["command"], "/clock:greet", "{:?}", offers.body);
        assert_eq!(offers.body["resources"].as_array().unwrap().len(), 2, "{:?}", offers.body);
        let body = json!({"prompt": "Greet", "model": "scripted:context", "command": {"server": "clock", "prompt": "greet", "arguments": {"name": "Ana"}},
            "attachments": [{"server": "clock", "uri": lattice_testkit::mcp_server::NOTE}]});
        let started = app.post(&format!("/v1/threads/{th}/runs"), &alice, body).await;
        assert_eq!(started.status, StatusCode::OK, "{:?}", started.body);
        let big = json!({"prompt": "Read it", "attachments": [{"server": "clock", "uri": lattice_testkit::mcp_server::BIG_NOTE}]});
        let refused = app.post(&format!("/v1/threads/{th}/runs"), &alice, big).await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{:?}", refused.body);
        assert!(refused.body.to_string().contains("max_result_bytes"), "{:?}", refused.body);
        let odd = app.post(&format!("/v1/threads/{th}/runs"), &alice, json!({"prompt": "x", "attachments": [{"server": "clock"}]})).await;
        assert_eq!(odd.status, StatusCode::UNPROCESSABLE_ENTITY, "{:?}", odd.body);
    }
}

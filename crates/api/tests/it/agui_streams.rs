//! Every AG-UI stream lattice produces obeys the producer's rules of
//! AG-UI 1.1's fatal cases (issue 45), checked over recorded streams of
//! each kind of run lattice has: finished, interrupted (waiting on a
//! form), a refused answer, resumed to the end, cancelled (`outcome`
//! `cancelled`), failed (its model failing), streamed (its model writing
//! as it goes, and reporting the tokens it used, which `RUN_FINISHED`
//! carries as `usage`), and a reconnect. The rules, as the producer's: the first event is
//! `RUN_STARTED`; nothing comes after `RUN_FINISHED` or `RUN_ERROR`, and one
//! of them ends the stream; no run starts inside another; no message and no
//! tool call is left open, none is started twice or spoken of before it
//! started or after it ended.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use futures_util::StreamExt;
use lattice_agent::{ChatMessage, Delta, Deltas, Model, ModelError, ModelReply, ModelRequest, Models};
use lattice_core::{TenantRole, ToolCall};
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::App;

/// A model that writes its reply in pieces, and says what it used.
struct Streams;

#[async_trait::async_trait]
impl Model for Streams {
    async fn reply(&self, _: ModelRequest) -> Result<ModelReply, ModelError> {
        Ok(ModelReply { text: Some("Hello there.".into()), tool_calls: vec![], tokens: Some(42) })
    }

    async fn stream(&self, request: ModelRequest, deltas: &Deltas) -> Result<ModelReply, ModelError> {
        for piece in ["Hello", " there", "."] {
            deltas(Delta::Text(piece.into()));
        }
        self.reply(request).await
    }
}

/// A model whose service is down.
struct Fails;

#[async_trait::async_trait]
impl Model for Fails {
    async fn reply(&self, _: ModelRequest) -> Result<ModelReply, ModelError> {
        Err(ModelError::Status { status: 503, message: "overloaded".into() })
    }
}

/// A model that shows a dashboard, then begins its reply and holds it
/// until the test lets it go on.
struct Held(Arc<tokio::sync::Notify>);

#[async_trait::async_trait]
impl Model for Held {
    async fn reply(&self, _: ModelRequest) -> Result<ModelReply, ModelError> {
        unreachable!("the runner streams")
    }

    async fn stream(&self, request: ModelRequest, deltas: &Deltas) -> Result<ModelReply, ModelError> {
        if !request.messages.iter().any(|m| matches!(m, ChatMessage::Tool { .. })) {
            let panels = json!({"title": "Load", "panels": [{"type": "metric", "label": "Queue", "value": 7}]});
            let call = ToolCall { id: "call_dash".into(), name: lattice_agent::tools::SHOW_DASHBOARD.into(), arguments: panels };
            return Ok(ModelReply { text: None, tool_calls: vec![call], tokens: Some(10) });
        }
        deltas(Delta::Text("Do".into()));
        self.0.notified().await;
        deltas(Delta::Text("ne.".into()));
        Ok(ModelReply { text: Some("Done.".into()), tool_calls: vec![], tokens: Some(5) })
    }
}

/// A model that asks two things at once, a form and a question, then
/// thanks.
struct AsksTwo;

#[async_trait::async_trait]
impl Model for AsksTwo {
    async fn reply(&self, request: ModelRequest) -> Result<ModelReply, ModelError> {
        if request.messages.iter().any(|m| matches!(m, ChatMessage::Tool { .. })) {
            return Ok(ModelReply { text: Some("Thanks for both.".into()), tool_calls: vec![], tokens: None });
        }
        let form = json!({"title": "Which days?", "schema": {"type": "object", "properties": {"days": {"type": "integer"}}}});
        let calls = vec![
            ToolCall { id: "call_form".into(), name: lattice_agent::tools::ASK_FORM.into(), arguments: form },
            ToolCall { id: "call_question".into(), name: lattice_ui::asks::ASK_USER.into(), arguments: json!({"question": "Why?"}) },
        ];
        Ok(ModelReply { text: None, tool_calls: calls, tokens: None })
    }
}

/// Asks for a screenshot (a file field); once answered, says what it was
/// told of the file.
struct AsksFile;

#[async_trait::async_trait]
impl Model for AsksFile {
    async fn reply(&self, request: ModelRequest) -> Result<ModelReply, ModelError> {
        let told = request.messages.iter().find_map(|m| match m {
            ChatMessage::Tool { content, .. } => Some(content.clone()),
            _ => None,
        });
        if let Some(told) = told {
            return Ok(ModelReply { text: Some(told), tool_calls: vec![], tokens: None });
        }
        let form = json!({"title": "The error", "schema": {"type": "object", "required": ["shot"], "properties": {
            "shot": {"type": "string", "format": "file", "title": "Screenshot", "accept": ["image/*"]}
        }}});
        Ok(ModelReply {
            text: None,
            tool_calls: vec![ToolCall { id: "call_file".into(), name: lattice_agent::tools::ASK_FORM.into(), arguments: form }],
            tokens: None,
        })
    }
}

fn models(gate: &Arc<tokio::sync::Notify>) -> Models {
    let models = Models::scripted().with("test:streams", Arc::new(Streams), false).with("test:fails", Arc::new(Fails), false);
    let models = models.with("test:held", Arc::new(Held(gate.clone())), false).with("test:asks-two", Arc::new(AsksTwo), false);
    models.with("test:asks-file", Arc::new(AsksFile), false)
}

/// What breaks a producer's rule in `events`, each in words: the rules of
/// AG-UI 1.1's lifecycle and streaming, as its conformance corpus pins them
/// for consumers (`the_checker_reads_the_corpus_rules` below), read as a producer's. A
/// stream opens with `RUN_STARTED`; a run closes with `RUN_FINISHED` or
/// `RUN_ERROR`, after which only a new run (or a late `RUN_ERROR`) may come;
/// no run starts inside another; a message, a tool call or a step is
/// spoken of only while open, opened once, and closed before its run; an
/// outcome is an object; the stream ends with its run closed.
fn broken(events: &[Value]) -> Vec<String> {
    let mut said = Vec::new();
    let kind = |e: &Value| e["type"].as_str().unwrap_or_default().to_owned();
    if events.first().map(kind).as_deref() != Some("RUN_STARTED") {
        said.push(format!("the first event is {:?}, not RUN_STARTED", events.first().map(kind)));
    }
    let (mut open_messages, mut open_tools, mut open_steps) = (HashSet::new(), HashSet::new(), HashSet::new());
    let (mut ended_messages, mut ended_tools) = (HashSet::new(), HashSet::new());
    let mut running = false;
    for (i, e) in events.iter().enumerate() {
        let message = e["messageId"].as_str().unwrap_or_default().to_owned();
        let tool = e["toolCallId"].as_str().unwrap_or_default().to_owned();
        let step = e["stepName"].as_str().unwrap_or_default().to_owned();
        let what = kind(e);
        if !running && !matches!(what.as_str(), "RUN_STARTED" | "RUN_ERROR") && i > 0 {
            said.push(format!("{what} at {i} after the run closed"));
        }
        match what.as_str() {
            "RUN_STARTED" if running => said.push(format!("a run started at {i} inside another")),
            "RUN_STARTED" => running = true,
            "RUN_FINISHED" | "RUN_ERROR" => {
                if what == "RUN_FINISHED" && e.get("outcome").is_some_and(|o| !o.is_object()) {
                    said.push(format!("the outcome at {i} is not an object"));
                }
                running = false;
                for id in open_messages.drain() {
                    said.push(format!("message {id} left open when its run closed at {i}"));
                }
                for id in open_tools.drain() {
                    said.push(format!("tool call {id} left open when its run closed at {i}"));
                }
                for name in open_steps.drain() {
                    said.push(format!("step {name} left open when its run closed at {i}"));
                }
            }
            "TEXT_MESSAGE_START" if !open_messages.insert(message.clone()) || ended_messages.contains(&message) => {
                said.push(format!("message {message} started again at {i}"));
            }
            "TEXT_MESSAGE_CONTENT" if !open_messages.contains(&message) => said.push(format!("content of message {message} not open at {i}")),
            "TEXT_MESSAGE_END" => {
                if !open_messages.remove(&message) {
                    said.push(format!("message {message} ended at {i} but was not open"));
                }
                ended_messages.insert(message);
            }
            "TOOL_CALL_START" if !open_tools.insert(tool.clone()) || ended_tools.contains(&tool) => {
                said.push(format!("tool call {tool} started again at {i}"));
            }
            "TOOL_CALL_ARGS" if !open_tools.contains(&tool) => said.push(format!("arguments of tool call {tool} not open at {i}")),
            "TOOL_CALL_END" => {
                if !open_tools.remove(&tool) {
                    said.push(format!("tool call {tool} ended at {i} but was not open"));
                }
                ended_tools.insert(tool);
            }
            "STEP_STARTED" if !open_steps.insert(step.clone()) => said.push(format!("step {step} started again at {i}")),
            "STEP_FINISHED" if !open_steps.remove(&step) => said.push(format!("step {step} finished at {i} but was not started")),
            _ => {}
        }
    }
    if running || events.is_empty() {
        said.push("the stream ended with its run not closed".to_owned());
    }
    said
}

/// A stream lattice produced: by the rules, and one run (one request, one run).
fn obeys(what: &str, events: &[Value]) {
    let said = broken(events);
    assert!(said.is_empty(), "the {what} stream breaks a producer's rule: {said:?}\n{events:?}");
    let runs = events.iter().filter(|e| e["type"] == "RUN_STARTED").count();
    assert_eq!(runs, 1, "the {what} stream carries one run: {events:?}");
}

/// The checker, against AG-UI 1.1's own conformance fixtures (copied
/// into `tests/agui-conformance`, with their source and licence): each
/// fixture a consumer must reject for a lifecycle or streaming rule is
/// broken, each it must take is not.
#[test]
fn the_checker_reads_the_corpus_rules() {
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agui-conformance/streams");
    let mut read = 0;
    for entry in std::fs::read_dir(&folder).expect("the copied fixtures") {
        let path = entry.unwrap().path();
        let fixture: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let name = fixture["name"].as_str().unwrap();
        let said = broken(fixture["stream"].as_array().unwrap());
        match fixture["expect"]["outcome"].as_str() {
            Some("failed") => assert!(!said.is_empty(), "{name}: a fatal fixture the checker lets pass"),
            Some("completed") => assert!(said.is_empty(), "{name}: a fixture consumers take, refused: {said:?}"),
            other => panic!("{name}: outcome {other:?}"),
        }
        read += 1;
    }
    assert_eq!(read, 13, "every copied fixture read");
    // The corpus pins tool calls' rules through chunks, which lattice does
    // not send: the triad's, written here.
    let start = json!({"type": "RUN_STARTED"});
    let finish = json!({"type": "RUN_FINISHED"});
    let tool = |kind: &str| json!({"type": kind, "toolCallId": "t"});
    for wrong in [
        vec![start.clone(), tool("TOOL_CALL_ARGS"), finish.clone()],
        vec![start.clone(), tool("TOOL_CALL_START"), tool("TOOL_CALL_END"), tool("TOOL_CALL_START"), tool("TOOL_CALL_END"), finish.clone()],
        vec![start.clone(), tool("TOOL_CALL_START"), finish.clone()],
        vec![start.clone(), tool("TOOL_CALL_END"), finish.clone()],
    ] {
        assert!(!broken(&wrong).is_empty(), "{wrong:?}");
    }
    assert!(broken(&[start, tool("TOOL_CALL_START"), tool("TOOL_CALL_ARGS"), tool("TOOL_CALL_END"), finish]).is_empty());
}

/// One AG-UI request's whole stream, as its events.
async fn stream(app: &App, token: &str, th: &str, body: Value) -> Vec<Value> {
    let sent = app.send("POST", &format!("/v1/agui/threads/{th}"), Some(token), Some(&body.to_string())).await;
    assert_eq!(sent.status, StatusCode::OK, "{:?}", sent.body);
    let text = sent.body.as_str().expect("an event stream").to_owned();
    text.lines().filter_map(|l| l.strip_prefix("data: ")).map(|d| serde_json::from_str(d).expect("each event is JSON")).collect()
}

fn input(th: &str, model: &str) -> Value {
    json!({"threadId": th, "runId": "r1", "messages": [{"id": "u1", "role": "user", "content": "Go"}], "tools": [], "context": [],
        "state": {}, "forwardedProps": {"model": model}})
}

fn resume(th: &str, interrupt: &str, status: &str, payload: Value) -> Value {
    json!({"threadId": th, "runId": "r2", "messages": [], "tools": [], "context": [], "state": {},
        "resume": [{"interruptId": interrupt, "status": status, "payload": payload}]})
}

fn last(events: &[Value]) -> &Value {
    events.last().expect("an event")
}

lattice_testkit::both_backends! {
    async fn every_kind_of_run_streams_by_the_producers_rules(backend: Backend) {
        let app = App::over(lattice_testkit::service(backend).await, models(&Arc::default()));
        let alice = app.token("t1", "alice", TenantRole::Member, false).await;
        let (_, th) = app.workspace_with_thread(&alice).await;
        let mut recorded: Vec<(&str, Vec<Value>)> = Vec::new();

        // Finished: a dashboard shown, then a reply.
        let finished = stream(&app, &alice, &th, input(&th, "scripted:dashboard")).await;
        assert_eq!(last(&finished)["outcome"]["type"], "success", "{finished:?}");
        recorded.push(("finished", finished));

        // Interrupted: waiting on a form; its interrupt names the request.
        let interrupted = stream(&app, &alice, &th, input(&th, "scripted:ask_form")).await;
        let outcome = &last(&interrupted)["outcome"];
        assert_eq!(outcome["type"], "interrupt", "{interrupted:?}");
        let interrupt = outcome["interrupts"][0]["id"].as_str().expect("an interrupt id").to_owned();
        recorded.push(("interrupted", interrupted));

        // A refused answer: the run's refusal, fields named.
        let refused = stream(&app, &alice, &th, resume(&th, &interrupt, "resolved", json!({"date": "2026-12-01", "severity": "catastrophic"}))).await;
        assert_eq!(last(&refused)["type"], "RUN_ERROR", "{refused:?}");
        recorded.push(("refused resume", refused));

        // Resumed with an answer the form takes: to the end.
        let answer = json!({"date": "2026-12-01", "severity": "high", "affected": ["API"]});
        let resumed = stream(&app, &alice, &th, resume(&th, &interrupt, "resolved", answer)).await;
        assert_eq!(last(&resumed)["outcome"]["type"], "success", "{resumed:?}");
        recorded.push(("resumed", resumed));

        // Cancelled: another interrupted run, its interrupt answered "cancelled".
        let again = stream(&app, &alice, &th, input(&th, "scripted:ask_form")).await;
        let interrupt = last(&again)["outcome"]["interrupts"][0]["id"].as_str().unwrap().to_owned();
        let cancelled = stream(&app, &alice, &th, resume(&th, &interrupt, "cancelled", json!(null))).await;
        assert_eq!(last(&cancelled)["outcome"]["type"], "cancelled", "{cancelled:?}");
        recorded.push(("cancelled", cancelled));

        // Failed: its model's service down; the failure's kind as the code.
        let failed = stream(&app, &alice, &th, input(&th, "test:fails")).await;
        assert_eq!((last(&failed)["type"].as_str(), last(&failed)["code"].as_str()), (Some("RUN_ERROR"), Some("model")), "{failed:?}");
        assert!(last(&failed)["message"].as_str().unwrap().contains("overloaded"), "{failed:?}");
        recorded.push(("failed", failed));

        // Streamed: the text as it was written, once, and the tokens used.
        let streamed = stream(&app, &alice, &th, input(&th, "test:streams")).await;
        let pieces: Vec<&str> =
            streamed.iter().filter(|e| e["type"] == "TEXT_MESSAGE_CONTENT").map(|e| e["delta"].as_str().unwrap()).collect();
        assert_eq!(pieces, ["Hello", " there", "."], "{streamed:?}");
        assert_eq!(last(&streamed)["usage"], json!([{"model": "test:streams", "totalTokens": 42}]), "{streamed:?}");
        recorded.push(("streamed", streamed));

        for (what, events) in &recorded {
            obeys(what, events);
        }
    }
}

/// An AG-UI request's stream, read as it comes.
struct Reading {
    body: axum::body::BodyDataStream,
    buffer: String,
}

impl Reading {
    async fn open(app: &App, token: &str, th: &str, body: Value) -> Self {
        let req = axum::http::Request::post(format!("/v1/agui/threads/{th}"))
            .header("authorization", format!("Bearer {token}"))
            .header("content-type", "application/json")
            .body(axum::body::Body::from(body.to_string()))
            .unwrap();
        let res = app.router.clone().oneshot(req).await.unwrap();
        assert_eq!(res.status(), StatusCode::OK);
        Self { body: res.into_body().into_data_stream(), buffer: String::new() }
    }

    /// The next event, within 10 s.
    async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let frame: String = self.buffer.drain(..end + 2).collect();
                match frame.lines().find_map(|l| l.strip_prefix("data: ")) {
                    Some(data) => return Some(serde_json::from_str(data).expect("each event is JSON")),
                    None => continue,
                }
            }
            let chunk = tokio::time::timeout(Duration::from_secs(10), self.body.next()).await.expect("the stream goes on")?;
            self.buffer.push_str(std::str::from_utf8(&chunk.unwrap()).unwrap());
        }
    }

    /// Every event until the stream ends.
    async fn rest(mut self) -> Vec<Value> {
        let mut all = Vec::new();
        while let Some(e) = self.next().await {
            all.push(e);
        }
        all
    }
}

fn reconnect(th: &str) -> Value {
    json!({"threadId": th, "runId": "again", "messages": [], "tools": [], "context": [], "state": {}, "forwardedProps": {"reconnect": true}})
}

lattice_testkit::both_backends! {
    /// A client that loses its stream mid-run reconnects to another
    /// replica: the thread as a `MESSAGES_SNAPSHOT`, then the run's live
    /// events from where the snapshot stands; with the two it holds the
    /// thread's whole conversation, nothing lost and nothing twice.
    async fn a_reconnecting_client_loses_nothing_and_repeats_nothing(backend: Backend) {
        let url = lattice_testkit::fresh_url(backend).await;
        let db = lattice_log::Db::connect(&url, 8).await.unwrap();
        db.migrate().await.unwrap();
        let (one, two) = (lattice_testkit::service_on(db), lattice_testkit::service_on(lattice_log::Db::connect(&url, 8).await.unwrap()));
        let gate = Arc::new(tokio::sync::Notify::new());
        let (a, b) = (App::over(one.clone(), models(&gate)), App::over(two.clone(), models(&gate)));
        let alice = a.token("t1", "alice", TenantRole::Member, false).await;
        let (_, th) = a.workspace_with_thread(&alice).await;

        // On replica A: the run shows its dashboard, begins its reply and
        // holds; the client's stream is lost there.
        let mut first = Reading::open(&a, &alice, &th, input(&th, "test:held")).await;
        let mut seen = Vec::new();
        while let Some(e) = first.next().await {
            let done = e["type"] == "TEXT_MESSAGE_CONTENT";
            seen.push(e);
            if done {
                break;
            }
        }
        assert_eq!(seen.last().unwrap()["delta"], "Do", "{seen:?}");
        drop(first);
        let written = one.horizon().current();
        two.horizon().wait_for(written, Duration::from_secs(5)).await;

        // On replica B: the thread so far, then the run goes on.
        let mut again = Reading::open(&b, &alice, &th, reconnect(&th)).await;
        assert_eq!(again.next().await.unwrap()["type"], "RUN_STARTED");
        let snapshot = again.next().await.unwrap();
        assert_eq!(snapshot["type"], "MESSAGES_SNAPSHOT", "{snapshot}");
        let roles: Vec<&str> = snapshot["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
        assert_eq!(roles, ["user", "assistant", "tool"], "the prompt, the dashboard's call, its result: {snapshot}");
        assert_eq!(snapshot["messages"][1]["toolCalls"][0]["function"]["name"], lattice_agent::tools::SHOW_DASHBOARD);
        gate.notify_one();
        let live = again.rest().await;
        let kinds: Vec<&str> = live.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_FINISHED"], "only what came after: {live:?}");
        assert_eq!(live[1]["delta"], "Done.", "the reply whole, not from the middle of its text");
        assert_eq!(live[3]["outcome"]["type"], "success");
        assert_eq!(live[3]["usage"], json!([{"totalTokens": 5}]), "the tokens of the model call this stream saw");
        let mut whole = vec![json!({"type": "RUN_STARTED"}), snapshot.clone()];
        whole.extend(live.iter().cloned());
        obeys("reconnect", &whole);

        // What the client holds is the thread's conversation, as a
        // reconnect after the run reads it.
        let mut held: Vec<Value> = snapshot["messages"].as_array().unwrap().clone();
        held.push(json!({"id": live[0]["messageId"], "role": "assistant", "content": live[1]["delta"]}));
        let after = stream(&b, &alice, &th, reconnect(&th)).await;
        assert_eq!(after[1]["messages"], json!(held), "nothing lost, nothing twice");
        assert_eq!(last(&after)["outcome"]["type"], "success", "no run is going: {after:?}");
    }
}

lattice_testkit::both_backends! {
    /// A run that waits on two requests, one answered: the resume that
    /// answered it ends with the other as its interrupt (it does not hang
    /// waiting for a run that cannot go on), and so does a reconnect; the
    /// last answer lets the run finish.
    async fn a_run_still_waiting_ends_each_stream_with_what_it_waits_on(backend: Backend) {
        let app = App::over(lattice_testkit::service(backend).await, models(&Arc::default()));
        let alice = app.token("t1", "alice", TenantRole::Member, false).await;
        let (_, th) = app.workspace_with_thread(&alice).await;
        let asked = stream(&app, &alice, &th, input(&th, "test:asks-two")).await;
        let interrupts = |events: &[Value]| -> Vec<String> {
            let outcome = &last(events)["outcome"];
            assert_eq!(outcome["type"], "interrupt", "{events:?}");
            outcome["interrupts"].as_array().unwrap().iter().map(|i| i["toolCallId"].as_str().unwrap().to_owned()).collect()
        };
        assert_eq!(interrupts(&asked), ["call_form", "call_question"]);
        let id = |call: &str| last(&asked)["outcome"]["interrupts"].as_array().unwrap().iter().find(|i| i["toolCallId"] == call).unwrap()["id"].clone();

        let one = tokio::time::timeout(Duration::from_secs(10), stream(&app, &alice, &th, resume(&th, id("call_question").as_str().unwrap(), "resolved", json!("Because."))))
            .await
            .expect("the resume ends, though the run still waits");
        assert_eq!(interrupts(&one), ["call_form"], "{one:?}");
        obeys("partly answered", &one);
        let again = stream(&app, &alice, &th, reconnect(&th)).await;
        assert_eq!(interrupts(&again), ["call_form"], "{again:?}");
        obeys("reconnect to a waiting run", &again);

        let done = stream(&app, &alice, &th, resume(&th, id("call_form").as_str().unwrap(), "resolved", json!({"days": 2}))).await;
        assert_eq!(last(&done)["outcome"]["type"], "success", "{done:?}");
        obeys("answered", &done);
    }
}

lattice_testkit::both_backends! {
    /// A reconnect to a long thread: its newest `MESSAGES_MAX` messages, in
    /// order, read from the thread's end.
    async fn a_reconnect_to_a_long_thread_gets_its_newest_messages(backend: Backend) {
        let app = App::over(lattice_testkit::service(backend).await, models(&Arc::default()));
        let alice = app.token("t1", "alice", TenantRole::Member, false).await;
        let (_, th) = app.workspace_with_thread(&alice).await;
        let who = lattice_testkit::who("t1", "alice", TenantRole::Member);
        let thread = lattice_core::ThreadId::parse("th", &th).unwrap();
        let over = lattice_api::routes::agui::MESSAGES_MAX + 44;
        for i in 0..over {
            app.log.execute(&who, lattice_core::Command::PostMessage { thread: thread.clone(), text: format!("m{i}") }).await.unwrap();
        }
        let events = stream(&app, &alice, &th, reconnect(&th)).await;
        let texts: Vec<&str> = events[1]["messages"].as_array().unwrap().iter().map(|m| m["content"].as_str().unwrap()).collect();
        let expected: Vec<String> = (over - lattice_api::routes::agui::MESSAGES_MAX..over).map(|i| format!("m{i}")).collect();
        assert_eq!(texts, expected, "the newest, oldest first");
        obeys("reconnect to a long thread", &events);
    }
}

lattice_testkit::both_backends! {
    /// An ask_form with a file field over AG-UI: the interrupt's schema
    /// names the field (`format: "file"`); the client uploads the file to
    /// the thread, then resumes with its id; the agent is told the file.
    async fn an_interrupt_asks_for_a_file_the_client_uploads_then_resumes_with_its_id(backend: Backend) {
        let app = App::over(lattice_testkit::service(backend).await, models(&Arc::default()));
        let alice = app.token("t1", "alice", TenantRole::Member, false).await;
        let (_, th) = app.workspace_with_thread(&alice).await;
        let asked = stream(&app, &alice, &th, input(&th, "test:asks-file")).await;
        let interrupt = last(&asked)["outcome"]["interrupts"][0].clone();
        assert_eq!(interrupt["responseSchema"]["properties"]["shot"]["format"], "file", "{interrupt}");
        assert_eq!(interrupt["responseSchema"]["properties"]["shot"]["accept"], json!(["image/*"]));
        obeys("asks for a file", &asked);
        // The client uploads (a GIF, by its bytes), then resumes with the id.
        let gif = b"GIF89a\x01\x00\x01\x00\x00\x00\x00;".to_vec();
        let uploaded = app
            .router
            .clone()
            .oneshot(
                axum::http::Request::builder()
                    .method("POST")
                    .uri(format!("/v1/threads/{th}/files?name=error.gif"))
                    .header("authorization", format!("Bearer {alice}"))
                    .body(axum::body::Body::from(gif))
                    .unwrap(),
            )
            .await
            .unwrap();
        assert_eq!(uploaded.status(), axum::http::StatusCode::OK);
        let file: Value = serde_json::from_slice(&http_body_util::BodyExt::collect(uploaded.into_body()).await.unwrap().to_bytes()).unwrap();
        assert_eq!(file["type"], "image/gif");
        // A made-up id is refused as the answer, and the run still waits.
        let refused = stream(&app, &alice, &th, resume(&th, interrupt["id"].as_str().unwrap(), "resolved", json!({"shot": "fil_madeup"}))).await;
        assert!(refused.iter().any(|e| e["type"] == "RUN_ERROR" || e.to_string().contains("no such file")), "{refused:?}");
        let done = stream(&app, &alice, &th, resume(&th, interrupt["id"].as_str().unwrap(), "resolved", json!({"shot": file["id"]}))).await;
        assert_eq!(last(&done)["outcome"]["type"], "success", "{done:?}");
        obeys("answered with a file", &done);
        let said: String = done.iter().filter(|e| e["type"] == "TEXT_MESSAGE_CONTENT").filter_map(|e| e["delta"].as_str()).collect();
        assert!(said.contains("error.gif") && said.contains("image/gif"), "the agent was told the file: {said}");
    }
}

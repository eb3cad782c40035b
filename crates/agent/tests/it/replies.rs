//! What the runner makes of an OpenAI-compatible service's replies, end to
//! end through the client: a reply cut at the token limit, text that comes
//! with tool calls, parallel calls in the model's order.

use std::sync::Arc;
use std::time::Duration;

use lattice_agent::openai::OpenAiModel;
use lattice_agent::tools::{ASK_FORM, ASK_USER, SHOW_DASHBOARD};
use lattice_agent::{Models, Runner};
use lattice_core::event::Event;
use lattice_core::{Command, RunId, RunStatus, TenantRole, ThreadId, WorkspaceId};
use lattice_log::{Authenticated, Follow, LogService};
use lattice_testkit::who;
use serde_json::{Value, json};

use crate::openai::{call_chunk, finish_chunk, replaying, text_chunk};
use crate::wait_for;

async fn thread(log: &LogService, alice: &Authenticated) -> ThreadId {
    let ws = log.execute(alice, Command::CreateWorkspace { name: "W".into() }).await.unwrap().id.unwrap();
    let ws = WorkspaceId::parse("ws", &ws).unwrap();
    let th = log.execute(alice, Command::CreateThread { workspace: ws, title: "T".into(), restricted: false }).await.unwrap().id.unwrap();
    ThreadId::parse("th", &th).unwrap()
}

/// A runner whose one model is the OpenAI-compatible client of `base`.
fn runner(log: &LogService, base: &str) -> Runner {
    let model = OpenAiModel::new(base, None, "m", Duration::from_secs(5)).unwrap().with_retries(0, Duration::ZERO);
    Runner::new(lattice_testkit::trusted(log), Models::default().with("m", Arc::new(model), true))
}

/// The thread's events after `after`.
async fn events(log: &LogService, who: &Authenticated, th: &ThreadId, after: i64) -> Vec<Event> {
    log.events(who, &Follow::Thread(th.clone()), after, 500).await.unwrap().into_iter().map(|e| e.event).collect()
}

async fn last_seq(log: &LogService, who: &Authenticated, th: &ThreadId) -> i64 {
    log.events(who, &Follow::Thread(th.clone()), 0, 500).await.unwrap().last().map_or(0, |e| e.seq)
}

fn posted(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::MessagePosted(m) => Some(m.text.clone()),
            _ => None,
        })
        .collect()
}

async fn run_log(log: &LogService, who: &Authenticated, run: &RunId) -> Vec<lattice_core::Envelope> {
    lattice_testkit::trusted(log).run_log(&who.principal().tenant, run).await.unwrap()
}

async fn failed(log: &LogService, who: &Authenticated, run: &RunId) -> Value {
    let events = run_log(log, who, run).await;
    events.iter().rev().find(|e| e.event_type() == "run_failed").expect("the run failed").event.payload()
}

lattice_testkit::both_backends! {
    async fn a_reply_cut_at_the_token_limit_is_shown_as_cut_and_ends_the_run_saying_so(backend: Backend) {
        let log = lattice_testkit::service(backend).await;
        let alice = who("t1", "alice", TenantRole::Member);
        let th = thread(&log, &alice).await;
        let cut_text = vec![text_chunk("The figures are up 4 % and "), finish_chunk("length"), json!({"choices": [], "usage": {"total_tokens": 64}})];
        let cut_args = vec![call_chunk(0, Some(("call_1", ASK_FORM)), r#"{"title": "Incident", "schema": {"type": "obj"#), finish_chunk("length")];
        let (base, _) = replaying(vec![cut_text, cut_args]).await;
        let runner = runner(&log, &base);

        // Text cut short: shown as far as it came, marked as cut; the run
        // fails saying why, its tokens counted.
        let after = last_seq(&log, &alice, &th).await;
        let run = runner.start(&alice, th.clone(), "How are the figures?".into(), None, None).await.unwrap();
        wait_for(&log, &alice, &run, RunStatus::Failed).await;
        let why = failed(&log, &alice, &run).await;
        assert_eq!(why["failure"], "model");
        assert_eq!(why["reason"], "the reply was cut at the model's token limit");
        let said = posted(&events(&log, &alice, &th, after).await);
        assert_eq!(said, ["The figures are up 4 % and …\n\n[cut: the reply reached the model's token limit]"]);
        let replied = run_log(&log, &alice, &run).await;
        let replied = replied.iter().find(|e| e.event_type() == "model_replied").expect("the reply is recorded").event.payload();
        assert_eq!(replied["tokens"], 64);

        // Cut in a tool call's arguments: nothing is asked or made, and the
        // run says where it was cut, not that the arguments are not JSON.
        let after = last_seq(&log, &alice, &th).await;
        let run = runner.start(&alice, th.clone(), "Ask me about the incident".into(), None, None).await.unwrap();
        wait_for(&log, &alice, &run, RunStatus::Failed).await;
        let why = failed(&log, &alice, &run).await;
        let reason = why["reason"].as_str().unwrap();
        assert_eq!(reason, "the reply was cut at the model's token limit while writing the arguments of ask_form (tool_calls[0])");
        assert!(!reason.contains("not JSON"), "{reason}");
        assert!(log.run(&alice, &run).await.unwrap().requests.is_empty(), "a cut call is not asked");
        assert!(posted(&events(&log, &alice, &th, after).await).is_empty());
    }
}

lattice_testkit::both_backends! {
    async fn text_that_comes_with_tool_calls_is_posted_before_their_effects_and_sent_back(backend: Backend) {
        let log = lattice_testkit::service(backend).await;
        let alice = who("t1", "alice", TenantRole::Member);
        let th = thread(&log, &alice).await;
        let dashboard = r#"{"title": "Health", "panels": [{"type": "metric", "label": "Open incidents", "value": 3}]}"#;
        let first = vec![
            text_chunk("Here is "),
            text_chunk("the dashboard."),
            call_chunk(0, Some(("call_1", SHOW_DASHBOARD)), dashboard),
            finish_chunk("tool_calls"),
        ];
        let (base, bodies) = replaying(vec![first, vec![text_chunk("Done."), finish_chunk("stop")]]).await;
        let after = last_seq(&log, &alice, &th).await;
        let run = runner(&log, &base).start(&alice, th.clone(), "Show me".into(), None, None).await.unwrap();
        wait_for(&log, &alice, &run, RunStatus::Finished).await;

        // In the thread: what it said, then the dashboard, then its last word.
        let shown: Vec<String> = events(&log, &alice, &th, after)
            .await
            .into_iter()
            .filter_map(|e| match e {
                Event::MessagePosted(m) => Some(format!("message: {}", m.text)),
                Event::ArtifactCreated(a) => Some(format!("artifact: {}", a.kind)),
                _ => None,
            })
            .collect();
        assert_eq!(shown, ["message: Here is the dashboard.", "artifact: dashboard", "message: Done."]);

        // The next model call reads its own words beside its call.
        let bodies = bodies.lock().unwrap().clone();
        assert_eq!(bodies.len(), 2);
        let assistant = bodies[1]["messages"].as_array().unwrap().iter().find(|m| m["role"] == "assistant").unwrap().clone();
        assert_eq!(assistant["content"], "Here is the dashboard.");
        assert_eq!(assistant["tool_calls"][0]["id"], "call_1");
    }
}

lattice_testkit::both_backends! {
    async fn parallel_calls_are_listed_made_and_answered_in_the_models_order(backend: Backend) {
        let log = lattice_testkit::service(backend).await;
        let alice = who("t1", "alice", TenantRole::Member);
        let th = thread(&log, &alice).await;
        let dashboard = r#"{"title": "Health", "panels": [{"type": "metric", "label": "Open incidents", "value": 3}]}"#;
        // The model's calls, in its order: call_b, call_a, call_0 (ids in no
        // order of their own); the first two wait for a person, the third
        // is made at once.
        let first = vec![
            call_chunk(0, Some(("call_b", ASK_USER)), r#"{"question": "Which region?"}"#),
            call_chunk(1, Some(("call_a", ASK_USER)), r#"{"question": "Which service?"}"#),
            call_chunk(2, Some(("call_0", SHOW_DASHBOARD)), dashboard),
            finish_chunk("tool_calls"),
        ];
        let (base, bodies) = replaying(vec![first, vec![text_chunk("Thanks."), finish_chunk("stop")]]).await;
        let runner = runner(&log, &base);
        let run = runner.start(&alice, th.clone(), "go".into(), None, None).await.unwrap();
        wait_for(&log, &alice, &run, RunStatus::Paused).await;

        let paused: Vec<String> = run_log(&log, &alice, &run)
            .await
            .iter()
            .find_map(|e| match &e.event {
                Event::RunPaused(p) => Some(p.requests.iter().map(|r| r.tool_call_id.clone()).collect()),
                _ => None,
            })
            .unwrap();
        assert_eq!(paused, ["call_b", "call_a"], "the pause lists them as the model asked");

        // One chat message answers both ask_user requests: in the model's order.
        log.execute(&alice, Command::PostMessage { thread: th.clone(), text: "eu-west, the API".into() }).await.unwrap();
        runner.message_posted(&alice, &th, "eu-west, the API").await.unwrap();
        wait_for(&log, &alice, &run, RunStatus::Finished).await;
        let answered: Vec<String> = run_log(&log, &alice, &run)
            .await
            .iter()
            .filter_map(|e| match &e.event {
                Event::DeferredAnswered(a) => Some(a.tool_call_id.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(answered, ["call_b", "call_a"]);

        // The model reads its calls and their results in its own order,
        // though call_0's result came first and the answers later.
        let bodies = bodies.lock().unwrap().clone();
        let messages = bodies[1]["messages"].as_array().unwrap().clone();
        let assistant = messages.iter().find(|m| m["role"] == "assistant").unwrap();
        let called: Vec<&str> = assistant["tool_calls"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
        assert_eq!(called, ["call_b", "call_a", "call_0"]);
        let results: Vec<&str> = messages.iter().filter(|m| m["role"] == "tool").map(|m| m["tool_call_id"].as_str().unwrap()).collect();
        assert_eq!(results, ["call_b", "call_a", "call_0"]);
    }
}

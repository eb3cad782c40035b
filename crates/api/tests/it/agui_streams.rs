//! Every AG-UI stream lattice produces obeys the producer's rules of
//! AG-UI 1.1's fatal cases (issue 45), checked over recorded streams of
//! each kind of run lattice has: finished, interrupted (waiting on a
//! form), a refused answer, resumed to the end, cancelled (`outcome`
//! `cancelled`). The rules, as the producer's: the first event is
//! `RUN_STARTED`; nothing comes after `RUN_FINISHED` or `RUN_ERROR`, and one
//! of them ends the stream; no run starts inside another; no message and no
//! tool call is left open, none is started twice or spoken of before it
//! started or after it ended.

use std::collections::HashSet;

use axum::http::StatusCode;
use lattice_core::TenantRole;
use serde_json::{Value, json};

use crate::App;

/// What breaks a producer's rule in `events`, each in words.
fn broken(events: &[Value]) -> Vec<String> {
    let mut said = Vec::new();
    let kind = |e: &Value| e["type"].as_str().unwrap_or_default().to_owned();
    if events.first().map(kind).as_deref() != Some("RUN_STARTED") {
        said.push(format!("the first event is {:?}, not RUN_STARTED", events.first().map(kind)));
    }
    let (mut open_messages, mut open_tools) = (HashSet::new(), HashSet::new());
    let (mut ended_messages, mut ended_tools) = (HashSet::new(), HashSet::new());
    let mut runs_open = 0;
    let mut ended_at = None;
    for (i, e) in events.iter().enumerate() {
        if let Some(end) = ended_at {
            said.push(format!("{} at {i} after the run ended at {end}", kind(e)));
        }
        let message = e["messageId"].as_str().unwrap_or_default().to_owned();
        let tool = e["toolCallId"].as_str().unwrap_or_default().to_owned();
        match kind(e).as_str() {
            "RUN_STARTED" => {
                runs_open += 1;
                if runs_open > 1 {
                    said.push(format!("a run started at {i} inside another"));
                }
            }
            "RUN_FINISHED" | "RUN_ERROR" => {
                runs_open -= 1;
                ended_at = Some(i);
                for id in open_messages.drain() {
                    said.push(format!("message {id} left open at the end"));
                }
                for id in open_tools.drain() {
                    said.push(format!("tool call {id} left open at the end"));
                }
            }
            // Opened here, whatever the answer.
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
            _ => {}
        }
    }
    if ended_at.is_none() {
        said.push("the stream ended with no RUN_FINISHED or RUN_ERROR".to_owned());
    }
    said
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
        let app = App::new(backend).await;
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

        for (what, events) in &recorded {
            let said = broken(events);
            assert!(said.is_empty(), "the {what} stream breaks a producer's rule: {said:?}\n{events:?}");
        }
        // The checker catches what it is for.
        let wrong = [
            json!([{"type": "TEXT_MESSAGE_START", "messageId": "m"}]),
            json!([{"type": "RUN_STARTED"}, {"type": "TEXT_MESSAGE_START", "messageId": "m"}, {"type": "RUN_FINISHED"}]),
            json!([{"type": "RUN_STARTED"}, {"type": "RUN_FINISHED"}, {"type": "RUN_STARTED"}]),
            json!([{"type": "RUN_STARTED"}, {"type": "RUN_STARTED"}, {"type": "RUN_FINISHED"}]),
            json!([{"type": "RUN_STARTED"}, {"type": "TOOL_CALL_ARGS", "toolCallId": "t"}, {"type": "RUN_FINISHED"}]),
            json!([{"type": "RUN_STARTED"}]),
        ];
        for events in wrong {
            assert!(!broken(events.as_array().unwrap()).is_empty(), "{events}");
        }
    }
}

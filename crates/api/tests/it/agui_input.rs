//! AG-UI's input at its bounds (docs/AGUI.md): at each limit the run
//! starts, one past it is refused naming the field, and nothing is written.

use axum::http::StatusCode;
use lattice_core::TenantRole;
use serde_json::{Value, json};

use crate::{App, error_type};

fn input(th: &str, messages: Vec<Value>) -> Value {
    json!({"threadId": th, "runId": "r1", "messages": messages, "tools": [], "context": [], "state": {},
        "forwardedProps": {"model": "scripted:dashboard"}})
}

fn user(parts: usize) -> Value {
    let content: Vec<Value> = (0..parts).map(|i| json!({"type": "text", "text": format!("part {i}")})).collect();
    json!({"id": "u", "role": "user", "content": content})
}

lattice_testkit::both_backends! {
    async fn an_ag_ui_input_is_bounded_at_its_documented_limits(backend: Backend) {
        let app = App::new(backend).await;
        let alice = app.token("t1", "alice", TenantRole::Member, false).await;
        let (ws, th) = app.workspace_with_thread(&alice).await;
        let path = format!("/v1/agui/threads/{th}");
        let before = app.event_count(&alice, &ws).await;
        let refused = |reply: &crate::Reply, field: &str| {
            assert_eq!((reply.status, error_type(reply)), (StatusCode::UNPROCESSABLE_ENTITY, "ValidationFailed"), "{:?}", reply.body);
            assert_eq!(reply.body["error"]["errors"][0]["path"], field, "{:?}", reply.body);
        };
        // One past each limit: refused, and nothing is written.
        let many = vec![user(1); 257];
        refused(&app.post(&path, &alice, input(&th, many)).await, "messages");
        refused(&app.post(&path, &alice, input(&th, vec![user(65)])).await, "messages/0/content");
        let mut long = input(&th, vec![user(1)]);
        long["runId"] = json!("r".repeat(257));
        refused(&app.post(&path, &alice, long).await, "runId");
        let resume: Vec<Value> = (0..17).map(|i| json!({"interruptId": format!("run_x:{i}"), "status": "resolved"})).collect();
        let mut answers = input(&th, vec![]);
        answers["resume"] = json!(resume);
        refused(&app.post(&path, &alice, answers).await, "resume");
        assert_eq!(app.event_count(&alice, &ws).await, before, "a refused input writes nothing");
        // At each limit: the run starts.
        let mut at = input(&th, vec![user(1); 255]);
        at["messages"].as_array_mut().unwrap().push(user(64));
        at["runId"] = json!("r".repeat(256));
        let started = app.post(&path, &alice, at).await;
        assert_eq!(started.status, StatusCode::OK, "{:?}", started.body);
        assert!(started.body.as_str().unwrap_or_default().contains("RUN_STARTED"), "{:?}", started.body);
    }
}

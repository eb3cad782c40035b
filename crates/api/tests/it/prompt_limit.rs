//! A run's prompt is bounded like a message (16 KiB, `lattice_log::limits::
//! PROMPT_MAX`), counted in bytes, over REST and over AG-UI alike: at the
//! limit the run starts, one byte over is refused 413 `TooLarge` with the
//! limit and the size, and nothing is written.

use axum::http::StatusCode;
use lattice_core::TenantRole;
use lattice_log::limits::PROMPT_MAX;
use serde_json::{Value, json};

use crate::{App, Reply, error_type};

fn too_large(reply: &Reply, size: usize) {
    assert_eq!((reply.status, error_type(reply)), (StatusCode::PAYLOAD_TOO_LARGE, "TooLarge"), "{:?}", reply.body);
    assert_eq!(reply.body["error"]["limit"], json!(PROMPT_MAX), "{:?}", reply.body);
    assert_eq!(reply.body["error"]["size"], json!(size), "{:?}", reply.body);
}

fn agui(th: &str, prompt: &str) -> Value {
    json!({"threadId": th, "runId": "r1", "messages": [{"id": "u", "role": "user", "content": prompt}],
        "tools": [], "context": [], "state": {}, "forwardedProps": {"model": "scripted:dashboard"}})
}

lattice_testkit::both_backends! {
    async fn a_runs_prompt_is_bounded_like_a_message(backend: Backend) {
        assert_eq!(PROMPT_MAX, 16 * 1024);
        let app = App::new(backend).await;
        let alice = app.token("t1", "alice", TenantRole::Member, false).await;
        let (ws, th) = app.workspace_with_thread(&alice).await;
        let runs = format!("/v1/threads/{th}/runs");
        let over = "x".repeat(PROMPT_MAX + 1);
        // Bytes, not characters: 8,193 two-byte letters are over.
        let wide = "é".repeat(PROMPT_MAX / 2 + 1);
        let before = app.event_count(&alice, &ws).await;

        too_large(&app.post(&runs, &alice, json!({"prompt": over, "model": "scripted:dashboard"})).await, PROMPT_MAX + 1);
        too_large(&app.post(&runs, &alice, json!({"prompt": wide, "model": "scripted:dashboard"})).await, PROMPT_MAX + 2);
        too_large(&app.post(&format!("/v1/agui/threads/{th}"), &alice, agui(&th, &over)).await, PROMPT_MAX + 1);
        assert_eq!(app.event_count(&alice, &ws).await, before, "a refused prompt writes nothing");

        let at = "x".repeat(PROMPT_MAX);
        let started = app.post(&runs, &alice, json!({"prompt": at, "model": "scripted:dashboard"})).await;
        assert_eq!(started.status, StatusCode::OK, "{:?}", started.body);
        let streamed = app.post(&format!("/v1/agui/threads/{th}"), &alice, agui(&th, &at)).await;
        assert_eq!(streamed.status, StatusCode::OK, "{:?}", streamed.body);
        assert!(streamed.body.as_str().unwrap_or_default().contains("RUN_STARTED"), "{:?}", streamed.body);
    }
}

//! What MCP holds open counts toward the caller's open streams
//! (`max_streams_per_caller`): the session's event stream, and every tool
//! call while it runs, a `form_submissions` wait for as long as it waits,
//! even once its client stopped reading. Past the limit the guard's own
//! refusal: 429 `RateLimited` with `Retry-After`.

use axum::http::StatusCode;
use lattice_core::{Command, TenantRole, ThreadId, WorkspaceId};
use lattice_edge::TrustedProxies;
use lattice_http::guard::Limits;
use lattice_mcp::FORM_SUBMISSIONS;
use serde_json::{Value, json};

use super::{PATIENCE, Replica, Sse, refusal, token};

/// A 429 with the guard's typed error and its `Retry-After`.
async fn refused(res: axum::http::Response<axum::body::Body>) {
    assert!(res.headers().contains_key("retry-after"), "{:?}", res.headers());
    let (status, body) = refusal(res).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["error"]["type"], "RateLimited", "{body}");
}

lattice_testkit::both_backends! {
    async fn waits_and_event_streams_hold_the_callers_places(backend: Backend) {
        let log = lattice_testkit::service(backend).await;
        let r = Replica::new(&log, Limits { writes_per_sec: 0, streams_per_caller: 2, ..Limits::default() }, TrustedProxies::none());
        let ana_token = token("t1", "ana", TenantRole::Member);
        let ana = lattice_testkit::who("t1", "ana", TenantRole::Member);
        let ws = log.execute(&ana, Command::CreateWorkspace { name: "W".into() }).await.unwrap().id.unwrap();
        let th = log.execute(&ana, Command::CreateThread { workspace: WorkspaceId::parse("ws", &ws).unwrap(), title: "T".into(), restricted: false }).await.unwrap().id.unwrap();
        let thread = ThreadId::parse("th", &th).unwrap();
        let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}});
        let form = log
            .execute(&ana, Command::CreateArtifact { thread: thread.clone(), id: None, kind: "form".into(), data: json!({"title": "F", "schema": schema, "submissions": "many"}) })
            .await
            .unwrap()
            .id
            .unwrap();
        let session = r.open(&ana_token).await;

        // One place: the event stream.
        let events = r.events(&ana_token, &session).await;
        assert_eq!(events.status(), StatusCode::OK);
        // The other: a wait for the form's first submission.
        let wait = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": FORM_SUBMISSIONS, "arguments": {"id": form, "wait_seconds": 600}}});
        let waiting = r.post(&ana_token, Some(&session), wait).await;
        assert_eq!(waiting.status(), StatusCode::OK);
        // A third stream, or a call that may wait, is refused; what is
        // answered at once is not.
        refused(r.events(&ana_token, &session).await).await;
        refused(r.post(&ana_token, Some(&session), peek(&form)).await).await;
        r.request(&ana_token, &session, "tools/list", json!({})).await.expect("a listing opens no stream");
        // Another person's places are their own.
        let bob = token("t1", "bob", TenantRole::Member);
        let bobs = r.open(&bob).await;
        r.request(&bob, &bobs, "tools/call", json!({"name": FORM_SUBMISSIONS, "arguments": {"id": form}})).await.expect("bob is not ana");

        // The event stream closed: its place is free at once.
        drop(events);
        let peeked = r.request(&ana_token, &session, "tools/call", json!({"name": FORM_SUBMISSIONS, "arguments": {"id": form}})).await;
        assert_eq!(peeked.expect("a place is free")["result"]["structuredContent"]["status"], "pending");
        // The client stops reading the wait's answer: the wait goes on,
        // and holds its place.
        drop(waiting);
        let _events = eventually_open(&r, &ana_token, &session).await;
        refused(r.events(&ana_token, &session).await).await;

        // The answer ends the wait, and frees its place.
        let data = json!({"form_id": form, "form_version": 1, "values": {"ok": true}, "nonce": "nonce-0001"});
        log.execute(&ana, Command::CreateArtifact { thread, id: None, kind: "submission".into(), data }).await.unwrap();
        let _again = eventually_open(&r, &ana_token, &session).await;
    }
}

/// A `form_submissions` call that reads without waiting.
fn peek(form: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": FORM_SUBMISSIONS, "arguments": {"id": form}}})
}

/// The session's event stream once a place is free (a call that just
/// answered lets go of its place as its handler ends).
async fn eventually_open(r: &Replica, token: &str, session: &str) -> Sse {
    let res = lattice_testkit::eventually_within(PATIENCE, "a place freed", async || {
        Some(r.events(token, session).await).filter(|res| res.status() == StatusCode::OK)
    })
    .await;
    Sse::new(res)
}

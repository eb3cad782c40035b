//! The reproductions of the hostile-input report, each refused with a typed
//! 4xx, leaving the thread readable; and every limit at its edge.

use axum::http::StatusCode;
use lattice_core::TenantRole;
use lattice_core::document::MAX_DEPTH;
use serde_json::{Value, json};

use crate::{App, Reply, error_type};

/// `[[[…1…]]]`, `levels` deep.
fn nested(levels: usize) -> Value {
    (0..levels).fold(json!(1), |v, _| json!([v]))
}

/// A dashboard `ana` makes in `th`, whose text panel's markdown is `"x"`.
async fn dashboard(app: &App, token: &str, th: &str) -> String {
    let data = json!({"title": "D", "as_of": "2026-11-29T12:00:00Z", "panels": [{"type": "text", "markdown": "x"}]});
    let made = app.post(&format!("/v1/threads/{th}/artifacts"), token, json!({"kind": "dashboard", "data": data})).await;
    assert_eq!(made.status, StatusCode::OK, "{:?}", made.body);
    made.body["id"].as_str().unwrap().to_owned()
}

async fn patch(app: &App, token: &str, id: &str, version: u64, ops: Value) -> Reply {
    let body = json!({"expected_version": version, "patch": ops}).to_string();
    app.send("PATCH", &format!("/v1/artifacts/{id}"), Some(token), Some(&body)).await
}

/// Everything a thread shows still reads, and the artifact is at `version`.
async fn still_readable(app: &App, token: &str, th: &str, id: &str, version: u64) {
    let one = app.get(&format!("/v1/artifacts/{id}"), token).await;
    assert_eq!((one.status, one.body["version"].as_u64()), (StatusCode::OK, Some(version)), "{:?}", one.body);
    let list = app.get(&format!("/v1/threads/{th}/artifacts"), token).await;
    assert_eq!(list.status, StatusCode::OK, "{:?}", list.body);
    let events = app.get(&format!("/v1/threads/{th}/events?format=json"), token).await;
    assert_eq!(events.status, StatusCode::OK, "{:?}", events.body);
}

fn body_size(reply: &Reply) -> usize {
    reply.body.to_string().len()
}

lattice_testkit::both_backends! {
    async fn patches_that_grow_without_bound_stop_at_the_limit(backend: Backend) {
        let app = App::new(backend).await;
        let ana = app.token("t1", "ana", TenantRole::Member, false).await;
        let (_, th) = app.workspace_with_thread(&ana).await;
        let id = dashboard(&app, &ana, &th).await;

        // A subtree copied into itself.
        let into_itself: Vec<Value> = (0..2000).map(|_| json!({"op": "copy", "from": "/panels", "path": "/panels/0/x"})).take(1000).collect();
        let reply = patch(&app, &ana, &id, 1, Value::Array(into_itself)).await;
        assert_eq!((reply.status, error_type(&reply)), (StatusCode::UNPROCESSABLE_ENTITY, "ValidationFailed"), "{:?}", reply.body);
        assert!(reply.body.to_string().contains("cannot copy a value into itself"), "{:?}", reply.body);

        // The whole document copied into a child, again and again: its
        // size doubles each time, and stops at the dashboard's limit.
        let mut doubling = vec![json!({"op": "add", "path": "/panels/0/markdown", "value": "x".repeat(1000)})];
        for i in 0..40 {
            doubling.push(json!({"op": "copy", "from": "/panels", "path": format!("/p{i}")}));
            doubling.push(json!({"op": "copy", "from": format!("/p{i}"), "path": "/panels/-"}));
        }
        let reply = patch(&app, &ana, &id, 1, Value::Array(doubling)).await;
        assert_eq!((reply.status, error_type(&reply)), (StatusCode::PAYLOAD_TOO_LARGE, "TooLarge"), "{:?}", reply.body);

        // Nesting made step by step, past the limit: refused at the
        // operation that goes too deep.
        let mut deeper = Vec::new();
        let mut path = String::from("/panels/0");
        for _ in 0..200 {
            path.push_str("/n");
            deeper.push(json!({"op": "add", "path": path, "value": {}}));
        }
        let reply = patch(&app, &ana, &id, 1, Value::Array(deeper)).await;
        assert_eq!((reply.status, error_type(&reply)), (StatusCode::UNPROCESSABLE_ENTITY, "ValidationFailed"), "{:?}", reply.body);
        assert_eq!(reply.body["error"]["errors"][0]["keyword"], "maxDepth");
        // Op i adds at 3 + i tokens a value 1 deep.
        assert_eq!(reply.body["error"]["errors"][0]["path"], format!("patch.{}", MAX_DEPTH - 3));

        // A later operation failing after a move: refused, nothing half-done.
        let moved = json!([{"op": "move", "from": "/title", "path": "/name"}, {"op": "remove", "path": "/nope"}]);
        let reply = patch(&app, &ana, &id, 1, moved).await;
        assert_eq!((reply.status, error_type(&reply)), (StatusCode::UNPROCESSABLE_ENTITY, "ValidationFailed"), "{:?}", reply.body);
        assert_eq!(reply.body["error"]["errors"][0]["path"], "patch.1");

        still_readable(&app, &ana, &th, &id, 1).await;
        let head = app.get(&format!("/v1/artifacts/{id}"), &ana).await;
        assert_eq!(head.body["data"]["title"], "D");
    }
}

lattice_testkit::both_backends! {
    async fn a_document_at_the_depth_limit_is_stored_and_read_back_one_deeper_is_refused(backend: Backend) {
        let app = App::new(backend).await;
        let ana = app.token("t1", "ana", TenantRole::Member, false).await;
        let bot = app.token("t1", "bot", TenantRole::Member, true).await;
        let (ws, th) = app.workspace_with_thread(&ana).await;
        app.post(&format!("/v1/workspaces/{ws}/members"), &ana, json!({"user": "bot", "role": "editor"})).await;
        let root = app.token("ops", "root", TenantRole::DeploymentAdmin, false).await;
        let on = app.send("PUT", "/v1/integrations/deployment/ui:mini-apps", Some(&root),
            Some(&json!({"state": "on", "reason": "test"}).to_string())).await;
        assert_eq!(on.status, StatusCode::OK, "{:?}", on.body);
        let app_made = app.post(&format!("/v1/threads/{th}/artifacts"), &bot,
            json!({"kind": "app", "data": {"title": "A", "summary": "s", "html": "<p>a</p>", "state": {}}})).await;
        assert_eq!(app_made.status, StatusCode::OK, "{:?}", app_made.body);
        let id = app_made.body["id"].as_str().unwrap().to_owned();
        // An app's state holds any JSON; /state/deep sits 2 levels down (the
        // document, the state): a value of MAX_DEPTH - 2 levels fills it.
        let at_limit = patch(&app, &ana, &id, 1, json!([{"op": "add", "path": "/state/deep", "value": nested(MAX_DEPTH - 2)}])).await;
        assert_eq!(at_limit.status, StatusCode::OK, "{:?}", at_limit.body);
        let over = patch(&app, &ana, &id, 2, json!([{"op": "add", "path": "/state/deeper", "value": nested(MAX_DEPTH - 1)}])).await;
        assert_eq!((over.status, error_type(&over)), (StatusCode::UNPROCESSABLE_ENTITY, "ValidationFailed"), "{:?}", over.body);
        still_readable(&app, &ana, &th, &id, 2).await;
        let head = app.get(&format!("/v1/artifacts/{id}"), &ana).await;
        assert_eq!(head.body["data"]["state"]["deep"], nested(MAX_DEPTH - 2));
        let live = app.get(&format!("/v1/threads/{th}/events?format=json"), &ana).await;
        let changed = live.body["events"].as_array().unwrap().iter().find(|e| e["type"] == "artifact_changed").unwrap().clone();
        assert_eq!(changed["payload"]["patch"][0]["value"], nested(MAX_DEPTH - 2));

        // The same bound on what is created, and on an application's event.
        let created = app.post(&format!("/v1/threads/{th}/artifacts"), &bot,
            json!({"kind": "app", "data": {"title": "A", "summary": "s", "html": "<p>a</p>", "state": {"deep": nested(MAX_DEPTH - 1)}}})).await;
        assert_eq!((created.status, error_type(&created)), (StatusCode::UNPROCESSABLE_ENTITY, "ValidationFailed"), "{:?}", created.body);
        let event = |depth| json!({"namespace": "shop", "name": "deep", "data": {"x": nested(depth)}});
        let ok = app.post(&format!("/v1/workspaces/{ws}/events"), &ana, event(MAX_DEPTH - 1)).await;
        assert_eq!(ok.status, StatusCode::OK, "{:?}", ok.body);
        let deep = app.post(&format!("/v1/workspaces/{ws}/events"), &ana, event(MAX_DEPTH)).await;
        assert_eq!((deep.status, error_type(&deep)), (StatusCode::UNPROCESSABLE_ENTITY, "ValidationFailed"), "{:?}", deep.body);
        // Deeper than any reader parses: malformed at the door.
        let body = json!({"namespace": "shop", "name": "deep", "data": nested(200)}).to_string();
        let malformed = app.send("POST", &format!("/v1/workspaces/{ws}/events"), Some(&ana), Some(&body)).await;
        assert_eq!((malformed.status, error_type(&malformed)), (StatusCode::BAD_REQUEST, "Malformed"));
        let all = app.get(&format!("/v1/workspaces/{ws}/events?format=json"), &ana).await;
        assert_eq!(all.status, StatusCode::OK);
    }
}

lattice_testkit::both_backends! {
    async fn a_refusal_stays_small_whatever_was_sent(backend: Backend) {
        let app = App::new(backend).await;
        let ana = app.token("t1", "ana", TenantRole::Member, false).await;
        let (_, th) = app.workspace_with_thread(&ana).await;
        // A form whose one field has 64 long choices.
        let choices: Vec<String> = (0..64).map(|i| format!("{i:02}{}", "c".repeat(400))).collect();
        let schema = json!({"type": "object", "properties": {"pick": {"type": "array", "items": {"enum": choices}}}});
        let form = app.post(&format!("/v1/threads/{th}/artifacts"), &ana, json!({"kind": "form",
            "data": {"title": "F", "schema": schema, "submissions": "many", "closed": false}})).await;
        assert_eq!(form.status, StatusCode::OK, "{:?}", form.body);
        let form_id = form.body["id"].as_str().unwrap();
        // 60 KB of wrong items: one error each, were they all named.
        let wrong: Vec<&str> = std::iter::repeat_n("x", 15_000).collect();
        let values = json!({"pick": wrong});
        let reply = app.post(&format!("/v1/threads/{th}/artifacts"), &ana,
            json!({"kind": "submission", "data": {"form_id": form_id, "form_version": 1, "values": values, "nonce": "n1"}})).await;
        assert_eq!((reply.status, error_type(&reply)), (StatusCode::UNPROCESSABLE_ENTITY, "ValidationFailed"), "{:.300}", reply.body.to_string());
        let errors = reply.body["error"]["errors"].as_array().unwrap();
        assert_eq!(errors.len(), lattice_core::error::MAX_ERRORS);
        assert_eq!(reply.body["error"]["more"], 15_000 - lattice_core::error::MAX_ERRORS);
        assert!(errors[0]["message"].as_str().unwrap().contains("(and 56 more)"), "{}", errors[0]);
        assert!(body_size(&reply) < 16 * 1024, "{} bytes", body_size(&reply));

        // uniqueItems over many items answers at once (linear, not quadratic).
        let short: Vec<String> = (0..64).map(|i| format!("c{i:02}")).collect();
        let schema = json!({"type": "object", "properties": {"tags": {"type": "array", "uniqueItems": true, "items": {"enum": short}}}});
        let form = app.post(&format!("/v1/threads/{th}/artifacts"), &ana, json!({"kind": "form",
            "data": {"title": "G", "schema": schema, "submissions": "many", "closed": false}})).await;
        assert_eq!(form.status, StatusCode::OK, "{:?}", form.body);
        let form_id = form.body["id"].as_str().unwrap();
        let tags: Vec<&String> = short.iter().cycle().take(64 * 150).collect();
        let started = std::time::Instant::now();
        let reply = app.post(&format!("/v1/threads/{th}/artifacts"), &ana,
            json!({"kind": "submission", "data": {"form_id": form_id, "form_version": 1, "values": {"tags": tags}, "nonce": "n2"}})).await;
        assert_eq!(error_type(&reply), "ValidationFailed", "{:.300}", reply.body.to_string());
        assert_eq!(reply.body["error"]["errors"][0]["message"], "\"c00\" is chosen twice");
        eprintln!("uniqueItems over 9600 items refused in {:?}", started.elapsed());
    }
}

lattice_testkit::both_backends! {
    async fn writes_are_rate_limited_per_caller_at_the_burst(backend: Backend) {
        // The guard's clock stands still until it is moved: the burst is
        // exactly what is taken, and a second earns exactly its writes.
        let clock = lattice_core::ManualClock::new();
        let app = App::on_clock(backend, clock.clone()).await;
        let ana = app.token("t1", "ana", TenantRole::Member, false).await;
        let bob = app.token("t1", "bob", TenantRole::Member, false).await;
        let (ws, th) = app.workspace_with_thread(&ana).await;
        app.post(&format!("/v1/workspaces/{ws}/members"), &ana, json!({"user": "bob", "role": "editor"})).await;
        // Three writes so far (workspace, thread, member); the burst is 100.
        let limits = lattice_api::guard::Limits::default();
        let (burst, rate) = (limits.write_burst as usize, limits.writes_per_sec as usize);
        let mut writes = 0;
        let messages = format!("/v1/threads/{th}/messages");
        let accepted_until_refused = async |writes: &mut usize| {
            let mut accepted = 0;
            loop {
                *writes += 1;
                let reply = app.post(&messages, &ana, json!({"text": format!("m{writes}")})).await;
                if reply.status != StatusCode::OK {
                    assert_eq!(error_type(&reply), "RateLimited", "{:?}", reply.body);
                    assert_eq!(reply.body["error"]["retry_after_secs"], 1, "{:?}", reply.body);
                    return accepted;
                }
                accepted += 1;
                assert!(accepted <= burst, "a runaway client is refused");
            }
        };
        assert_eq!(3 + accepted_until_refused(&mut writes).await, burst);
        // A second of the clock earns the rate's writes, and no more.
        clock.advance(std::time::Duration::from_secs(1));
        assert_eq!(accepted_until_refused(&mut writes).await, rate);
        // Reads go on, and another caller writes.
        assert_eq!(app.get(&format!("/v1/threads/{th}/artifacts"), &ana).await.status, StatusCode::OK);
        let other = app.post(&format!("/v1/threads/{th}/messages"), &bob, json!({"text": "bob's"})).await;
        assert_eq!(other.status, StatusCode::OK, "{:?}", other.body);
    }
}

#[tokio::test]
async fn a_rate_limited_answer_says_when_to_try_again() {
    let clock = lattice_core::ManualClock::new();
    let app = App::on_clock(lattice_log::Backend::Sqlite, clock.clone()).await;
    let ana = app.token("t1", "ana", TenantRole::Member, false).await;
    let (_, th) = app.workspace_with_thread(&ana).await;
    let req = |i: usize| {
        axum::http::Request::post(format!("/v1/threads/{th}/messages"))
            .header("authorization", format!("Bearer {ana}"))
            .header("content-type", "application/json")
            .body(axum::body::Body::from(json!({"text": format!("m{i}")}).to_string()))
            .unwrap()
    };
    use tower::ServiceExt;
    for i in 0.. {
        let res = app.router.clone().oneshot(req(i)).await.unwrap();
        if res.status() == StatusCode::TOO_MANY_REQUESTS {
            // A write is earned every 50 ms: the wait, in whole seconds, is one.
            assert_eq!(res.headers()["retry-after"], "1");
            clock.advance(std::time::Duration::from_millis(50));
            assert_eq!(app.router.clone().oneshot(req(i)).await.unwrap().status(), StatusCode::OK, "the wait said is enough");
            return;
        }
        assert!(i < 200, "never limited");
    }
}

#[tokio::test]
async fn a_caller_holds_a_bounded_number_of_live_streams() {
    let app = App::new(lattice_log::Backend::Sqlite).await;
    let ana = app.token("t1", "ana", TenantRole::Member, false).await;
    let bob = app.token("t1", "bob", TenantRole::Member, false).await;
    let (ws, th) = app.workspace_with_thread(&ana).await;
    app.post(&format!("/v1/workspaces/{ws}/members"), &ana, json!({"user": "bob", "role": "viewer"})).await;
    let open = |token: String| {
        let req = axum::http::Request::get(format!("/v1/threads/{th}/events"))
            .header("authorization", format!("Bearer {token}"))
            .body(axum::body::Body::empty())
            .unwrap();
        use tower::ServiceExt;
        app.router.clone().oneshot(req)
    };
    let limit = lattice_api::guard::Limits::default().streams_per_caller;
    let mut held = Vec::new();
    for _ in 0..limit {
        let res = open(ana.clone()).await.unwrap();
        assert_eq!(res.status(), StatusCode::OK);
        held.push(res);
    }
    let over = open(ana.clone()).await.unwrap();
    assert_eq!(over.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(over.headers().contains_key("retry-after"));
    assert_eq!(open(bob.clone()).await.unwrap().status(), StatusCode::OK, "another caller is not counted with ana");
    // Closing one frees its place.
    held.pop();
    assert_eq!(open(ana.clone()).await.unwrap().status(), StatusCode::OK);
}

//! The live stream resumes after a reconnect with nothing lost or repeated.

use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use lattice_core::TenantRole;
use serde_json::json;
use tower::ServiceExt;

use crate::App;

/// Opens the SSE stream and reads `count` events (a piece may hold more:
/// those are left unread, as by a client that drops the connection);
/// returns their ids.
async fn read_events(app: &App, path: &str, token: &str, last_event_id: Option<i64>, count: usize) -> Vec<(i64, String)> {
    let mut req = Request::builder().uri(path).header("authorization", format!("Bearer {token}"));
    if let Some(id) = last_event_id {
        req = req.header("last-event-id", id.to_string());
    }
    let res = app.router.clone().oneshot(req.body(Body::empty()).unwrap()).await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.headers()["content-type"], "text/event-stream");
    let mut body = res.into_body();
    let mut text = String::new();
    let mut events = Vec::new();
    while events.len() < count {
        let frame = tokio::time::timeout(Duration::from_secs(10), body.frame())
            .await
            .expect("the stream went quiet before delivering every event")
            .expect("the stream ended early")
            .unwrap();
        if let Ok(data) = frame.into_data() {
            text.push_str(&String::from_utf8_lossy(&data));
        }
        while let Some(end) = text.find("\n\n") {
            let block: String = text.drain(..end + 2).collect();
            let id = block.lines().find_map(|l| l.strip_prefix("id: ")).map(|s| s.parse::<i64>().unwrap());
            let data = block.lines().find_map(|l| l.strip_prefix("data: ")).map(str::to_owned);
            if let (Some(id), Some(data)) = (id, data)
                && events.len() < count
            {
                let envelope: serde_json::Value = serde_json::from_str(&data).unwrap();
                assert_eq!(envelope["seq"], id);
                events.push((id, envelope["payload"]["text"].as_str().unwrap_or("").to_owned()));
            }
        }
    }
    events
}

lattice_testkit::both_backends! {
    async fn a_reconnect_resumes_with_nothing_lost_or_repeated(backend: Backend) {
        let app = App::new(backend).await;
        let alice = app.token("t1", "alice", TenantRole::Member, false).await;
        let (_, th) = app.workspace_with_thread(&alice).await;
        let path = format!("/v1/threads/{th}/events");
        for i in 0..5 {
            app.post(&format!("/v1/threads/{th}/messages"), &alice, json!({"text": format!("before {i}")})).await;
        }
        // thread_created + 5 messages; take the first 4 then drop the connection.
        let first = read_events(&app, &path, &alice, None, 4).await;
        // While disconnected, more is written, concurrently.
        let mut writers = Vec::new();
        for w in 0..4 {
            let router = app.router.clone();
            let token = alice.clone();
            let th = th.clone();
            writers.push(tokio::spawn(async move {
                for i in 0..10 {
                    let body = json!({"text": format!("during {w}-{i}")}).to_string();
                    let req = Request::post(format!("/v1/threads/{th}/messages"))
                        .header("authorization", format!("Bearer {token}"))
                        .header("content-type", "application/json")
                        .body(Body::from(body))
                        .unwrap();
                    assert_eq!(router.clone().oneshot(req).await.unwrap().status(), StatusCode::OK);
                }
            }));
        }
        // Reconnect with Last-Event-ID while the writers are still going.
        let last = first.last().unwrap().0;
        let second = read_events(&app, &path, &alice, Some(last), 2 + 40).await;
        for w in writers {
            w.await.unwrap();
        }
        let all: Vec<i64> = first.iter().chain(second.iter()).map(|e| e.0).collect();
        let mut sorted = all.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(all, sorted, "events repeated or out of order");
        let page = app.get(&format!("{path}?format=json"), &alice).await;
        let expected: Vec<i64> = page.body["events"].as_array().unwrap().iter().map(|e| e["seq"].as_i64().unwrap()).collect();
        assert_eq!(all, expected, "the stream lost events across the reconnect");
        // `?after=` resumes the same way as Last-Event-ID.
        let from_query = read_events(&app, &format!("{path}?after={last}"), &alice, None, 2).await;
        assert_eq!(from_query[0].0, second[0].0);
    }
}

lattice_testkit::both_backends! {
    async fn what_a_stream_opens_with_comes_in_one_piece(backend: Backend) {
        let app = App::new(backend).await;
        let alice = app.token("t1", "alice", TenantRole::Member, false).await;
        let (_, th) = app.workspace_with_thread(&alice).await;
        for i in 0..30 {
            app.post(&format!("/v1/threads/{th}/messages"), &alice, json!({"text": format!("before {i}")})).await;
        }
        let req = Request::builder().uri(format!("/v1/threads/{th}/events")).header("authorization", format!("Bearer {alice}"));
        let res = app.router.clone().oneshot(req.body(Body::empty()).unwrap()).await.unwrap();
        assert_eq!(res.status(), StatusCode::OK);
        let mut body = res.into_body();
        let mut piece = async || {
            let frame = tokio::time::timeout(Duration::from_secs(5), body.frame()).await.expect("a piece within 5 s").expect("the stream is open").unwrap();
            String::from_utf8(frame.into_data().unwrap().to_vec()).unwrap()
        };
        // thread_created and the 30 messages, in one piece (not one a
        // piece, which the server would flush sixteen at a time).
        let backlog = piece().await;
        let ids: Vec<i64> = backlog.lines().filter_map(|l| l.strip_prefix("id: ")).map(|id| id.parse().unwrap()).collect();
        assert_eq!(ids.len(), 31, "{backlog}");
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        // What comes next is news, in a piece of its own.
        app.post(&format!("/v1/threads/{th}/messages"), &alice, json!({"text": "after"})).await;
        let news = piece().await;
        assert!(news.contains("event: message_posted") && news.contains(r#""text":"after""#), "{news}");
        assert_eq!(news.lines().filter(|l| l.starts_with("id: ")).count(), 1, "{news}");
    }
}

lattice_testkit::both_backends! {
    async fn a_backlog_larger_than_one_write_comes_in_writes_of_at_most_64_kib(backend: Backend) {
        use lattice_api::routes::events::WRITE_BYTES;
        let app = App::new(backend).await;
        let alice = app.token("t1", "alice", TenantRole::Member, false).await;
        let (_, th) = app.workspace_with_thread(&alice).await;
        let text = "x".repeat(4000);
        for _ in 0..40 {
            app.post(&format!("/v1/threads/{th}/messages"), &alice, json!({"text": text})).await;
        }
        let req = Request::builder().uri(format!("/v1/threads/{th}/events")).header("authorization", format!("Bearer {alice}"));
        let res = app.router.clone().oneshot(req.body(Body::empty()).unwrap()).await.unwrap();
        let mut body = res.into_body();
        let mut pieces = Vec::new();
        while pieces.iter().map(|p: &String| p.matches("\nid: ").count() + usize::from(p.starts_with("id: "))).sum::<usize>() < 41 {
            let frame = tokio::time::timeout(Duration::from_secs(5), body.frame()).await.expect("a piece within 5 s").expect("the stream is open").unwrap();
            pieces.push(String::from_utf8(frame.into_data().unwrap().to_vec()).unwrap());
        }
        // About 170 KB of events: written as soon as a piece reaches 64
        // KiB, each piece ending with whole events.
        assert!(pieces.len() >= 3, "{} pieces", pieces.len());
        let (last, full) = pieces.split_last().unwrap();
        for piece in full {
            assert!(piece.len() >= WRITE_BYTES && piece.len() < WRITE_BYTES + 5000, "a piece of {} bytes", piece.len());
            assert!(piece.ends_with("\n\n"));
        }
        assert!(last.len() < WRITE_BYTES + 5000);
    }
}

/// Reads the next SSE event's data, within `timeout`.
async fn next_data(body: &mut axum::body::Body, buffer: &mut String, timeout: Duration) -> Option<serde_json::Value> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            // The heartbeat says the stream is alive, not what changed.
            if block.lines().any(|l| l == "event: heartbeat") {
                continue;
            }
            if let Some(data) = block.lines().find_map(|l| l.strip_prefix("data: ")) {
                return Some(serde_json::from_str(data).unwrap());
            }
            continue;
        }
        let frame = tokio::time::timeout_at(deadline, body.frame()).await.ok()??.ok()?;
        if let Ok(data) = frame.into_data() {
            buffer.push_str(&String::from_utf8_lossy(&data));
        }
    }
}

lattice_testkit::both_backends! {
    async fn a_switch_flip_reaches_an_open_stream_within_a_second(backend: Backend) {
        let app = App::new(backend).await;
        let alice = app.token("t1", "alice", TenantRole::Member, false).await;
        let (ws, _) = app.workspace_with_thread(&alice).await;
        let req = Request::builder()
            .uri(format!("/v1/integrations/effective/stream?workspace={ws}"))
            .header("authorization", format!("Bearer {alice}"))
            .body(Body::empty())
            .unwrap();
        let res = app.router.clone().oneshot(req).await.unwrap();
        assert_eq!(res.status(), StatusCode::OK);
        let mut body = res.into_body();
        let mut buffer = String::new();
        let first = next_data(&mut body, &mut buffer, Duration::from_secs(5)).await.expect("the effective values at once");
        assert_eq!(first["ui:dashboards"]["enabled"], true);

        // A tenant admin turns dashboards off for the whole tenant.
        let admin = app.token("t1", "tina", TenantRole::TenantAdmin, false).await;
        let flipped_at = std::time::Instant::now();
        let r = app.send("PUT", "/v1/integrations/tenant:t1/ui:dashboards", Some(&admin),
            Some(&json!({"state": "off", "reason": "incident"}).to_string())).await;
        assert_eq!(r.status, StatusCode::OK);
        let next = next_data(&mut body, &mut buffer, Duration::from_secs(1)).await.expect("the flip within 1 s");
        let elapsed = flipped_at.elapsed();
        assert_eq!(next["ui:dashboards"]["enabled"], false);
        assert_eq!(next["ui:dashboards"]["because"], "ui:dashboards is off for the tenant");
        assert!(elapsed < Duration::from_secs(1), "{elapsed:?}");
        eprintln!("{backend:?}: switch flip reached the open stream in {elapsed:?}");
        // A change elsewhere (another tenant) sends nothing new: the next
        // event is the one a later change of this tenant's makes.
        let other = app.token("t2", "root", TenantRole::TenantAdmin, false).await;
        let r = app.send("PUT", "/v1/integrations/tenant:t2/ui:forms", Some(&other), Some(&json!({"state": "off", "reason": "x"}).to_string())).await;
        assert_eq!(r.status, StatusCode::OK);
        let r = app.send("PUT", "/v1/integrations/tenant:t1/ui:forms", Some(&admin), Some(&json!({"state": "off", "reason": "y"}).to_string())).await;
        assert_eq!(r.status, StatusCode::OK);
        let next = next_data(&mut body, &mut buffer, Duration::from_secs(5)).await.expect("this tenant's flip");
        assert_eq!((&next["ui:forms"]["enabled"], &next["ui:dashboards"]["enabled"]), (&json!(false), &json!(false)), "{next}");
    }
}

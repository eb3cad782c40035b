//! Bad input gets a typed 4xx, never a 500, and nothing is committed.

use axum::http::StatusCode;
use lattice_core::TenantRole;
use serde_json::json;

use crate::{App, error_type};

lattice_testkit::both_backends! {
    async fn bad_input_is_refused_with_a_typed_error_and_writes_nothing(backend: Backend) {
        let app = App::new(backend).await;
        let alice = app.token("t1", "alice", TenantRole::Member, false).await;
        let (ws, th) = app.workspace_with_thread(&alice).await;
        let before = app.event_count(&alice, &ws).await;
        let msg = format!("/v1/threads/{th}/messages");
        let art = format!("/v1/threads/{th}/artifacts");
        let cases: Vec<(&str, String, Option<String>, StatusCode, &str)> = vec![
            ("POST", msg.clone(), Some("{\"text\": ".into()), StatusCode::BAD_REQUEST, "Malformed"),
            ("POST", msg.clone(), Some("not json".into()), StatusCode::BAD_REQUEST, "Malformed"),
            ("POST", msg.clone(), Some("{} {}".into()), StatusCode::BAD_REQUEST, "Malformed"),
            ("POST", msg.clone(), None, StatusCode::BAD_REQUEST, "Malformed"),
            ("POST", msg.clone(), Some("{\"text\": 5}".into()), StatusCode::UNPROCESSABLE_ENTITY, "ValidationFailed"),
            ("POST", msg.clone(), Some("{\"text\": \"x\", \"extra\": 1}".into()), StatusCode::UNPROCESSABLE_ENTITY, "ValidationFailed"),
            ("POST", msg.clone(), Some("{\"text\": \"   \"}".into()), StatusCode::UNPROCESSABLE_ENTITY, "ValidationFailed"),
            ("POST", msg.clone(), Some(json!({"text": "x".repeat(16 * 1024 + 1)}).to_string()), StatusCode::UNPROCESSABLE_ENTITY, "ValidationFailed"),
            ("POST", msg.clone(), Some(json!({"text": "x".repeat(1024 * 1024)}).to_string()), StatusCode::PAYLOAD_TOO_LARGE, "TooLarge"),
            ("POST", art.clone(), Some(json!({"kind": "spreadsheet", "data": {}}).to_string()), StatusCode::UNPROCESSABLE_ENTITY, "ValidationFailed"),
            ("POST", art.clone(), Some(json!({"kind": "dashboard", "data": {"title": 1}}).to_string()), StatusCode::UNPROCESSABLE_ENTITY, "ValidationFailed"),
            ("POST", art.clone(), Some(json!({"id": "has space", "kind": "dashboard", "data": {}}).to_string()), StatusCode::UNPROCESSABLE_ENTITY, "ValidationFailed"),
            ("POST", art.clone(), Some(json!({"kind": "dashboard", "data": {"title": "t", "as_of": "2026-11-29T12:00:00Z",
                "panels": [{"type": "text", "markdown": "x".repeat(256 * 1024)}]}}).to_string()), StatusCode::PAYLOAD_TOO_LARGE, "TooLarge"),
            ("PATCH", "/v1/artifacts/nope".to_owned(), Some(json!({"expected_version": 1, "patch": []}).to_string()), StatusCode::NOT_FOUND, "NotFound"),
            ("PATCH", "/v1/artifacts/nope".to_owned(), Some(json!({"expected_version": -1, "patch": []}).to_string()), StatusCode::UNPROCESSABLE_ENTITY, "ValidationFailed"),
            ("GET", "/v1/artifacts/..%2F..".to_owned(), None, StatusCode::NOT_FOUND, "NotFound"),
            ("GET", "/v1/nothing-here".to_owned(), None, StatusCode::NOT_FOUND, "NotFound"),
            ("GET", format!("/v1/threads/{th}/events?after=abc&format=json"), None, StatusCode::BAD_REQUEST, "Malformed"),
            ("GET", format!("/v1/threads/{th}/events?format=xml"), None, StatusCode::UNPROCESSABLE_ENTITY, "ValidationFailed"),
            ("PUT", format!("/v1/integrations/workspace:{ws}/ui:forms"), Some(json!({"state": "maybe", "reason": "r"}).to_string()),
                StatusCode::UNPROCESSABLE_ENTITY, "ValidationFailed"),
            ("PUT", "/v1/integrations/galaxy/ui:forms".to_string(), Some(json!({"state": "on", "reason": "r"}).to_string()),
                StatusCode::NOT_FOUND, "NotFound"),
            ("POST", format!("/v1/workspaces/{ws}/members"), Some(json!({"user": "bob", "role": "owner"}).to_string()),
                StatusCode::UNPROCESSABLE_ENTITY, "ValidationFailed"),
        ];
        for (method, path, body, status, kind) in cases {
            let reply = app.send(method, &path, Some(&alice), body.as_deref()).await;
            assert_eq!((reply.status, error_type(&reply)), (status, kind), "{method} {path} {:?}", body.map(|b| b.chars().take(80).collect::<String>()));
        }
        // A field error names its field.
        let typed = app.send("POST", &msg, Some(&alice), Some("{\"text\": 5}")).await;
        assert_eq!(typed.body["error"]["errors"][0]["path"], "text");
        let unknown = app.post(&art, &alice, json!({"kind": "spreadsheet", "data": {}})).await;
        assert_eq!(unknown.body["error"]["errors"][0]["path"], "kind");

        // No token, a bad token, a wrong scheme: 401.
        for header in [None, Some("nonsense"), Some("eyJhbGciOiJIUzI1NiJ9.e30.x")] {
            let reply = app.send("GET", "/v1/workspaces", header, None).await;
            assert_eq!((reply.status, error_type(&reply)), (StatusCode::UNAUTHORIZED, "Unauthorized"));
        }
        let forged = lattice_log::Authenticator::new(&[9u8; 32], std::time::Duration::from_secs(60)).unwrap()
            .mint(&lattice_testkit::principal("t1", "alice", TenantRole::Member, false));
        assert_eq!(app.get("/v1/workspaces", &forged).await.status, StatusCode::UNAUTHORIZED);

        assert_eq!(app.event_count(&alice, &ws).await, before, "a refused request wrote to the log");
    }
}

//! Taking access away over HTTP (docs/ACCESS.md): the routes, who may call
//! them, and what the person taken out answers afterwards.

use axum::http::StatusCode;
use lattice_core::TenantRole;
use serde_json::json;

use crate::{App, error_type};

lattice_testkit::both_backends! {
    async fn members_and_listings_are_taken_away_by_admins_alone(backend: Backend) {
        let app = App::new(backend).await;
        let alice = app.token("t1", "alice", TenantRole::Member, false).await;
        let bob = app.token("t1", "bob", TenantRole::Member, false).await;
        let (ws, th) = app.workspace_with_thread(&alice).await;
        for path in ["/v1/workspaces/{ws}/members/{user}", "/v1/threads/{th}/members/{user}", "/v1/people/{user}/sign-out"] {
            let openapi = app.send("GET", "/openapi.json", None, None).await;
            assert!(openapi.body["paths"].get(path).is_some(), "OpenAPI lacks {path}");
        }
        app.post(&format!("/v1/workspaces/{ws}/members"), &alice, json!({"user": "bob", "role": "editor"})).await;
        let restricted = app.post(&format!("/v1/workspaces/{ws}/threads"), &alice, json!({"title": "Pay", "restricted": true})).await;
        let secret = restricted.body["id"].as_str().unwrap().to_owned();
        app.post(&format!("/v1/threads/{secret}/members"), &alice, json!({"user": "bob", "role": "viewer"})).await;
        assert_eq!(app.get(&format!("/v1/threads/{secret}"), &bob).await.status, StatusCode::OK);
        let listed = app.get(&format!("/v1/threads/{secret}/members"), &alice).await;
        assert_eq!(listed.body, json!([{"user": "alice", "role": "editor"}, {"user": "bob", "role": "viewer"}]));
        let members = app.get(&format!("/v1/workspaces/{ws}/members"), &alice).await;
        assert_eq!(members.body, json!([{"user": "alice", "role": "admin"}, {"user": "bob", "role": "editor"}]));
        // An editor lists nobody and removes nobody.
        assert_eq!(app.get(&format!("/v1/workspaces/{ws}/members"), &bob).await.status, StatusCode::FORBIDDEN);
        let by_bob = app.send("DELETE", &format!("/v1/workspaces/{ws}/members/alice"), Some(&bob), None).await;
        assert_eq!((by_bob.status, error_type(&by_bob)), (StatusCode::FORBIDDEN, "Forbidden"));

        // Unlisted from the restricted thread: it is as missing to him.
        let off = app.send("DELETE", &format!("/v1/threads/{secret}/members/bob"), Some(&alice), None).await;
        assert_eq!(off.status, StatusCode::OK, "{:?}", off.body);
        assert_eq!(app.get(&format!("/v1/threads/{secret}"), &bob).await.status, StatusCode::NOT_FOUND);
        let twice = app.send("DELETE", &format!("/v1/threads/{secret}/members/bob"), Some(&alice), None).await;
        assert_eq!((twice.status, error_type(&twice)), (StatusCode::UNPROCESSABLE_ENTITY, "ValidationFailed"));

        // Removed from the workspace: every read of it is as for a missing id.
        let removed = app.send("DELETE", &format!("/v1/workspaces/{ws}/members/bob"), Some(&alice), None).await;
        assert_eq!(removed.status, StatusCode::OK, "{:?}", removed.body);
        assert!(removed.body["seq"].as_i64().unwrap() > 0);
        for path in [format!("/v1/threads/{th}"), format!("/v1/workspaces/{ws}/threads"), format!("/v1/threads/{th}/events?format=json")] {
            let r = app.get(&path, &bob).await;
            assert_eq!(r.status, StatusCode::NOT_FOUND, "{path}: {:?}", r.body);
        }
        assert_eq!(app.get("/v1/workspaces", &bob).await.body, json!([]));
        let bad = app.send("DELETE", &format!("/v1/workspaces/{ws}/members/no%20one"), Some(&alice), None).await;
        assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "{:?}", bad.body);
    }
}

lattice_testkit::both_backends! {
    async fn a_sign_out_ends_the_tokens_issued_before_it(backend: Backend) {
        // Tokens, sign-outs and tokens again a few ms apart, on a clock the test moves.
        let clock = lattice_core::ManualClock::new();
        let app = App::on_logged_clock(backend, clock.clone()).await;
        let alice = app.token("t1", "alice", TenantRole::Member, false).await;
        let bob = app.token("t1", "bob", TenantRole::Member, false).await;
        let root = app.token("t1", "root", TenantRole::TenantAdmin, false).await;
        // Only a tenant admin signs someone else out.
        let refused = app.post("/v1/people/alice/sign-out", &bob, json!(null)).await;
        assert_eq!((refused.status, error_type(&refused)), (StatusCode::FORBIDDEN, "Forbidden"));
        assert_eq!(app.get("/v1/workspaces", &alice).await.status, StatusCode::OK);
        clock.advance(std::time::Duration::from_millis(2));
        let done = app.send("POST", "/v1/people/alice/sign-out", Some(&root), None).await;
        assert_eq!(done.status, StatusCode::OK, "{:?}", done.body);
        let after = app.get("/v1/workspaces", &alice).await;
        assert_eq!((after.status, error_type(&after)), (StatusCode::UNAUTHORIZED, "Unauthorized"));
        assert!(after.body["error"]["reason"].as_str().unwrap().contains("sign-out"), "{:?}", after.body);
        // Bob's token stands; so does the one Alice gets next.
        assert_eq!(app.get("/v1/workspaces", &bob).await.status, StatusCode::OK);
        clock.advance(std::time::Duration::from_millis(2));
        let again = app.token("t1", "alice", TenantRole::Member, false).await;
        assert_eq!(app.get("/v1/workspaces", &again).await.status, StatusCode::OK);
        // Bob signs himself out.
        assert_eq!(app.send("POST", "/v1/people/bob/sign-out", Some(&bob), None).await.status, StatusCode::OK);
        assert_eq!(app.get("/v1/workspaces", &bob).await.status, StatusCode::UNAUTHORIZED);
    }
}

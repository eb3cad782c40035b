//! A workspace keeps an admin: its last one cannot leave, be removed or be
//! given another role (409, naming the rule), and two admins taking each
//! other's role at once leave one.

use axum::http::StatusCode;
use lattice_core::TenantRole;
use serde_json::json;

use crate::App;

lattice_testkit::both_backends! {
    async fn the_last_admin_of_a_workspace_cannot_leave_or_be_demoted(backend: Backend) {
        let app = App::new(backend).await;
        let ana = app.token("t1", "ana", TenantRole::Member, false).await;
        let bob = app.token("t1", "bob", TenantRole::Member, false).await;
        let root = app.token("t1", "root", TenantRole::TenantAdmin, false).await;
        let (ws, _) = app.workspace_with_thread(&ana).await;
        let members = format!("/v1/workspaces/{ws}/members");
        let last = |reply: &crate::Reply| {
            assert_eq!(reply.status, StatusCode::CONFLICT, "{}", reply.body);
            assert_eq!(reply.body["error"]["type"], "InvalidState", "{}", reply.body);
            assert!(reply.body["error"]["reason"].as_str().unwrap().contains("keeps at least one admin"), "{}", reply.body);
        };
        // Alone: not by themselves, not by a tenant admin.
        last(&app.post(&members, &ana, json!({"user": "ana", "role": "editor"})).await);
        last(&app.send("DELETE", &format!("{members}/ana"), Some(&ana), None).await);
        last(&app.send("DELETE", &format!("{members}/ana"), Some(&root), None).await);
        last(&app.post(&members, &root, json!({"user": "ana", "role": "viewer"})).await);
        // Nothing was written: ana is still its admin.
        let listed = app.get(&members, &ana).await.body;
        assert!(listed.as_array().unwrap().iter().any(|m| m["user"] == "ana" && m["role"] == "admin"), "{listed}");

        // With a second admin, either may go; then the other is the last.
        assert_eq!(app.post(&members, &ana, json!({"user": "bob", "role": "admin"})).await.status, StatusCode::OK);
        assert_eq!(app.post(&members, &ana, json!({"user": "ana", "role": "editor"})).await.status, StatusCode::OK);
        last(&app.send("DELETE", &format!("{members}/bob"), Some(&bob), None).await);

        // Two admins demoting each other at once: one wins, one admin stays.
        assert_eq!(app.post(&members, &bob, json!({"user": "ana", "role": "admin"})).await.status, StatusCode::OK);
        let (a, b) = tokio::join!(
            app.post(&members, &ana, json!({"user": "bob", "role": "viewer"})),
            app.post(&members, &bob, json!({"user": "ana", "role": "viewer"})),
        );
        // The loser is refused as the last admin (409), or, decided after
        // the winner's change, as no admin at all (403).
        let mut statuses = [a.status, b.status];
        statuses.sort();
        assert_eq!(statuses[0], StatusCode::OK, "{} {}", a.body, b.body);
        assert!([StatusCode::FORBIDDEN, StatusCode::CONFLICT].contains(&statuses[1]), "{} {}", a.body, b.body);
        let admins = app.get(&members, &root).await.body.as_array().unwrap().iter().filter(|m| m["role"] == "admin").count();
        assert_eq!(admins, 1);
    }
}

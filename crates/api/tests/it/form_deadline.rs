//! A form's deadline (`closes_at`) is its author's, like its schema and
//! `closed`: another editor can neither move it into the past (refusing
//! every answer, the form reported expired) nor remove it nor add one;
//! the author and a workspace admin can.

use axum::http::StatusCode;
use lattice_core::TenantRole;
use serde_json::{Value, json};

use crate::{App, error_type};

const LATER: &str = "2099-01-01T00:00:00Z";
const PAST: &str = "2001-01-01T00:00:00Z";

async fn patch(app: &App, token: &str, form: &str, ops: Value) -> crate::Reply {
    let version = app.get(&format!("/v1/artifacts/{form}"), token).await.body["version"].as_u64().unwrap();
    let body = json!({"expected_version": version, "patch": ops});
    app.send("PATCH", &format!("/v1/artifacts/{form}"), Some(token), Some(&body.to_string())).await
}

async fn submit(app: &App, token: &str, th: &str, form: &str) -> crate::Reply {
    let version = app.get(&format!("/v1/artifacts/{form}"), token).await.body["version"].as_u64().unwrap();
    app.post(
        &format!("/v1/threads/{th}/artifacts"),
        token,
        json!({"kind": "submission", "data": {"form_id": form, "form_version": version, "values": {"ok": true}, "nonce": format!("n-{}", ulid())}}),
    )
    .await
}

fn ulid() -> String {
    lattice_core::ArtifactId::generate().as_str().trim_start_matches("art_").to_owned()
}

lattice_testkit::both_backends! {
    async fn a_forms_deadline_is_its_authors(backend: Backend) {
        let app = App::new(backend).await;
        let ana = app.token("t1", "ana", TenantRole::Member, false).await;
        let (ws, th) = app.workspace_with_thread(&ana).await;
        for user in ["bob", "carl"] {
            app.post(&format!("/v1/workspaces/{ws}/members"), &ana, json!({"user": user, "role": "editor"})).await;
        }
        let (bob, carl) = (app.token("t1", "bob", TenantRole::Member, false).await, app.token("t1", "carl", TenantRole::Member, false).await);
        let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}});
        let mut forms = Vec::new();
        for closes_at in [Some(LATER), None] {
            let mut data = json!({"title": "F", "schema": schema, "submissions": "many"});
            if let Some(at) = closes_at {
                data["closes_at"] = json!(at);
            }
            let made = app.post(&format!("/v1/threads/{th}/artifacts"), &bob, json!({"kind": "form", "data": data})).await;
            assert_eq!(made.status, StatusCode::OK, "{:?}", made.body);
            forms.push(made.body["id"].as_str().unwrap().to_owned());
        }
        let (dated, open) = (&forms[0], &forms[1]);

        // Another editor moves it into the past, removes it, or dates a form
        // that had none: each refused, and nothing changes.
        for (form, ops) in [
            (dated, json!([{"op": "replace", "path": "/closes_at", "value": PAST}])),
            (dated, json!([{"op": "remove", "path": "/closes_at"}])),
            (open, json!([{"op": "add", "path": "/closes_at", "value": PAST}])),
        ] {
            let moved = patch(&app, &carl, form, ops.clone()).await;
            assert_eq!((moved.status, error_type(&moved)), (StatusCode::FORBIDDEN, "Forbidden"), "{ops}: {:?}", moved.body);
            assert!(moved.body.to_string().contains("deadline"), "{:?}", moved.body);
        }
        assert_eq!(app.get(&format!("/v1/artifacts/{dated}"), &ana).await.body["data"]["closes_at"], LATER);
        assert_eq!(app.get(&format!("/v1/artifacts/{open}"), &ana).await.body["data"].get("closes_at"), None);
        // What is not the author's to keep, the editor still changes.
        let retitled = patch(&app, &carl, dated, json!([{"op": "replace", "path": "/title", "value": "G"}])).await;
        assert_eq!(retitled.status, StatusCode::OK, "{:?}", retitled.body);
        // The form still takes answers.
        let sent = submit(&app, &carl, &th, dated).await;
        assert_eq!(sent.status, StatusCode::OK, "{:?}", sent.body);

        // Its author moves it; a workspace admin does too.
        let moved = patch(&app, &bob, dated, json!([{"op": "replace", "path": "/closes_at", "value": PAST}])).await;
        assert_eq!(moved.status, StatusCode::OK, "{:?}", moved.body);
        let late = submit(&app, &carl, &th, dated).await;
        assert_eq!((late.status, error_type(&late)), (StatusCode::CONFLICT, "InvalidState"), "{:?}", late.body);
        let dated_by_admin = patch(&app, &ana, open, json!([{"op": "add", "path": "/closes_at", "value": LATER}])).await;
        assert_eq!(dated_by_admin.status, StatusCode::OK, "{:?}", dated_by_admin.body);
    }
}

//! Every CONTRACT surface of the foundation, with its status codes.

use axum::http::StatusCode;
use lattice_core::TenantRole;
use serde_json::json;

use crate::{App, error_type};

lattice_testkit::both_backends! {
    async fn the_contract_surfaces_answer_as_documented(backend: Backend) {
        let app = App::new(backend).await;
        assert_eq!(app.send("GET", "/healthz", None, None).await.status, StatusCode::OK);
        assert_eq!(app.send("GET", "/readyz", None, None).await.status, StatusCode::OK);
        let openapi = app.send("GET", "/openapi.json", None, None).await;
        assert_eq!(openapi.status, StatusCode::OK);
        for path in ["/v1/workspaces", "/v1/threads/{th}/artifacts", "/v1/artifacts/{id}", "/v1/integrations/{level}/{key}", "/v1/threads/{th}/events"] {
            assert!(openapi.body["paths"].get(path).is_some(), "OpenAPI lacks {path}");
        }

        let alice = app.token("t1", "alice", TenantRole::Member, false).await;
        let (ws, th) = app.workspace_with_thread(&alice).await;
        let list = app.get("/v1/workspaces", &alice).await;
        assert_eq!(list.body, json!([{"id": ws, "name": "W", "role": "admin"}]));
        let me = app.get("/v1/me", &alice).await;
        assert_eq!(me.body["user"], "alice");

        let bob = app.token("t1", "bob", TenantRole::Member, false).await;
        let added = app.post(&format!("/v1/workspaces/{ws}/members"), &alice, json!({"user": "bob", "role": "editor"})).await;
        assert_eq!(added.status, StatusCode::OK, "{:?}", added.body);
        let msg = app.post(&format!("/v1/threads/{th}/messages"), &bob, json!({"text": "hello"})).await;
        assert_eq!(msg.status, StatusCode::OK);
        assert!(msg.body["seq"].as_i64().unwrap() > 0);

        let dash = json!({"title": "D", "as_of": "2026-11-29T00:00:00Z", "panels": [{"type": "text", "markdown": "hi"}]});
        let created = app.post(&format!("/v1/threads/{th}/artifacts"), &alice, json!({"id": "board", "kind": "dashboard", "data": dash})).await;
        assert_eq!(created.status, StatusCode::OK, "{:?}", created.body);
        assert_eq!(created.body["id"], "board");
        assert_eq!(created.body["version"], 1);
        assert!(created.body["digest"].as_str().unwrap().starts_with("sha256:"));
        let again = app.post(&format!("/v1/threads/{th}/artifacts"), &alice, json!({"id": "board", "kind": "dashboard", "data": dash})).await;
        assert_eq!((again.status, error_type(&again)), (StatusCode::CONFLICT, "Conflict"));

        let patch = json!({"expected_version": 1, "patch": [{"op": "replace", "path": "/title", "value": "D2"}]});
        let edited = app.send("PATCH", "/v1/artifacts/board", Some(&alice), Some(&patch.to_string())).await;
        assert_eq!((edited.status, edited.body["version"].clone()), (StatusCode::OK, json!(2)));
        let stale = app.send("PATCH", "/v1/artifacts/board", Some(&alice), Some(&patch.to_string())).await;
        assert_eq!(stale.status, StatusCode::CONFLICT);
        assert_eq!((stale.body["error"]["expected"].clone(), stale.body["error"]["actual"].clone()), (json!(1), json!(2)));

        let v1 = app.get("/v1/artifacts/board?version=1", &alice).await;
        assert_eq!(v1.body["data"]["title"], "D");
        assert_eq!(v1.body["digest"], created.body["digest"]);
        let head = app.get("/v1/artifacts/board", &alice).await;
        assert_eq!((head.body["version"].clone(), head.body["data"]["title"].clone()), (json!(2), json!("D2")));
        assert_eq!(head.body["author"], "alice");
        assert_eq!(app.get("/v1/artifacts/board?version=9", &alice).await.status, StatusCode::NOT_FOUND);

        let listed = app.get(&format!("/v1/threads/{th}/artifacts?kind=dashboard"), &alice).await;
        assert_eq!(listed.body.as_array().unwrap().len(), 1);
        let none = app.get(&format!("/v1/threads/{th}/artifacts?kind=form"), &alice).await;
        assert_eq!(none.body, json!([]));

        // bob is not its author nor an admin: he may not archive it.
        let refused = app.post("/v1/artifacts/board/archive", &bob, json!({})).await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN);
        let archived = app.send("POST", "/v1/artifacts/board/archive", Some(&alice), None).await;
        assert_eq!(archived.status, StatusCode::OK, "{:?}", archived.body);
        assert_eq!(app.get("/v1/artifacts/board", &alice).await.body["archived"], true);
        let late = app.send("PATCH", "/v1/artifacts/board", Some(&alice), Some(&json!({"expected_version": 2, "patch": []}).to_string())).await;
        assert_eq!((late.status, error_type(&late)), (StatusCode::CONFLICT, "InvalidState"));

        let events = app.get(&format!("/v1/threads/{th}/events?format=json"), &alice).await;
        let types: Vec<&str> = events.body["events"].as_array().unwrap().iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(types, ["thread_created", "message_posted", "artifact_created", "artifact_changed", "artifact_archived"]);
        let after = events.body["events"][1]["seq"].as_i64().unwrap();
        let rest = app.get(&format!("/v1/threads/{th}/events?format=json&after={after}"), &alice).await;
        assert_eq!(rest.body["events"].as_array().unwrap().len(), 3);

        let effective = app.get(&format!("/v1/integrations/effective?workspace={ws}"), &alice).await;
        assert_eq!(effective.body["ui:mini-apps"]["enabled"], false);
        assert_eq!(effective.body["ui:forms"]["enabled"], true);
        let off = app.send("PUT", &format!("/v1/integrations/workspace:{ws}/ui:dashboards"), Some(&alice),
            Some(&json!({"state": "off", "reason": "quiet week"}).to_string())).await;
        assert_eq!(off.status, StatusCode::OK, "{:?}", off.body);
        let blocked = app.post(&format!("/v1/threads/{th}/artifacts"), &alice, json!({"kind": "dashboard", "data": dash})).await;
        assert_eq!((blocked.status, blocked.body["error"]["key"].clone()), (StatusCode::LOCKED, json!("ui:dashboards")));
        let audit = app.get(&format!("/v1/integrations/audit?workspace={ws}"), &alice).await;
        assert_eq!(audit.status, StatusCode::OK);
        let row = &audit.body[0];
        assert_eq!((row["actor"].clone(), row["old"].clone(), row["new"].clone(), row["reason"].clone()),
            (json!("alice"), json!("unset"), json!("off"), json!("quiet week")));
        let ops = app.token("t1", "olga", TenantRole::DeploymentAdmin, false).await;
        let opt_in = app.send("PUT", "/v1/integrations/deployment/ui:mini-apps", Some(&ops),
            Some(&json!({"state": "on", "reason": "pilot"}).to_string())).await;
        assert_eq!(opt_in.status, StatusCode::OK);
        let by_member = app.send("PUT", "/v1/integrations/deployment/ui:mini-apps", Some(&alice),
            Some(&json!({"state": "off", "reason": "x"}).to_string())).await;
        assert_eq!(by_member.status, StatusCode::FORBIDDEN);
        let effective = app.get(&format!("/v1/integrations/effective?workspace={ws}"), &alice).await;
        assert_eq!(effective.body["ui:mini-apps"]["enabled"], true);
    }
}

lattice_testkit::both_backends! {
    async fn dev_sign_in_is_absent_in_production(backend: Backend) {
        let app = App::with(backend, false).await;
        let reply = app.send("POST", "/v1/dev/token", None, Some(r#"{"tenant":"t1","user":"alice"}"#)).await;
        assert_eq!((reply.status, error_type(&reply)), (axum::http::StatusCode::NOT_FOUND, "NotFound"));
    }
}

lattice_testkit::both_backends! {
    async fn a_request_traceparent_is_kept_with_its_envelope(backend: Backend) {
        use tower::ServiceExt;
        let app = App::new(backend).await;
        let alice = app.token("t1", "alice", TenantRole::Member, false).await;
        let (_, th) = app.workspace_with_thread(&alice).await;
        let traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        let req = axum::http::Request::post(format!("/v1/threads/{th}/messages"))
            .header("authorization", format!("Bearer {alice}"))
            .header("content-type", "application/json")
            .header("traceparent", traceparent)
            .body(axum::body::Body::from(r#"{"text":"traced"}"#))
            .unwrap();
        assert_eq!(app.router.clone().oneshot(req).await.unwrap().status(), StatusCode::OK);
        let events = app.get(&format!("/v1/threads/{th}/events?format=json"), &alice).await;
        let last = events.body["events"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(last["payload"]["text"], "traced");
        assert_eq!(last["traceparent"], traceparent);
    }
}

lattice_testkit::both_backends! {
    async fn application_events_stay_out_of_lattices_namespaces(backend: Backend) {
        let app = App::new(backend).await;
        let alice = app.token("t1", "alice", TenantRole::Member, false).await;
        let (ws, _) = app.workspace_with_thread(&alice).await;
        let path = format!("/v1/workspaces/{ws}/events");
        for namespace in ["ui", "log"] {
            let r = app.post(&path, &alice, json!({"namespace": namespace, "name": "form_submitted", "data": {}})).await;
            assert_eq!((r.status, error_type(&r)), (StatusCode::FORBIDDEN, "Forbidden"), "{namespace}");
        }
        let bad = app.post(&path, &alice, json!({"namespace": "Billing.x", "name": "paid", "data": {}})).await;
        assert_eq!((bad.status, bad.body["error"]["errors"][0]["path"].clone()), (StatusCode::UNPROCESSABLE_ENTITY, json!("namespace")));
        let big = app.post(&path, &alice, json!({"namespace": "billing", "name": "paid", "data": {"x": "y".repeat(64 * 1024)}})).await;
        assert_eq!(big.status, StatusCode::PAYLOAD_TOO_LARGE);
        let ok = app.post(&path, &alice, json!({"namespace": "billing", "name": "invoice_paid", "data": {"amount": 12}})).await;
        assert_eq!(ok.status, StatusCode::OK, "{}", ok.body);
        let events = app.get(&format!("{path}?format=json"), &alice).await;
        let last = events.body["events"].as_array().unwrap().last().unwrap().clone();
        assert_eq!((last["type"].clone(), last["payload"]["name"].clone()), (json!("app_event"), json!("invoice_paid")));
    }
}

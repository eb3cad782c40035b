//! An app's tool calls over HTTP, as lattice's chat host makes them: the
//! server decides, records each decision with the call's effect, and asks
//! the person when the policy says so, with a confirmation bound to the
//! exact arguments and usable once. Each call carries the capability the
//! chat host is given for the app it shows.

use axum::http::StatusCode;
use lattice_core::TenantRole;
use lattice_ui::app_policy::{GET_STATE, SET_STATE, SUBMIT};
use serde_json::{Value, json};

use crate::{App, error_type};

struct Scene {
    app: App,
    ana: String,
    bob: String,
    ws: String,
    th: String,
    id: String,
    /// Each caller's capability for the app: (token, capability).
    capabilities: Vec<(String, String)>,
}

/// ana's workspace with bob as an editor, mini apps on, and an app an
/// agent made.
async fn scene(backend: lattice_log::Backend) -> Scene {
    let app = App::new(backend).await;
    let root = app.token("ops", "root", TenantRole::DeploymentAdmin, false).await;
    let ana = app.token("t1", "ana", TenantRole::Member, false).await;
    let bob = app.token("t1", "bob", TenantRole::Member, false).await;
    let bot = app.token("t1", "bot", TenantRole::Member, true).await;
    let (ws, th) = app.workspace_with_thread(&ana).await;
    for (user, role) in [("bob", "editor"), ("bot", "editor")] {
        app.post(&format!("/v1/workspaces/{ws}/members"), &ana, json!({"user": user, "role": role})).await;
    }
    let on = app.send("PUT", "/v1/integrations/deployment/ui:mini-apps", Some(&root), Some(&json!({"state": "on", "reason": "t"}).to_string())).await;
    assert_eq!(on.status, StatusCode::OK);
    let made = app
        .post(
            &format!("/v1/threads/{th}/artifacts"),
            &bot,
            json!({"kind": "app", "data": {"title": "Counter", "summary": "s", "html": "<p>c</p>", "state": {"count": 1}}}),
        )
        .await;
    assert_eq!(made.status, StatusCode::OK, "{:?}", made.body);
    let id = made.body["id"].as_str().unwrap().to_owned();
    let mut capabilities = Vec::new();
    for token in [&ana, &bob] {
        let given = app.send("POST", &format!("/v1/artifacts/{id}/capability"), Some(token), None).await;
        assert_eq!(given.status, StatusCode::OK, "{:?}", given.body);
        capabilities.push((token.clone(), given.body["capability"].as_str().unwrap().to_owned()));
    }
    Scene { app, ana, bob, ws, th, id, capabilities }
}

impl Scene {
    async fn call(&self, token: &str, tool: &str, arguments: Value) -> crate::Reply {
        let capability = self.capabilities.iter().find(|(t, _)| t == token).map(|(_, c)| c.clone());
        self.app
            .post(&format!("/v1/artifacts/{}/calls", self.id), token, json!({"tool": tool, "arguments": arguments, "capability": capability}))
            .await
    }

    async fn confirm(&self, token: &str, confirmation: &str, accept: bool) -> crate::Reply {
        self.app.post(&format!("/v1/app-calls/{confirmation}"), token, json!({"accept": accept})).await
    }

    /// The app's audit rows, oldest first: (actor, tool, decision).
    async fn audit(&self) -> Vec<(String, String, String)> {
        self.app.call_rows(&self.id, &self.ana).await
    }

    async fn submissions(&self) -> Vec<Value> {
        let list = self.app.get(&format!("/v1/threads/{}/artifacts?kind=submission&form_id={}", self.th, self.id), &self.ana).await;
        list.body.as_array().cloned().unwrap_or_default()
    }
}

fn row(actor: &str, tool: &str, decision: &str) -> (String, String, String) {
    (actor.into(), tool.into(), decision.into())
}

lattice_testkit::both_backends! {
    async fn allowed_calls_are_done_and_audited_with_their_effect(backend: Backend) {
        let s = scene(backend).await;
        let got = s.call(&s.ana, GET_STATE, json!({})).await;
        assert_eq!((got.status, got.body["status"].as_str()), (StatusCode::OK, Some("done")), "{:?}", got.body);
        assert_eq!(got.body["result"], json!({"state": {"count": 1}}));
        let set = s.call(&s.ana, SET_STATE, json!({"patch": [{"op": "replace", "path": "/count", "value": 2}]})).await;
        assert_eq!(set.body["status"], "done", "{:?}", set.body);
        assert_eq!(set.body["result"]["version"], 2);
        let head = s.app.get(&format!("/v1/artifacts/{}", s.id), &s.ana).await;
        assert_eq!(head.body["data"]["state"]["count"], 2);
        // A patch outside the state is refused before anything is written.
        let outside = s.call(&s.ana, SET_STATE, json!({"patch": [{"op": "replace", "path": "html", "value": "x"}]})).await;
        assert_eq!(error_type(&outside), "ValidationFailed", "{:?}", outside.body);
        let unknown = s.call(&s.ana, "delete_everything", json!({})).await;
        assert_eq!(error_type(&unknown), "ValidationFailed");
        // Each refusal is a row too.
        assert_eq!(s.audit().await, vec![
            row("ana", GET_STATE, "allow"), row("ana", SET_STATE, "allow"),
            row("ana", SET_STATE, "invalid_arguments"), row("ana", "delete_everything", "not_offered"),
        ]);
        // The row and the change are one transaction: the change's envelope
        // comes right after its row in the log.
        let events = s.app.get(&format!("/v1/threads/{}/events?format=json", s.th), &s.ana).await;
        let types: Vec<&str> = events.body["events"].as_array().unwrap().iter().map(|e| e["type"].as_str().unwrap()).collect();
        let at = types.iter().rposition(|t| *t == "artifact_changed").unwrap();
        assert_eq!(types[at - 1], "audit_recorded");
    }
}

lattice_testkit::both_backends! {
    async fn ask_binds_the_exact_arguments_and_is_answered_once_by_its_person(backend: Backend) {
        let s = scene(backend).await;
        let asked = s.call(&s.ana, SUBMIT, json!({"values": {"rating": 5}})).await;
        assert_eq!(asked.body["status"], "confirm", "{:?}", asked.body);
        assert_eq!(asked.body["arguments"], json!({"values": {"rating": 5}}));
        let confirmation = asked.body["confirmation"].as_str().unwrap().to_owned();
        assert!(s.submissions().await.is_empty(), "nothing is sent before the person confirms");
        // Someone else cannot answer it.
        let other = s.confirm(&s.bob, &confirmation, true).await;
        assert_eq!((other.status, error_type(&other)), (StatusCode::NOT_FOUND, "NotFound"));
        // The person's confirmation sends exactly what was asked.
        let done = s.confirm(&s.ana, &confirmation, true).await;
        assert_eq!(done.body["status"], "done", "{:?}", done.body);
        let subs = s.submissions().await;
        assert_eq!(subs.len(), 1);
        assert_eq!((subs[0]["author"].as_str(), &subs[0]["data"]["values"]), (Some("ana"), &json!({"rating": 5})));
        assert_eq!(done.body["result"]["id"], subs[0]["id"]);
        // Once: a second confirmation, or a decline after it, is refused and writes nothing but its row.
        for accept in [true, false] {
            let again = s.confirm(&s.ana, &confirmation, accept).await;
            assert_eq!((again.status, error_type(&again)), (StatusCode::CONFLICT, "Conflict"), "{:?}", again.body);
        }
        assert_eq!(s.submissions().await.len(), 1);
        // A declined ask sends nothing.
        let asked = s.call(&s.ana, SUBMIT, json!({"values": {"rating": 1}})).await;
        let declined = s.confirm(&s.ana, asked.body["confirmation"].as_str().unwrap(), false).await;
        assert_eq!((declined.body["status"].as_str(), declined.body["reason"].as_str()), (Some("refused"), Some("the person declined")));
        assert_eq!(s.submissions().await.len(), 1);
        assert_eq!(s.audit().await, vec![
            row("ana", SUBMIT, "ask"), row("bob", SUBMIT, "not_asked"), row("ana", SUBMIT, "confirmed"), row("ana", SUBMIT, "used"),
            row("ana", SUBMIT, "used"), row("ana", SUBMIT, "ask"), row("ana", SUBMIT, "declined"),
        ]);
        // Not just any audit row confirms: an unknown id names nothing.
        let bogus = s.confirm(&s.ana, "01JZZZZZZZZZZZZZZZZZZZZZZZ", true).await;
        assert_eq!(bogus.status, StatusCode::NOT_FOUND);
    }
}

lattice_testkit::both_backends! {
    async fn mini_apps_off_closes_calls_and_submissions_and_audit_cannot_be_forged(backend: Backend) {
        let s = scene(backend).await;
        let off = s.app.send("PUT", &format!("/v1/integrations/workspace:{}/ui:mini-apps", s.ws), Some(&s.ana),
            Some(&json!({"state": "off", "reason": "incident"}).to_string())).await;
        assert_eq!(off.status, StatusCode::OK, "{:?}", off.body);
        let call = s.call(&s.ana, GET_STATE, json!({})).await;
        assert_eq!((call.status, error_type(&call)), (StatusCode::LOCKED, "NotEnabled"));
        // A submission to the app straight through the API: the app's switch governs it too.
        let direct = s.app.post(&format!("/v1/threads/{}/artifacts", s.th), &s.ana, json!({"kind": "submission",
            "data": {"form_id": s.id, "form_version": 1, "values": {}, "nonce": "n-00000001"}})).await;
        assert_eq!((direct.status, error_type(&direct)), (StatusCode::LOCKED, "NotEnabled"), "{:?}", direct.body);
        // The audit namespace is lattice's.
        for namespace in ["audit", "ui", "log"] {
            let forged = s.app.post(&format!("/v1/workspaces/{}/events", s.ws), &s.bob,
                json!({"namespace": namespace, "name": "app_tool_call", "data": {"app": s.id, "decision": "allow"}})).await;
            assert_eq!((forged.status, error_type(&forged)), (StatusCode::FORBIDDEN, "Forbidden"), "{namespace}");
        }
        // The console's list is for admins.
        let listed = s.app.get(&format!("/v1/artifacts/{}/calls", s.id), &s.bob).await;
        assert_eq!((listed.status, error_type(&listed)), (StatusCode::FORBIDDEN, "Forbidden"));
    }
}

lattice_testkit::both_backends! {
    async fn submission_ids_and_threads_are_the_forms(backend: Backend) {
        let s = scene(backend).await;
        // A sub_ id on anything but a submission is refused.
        let squat = s.app.post(&format!("/v1/threads/{}/artifacts", s.th), &s.ana, json!({"id": "sub_0123456789abcdef0123456789abcdef",
            "kind": "dashboard", "data": {"title": "D", "as_of": "2026-11-29T12:00:00Z", "panels": []}})).await;
        assert_eq!(error_type(&squat), "ValidationFailed", "{:?}", squat.body);
        assert_eq!(squat.body["error"]["errors"][0]["keyword"], "reserved");
        // A submission to a form of another thread is refused.
        let other = s.app.post(&format!("/v1/workspaces/{}/threads", s.ws), &s.ana, json!({"title": "Other"})).await;
        let other = other.body["id"].as_str().unwrap().to_owned();
        let form = s.app.post(&format!("/v1/threads/{}/artifacts", s.th), &s.ana, json!({"kind": "form",
            "data": {"title": "F", "schema": {"type": "object", "properties": {}}, "submissions": "once"}})).await;
        let form_id = form.body["id"].as_str().unwrap();
        let id = lattice_ui::submission::submission_id(form_id, lattice_ui::form::Submissions::Once, "ana", None);
        let elsewhere = s.app.post(&format!("/v1/threads/{other}/artifacts"), &s.ana, json!({"id": id, "kind": "submission",
            "data": {"form_id": form_id, "form_version": 1, "values": {}}})).await;
        assert_eq!(error_type(&elsewhere), "ValidationFailed", "{:?}", elsewhere.body);
        assert_eq!(elsewhere.body["error"]["errors"][0]["path"], "form_id");
        let here = s.app.post(&format!("/v1/threads/{}/artifacts", s.th), &s.ana, json!({"id": id, "kind": "submission",
            "data": {"form_id": form_id, "form_version": 1, "values": {}}})).await;
        assert_eq!(here.status, StatusCode::OK, "{:?}", here.body);
    }
}

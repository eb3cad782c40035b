//! The UI model's kinds and checks, over HTTP (REQUIREMENTS.md U1–U9 through L5).

use axum::http::StatusCode;
use lattice_core::TenantRole;
use lattice_ui::form::Submissions;
use lattice_ui::submission::submission_id;
use serde_json::{Value, json};

use crate::{App, error_type};

fn incident_form(submissions: &str) -> Value {
    json!({
        "title": "Incident",
        "submissions": submissions,
        "schema": {
            "type": "object",
            "properties": {
                "date": {"type": "string", "format": "date"},
                "severity": {"type": "string", "enum": ["low", "medium", "high"]},
                "note": {"type": "string", "maxLength": 200}
            },
            "required": ["date", "severity"]
        },
        "ui": {"submit_label": "Report", "fields": {"note": {"widget": "textarea", "placeholder": "What happened?"}}}
    })
}

struct Setup {
    app: App,
    ws: String,
    th: String,
    alice: String,
    bob: String,
    vera: String,
}

async fn setup(backend: lattice_log::Backend) -> Setup {
    let app = App::new(backend).await;
    let alice = app.token("t1", "alice", TenantRole::Member, false).await;
    let (ws, th) = app.workspace_with_thread(&alice).await;
    for (user, role) in [("bob", "editor"), ("vera", "viewer"), ("robo", "editor")] {
        let r = app.post(&format!("/v1/workspaces/{ws}/members"), &alice, json!({"user": user, "role": role})).await;
        assert_eq!(r.status, StatusCode::OK);
    }
    let bob = app.token("t1", "bob", TenantRole::Member, false).await;
    let vera = app.token("t1", "vera", TenantRole::Member, false).await;
    Setup { app, ws, th, alice, bob, vera }
}

impl Setup {
    async fn form(&self, submissions: &str) -> String {
        let r = self
            .app
            .post(&format!("/v1/threads/{}/artifacts", self.th), &self.alice, json!({"kind": "form", "data": incident_form(submissions)}))
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        r.body["id"].as_str().unwrap().to_owned()
    }

    async fn submit(&self, token: &str, id: &str, form: &str, version: u64, values: Value, nonce: Option<&str>) -> crate::Reply {
        let mut data = json!({"form_id": form, "form_version": version, "values": values});
        if let Some(n) = nonce {
            data["nonce"] = json!(n);
        }
        self.app.post(&format!("/v1/threads/{}/artifacts", self.th), token, json!({"id": id, "kind": "submission", "data": data})).await
    }
}

fn good() -> Value {
    json!({"date": "2026-11-29", "severity": "high", "note": "db down"})
}

lattice_testkit::both_backends! {
    async fn a_refused_schema_names_its_keyword_and_a_large_one_its_limit(backend: Backend) {
        let s = setup(backend).await;
        let path = format!("/v1/threads/{}/artifacts", s.th);
        let mut form = incident_form("once");
        form["schema"]["properties"]["zip"] = json!({"type": "string", "pattern": "^[0-9]{5}$"});
        let r = s.app.post(&path, &s.alice, json!({"kind": "form", "data": form})).await;
        assert_eq!((r.status, error_type(&r)), (StatusCode::UNPROCESSABLE_ENTITY, "ValidationFailed"));
        assert_eq!(r.body["error"]["errors"][0]["path"], "schema.properties.zip.pattern");
        assert_eq!(r.body["error"]["errors"][0]["keyword"], "pattern");

        let mut big = incident_form("once");
        big["schema"]["properties"]["note"]["description"] = json!("x".repeat(33 * 1024));
        let r = s.app.post(&path, &s.alice, json!({"kind": "form", "data": big})).await;
        assert_eq!((r.status, r.body["error"]["limit"].clone()), (StatusCode::PAYLOAD_TOO_LARGE, json!(32768)));

        // An edit that breaks the schema is refused too, and changes nothing.
        let id = s.form("once").await;
        let patch = json!({"expected_version": 1, "patch": [{"op": "add", "path": "/schema/properties/x", "value": {"$ref": "#/x"}}]});
        let r = s.app.send("PATCH", &format!("/v1/artifacts/{id}"), Some(&s.alice), Some(&patch.to_string())).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(r.body["error"]["errors"][0]["path"], "schema.properties.x.$ref");
        assert_eq!(s.app.get(&format!("/v1/artifacts/{id}"), &s.alice).await.body["version"], 1);
    }
}

lattice_testkit::both_backends! {
    async fn submissions_hold_their_policy_through_derived_ids(backend: Backend) {
        let s = setup(backend).await;
        // once: one submission in all.
        let once = s.form("once").await;
        let id = submission_id(&once, Submissions::Once, "alice", None);
        assert_eq!(s.submit(&s.alice, &id, &once, 1, good(), None).await.status, StatusCode::OK);
        let again = s.submit(&s.bob, &submission_id(&once, Submissions::Once, "bob", None), &once, 1, good(), None).await;
        assert_eq!((again.status, error_type(&again)), (StatusCode::CONFLICT, "Conflict"));
        // per_person: one each.
        let per = s.form("per_person").await;
        for (token, user) in [(&s.alice, "alice"), (&s.bob, "bob")] {
            let r = s.submit(token, &submission_id(&per, Submissions::PerPerson, user, None), &per, 1, good(), None).await;
            assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        }
        let twice = s.submit(&s.bob, &submission_id(&per, Submissions::PerPerson, "bob", None), &per, 1, good(), None).await;
        assert_eq!(twice.status, StatusCode::CONFLICT);
        // Someone else's derivation is not yours.
        let forged = s.submit(&s.bob, &submission_id(&per, Submissions::PerPerson, "carol", None), &per, 1, good(), None).await;
        assert_eq!((forged.status, forged.body["error"]["errors"][0]["path"].clone()), (StatusCode::UNPROCESSABLE_ENTITY, json!("id")));
        // many: a nonce per submit; a retried submit (same nonce) is one artifact.
        let many = s.form("many").await;
        for nonce in ["nonce-0001", "nonce-0002"] {
            let r = s.submit(&s.bob, &submission_id(&many, Submissions::Many, "bob", Some(nonce)), &many, 1, good(), Some(nonce)).await;
            assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        }
        let retry = s.submit(&s.bob, &submission_id(&many, Submissions::Many, "bob", Some("nonce-0001")), &many, 1, good(), Some("nonce-0001")).await;
        assert_eq!(retry.status, StatusCode::CONFLICT);
        let no_nonce = s.submit(&s.bob, &submission_id(&many, Submissions::Many, "bob", None), &many, 1, good(), None).await;
        assert_eq!((no_nonce.status, no_nonce.body["error"]["errors"][0]["path"].clone()), (StatusCode::UNPROCESSABLE_ENTITY, json!("nonce")));

        let listed = s.app.get(&format!("/v1/threads/{}/artifacts?kind=submission&form_id={many}", s.th), &s.vera).await;
        assert_eq!(listed.body.as_array().unwrap().len(), 2);
        assert!(listed.body.as_array().unwrap().iter().all(|a| a["author"] == "bob"));
    }
}

lattice_testkit::both_backends! {
    async fn a_submission_without_an_id_gets_the_one_its_policy_derives(backend: Backend) {
        let s = setup(backend).await;
        let path = format!("/v1/threads/{}/artifacts", s.th);
        let without = |form: &str, nonce: Option<&str>| {
            let mut data = json!({"form_id": form, "form_version": 1, "values": good()});
            if let Some(n) = nonce {
                data["nonce"] = json!(n);
            }
            json!({"kind": "submission", "data": data})
        };
        // per_person: each person's own id, at the first try; a second is
        // the same id, so the policy still holds.
        let per = s.form("per_person").await;
        for (token, user) in [(&s.alice, "alice"), (&s.bob, "bob")] {
            let r = s.app.post(&path, token, without(&per, None)).await;
            assert_eq!((r.status, r.body["id"].clone()), (StatusCode::OK, json!(submission_id(&per, Submissions::PerPerson, user, None))), "{}", r.body);
        }
        let twice = s.app.post(&path, &s.bob, without(&per, None)).await;
        assert_eq!((twice.status, error_type(&twice)), (StatusCode::CONFLICT, "Conflict"));
        // many: derived from the nonce, which is still required.
        let many = s.form("many").await;
        let r = s.app.post(&path, &s.bob, without(&many, Some("nonce-0042"))).await;
        assert_eq!(r.body["id"], json!(submission_id(&many, Submissions::Many, "bob", Some("nonce-0042"))), "{}", r.body);
        let no_nonce = s.app.post(&path, &s.bob, without(&many, None)).await;
        assert_eq!((no_nonce.status, no_nonce.body["error"]["errors"][0]["path"].clone()), (StatusCode::UNPROCESSABLE_ENTITY, json!("nonce")));
        // An id that is sent is still checked; a form that is not there
        // derives nothing and is refused as before.
        let forged = s.submit(&s.bob, &submission_id(&per, Submissions::PerPerson, "carol", None), &per, 1, good(), None).await;
        assert_eq!((forged.status, forged.body["error"]["errors"][0]["path"].clone()), (StatusCode::UNPROCESSABLE_ENTITY, json!("id")));
        let nowhere = s.app.post(&path, &s.bob, without("art_nowhere", None)).await;
        assert_eq!((nowhere.status, nowhere.body["error"]["errors"][0]["path"].clone()), (StatusCode::UNPROCESSABLE_ENTITY, json!("form_id")));
        // Read back as written.
        let id = r.body["id"].as_str().unwrap();
        assert_eq!(s.app.get(&format!("/v1/artifacts/{id}"), &s.vera).await.body["data"]["values"], good());
    }
}

lattice_testkit::both_backends! {
    async fn a_submission_is_refused_for_each_reason_the_spec_gives(backend: Backend) {
        let s = setup(backend).await;
        let form = s.form("per_person").await;
        let id = |user: &str| submission_id(&form, Submissions::PerPerson, user, None);

        let missing = s.submit(&s.bob, &submission_id("nope", Submissions::PerPerson, "bob", None), "nope", 1, good(), None).await;
        assert_eq!((missing.status, missing.body["error"]["errors"][0]["path"].clone()), (StatusCode::UNPROCESSABLE_ENTITY, json!("form_id")));

        let invalid = s.submit(&s.bob, &id("bob"), &form, 1, json!({"date": "2026-02-30", "colour": "red"}), None).await;
        assert_eq!(invalid.status, StatusCode::UNPROCESSABLE_ENTITY);
        let paths: Vec<&str> = invalid.body["error"]["errors"].as_array().unwrap().iter().map(|e| e["path"].as_str().unwrap()).collect();
        assert_eq!(paths, ["values.colour", "values.date", "values.severity"]);

        let viewer = s.submit(&s.vera, &id("vera"), &form, 1, good(), None).await;
        assert_eq!(viewer.status, StatusCode::FORBIDDEN);

        // The author changes the form: a submission against version 1 is stale.
        let patch = json!({"expected_version": 1, "patch": [{"op": "replace", "path": "/title", "value": "Incident (v2)"}]});
        assert_eq!(s.app.send("PATCH", &format!("/v1/artifacts/{form}"), Some(&s.alice), Some(&patch.to_string())).await.status, StatusCode::OK);
        let stale = s.submit(&s.bob, &id("bob"), &form, 1, good(), None).await;
        assert_eq!(stale.status, StatusCode::CONFLICT);
        assert!(stale.body["error"]["reason"].as_str().unwrap().starts_with("This form changed"));
        assert_eq!((stale.body["error"]["expected"].clone(), stale.body["error"]["actual"].clone()), (json!(1), json!(2)));

        let close = json!({"expected_version": 2, "patch": [{"op": "add", "path": "/closed", "value": true}]});
        assert_eq!(s.app.send("PATCH", &format!("/v1/artifacts/{form}"), Some(&s.alice), Some(&close.to_string())).await.status, StatusCode::OK);
        let closed = s.submit(&s.bob, &id("bob"), &form, 3, good(), None).await;
        assert_eq!((closed.status, error_type(&closed)), (StatusCode::CONFLICT, "InvalidState"));

        // With ui:forms off, submissions are refused NotEnabled.
        let other = s.form("many").await;
        let off = s.app.send("PUT", &format!("/v1/integrations/workspace:{}/ui:forms", s.ws), Some(&s.alice),
            Some(&json!({"state": "off", "reason": "pause"}).to_string())).await;
        assert_eq!(off.status, StatusCode::OK);
        let blocked = s.submit(&s.bob, &submission_id(&other, Submissions::Many, "bob", Some("nonce-9999")), &other, 1, good(), Some("nonce-9999")).await;
        assert_eq!((blocked.status, error_type(&blocked)), (StatusCode::LOCKED, "NotEnabled"));
    }
}

lattice_testkit::both_backends! {
    async fn who_may_change_what(backend: Backend) {
        let s = setup(backend).await;
        let form = s.form("once").await;
        let sub = submission_id(&form, Submissions::Once, "bob", None);
        assert_eq!(s.submit(&s.bob, &sub, &form, 1, good(), None).await.status, StatusCode::OK);
        // Nobody edits a submission, not even its author or an admin.
        for token in [&s.bob, &s.alice] {
            let patch = json!({"expected_version": 1, "patch": [{"op": "replace", "path": "/values/severity", "value": "low"}]});
            let r = s.app.send("PATCH", &format!("/v1/artifacts/{sub}"), Some(token), Some(&patch.to_string())).await;
            assert_eq!(r.status, StatusCode::FORBIDDEN);
        }
        // An editor who is not the author may retitle the form but not close it.
        let close = json!({"expected_version": 1, "patch": [{"op": "add", "path": "/closed", "value": true}]});
        let r = s.app.send("PATCH", &format!("/v1/artifacts/{form}"), Some(&s.bob), Some(&close.to_string())).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN);
        let retitle = json!({"expected_version": 1, "patch": [{"op": "replace", "path": "/title", "value": "Renamed"}]});
        assert_eq!(s.app.send("PATCH", &format!("/v1/artifacts/{form}"), Some(&s.bob), Some(&retitle.to_string())).await.status, StatusCode::OK);
        let schema = json!({"expected_version": 2, "patch": [{"op": "replace", "path": "/schema/properties/note/maxLength", "value": 300}]});
        assert_eq!(s.app.send("PATCH", &format!("/v1/artifacts/{form}"), Some(&s.bob), Some(&schema.to_string())).await.status, StatusCode::FORBIDDEN);
        // A tenant admin (workspace admin) may.
        let admin = s.app.token("t1", "tina", TenantRole::TenantAdmin, false).await;
        assert_eq!(s.app.send("PATCH", &format!("/v1/artifacts/{form}"), Some(&admin), Some(&schema.to_string())).await.status, StatusCode::OK);

        // Apps: only an agent creates one (with ui:mini-apps on); a person edits /state only.
        let ops = s.app.token("t1", "olga", TenantRole::DeploymentAdmin, false).await;
        s.app.send("PUT", "/v1/integrations/deployment/ui:mini-apps", Some(&ops), Some(&json!({"state": "on", "reason": "pilot"}).to_string())).await;
        let html = "<!doctype html><p id=n>0</p><script>document.getElementById('n').textContent='1'</script>";
        let app_data = json!({"kind": "app", "data": {"title": "Counter", "summary": "Counts.", "html": html, "state": {"count": 0}}});
        let by_person = s.app.post(&format!("/v1/threads/{}/artifacts", s.th), &s.alice, app_data.clone()).await;
        assert_eq!(by_person.status, StatusCode::FORBIDDEN);
        let robo = s.app.token("t1", "robo", TenantRole::Member, true).await;
        let made = s.app.post(&format!("/v1/threads/{}/artifacts", s.th), &robo, app_data.clone()).await;
        assert_eq!(made.status, StatusCode::OK, "{}", made.body);
        let app_id = made.body["id"].as_str().unwrap().to_owned();
        let state = json!({"expected_version": 1, "patch": [{"op": "replace", "path": "/state/count", "value": 1}]});
        assert_eq!(s.app.send("PATCH", &format!("/v1/artifacts/{app_id}"), Some(&s.bob), Some(&state.to_string())).await.status, StatusCode::OK);
        let html_edit = json!({"expected_version": 2, "patch": [{"op": "replace", "path": "/html", "value": "<p>mine</p>"}]});
        assert_eq!(s.app.send("PATCH", &format!("/v1/artifacts/{app_id}"), Some(&s.bob), Some(&html_edit.to_string())).await.status, StatusCode::FORBIDDEN);
        let sneaky = json!({"expected_version": 2, "patch": [{"op": "move", "from": "/html", "path": "/state/html"}]});
        assert_eq!(s.app.send("PATCH", &format!("/v1/artifacts/{app_id}"), Some(&s.bob), Some(&sneaky.to_string())).await.status, StatusCode::FORBIDDEN);
        assert_eq!(s.app.send("PATCH", &format!("/v1/artifacts/{app_id}"), Some(&robo), Some(&html_edit.to_string())).await.status, StatusCode::OK);
        // HTML naming the network is refused.
        let mut leaky = app_data.clone();
        leaky["data"]["html"] = json!("<img src=\"https://evil.example/x.png\">");
        let r = s.app.post(&format!("/v1/threads/{}/artifacts", s.th), &robo, leaky).await;
        assert_eq!((r.status, r.body["error"]["errors"][0]["keyword"].clone()), (StatusCode::UNPROCESSABLE_ENTITY, json!("externalUrl")));
    }
}

//! Who makes an app's calls over the chat host's route, and what the log
//! keeps of them: every call carries the app's capability, bound to the
//! exact caller (a person's, never their agent's); an agent's token is
//! handed none here and confirms nothing; a reader's calls are decided and
//! leave a small, bounded trace whatever they send.

use axum::http::StatusCode;
use lattice_core::TenantRole;
use lattice_ui::app_policy::{GET_STATE, SET_STATE, SUBMIT};
use serde_json::{Value, json};

use crate::{App, error_type};

struct Scene {
    app: App,
    ana: String,
    bob: String,
    /// bob's agent: the same name, another caller.
    bobs_agent: String,
    bot: String,
    vera: String,
    rita: String,
    otto: String,
    ws: String,
    th: String,
    id: String,
}

/// ana's workspace: bob an editor, bot an agent editor, vera a viewer, rita
/// a respondent, otto from outside with a read-only share of the thread;
/// mini apps on; an app bot made, and a second one.
async fn scene(backend: lattice_log::Backend) -> (Scene, String) {
    let app = App::new(backend).await;
    let root = app.token("ops", "root", TenantRole::DeploymentAdmin, false).await;
    let ana = app.token("t1", "ana", TenantRole::Member, false).await;
    let (ws, th) = app.workspace_with_thread(&ana).await;
    for (user, role) in [("bob", "editor"), ("bot", "editor"), ("vera", "viewer"), ("rita", "respondent")] {
        let added = app.post(&format!("/v1/workspaces/{ws}/members"), &ana, json!({"user": user, "role": role})).await;
        assert_eq!(added.status, StatusCode::OK, "{:?}", added.body);
    }
    let shared = app.post(&format!("/v1/threads/{th}/members"), &ana, json!({"user": "otto", "role": "viewer"})).await;
    assert_eq!(shared.status, StatusCode::OK, "{:?}", shared.body);
    let on = app.send("PUT", "/v1/integrations/deployment/ui:mini-apps", Some(&root), Some(&json!({"state": "on", "reason": "t"}).to_string())).await;
    assert_eq!(on.status, StatusCode::OK);
    let bot = app.token("t1", "bot", TenantRole::Member, true).await;
    let mut ids = Vec::new();
    for title in ["Counter", "Other"] {
        let made = app
            .post(
                &format!("/v1/threads/{th}/artifacts"),
                &bot,
                json!({"kind": "app", "data": {"title": title, "summary": "s", "html": "<p>c</p>", "state": {"count": 1}}}),
            )
            .await;
        assert_eq!(made.status, StatusCode::OK, "{:?}", made.body);
        ids.push(made.body["id"].as_str().unwrap().to_owned());
    }
    let scene = Scene {
        bob: app.token("t1", "bob", TenantRole::Member, false).await,
        bobs_agent: app.token("t1", "bob", TenantRole::Member, true).await,
        vera: app.token("t1", "vera", TenantRole::Member, false).await,
        rita: app.token("t1", "rita", TenantRole::Member, false).await,
        otto: app.token("t1", "otto", TenantRole::Member, false).await,
        app,
        ana,
        bot,
        ws,
        th,
        id: ids[0].clone(),
    };
    (scene, ids[1].clone())
}

impl Scene {
    /// What the chat host is given for an app it shows.
    async fn capability_of(&self, token: &str, app: &str) -> crate::Reply {
        self.app.send("POST", &format!("/v1/artifacts/{app}/capability"), Some(token), None).await
    }

    async fn capability(&self, token: &str) -> String {
        let given = self.capability_of(token, &self.id).await;
        assert_eq!(given.status, StatusCode::OK, "{:?}", given.body);
        assert_eq!(given.body["expires_in_secs"], 3600);
        given.body["capability"].as_str().unwrap().to_owned()
    }

    async fn call(&self, token: &str, capability: Option<&str>, tool: &str, arguments: Value) -> crate::Reply {
        self.app
            .post(&format!("/v1/artifacts/{}/calls", self.id), token, json!({"tool": tool, "arguments": arguments, "capability": capability}))
            .await
    }

    /// The thread's envelopes, as ana reads them.
    async fn events(&self) -> Vec<Value> {
        let page = self.app.get(&format!("/v1/threads/{}/events?format=json&after=0", self.th), &self.ana).await;
        assert_eq!(page.status, StatusCode::OK, "{:?}", page.body);
        page.body["events"].as_array().unwrap().clone()
    }

    async fn version(&self) -> u64 {
        self.app.get(&format!("/v1/artifacts/{}", self.id), &self.ana).await.body["version"].as_u64().unwrap()
    }
}

fn refused(reply: &crate::Reply, why: &str) {
    assert_eq!((reply.status, error_type(reply)), (StatusCode::FORBIDDEN, "Forbidden"), "{:?}", reply.body);
    assert!(reply.body.to_string().contains(why), "{why:?} not in {}", reply.body);
}

lattice_testkit::both_backends! {
    async fn an_apps_calls_need_its_capability_and_its_very_caller(backend: Backend) {
        let (s, other) = scene(backend).await;
        let before = s.app.event_count(&s.ana, &s.ws).await;
        // The bearer token alone makes no call, and leaves nothing behind.
        refused(&s.call(&s.bob, None, GET_STATE, json!({})).await, "app-only");
        refused(&s.call(&s.bob, None, SUBMIT, json!({"values": {"n": 1}})).await, "app-only");
        // Another app's capability, another person's, or the person's view's
        // with their agent's token.
        let bobs = s.capability(&s.bob).await;
        let for_other = s.capability_of(&s.bob, &other).await.body["capability"].as_str().unwrap().to_owned();
        refused(&s.call(&s.bob, Some(&for_other), GET_STATE, json!({})).await, "another artifact");
        refused(&s.call(&s.ana, Some(&bobs), GET_STATE, json!({})).await, "someone else");
        refused(&s.call(&s.bobs_agent, Some(&bobs), GET_STATE, json!({})).await, "not to an agent");
        refused(&s.call(&s.bob, Some("not-a-capability"), GET_STATE, json!({})).await, "does not verify");
        assert_eq!(s.app.event_count(&s.ana, &s.ws).await, before, "a refused capability writes nothing");
        // An agent's token is given no capability by the chat host's route.
        refused(&s.capability_of(&s.bobs_agent, &s.id).await, "agent");
        refused(&s.capability_of(&s.bot, &s.id).await, "agent");

        let got = s.call(&s.bob, Some(&bobs), GET_STATE, json!({})).await;
        assert_eq!((got.status, got.body["status"].as_str()), (StatusCode::OK, Some("done")), "{:?}", got.body);
        assert_eq!(got.body["result"], json!({"state": {"count": 1}}));

        // The capability an agent's view gets over MCP (as the exporter mints
        // it) works here as there: one rule. But an ask it makes here is no
        // agent's to confirm: in the chat a person's click confirms.
        let principal = lattice_testkit::principal("t1", "bot", TenantRole::Member, true);
        let bots = s.app.log.authenticator().capability(&principal, &s.id);
        let read = s.call(&s.bot, Some(&bots), GET_STATE, json!({})).await;
        assert_eq!(read.body["status"], "done", "{:?}", read.body);
        let asked = s.call(&s.bot, Some(&bots), SUBMIT, json!({"values": {"n": 2}})).await;
        assert_eq!(asked.body["status"], "confirm", "{:?}", asked.body);
        let confirmation = asked.body["confirmation"].as_str().unwrap();
        let by_itself = s.app.post(&format!("/v1/app-calls/{confirmation}"), &s.bot, json!({"accept": true})).await;
        refused(&by_itself, "a person confirms");
        let by_another = s.app.post(&format!("/v1/app-calls/{confirmation}"), &s.ana, json!({"accept": true})).await;
        assert_eq!(by_another.status, StatusCode::NOT_FOUND, "{:?}", by_another.body);
        let subs = s.app.get(&format!("/v1/threads/{}/artifacts?kind=submission", s.th), &s.ana).await;
        assert_eq!(subs.body, json!([]), "nothing was sent");
    }
}

lattice_testkit::both_backends! {
    async fn a_readers_calls_are_decided_and_leave_a_bounded_trace(backend: Backend) {
        let (s, _) = scene(backend).await;
        let big = "x".repeat(40 * 1024);
        let before = s.events().await.len();
        let readers = [("vera", &s.vera), ("rita", &s.rita), ("otto", &s.otto)];
        for (name, token) in readers {
            // Whoever reads the app's thread is handed its capability, and
            // reads its state, whatever else it sends: a read leaves no row.
            let cap = s.capability(token).await;
            for _ in 0..3 {
                let read = s.call(token, Some(&cap), GET_STATE, json!({"junk": big})).await;
                assert_eq!(read.body["result"], json!({"state": {"count": 1}}), "{name}: {:?}", read.body);
            }
            // Its changes are refused, decided before any ask.
            for _ in 0..3 {
                let set = s.call(token, Some(&cap), SET_STATE, json!({"patch": [{"op": "add", "path": "/junk", "value": big}]})).await;
                refused(&set, "may only read");
                let submit = s.call(token, Some(&cap), SUBMIT, json!({"values": {"junk": big}})).await;
                refused(&submit, "may only read");
            }
        }
        let added: Vec<Value> = s.events().await.split_off(before);
        assert_eq!(added.len(), readers.len() * 6, "one row per refused change, none per read");
        let total: usize = added.iter().map(|row| row.to_string().len()).sum();
        assert!(total < added.len() * 1024, "{total} bytes for {} rows", added.len());
        for row in &added {
            assert!(!row.to_string().contains("xxxxxxxx"), "a reader's arguments are never kept: {}", &row.to_string()[..300]);
            let data = &row["payload"]["data"];
            assert_eq!((row["type"].as_str(), data["decision"].as_str()), (Some("audit_recorded"), Some("read_only")), "{row}");
            assert!(data["arguments_bytes"].as_u64().unwrap() > 40 * 1024, "{data}");
            assert!(data["arguments_digest"].as_str().unwrap().starts_with("sha256:"), "{data}");
        }
        assert_eq!(s.version().await, 1, "the app did not change");
        // The admin's console lists the refusals, by whom.
        let listed = s.app.get(&format!("/v1/artifacts/{}/calls", s.id), &s.ana).await;
        let decisions: Vec<(&str, &str)> = listed.body.as_array().unwrap().iter()
            .map(|r| (r["actor"].as_str().unwrap(), r["decision"].as_str().unwrap())).collect();
        assert_eq!(decisions.len(), 18);
        assert!(decisions.iter().all(|(_, d)| *d == "read_only"), "{decisions:?}");
        // An editor's own calls still go through, each with its row.
        let bobs = s.capability(&s.bob).await;
        let set = s.call(&s.bob, Some(&bobs), SET_STATE, json!({"patch": [{"op": "replace", "path": "/count", "value": 2}]})).await;
        assert_eq!(set.body["status"], "done", "{:?}", set.body);
        assert_eq!(s.version().await, 2);
    }
}

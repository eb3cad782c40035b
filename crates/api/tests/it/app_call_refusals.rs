//! Every refused call of a lattice app, and every refused answer to its
//! ask, is one audit row with its decision (`lattice_app_calls`' one place
//! that records refusals), and is answered exactly as it was before the row
//! was written: the same status, the same typed error. A call whose
//! capability names no app leaves no row. A refusal's row holds the
//! arguments' digest and size, never the arguments.

use std::time::Duration;

use axum::http::StatusCode;
use lattice_app_calls::{AppCalls, Outcome, Via};
use lattice_core::{ManualClock, TenantRole};
use lattice_log::Authenticated;
use lattice_ui::app_policy::{AppToolPolicy, GET_STATE, SET_STATE, SUBMIT};
use serde_json::{Value, json};

use crate::{App, Reply, error_type};

const POLICY: &str = "get_state=allow,set_state=allow,submit=ask";

struct Scene {
    app: App,
    clock: std::sync::Arc<ManualClock>,
    ana: String,
    bob: String,
    bot: String,
    ws: String,
    th: String,
    id: String,
    /// Each caller's capability for the app: (token, capability).
    capabilities: Vec<(String, String)>,
}

/// ana's workspace with bob and bot (an agent) as editors, mini apps on,
/// an app bot made, on a clock the test moves.
async fn scene(backend: lattice_log::Backend) -> Scene {
    let clock = ManualClock::new();
    let app = App::on_logged_clock(backend, clock.clone()).await;
    let root = app.token("ops", "root", TenantRole::DeploymentAdmin, false).await;
    let ana = app.token("t1", "ana", TenantRole::Member, false).await;
    let bob = app.token("t1", "bob", TenantRole::Member, false).await;
    let bot = app.token("t1", "bot", TenantRole::Member, true).await;
    let (ws, th) = app.workspace_with_thread(&ana).await;
    for user in ["bob", "bot"] {
        let added = app.post(&format!("/v1/workspaces/{ws}/members"), &ana, json!({"user": user, "role": "editor"})).await;
        assert_eq!(added.status, StatusCode::OK, "{:?}", added.body);
    }
    let on = app.send_put("/v1/integrations/deployment/ui:mini-apps", &root, json!({"state": "on", "reason": "t"})).await;
    assert_eq!(on.status, StatusCode::OK, "{:?}", on.body);
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
        let given = app.post(&format!("/v1/artifacts/{id}/capability"), token, json!({})).await;
        assert_eq!(given.status, StatusCode::OK, "{:?}", given.body);
        capabilities.push((token.clone(), given.body["capability"].as_str().unwrap().to_owned()));
    }
    // An agent's view gets its capability in the MCP result that shows the app.
    let bot_who = who(&app, &bot).await;
    capabilities.push((bot.clone(), app.log.authenticator().capability(bot_who.principal(), &id)));
    Scene { app, clock, ana, bob, bot, ws, th, id, capabilities }
}

async fn who(app: &App, token: &str) -> Authenticated {
    app.log.authenticate(Some(format!("Bearer {token}").as_bytes())).await.unwrap()
}

impl Scene {
    fn capability(&self, token: &str) -> String {
        self.capabilities.iter().find(|(t, _)| t == token).map(|(_, c)| c.clone()).unwrap()
    }

    async fn call(&self, token: &str, tool: &str, arguments: Value) -> Reply {
        let capability = self.capability(token);
        self.app
            .post(&format!("/v1/artifacts/{}/calls", self.id), token, json!({"tool": tool, "arguments": arguments, "capability": capability}))
            .await
    }

    async fn confirm(&self, token: &str, confirmation: &str, accept: bool) -> Reply {
        self.app.post(&format!("/v1/app-calls/{confirmation}"), token, json!({"accept": accept})).await
    }

    /// ana's ask to submit `values`: its confirmation.
    async fn ask(&self, token: &str, values: Value) -> String {
        let asked = self.call(token, SUBMIT, json!({"values": values})).await;
        assert_eq!(asked.body["status"], "confirm", "{:?}", asked.body);
        asked.body["confirmation"].as_str().unwrap().to_owned()
    }

    /// The app's audit rows, oldest first: (actor, tool, decision).
    async fn rows(&self) -> Vec<(String, String, String)> {
        self.app.call_rows(&self.id, &self.ana).await
    }

    /// The rows `step` added.
    async fn added_by<F: Future<Output = Reply>>(&self, step: F) -> (Reply, Vec<(String, String, String)>) {
        let before = self.rows().await.len();
        let reply = step.await;
        (reply, self.rows().await.split_off(before))
    }

    /// The thread's newest audit row's data.
    async fn last_row(&self) -> Value {
        let page = self.app.get(&format!("/v1/threads/{}/events?format=json", self.th), &self.ana).await;
        let events = page.body["events"].as_array().unwrap();
        events.iter().rfind(|e| e["type"] == "audit_recorded").expect("an audit row")["payload"]["data"].clone()
    }

    async fn switch(&self, state: &str) {
        let put = self
            .app
            .send_put(&format!("/v1/integrations/workspace:{}/ui:mini-apps", self.ws), &self.ana, json!({"state": state, "reason": "incident"}))
            .await;
        assert_eq!(put.status, StatusCode::OK, "{:?}", put.body);
    }
}

fn row(actor: &str, tool: &str, decision: &str) -> Vec<(String, String, String)> {
    vec![(actor.into(), tool.into(), decision.into())]
}

/// A document nested `levels` deep.
fn nested(levels: usize) -> Value {
    (0..levels).fold(json!(1), |v, _| json!([v]))
}

lattice_testkit::both_backends! {
    async fn each_refused_call_is_one_row_and_answers_as_before(backend: Backend) {
        let s = scene(backend).await;

        // A tool lattice does not offer apps.
        let (r, added) = s.added_by(s.call(&s.ana, "delete_everything", json!({}))).await;
        assert_eq!((r.status, error_type(&r)), (StatusCode::UNPROCESSABLE_ENTITY, "ValidationFailed"), "{:?}", r.body);
        assert_eq!(r.body["error"]["errors"][0]["path"], "tool", "{:?}", r.body);
        assert_eq!(added, row("ana", "delete_everything", "not_offered"));
        // A made-up name is the caller's: its row keeps the first bytes.
        let (r, added) = s.added_by(s.call(&s.ana, &"t".repeat(10_000), json!({}))).await;
        assert_eq!((r.status, error_type(&r)), (StatusCode::UNPROCESSABLE_ENTITY, "ValidationFailed"), "{:?}", r.body);
        assert_eq!((added.len(), added[0].2.as_str()), (1, "not_offered"));
        assert!(added[0].1.len() < 200 && added[0].1.ends_with('…'), "{}", added[0].1.len());
        // An allowed write whose patch the state cannot take.
        let (r, added) = s.added_by(s.call(&s.ana, SET_STATE, json!({"patch": [{"op": "replace", "path": "html", "value": "x"}]}))).await;
        assert_eq!((r.status, error_type(&r)), (StatusCode::UNPROCESSABLE_ENTITY, "ValidationFailed"), "{:?}", r.body);
        assert_eq!(r.body["error"]["errors"][0]["path"], "arguments.patch", "{:?}", r.body);
        assert_eq!(added, row("ana", SET_STATE, "invalid_arguments"));
        // An ask whose arguments nest too deep, or are too large to show.
        let (r, added) = s.added_by(s.call(&s.ana, SUBMIT, json!({"values": {"n": nested(40)}}))).await;
        assert_eq!((r.status, error_type(&r)), (StatusCode::UNPROCESSABLE_ENTITY, "ValidationFailed"), "{:?}", r.body);
        assert_eq!(r.body["error"]["errors"][0]["keyword"], "maxDepth", "{:?}", r.body);
        assert_eq!(added, row("ana", SUBMIT, "invalid_arguments"));
        let (r, added) = s.added_by(s.call(&s.ana, SUBMIT, json!({"values": {"n": "x".repeat(49 * 1024)}}))).await;
        assert_eq!((r.status, error_type(&r)), (StatusCode::PAYLOAD_TOO_LARGE, "TooLarge"), "{:?}", r.body);
        assert_eq!(added, row("ana", SUBMIT, "too_large"));
        // Its row holds what was sent by digest and size alone.
        let data = s.last_row().await;
        assert_eq!(data["decision"], "too_large");
        assert!(data.get("arguments").is_none(), "{data}");
        assert!(data["arguments_bytes"].as_u64().unwrap() > 49 * 1024, "{data}");
        assert!(data["arguments_digest"].as_str().unwrap().starts_with("sha256:"), "{data}");
        assert!(data.to_string().len() < 1024, "{data}");

        // No app is known without a capability this caller was given for
        // it: refused as before, and no row.
        let (r, added) = s.added_by(s.app.post(&format!("/v1/artifacts/{}/calls", s.id), &s.ana, json!({"tool": GET_STATE}))).await;
        assert_eq!((r.status, error_type(&r)), (StatusCode::FORBIDDEN, "Forbidden"), "{:?}", r.body);
        assert_eq!(added, vec![]);
        let bobs = s.capability(&s.bob);
        let (r, added) = s.added_by(s.app.post(&format!("/v1/artifacts/{}/calls", s.id), &s.ana,
            json!({"tool": GET_STATE, "capability": bobs}))).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{:?}", r.body);
        assert_eq!(added, vec![]);

        // Mini apps switched off where the app lives.
        s.switch("off").await;
        let (r, added) = s.added_by(s.call(&s.bob, GET_STATE, json!({}))).await;
        assert_eq!((r.status, error_type(&r)), (StatusCode::LOCKED, "NotEnabled"), "{:?}", r.body);
        assert_eq!(r.body["error"]["key"], "ui:mini-apps", "{:?}", r.body);
        assert_eq!(added, row("bob", GET_STATE, "switched_off"));
        s.switch("on").await;

        // The app archived.
        let archived = s.app.post(&format!("/v1/artifacts/{}/archive", s.id), &s.bot, json!({})).await;
        assert_eq!(archived.status, StatusCode::OK, "{:?}", archived.body);
        let (r, added) = s.added_by(s.call(&s.ana, GET_STATE, json!({}))).await;
        assert_eq!((r.status, error_type(&r)), (StatusCode::CONFLICT, "InvalidState"), "{:?}", r.body);
        assert_eq!(added, row("ana", GET_STATE, "archived"));
    }
}

lattice_testkit::both_backends! {
    async fn each_refused_answer_to_an_ask_is_one_row_and_answers_as_before(backend: Backend) {
        let s = scene(backend).await;
        let submissions = || async {
            let list = s.app.get(&format!("/v1/threads/{}/artifacts?kind=submission&form_id={}", s.th, s.id), &s.ana).await;
            list.body.as_array().map_or(0, Vec::len)
        };

        // Not the person asked.
        let asked = s.ask(&s.ana, json!({"n": 1})).await;
        let (r, added) = s.added_by(s.confirm(&s.bob, &asked, true)).await;
        assert_eq!((r.status, error_type(&r)), (StatusCode::NOT_FOUND, "NotFound"), "{:?}", r.body);
        assert_eq!(added, row("bob", SUBMIT, "not_asked"));
        // What names no ask names no app: no row.
        let (r, added) = s.added_by(s.confirm(&s.ana, "01JZZZZZZZZZZZZZZZZZZZZZZZ", true)).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND);
        assert_eq!(added, vec![]);

        // An agent answering in lattice's chat.
        let bots = s.ask(&s.bot, json!({"n": 2})).await;
        let (r, added) = s.added_by(s.confirm(&s.bot, &bots, true)).await;
        assert_eq!((r.status, error_type(&r)), (StatusCode::FORBIDDEN, "Forbidden"), "{:?}", r.body);
        assert_eq!(added, row("bot", SUBMIT, "not_a_person"));

        // An ask put over MCP (the exporter's call, the same crate's) is
        // answered there, not in the chat.
        let apps = AppCalls::new(s.app.log.clone(), AppToolPolicy::parse(POLICY).unwrap());
        let bot = who(&s.app, &s.bot).await;
        let over_mcp = apps.call(&bot, Some(&s.capability(&s.bot)), None, SUBMIT, &json!({"values": {"n": 3}}), Via::Mcp).await.unwrap();
        let Outcome::Confirm { confirmation: over_mcp, .. } = over_mcp else { panic!("{over_mcp:?}") };
        let (r, added) = s.added_by(s.confirm(&s.bot, &over_mcp, true)).await;
        assert_eq!((r.status, error_type(&r)), (StatusCode::CONFLICT, "InvalidState"), "{:?}", r.body);
        assert_eq!(added, row("bot", SUBMIT, "wrong_host"));
        // A host that cannot ask (no elicitation) answers it `cannot_ask`:
        // one row, and the confirmation is used.
        let before = s.rows().await.len();
        let refused = apps.cannot_ask(&bot, &over_mcp, Via::Mcp).await.unwrap();
        assert!(matches!(&refused, Outcome::Refused { reason } if reason.contains("elicitation")), "{refused:?}");
        assert_eq!(s.rows().await.split_off(before), row("bot", SUBMIT, "cannot_ask"));
        let again = apps.confirm(&bot, &over_mcp, true, Via::Mcp).await;
        assert!(matches!(again, Err(lattice_core::Error::Conflict { .. })), "{again:?}");
        assert_eq!(s.rows().await.split_off(before + 1), row("bot", SUBMIT, "used"));

        // Too late.
        let late = s.ask(&s.ana, json!({"n": 4})).await;
        s.clock.advance(lattice_app_calls::CONFIRM_WITHIN + Duration::from_secs(1));
        let (r, added) = s.added_by(s.confirm(&s.ana, &late, true)).await;
        assert_eq!((r.status, error_type(&r)), (StatusCode::CONFLICT, "InvalidState"), "{:?}", r.body);
        assert!(r.body["error"]["reason"].as_str().unwrap().contains("expired"), "{:?}", r.body);
        assert_eq!(added, row("ana", SUBMIT, "expired"));

        // Used: of two answers at once one is carried out, the other is a
        // row; and so is one made again.
        let twice = s.ask(&s.ana, json!({"n": 5})).await;
        let before = s.rows().await.len();
        let (one, two) = tokio::join!(s.confirm(&s.ana, &twice, true), s.confirm(&s.ana, &twice, true));
        let mut answers = [(one.status, error_type(&one).to_owned()), (two.status, error_type(&two).to_owned())];
        answers.sort();
        assert_eq!(answers, [(StatusCode::OK, "<no typed error>".to_owned()), (StatusCode::CONFLICT, "Conflict".to_owned())], "{:?} {:?}", one.body, two.body);
        let mut added = s.rows().await.split_off(before);
        added.sort();
        assert_eq!(added, [row("ana", SUBMIT, "confirmed"), row("ana", SUBMIT, "used")].concat());
        let (r, added) = s.added_by(s.confirm(&s.ana, &twice, false)).await;
        assert_eq!((r.status, error_type(&r)), (StatusCode::CONFLICT, "Conflict"), "{:?}", r.body);
        assert_eq!(added, row("ana", SUBMIT, "used"));
        assert_eq!(submissions().await, 1, "one submission");

        // An ask answered while mini apps are off, then once the app is archived.
        let held = s.ask(&s.ana, json!({"n": 6})).await;
        s.switch("off").await;
        let (r, added) = s.added_by(s.confirm(&s.ana, &held, true)).await;
        assert_eq!((r.status, error_type(&r)), (StatusCode::LOCKED, "NotEnabled"), "{:?}", r.body);
        assert_eq!(added, row("ana", SUBMIT, "switched_off"));
        s.switch("on").await;
        let archived = s.app.post(&format!("/v1/artifacts/{}/archive", s.id), &s.bot, json!({})).await;
        assert_eq!(archived.status, StatusCode::OK, "{:?}", archived.body);
        let (r, added) = s.added_by(s.confirm(&s.ana, &held, true)).await;
        assert_eq!((r.status, error_type(&r)), (StatusCode::CONFLICT, "InvalidState"), "{:?}", r.body);
        assert_eq!(added, row("ana", SUBMIT, "archived"));
        assert_eq!(submissions().await, 1, "nothing more was sent");
    }
}

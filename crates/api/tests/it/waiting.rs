//! What waits for a person's answer (`GET /v1/me/waiting`, issue 44), and
//! the same list followed live (`GET /v1/me/waiting/stream`): forms and
//! ask_form requests across workspaces, soonest deadline first; an answer
//! takes one off; a removal takes a workspace's off an open stream within a
//! second; only where the person may answer (a viewer, an unlisted
//! restricted thread, another tenant see nothing); the item limit at its
//! edge.

use std::time::{Duration, Instant};

use axum::http::StatusCode;
use lattice_core::TenantRole;
use lattice_wire::{WAITING_LIMIT, WaitingItem, Waits};
use serde_json::{Value, json};

use crate::{App, Sse, error_type};

fn form(title: &str, closes_at: Option<&str>, submissions: &str) -> Value {
    let mut data = json!({"title": title, "schema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}, "submissions": submissions});
    if let Some(at) = closes_at {
        data["closes_at"] = json!(at);
    }
    json!({"kind": "form", "data": data})
}

/// A form in `th` made by `token`'s holder: its id.
async fn make_form(app: &App, token: &str, th: &str, title: &str, closes_at: Option<&str>) -> String {
    let made = app.post(&format!("/v1/threads/{th}/artifacts"), token, form(title, closes_at, "per_person")).await;
    assert_eq!(made.status, StatusCode::OK, "{}", made.body);
    made.body["id"].as_str().unwrap().to_owned()
}

async fn submit(app: &App, token: &str, th: &str, form: &str) {
    let data = json!({"form_id": form, "form_version": 1, "values": {"ok": true}});
    let sent = app.post(&format!("/v1/threads/{th}/artifacts"), token, json!({"kind": "submission", "data": data})).await;
    assert_eq!(sent.status, StatusCode::OK, "{}", sent.body);
}

async fn add(app: &App, admin: &str, ws: &str, user: &str, role: &str) {
    let added = app.post(&format!("/v1/workspaces/{ws}/members"), admin, json!({"user": user, "role": role})).await;
    assert_eq!(added.status, StatusCode::OK, "{}", added.body);
}

/// Alice's two workspaces, each with a thread, where rita answers.
struct Two {
    alice: String,
    rita: String,
    ws1: String,
    th1: String,
    ws2: String,
    th2: String,
}

impl Two {
    async fn set_up(app: &App) -> Self {
        let alice = app.token("t1", "alice", TenantRole::Member, false).await;
        let rita = app.token("t1", "rita", TenantRole::Member, false).await;
        let (ws1, th1) = app.workspace_with_thread(&alice).await;
        let (ws2, th2) = app.workspace_with_thread(&alice).await;
        add(app, &alice, &ws1, "rita", "respondent").await;
        add(app, &alice, &ws2, "rita", "respondent").await;
        Self { alice, rita, ws1, th1, ws2, th2 }
    }
}

async fn waiting(app: &App, token: &str) -> Vec<WaitingItem> {
    let got = app.get("/v1/me/waiting", token).await;
    assert_eq!(got.status, StatusCode::OK, "{}", got.body);
    serde_json::from_value(got.body).expect("the body is a list of WaitingItem")
}

fn titles(items: &[WaitingItem]) -> Vec<&str> {
    items.iter().map(|i| i.title.as_str()).collect()
}

/// A run of the scripted ask_form model in `th`, paused: its id.
async fn paused_run(app: &App, token: &str, th: &str, prompt: &str) -> String {
    let started = app.post(&format!("/v1/threads/{th}/runs"), token, json!({"prompt": prompt, "model": "scripted:ask_form"})).await;
    assert_eq!(started.status, StatusCode::OK, "{}", started.body);
    let run = started.body["run_id"].as_str().unwrap().to_owned();
    lattice_testkit::until(&format!("run {run} to pause"), async || app.get(&format!("/v1/runs/{run}"), token).await.body["status"] == "paused")
        .await;
    run
}

/// The waiting stream's lists.
trait Lists {
    async fn list(&mut self, within: Duration) -> Vec<WaitingItem>;
}

impl Lists for Sse {
    /// The next `waiting` list.
    async fn list(&mut self, within: Duration) -> Vec<WaitingItem> {
        let (event, data) = self.next(within).await.expect("the stream ended");
        assert_eq!(event, "waiting", "{data}");
        serde_json::from_str(&data).unwrap()
    }
}

lattice_testkit::both_backends! {
    async fn a_respondent_sees_what_waits_in_two_workspaces_soonest_first_and_an_answer_takes_it_off(backend: Backend) {
        // Forms a few ms apart, on a clock the test moves.
        let clock = lattice_core::ManualClock::new();
        let app = App::on_logged_clock(backend, clock.clone()).await;
        let Two { alice, rita, ws1, th1, ws2, th2 } = Two::set_up(&app).await;

        let later = make_form(&app, &alice, &th1, "Later", Some("2999-01-02T00:00:00Z")).await;
        let sooner = make_form(&app, &alice, &th2, "Sooner", Some("2999-01-01T00:00:00+00:00")).await;
        let open_old = make_form(&app, &alice, &th1, "No deadline, older", None).await;
        clock.advance(Duration::from_millis(5));
        let _open_new = make_form(&app, &alice, &th2, "No deadline, newer", None).await;
        // A week from now at the most: before every form's deadline.
        let run = paused_run(&app, &alice, &th2, "Report an incident expires_in_secs=3600").await;

        let items = waiting(&app, &rita).await;
        assert_eq!(titles(&items), ["Report an incident", "Sooner", "Later", "No deadline, newer", "No deadline, older"]);
        let ask = &items[0];
        assert_eq!(ask.waits, Waits::AskForm { run: run.clone(), tool_call_id: "call_ask_form_1".into() });
        assert_eq!((ask.asked_by.as_str(), ask.asked_by_agent), ("alice", true), "the pause's actor: the agent acting for alice");
        assert_eq!((ask.thread.id.as_str(), ask.workspace.id.as_str(), ask.workspace.name.as_str()), (th2.as_str(), ws2.as_str(), "W"));
        assert!(ask.closes_at.is_some());
        let sooner_item = &items[1];
        assert_eq!(sooner_item.waits, Waits::Form { id: sooner.clone(), version: 1 });
        assert_eq!((sooner_item.asked_by.as_str(), sooner_item.asked_by_agent), ("alice", false));
        assert_eq!(sooner_item.closes_at.as_deref(), Some("2999-01-01T00:00:00.000Z"));
        assert_eq!((sooner_item.thread.title.as_str(), sooner_item.workspace.id.as_str()), ("T", ws2.as_str()));
        assert!(items[3].closes_at.is_none() && items[3].asked_at >= items[4].asked_at);
        // The wire says no `closes_at` where there is none.
        let raw = app.get("/v1/me/waiting", &rita).await.body;
        assert!(raw[3].get("closes_at").is_none(), "{}", raw[3]);

        // Answered: gone for her, still there for another respondent (per person).
        submit(&app, &rita, &th1, &later).await;
        add(&app, &alice, &ws1, "ron", "respondent").await;
        let ron = app.token("t1", "ron", TenantRole::Member, false).await;
        assert_eq!(titles(&waiting(&app, &rita).await), ["Report an incident", "Sooner", "No deadline, newer", "No deadline, older"]);
        assert_eq!(titles(&waiting(&app, &ron).await), ["Later", "No deadline, older"]);
        let answer = json!({"tool_call_id": "call_ask_form_1", "answer": {"date": "2026-11-29", "severity": "high"}});
        let answered = app.post(&format!("/v1/runs/{run}/answers"), &rita, answer).await;
        assert_eq!(answered.status, StatusCode::OK, "{}", answered.body);
        assert_eq!(titles(&waiting(&app, &rita).await), ["Sooner", "No deadline, newer", "No deadline, older"]);

        // A form taking one answer is answered for everyone; a closed or
        // archived form asks no more.
        let once = app.post(&format!("/v1/threads/{th1}/artifacts"), &alice, form("Once", None, "once")).await;
        let once = once.body["id"].as_str().unwrap().to_owned();
        assert_eq!(titles(&waiting(&app, &ron).await), ["Later", "Once", "No deadline, older"]);
        submit(&app, &rita, &th1, &once).await;
        assert_eq!(titles(&waiting(&app, &ron).await), ["Later", "No deadline, older"]);
        let closed = app
            .send("PATCH", &format!("/v1/artifacts/{open_old}"), Some(&alice), Some(&json!({"expected_version": 1, "patch": [{"op": "add", "path": "/closed", "value": true}]}).to_string()))
            .await;
        assert_eq!(closed.status, StatusCode::OK, "{}", closed.body);
        let archived = app.post(&format!("/v1/artifacts/{sooner}/archive"), &alice, json!({})).await;
        assert_eq!(archived.status, StatusCode::OK, "{}", archived.body);
        assert_eq!(titles(&waiting(&app, &rita).await), ["No deadline, newer"]);
        assert_eq!(titles(&waiting(&app, &ron).await), ["Later"]);

        // Forms switched off in a workspace: its forms wait no more.
        let off = app.send("PUT", &format!("/v1/integrations/workspace:{ws2}/ui:forms"), Some(&alice), Some(&json!({"state": "off", "reason": "t"}).to_string())).await;
        assert_eq!(off.status, StatusCode::OK, "{}", off.body);
        assert!(waiting(&app, &rita).await.is_empty());
    }
}

lattice_testkit::both_backends! {
    async fn only_where_the_person_may_answer(backend: Backend) {
        // Forms a few ms apart, on a clock the test moves.
        let clock = lattice_core::ManualClock::new();
        let app = App::on_logged_clock(backend, clock.clone()).await;
        let alice = app.token("t1", "alice", TenantRole::Member, false).await;
        let (ws, open) = app.workspace_with_thread(&alice).await;
        let restricted = app.post(&format!("/v1/workspaces/{ws}/threads"), &alice, json!({"title": "Salaries", "restricted": true})).await;
        let restricted = restricted.body["id"].as_str().unwrap().to_owned();
        make_form(&app, &alice, &open, "Open form", None).await;
        clock.advance(Duration::from_millis(5));
        make_form(&app, &alice, &restricted, "Restricted form", None).await;
        for (user, role) in [("rita", "respondent"), ("vic", "viewer"), ("lou", "respondent"), ("ed", "editor"), ("adm", "admin")] {
            add(&app, &alice, &ws, user, role).await;
        }
        let list = |user: &str, role: &str, th: &str| {
            let (app, alice, path) = (&app, &alice, format!("/v1/threads/{th}/members"));
            let body = json!({"user": user, "role": role});
            async move { assert_eq!(app.post(&path, alice, body).await.status, StatusCode::OK) }
        };
        // lou is listed on the restricted thread; vic, a viewer, is made
        // respondent of nothing; the outsider answers the open thread only.
        list("lou", "respondent", &restricted).await;
        list("out", "respondent", &open).await;
        list("ovi", "viewer", &open).await;
        let token = |user: &'static str| app.token("t1", user, TenantRole::Member, false);
        let (rita, vic, lou, ed, adm, out, ovi) = (token("rita").await, token("vic").await, token("lou").await, token("ed").await, token("adm").await, token("out").await, token("ovi").await);
        let tad = app.token("t1", "tad", TenantRole::TenantAdmin, false).await;
        let mal = app.token("t2", "mal", TenantRole::TenantAdmin, false).await;
        let alice_t2 = app.token("t2", "alice", TenantRole::Member, false).await;

        // Newest first.
        let both = ["Restricted form", "Open form"];
        assert_eq!(titles(&waiting(&app, &rita).await), ["Open form"], "a respondent, not listed on the restricted thread");
        assert!(waiting(&app, &vic).await.is_empty(), "a viewer may not answer");
        assert_eq!(titles(&waiting(&app, &lou).await), both, "listed on the restricted thread");
        assert_eq!(titles(&waiting(&app, &ed).await), ["Open form"], "an editor, unlisted");
        assert_eq!(titles(&waiting(&app, &adm).await), both, "a workspace admin sees every thread");
        assert_eq!(titles(&waiting(&app, &alice).await), both, "the restricted thread's starter is listed on it");
        assert_eq!(titles(&waiting(&app, &tad).await), both, "a tenant admin");
        assert_eq!(titles(&waiting(&app, &out).await), ["Open form"], "an outsider the open thread is shared with to answer");
        assert!(waiting(&app, &ovi).await.is_empty(), "an outsider with a read-only share");
        assert!(waiting(&app, &mal).await.is_empty(), "another tenant's admin");
        assert!(waiting(&app, &alice_t2).await.is_empty(), "the same user id in another tenant");

        // A viewer listed as respondent on the open thread answers there.
        list("vic", "respondent", &open).await;
        assert_eq!(titles(&waiting(&app, &vic).await), ["Open form"]);
        // Demoted to viewer: nothing waits for rita any more.
        add(&app, &alice, &ws, "rita", "viewer").await;
        assert!(waiting(&app, &rita).await.is_empty());

        // Bad input is a typed refusal; no token, 401.
        let odd = app.get("/v1/me/waiting?limit=5", &rita).await;
        assert_eq!((odd.status, error_type(&odd)), (StatusCode::BAD_REQUEST, "Malformed"), "{}", odd.body);
        let odd = app.get("/v1/me/waiting/stream?after=1", &rita).await;
        assert_eq!((odd.status, error_type(&odd)), (StatusCode::BAD_REQUEST, "Malformed"), "{}", odd.body);
        let anon = app.send("GET", "/v1/me/waiting", None, None).await;
        assert_eq!(anon.status, StatusCode::UNAUTHORIZED);
    }
}

lattice_testkit::both_backends! {
    async fn the_stream_follows_answers_removals_deadlines_and_sign_outs(backend: Backend) {
        let app = App::new(backend).await;
        let Two { alice, rita, th1, ws2, th2, .. } = Two::set_up(&app).await;
        let one = make_form(&app, &alice, &th1, "One", Some("2999-01-01T00:00:00Z")).await;
        make_form(&app, &alice, &th2, "Two", None).await;

        let mut sse = Sse::open(&app, "/v1/me/waiting/stream", &rita).await;
        assert_eq!(titles(&sse.list(Duration::from_secs(5)).await), ["One", "Two"]);
        // A form made elsewhere: the list again, with it.
        make_form(&app, &alice, &th2, "Three", None).await;
        assert_eq!(titles(&sse.list(Duration::from_secs(5)).await), ["One", "Three", "Two"]);
        // An answer takes it off within a second.
        submit(&app, &rita, &th1, &one).await;
        let at = Instant::now();
        assert_eq!(titles(&sse.list(Duration::from_secs(1)).await), ["Three", "Two"]);
        let took = at.elapsed();
        assert!(took < Duration::from_secs(1), "{took:?}");
        println!("answer to list ({backend:?}): {took:?}");
        // Added to a third workspace: its forms join, and the stream follows it.
        let (ws3, th3) = app.workspace_with_thread(&alice).await;
        make_form(&app, &alice, &th3, "Four", None).await;
        add(&app, &alice, &ws3, "rita", "respondent").await;
        assert_eq!(titles(&sse.list(Duration::from_secs(5)).await), ["Four", "Three", "Two"]);
        make_form(&app, &alice, &th3, "Five", None).await;
        assert_eq!(titles(&sse.list(Duration::from_secs(5)).await), ["Five", "Four", "Three", "Two"]);

        // Removed from a workspace: its items leave the open stream within a second.
        let removed = app.send("DELETE", &format!("/v1/workspaces/{ws2}/members/rita"), Some(&alice), None).await;
        assert_eq!(removed.status, StatusCode::OK, "{}", removed.body);
        let at = Instant::now();
        let after = sse.list(Duration::from_secs(1)).await;
        let took = at.elapsed();
        assert_eq!(titles(&after), ["Five", "Four"]);
        assert!(took < Duration::from_secs(1), "{took:?}");
        println!("removal to list ({backend:?}): {took:?}");

        // A request whose deadline passes leaves the list when it does.
        let run = paused_run(&app, &alice, &th1, "Report an incident expires_in_secs=1").await;
        let with = sse.list(Duration::from_secs(5)).await;
        assert!(matches!(&with[0].waits, Waits::AskForm { run: r, .. } if *r == run), "{with:?}");
        assert_eq!(titles(&sse.list(Duration::from_secs(5)).await), ["Five", "Four"]);

        // A sign-out ends it, as every stream.
        let out = app.send("POST", "/v1/people/rita/sign-out", Some(&rita), None).await;
        assert_eq!(out.status, StatusCode::OK, "{}", out.body);
        let (event, data) = sse.next(Duration::from_secs(5)).await.expect("access_lost");
        assert_eq!(event, "access_lost", "{data}");
        assert!(sse.next(Duration::from_secs(5)).await.is_none(), "the stream ends");
        let again = app.get("/v1/me/waiting/stream", &rita).await;
        assert_eq!(again.status, StatusCode::UNAUTHORIZED);
    }
}

lattice_testkit::both_backends! {
    async fn at_the_item_limit_everything_passes_one_over_the_oldest_is_cut(backend: Backend) {
        // Forms a few ms apart, on a clock the test moves.
        let clock = lattice_core::ManualClock::new();
        let app = App::on_logged_clock(backend, clock.clone()).await;
        let alice = app.token("t1", "alice", TenantRole::Member, false).await;
        let rita = app.token("t1", "rita", TenantRole::Member, false).await;
        let (ws, th) = app.workspace_with_thread(&alice).await;
        add(&app, &alice, &ws, "rita", "respondent").await;
        // Made through the log, past the HTTP write rate (what is read is
        // read over HTTP); the first two a few ms apart, so the oldest is one.
        let author = lattice_testkit::who("t1", "alice", TenantRole::Member);
        let thread = lattice_core::ThreadId::parse("th", &th).unwrap();
        let mut ids = Vec::new();
        for i in 0..WAITING_LIMIT {
            let data = form(&format!("F{i}"), None, "per_person")["data"].clone();
            let command = lattice_core::Command::CreateArtifact { thread: thread.clone(), id: None, kind: "form".into(), data };
            ids.push(app.log.execute(&author, command).await.unwrap().id.unwrap());
            if i < 2 {
                clock.advance(Duration::from_millis(5));
            }
        }
        let at_limit = waiting(&app, &rita).await;
        assert_eq!(at_limit.len(), WAITING_LIMIT);
        let listed = |items: &[WaitingItem], id: &str| items.iter().any(|i| i.waits == Waits::Form { id: id.to_owned(), version: 1 });
        assert!(ids.iter().all(|id| listed(&at_limit, id)), "at the limit, every form is listed");
        // One over: the last in the list's order (no deadline, the oldest) is cut.
        let extra = make_form(&app, &alice, &th, "F-extra", None).await;
        let over = waiting(&app, &rita).await;
        assert_eq!(over.len(), WAITING_LIMIT);
        assert!(listed(&over, &extra) && !listed(&over, &ids[0]), "the oldest form is the one cut");
        assert!(ids[1..].iter().all(|id| listed(&over, id)));
        // One with a deadline sorts first, and cuts the next oldest.
        let due = make_form(&app, &alice, &th, "Due", Some("2999-01-01T00:00:00Z")).await;
        let over = waiting(&app, &rita).await;
        assert_eq!((over.len(), &over[0].waits), (WAITING_LIMIT, &Waits::Form { id: due, version: 1 }));
        assert!(!listed(&over, &ids[1]));
    }
}

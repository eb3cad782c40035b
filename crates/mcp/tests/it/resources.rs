//! A client follows a form's answers and an artifact without polling
//! (`resources/subscribe`, issue 45): told within a second of a new answer
//! or a new version, only while it may read them, and no more once it
//! unsubscribed; a session's subscriptions are bounded. And the templates'
//! `{id}` completes to the caller's artifacts, `{thread}` to the threads
//! the caller can read (`completion/complete`); a thread is read and
//! followed as an artifact is.
//!
//! rmcp calls `resources/subscribe` legacy (2026-07-28 has
//! `subscriptions/listen`): it is what a client of 2025-11-25 sends.
#![allow(deprecated)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lattice_core::TenantRole;
use lattice_core::clock::{ManualClock, SharedClock};
use lattice_log::Backend;
use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, ReadResourceRequestParams, Reference, ResourceUpdatedNotificationParam, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use serde_json::{Value, json};

use crate::Stack;

/// A host that keeps the URIs it is told were updated, as they come.
#[derive(Clone, Default)]
struct Hears(Arc<Mutex<Vec<String>>>);

impl rmcp::ClientHandler for Hears {
    async fn on_resource_updated(&self, params: ResourceUpdatedNotificationParam, _context: NotificationContext<RoleClient>) {
        self.0.lock().unwrap().push(params.uri);
    }
}

impl Hears {
    fn heard(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    /// How long until `uri` was heard (again: `times` in all); the test
    /// fails, saying `what`, when it is not within `within`.
    async fn until(&self, uri: &str, times: usize, within: Duration, what: &str) -> Duration {
        let start = Instant::now();
        lattice_testkit::eventually_within(within, what, async || {
            (self.heard().iter().filter(|u| *u == uri).count() >= times).then(|| start.elapsed())
        })
        .await
    }
}

fn token(user: &str, role: TenantRole) -> String {
    lattice_testkit::authenticator().mint(&lattice_testkit::principal("t1", user, role, false))
}

async fn form(s: &Stack, alice: &str, th: &str, title: &str) -> String {
    let data = json!({"title": title, "schema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}, "submissions": "many"});
    s.ok("POST", &format!("/v1/threads/{th}/artifacts"), alice, Some(json!({"kind": "form", "data": data}))).await["id"].as_str().unwrap().to_owned()
}

async fn answer(s: &Stack, who: &str, th: &str, form: &str) {
    // A form that takes many answers takes each with a nonce of its own.
    static NONCES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let nonce = format!("answer-{:08}", NONCES.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    let data = json!({"form_id": form, "form_version": 1, "values": {"ok": true}, "nonce": nonce});
    s.ok("POST", &format!("/v1/threads/{th}/artifacts"), who, Some(json!({"kind": "submission", "data": data}))).await;
}

/// Alice's workspace and thread, with rita answering and bob reading, and
/// a form of alice's there.
struct Scene {
    s: Stack,
    alice: String,
    rita: String,
    ws: String,
    th: String,
    asked: String,
}

impl Scene {
    async fn set_up(backend: Backend) -> Self {
        Self::on_clock(backend, lattice_core::clock::system()).await
    }

    async fn on_clock(backend: Backend, clock: SharedClock) -> Self {
        let s = Stack::on_clock(backend, "", clock).await;
        let alice = token("alice", TenantRole::Member);
        let rita = token("rita", TenantRole::Member);
        let (ws, th) = s.workspace_with_thread(&alice).await;
        for (user, role) in [("rita", "respondent"), ("bob", "viewer")] {
            s.ok("POST", &format!("/v1/workspaces/{ws}/members"), &alice, Some(json!({"user": user, "role": role}))).await;
        }
        let asked = form(&s, &alice, &th, "Lunch?").await;
        Self { s, alice, rita, ws, th, asked }
    }
}

async fn read(client: &RunningService<RoleClient, Hears>, uri: &str) -> Value {
    let read = client.read_resource(ReadResourceRequestParams::new(uri)).await.expect("readable");
    let text = serde_json::to_value(&read.contents[0]).unwrap()["text"].as_str().unwrap().to_owned();
    serde_json::from_str(&text).unwrap()
}

lattice_testkit::both_backends! {
    async fn a_subscribed_client_hears_of_a_new_answer_within_a_second(backend: Backend) {
        let Scene { s, alice, rita, ws: _, th, asked } = Scene::set_up(backend).await;
        let answers = format!("lattice://artifacts/{asked}/submissions");
        let head = format!("lattice://artifacts/{asked}");

        let hears = Hears::default();
        let client = s.mcp_with(&alice, hears.clone()).await;
        let info = client.peer_info().expect("the server said who it is");
        assert_eq!(info.capabilities.resources.as_ref().and_then(|r| r.subscribe), Some(true), "subscribe is declared");
        client.subscribe(SubscribeRequestParams::new(answers.clone())).await.expect("subscribed");
        client.subscribe(SubscribeRequestParams::new(head.clone())).await.expect("subscribed");
        assert_eq!(read(&client, &answers).await["submissions"].as_array().unwrap().len(), 0);

        // An answer, through the API as the chat's: heard within a second.
        answer(&s, &rita, &th, &asked).await;
        let took = hears.until(&answers, 1, Duration::from_secs(1), "told of the answer within 1 s").await;
        println!("a new answer reached a subscribed client in {} ms", took.as_millis());
        let now = read(&client, &answers).await;
        assert_eq!(now["submissions"][0]["by"], "rita", "{now}");

        // A new version of the artifact itself.
        s.ok("POST", &format!("/v1/artifacts/{asked}/archive"), &alice, Some(json!({}))).await;
        hears.until(&head, 1, Duration::from_secs(1), "told of the new version within 1 s").await;
        assert_eq!(read(&client, &head).await["archived"], true);

        // Unsubscribed: told no more.
        client.unsubscribe(UnsubscribeRequestParams::new(answers.clone())).await.expect("unsubscribed");
        let before = hears.heard().len();
        let again = form(&s, &alice, &th, "Dinner?").await;
        answer(&s, &rita, &th, &again).await;
        // A claim that nothing comes: only a window can show it (each URI
        // is followed by a task of its own, so no later event bounds it).
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(hears.heard().len(), before, "nothing after unsubscribing: {:?}", hears.heard());
    }
}

lattice_testkit::both_backends! {
    async fn only_what_the_caller_may_read_and_a_bounded_number(backend: Backend) {
        let Scene { s, alice, rita, ws, th, asked } = Scene::set_up(backend).await;
        let bob = token("bob", TenantRole::Member);
        let answers = format!("lattice://artifacts/{asked}/submissions");

        // Another tenant's caller: not found, as every read of it.
        let mal = lattice_testkit::authenticator().mint(&lattice_testkit::principal("t2", "mal", TenantRole::TenantAdmin, false));
        let outsider = s.mcp_with(&mal, Hears::default()).await;
        let refused = outsider.subscribe(SubscribeRequestParams::new(answers.clone())).await.expect_err("not found");
        assert!(refused.to_string().contains("no resource"), "{refused}");
        for bad in ["lattice://artifacts/", "lattice://artifacts/../x", "lattice://elsewhere"] {
            assert!(outsider.subscribe(SubscribeRequestParams::new(bad)).await.is_err(), "{bad}");
        }

        // Bob reads, so follows; taken off the workspace, he hears nothing more.
        let hears = Hears::default();
        let viewer = s.mcp_with(&bob, hears.clone()).await;
        viewer.subscribe(SubscribeRequestParams::new(answers.clone())).await.expect("a viewer follows");
        answer(&s, &rita, &th, &asked).await;
        hears.until(&answers, 1, Duration::from_secs(1), "heard while a member").await;
        s.ok("DELETE", &format!("/v1/workspaces/{ws}/members/bob"), &alice, None).await;
        answer(&s, &rita, &th, &asked).await;
        // Nothing comes: a window (see the unsubscribe above).
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert_eq!(hears.heard().iter().filter(|u| **u == answers).count(), 1, "nothing once he may not read it: {:?}", hears.heard());

        // Rita follows too; signed out everywhere, she hears nothing more.
        let hears = Hears::default();
        let respondent = s.mcp_with(&rita, hears.clone()).await;
        respondent.subscribe(SubscribeRequestParams::new(answers.clone())).await.expect("a respondent follows");
        answer(&s, &alice, &th, &asked).await;
        hears.until(&answers, 1, Duration::from_secs(1), "heard while signed in").await;
        s.ok("POST", "/v1/people/rita/sign-out", &rita, Some(json!({}))).await;
        answer(&s, &alice, &th, &asked).await;
        // Nothing comes: a window (see the unsubscribe above).
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert_eq!(hears.heard().len(), 1, "nothing once signed out: {:?}", hears.heard());

        // At most 64 at once: the 64th passes, the 65th is refused; the
        // same URI again is no new one.
        let client = s.mcp_with(&alice, Hears::default()).await;
        let mut uris = Vec::new();
        for i in 0..32 {
            let id = form(&s, &alice, &th, &format!("F{i}")).await;
            uris.push(format!("lattice://artifacts/{id}"));
            uris.push(format!("lattice://artifacts/{id}/submissions"));
        }
        for uri in &uris {
            client.subscribe(SubscribeRequestParams::new(uri.clone())).await.expect("within the bound");
        }
        client.subscribe(SubscribeRequestParams::new(uris[0].clone())).await.expect("the same one again");
        let over = client.subscribe(SubscribeRequestParams::new(answers.clone())).await.expect_err("one over");
        assert!(over.to_string().contains("at most 64"), "{over}");
        client.unsubscribe(UnsubscribeRequestParams::new(uris[0].clone())).await.unwrap();
        client.subscribe(SubscribeRequestParams::new(answers.clone())).await.expect("room again");
    }
}

async fn completed(client: &RunningService<RoleClient, Hears>, reference: Reference, argument: &str, typed: &str) -> Vec<String> {
    let done = client.complete(CompleteRequestParams::new(reference, ArgumentInfo::new(argument, typed))).await.expect("completed");
    done.completion.values
}

lattice_testkit::both_backends! {
    async fn a_templates_id_completes_to_the_callers_artifacts_of_its_kind(backend: Backend) {
        let clock = ManualClock::new();
        let s = Stack::on_clock(backend, "", clock.clone()).await;
        let alice = token("alice", TenantRole::Member);
        let (_, th) = s.workspace_with_thread(&alice).await;
        let first = form(&s, &alice, &th, "Lunch?").await;
        clock.advance(Duration::from_millis(5));
        let second = form(&s, &alice, &th, "Dinner?").await;
        let board = json!({"kind": "dashboard", "data": {"title": "D", "as_of": "2026-12-05T09:00:00Z", "panels": []}});
        let dashboard = s.ok("POST", &format!("/v1/threads/{th}/artifacts"), &alice, Some(board)).await["id"].as_str().unwrap().to_owned();

        let client = s.mcp_with(&alice, Hears::default()).await;
        assert!(client.peer_info().unwrap().capabilities.completions.is_some(), "completions are declared");
        let answers = Reference::for_resource("lattice://artifacts/{id}/submissions");
        assert_eq!(completed(&client, answers.clone(), "id", "").await, [second.clone(), first.clone()], "the forms, newest first");
        assert_eq!(completed(&client, answers.clone(), "id", &first).await, std::slice::from_ref(&first), "what was typed");
        let any = completed(&client, Reference::for_resource("lattice://artifacts/{id}"), "id", "").await;
        assert_eq!(any.len(), 3, "every artifact: {any:?}");
        assert!(any.contains(&dashboard));
        assert!(completed(&client, Reference::for_resource("ui://lattice/apps/{id}"), "id", "").await.is_empty(), "no app here");
        // No prompts in lattice, no other argument: nothing, and no error.
        assert!(completed(&client, Reference::for_prompt("test_prompt_with_arguments"), "arg1", "test").await.is_empty());
        assert!(completed(&client, answers.clone(), "thread", "").await.is_empty());

        // Another tenant's caller completes to nothing of alice's.
        let mal = lattice_testkit::authenticator().mint(&lattice_testkit::principal("t2", "mal", TenantRole::TenantAdmin, false));
        let outsider = s.mcp_with(&mal, Hears::default()).await;
        assert!(completed(&outsider, answers, "id", "").await.is_empty());
    }
}

lattice_testkit::both_backends! {
    /// A thread as a resource: read, followed, and its `{thread}` completed
    /// to the threads the caller can read, and to no other.
    async fn a_thread_is_read_followed_and_completed_as_its_reader_may(backend: Backend) {
        let clock = ManualClock::new();
        let Scene { s, alice, rita, ws, th, asked } = Scene::on_clock(backend, clock.clone()).await;
        clock.advance(Duration::from_millis(5));
        let later = s.ok("POST", &format!("/v1/workspaces/{ws}/threads"), &alice, Some(json!({"title": "Later"}))).await["id"].as_str().unwrap().to_owned();
        clock.advance(Duration::from_millis(5));
        let body = json!({"title": "Hidden", "restricted": true});
        let hidden = s.ok("POST", &format!("/v1/workspaces/{ws}/threads"), &alice, Some(body)).await["id"].as_str().unwrap().to_owned();

        // Completed: alice (the workspace's admin) all three, newest first;
        // rita (a respondent) not the restricted one she is not listed on;
        // what was typed narrows it; another tenant's caller gets nothing.
        let template = Reference::for_resource("lattice://threads/{thread}");
        let hears = Hears::default();
        let client = s.mcp_with(&alice, hears.clone()).await;
        assert_eq!(completed(&client, template.clone(), "thread", "").await, [hidden.clone(), later.clone(), th.clone()]);
        assert_eq!(completed(&client, template.clone(), "thread", &th).await, std::slice::from_ref(&th), "what was typed");
        assert!(completed(&client, template.clone(), "id", "").await.is_empty(), "no other argument");
        let ritas = s.mcp_with(&rita, Hears::default()).await;
        assert_eq!(completed(&ritas, template.clone(), "thread", "").await, [later.clone(), th.clone()], "not the restricted thread");
        let mal = lattice_testkit::authenticator().mint(&lattice_testkit::principal("t2", "mal", TenantRole::TenantAdmin, false));
        assert!(completed(&s.mcp_with(&mal, Hears::default()).await, template, "thread", "").await.is_empty());

        // Read: its title, its workspace, its artifacts; not rita's to read
        // where she is not listed.
        let uri = format!("lattice://threads/{th}");
        let read_now = read(&client, &uri).await;
        assert_eq!((read_now["title"].as_str(), read_now["workspace"].as_str()), (Some("T"), Some(ws.as_str())), "{read_now}");
        assert_eq!(read_now["artifacts"][0]["id"], asked.as_str(), "{read_now}");
        let refused = ritas.read_resource(ReadResourceRequestParams::new(format!("lattice://threads/{hidden}"))).await;
        assert!(refused.is_err(), "a restricted thread is no resource to rita");

        // Followed: a new artifact in it is told within a second.
        client.subscribe(SubscribeRequestParams::new(uri.clone())).await.expect("subscribed");
        let board = json!({"kind": "dashboard", "data": {"title": "Board", "as_of": "2026-12-05T09:00:00Z", "panels": []}});
        clock.advance(Duration::from_millis(5));
        s.ok("POST", &format!("/v1/threads/{th}/artifacts"), &alice, Some(board)).await;
        hears.until(&uri, 1, Duration::from_secs(1), "told of the new artifact within 1 s").await;
        assert_eq!(read(&client, &uri).await["artifacts"][0]["title"], "Board", "newest first");
    }
}

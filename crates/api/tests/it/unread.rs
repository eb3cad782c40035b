//! Unread marks (issue 44): a thread is unread for a person when someone
//! else (a person or an agent) wrote or showed something there after their
//! read mark (`PUT /v1/threads/{th}/read`); their own messages and a run's
//! steps do not count. The mark never moves back nor past the thread's last
//! envelope, is kept beside the log (nothing is appended for it), and only
//! a reader of the thread may set it.

use axum::http::StatusCode;
use lattice_core::TenantRole;
use serde_json::{Value, json};

use crate::{App, Reply, error_type};

async fn mark(app: &App, token: &str, th: &str, seq: Value) -> Reply {
    app.send("PUT", &format!("/v1/threads/{th}/read"), Some(token), Some(&json!({ "seq": seq }).to_string())).await
}

/// Whether each of the workspace's threads is unread for `token`'s holder.
async fn unread(app: &App, token: &str, ws: &str) -> Vec<(String, bool)> {
    let got = app.get(&format!("/v1/workspaces/{ws}/threads"), token).await;
    assert_eq!(got.status, StatusCode::OK, "{}", got.body);
    got.body.as_array().unwrap().iter().map(|t| (t["id"].as_str().unwrap().to_owned(), t["unread"].as_bool().expect("a list says unread"))).collect()
}

async fn unread_in(app: &App, token: &str, ws: &str, th: &str) -> bool {
    unread(app, token, ws).await.into_iter().find(|(id, _)| id == th).expect("the thread is listed").1
}

async fn say(app: &App, token: &str, th: &str, text: &str) -> i64 {
    let posted = app.post(&format!("/v1/threads/{th}/messages"), token, json!({ "text": text })).await;
    assert_eq!(posted.status, StatusCode::OK, "{}", posted.body);
    posted.body["seq"].as_i64().unwrap()
}

lattice_testkit::both_backends! {
    async fn a_thread_is_unread_after_someone_elses_message_until_read(backend: Backend) {
        let app = App::new(backend).await;
        let alice = app.token("t1", "alice", TenantRole::Member, false).await;
        let bob = app.token("t1", "bob", TenantRole::Member, false).await;
        let (ws, th) = app.workspace_with_thread(&alice).await;
        let added = app.post(&format!("/v1/workspaces/{ws}/members"), &alice, json!({"user": "bob", "role": "editor"})).await;
        assert_eq!(added.status, StatusCode::OK, "{}", added.body);

        // Alice's own message is not news to her; it is to bob.
        let first = say(&app, &alice, &th, "Hello").await;
        assert!(!unread_in(&app, &alice, &ws, &th).await, "her own message");
        assert!(unread_in(&app, &bob, &ws, &th).await, "someone else's message");

        // Read as far as it, bob's thread is read; alice's mark is hers alone.
        let marked = mark(&app, &bob, &th, json!(first)).await;
        assert_eq!((marked.status, marked.body["seq"].as_i64()), (StatusCode::OK, Some(first)), "{}", marked.body);
        assert!(!unread_in(&app, &bob, &ws, &th).await);

        // Bob answers: unread for alice until she reads that far.
        let second = say(&app, &bob, &th, "Hi").await;
        assert!(unread_in(&app, &alice, &ws, &th).await);
        assert!(!unread_in(&app, &bob, &ws, &th).await, "his own answer");
        assert!(unread_in(&app, &alice, &ws, &th).await);
        mark(&app, &alice, &th, json!(second - 1)).await;
        assert!(unread_in(&app, &alice, &ws, &th).await, "read to just before it");
        mark(&app, &alice, &th, json!(second)).await;
        assert!(!unread_in(&app, &alice, &ws, &th).await);

        // An artifact by someone else makes it unread too.
        let dashboard = json!({"kind": "dashboard", "data": {"title": "D", "as_of": "2026-12-05T09:00:00Z", "panels": []}});
        let shown = app.post(&format!("/v1/threads/{th}/artifacts"), &bob, dashboard).await;
        assert_eq!(shown.status, StatusCode::OK, "{}", shown.body);
        assert!(unread_in(&app, &alice, &ws, &th).await, "a dashboard shown by bob");

        // Never back: a mark before the one held leaves it; never past the
        // thread's last envelope: one far ahead stops there.
        let held = mark(&app, &alice, &th, json!(first)).await;
        assert_eq!(held.body["seq"].as_i64(), Some(second), "{}", held.body);
        let ahead = mark(&app, &alice, &th, json!(i64::MAX)).await;
        assert_eq!(ahead.status, StatusCode::OK, "{}", ahead.body);
        let last = ahead.body["seq"].as_i64().unwrap();
        assert!(last > second && last < i64::MAX, "the thread's last envelope: {last}");
        assert!(!unread_in(&app, &alice, &ws, &th).await);
        say(&app, &bob, &th, "One more").await;
        assert!(unread_in(&app, &alice, &ws, &th).await, "a mark set ahead does not swallow what comes later");
    }
}

lattice_testkit::both_backends! {
    async fn an_agents_reply_is_news_and_a_runs_steps_are_not(backend: Backend) {
        let app = App::new(backend).await;
        let alice = app.token("t1", "alice", TenantRole::Member, false).await;
        let (ws, th) = app.workspace_with_thread(&alice).await;
        let started = app.post(&format!("/v1/threads/{th}/runs"), &alice, json!({"prompt": "hi", "model": "scripted:dashboard"})).await;
        assert_eq!(started.status, StatusCode::OK, "{}", started.body);
        let run = started.body["run_id"].as_str().unwrap().to_owned();
        lattice_testkit::until("the run to finish", async || app.get(&format!("/v1/runs/{run}"), &alice).await.body["status"] == "finished").await;
        assert!(unread_in(&app, &alice, &ws, &th).await, "the agent's reply");
        let events = app.get(&format!("/v1/threads/{th}/events?format=json"), &alice).await;
        let types: Vec<(i64, String)> = events.body["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e["seq"].as_i64().unwrap(), e["type"].as_str().unwrap().to_owned()))
            .collect();
        let reply = types.iter().rev().find(|(_, t)| t == "message_posted").expect("the agent replied").0;
        assert!(types.iter().any(|(s, t)| *s > reply && t.starts_with("run_")), "the run's steps come after its reply: {types:?}");
        mark(&app, &alice, &th, json!(reply)).await;
        assert!(!unread_in(&app, &alice, &ws, &th).await, "read to the reply: the run's later steps are no news");
    }
}

lattice_testkit::both_backends! {
    async fn only_a_reader_marks_and_a_mark_appends_nothing(backend: Backend) {
        let app = App::new(backend).await;
        let alice = app.token("t1", "alice", TenantRole::Member, false).await;
        let (ws, th) = app.workspace_with_thread(&alice).await;
        let restricted = app.post(&format!("/v1/workspaces/{ws}/threads"), &alice, json!({"title": "Salaries", "restricted": true})).await;
        let restricted = restricted.body["id"].as_str().unwrap().to_owned();
        let added = app.post(&format!("/v1/workspaces/{ws}/members"), &alice, json!({"user": "vic", "role": "viewer"})).await;
        assert_eq!(added.status, StatusCode::OK);
        let vic = app.token("t1", "vic", TenantRole::Member, false).await;
        let mal = app.token("t2", "mal", TenantRole::TenantAdmin, false).await;
        let seq = say(&app, &alice, &th, "Hello").await;

        let before = app.event_count(&alice, &ws).await;
        assert_eq!(mark(&app, &vic, &th, json!(seq)).await.status, StatusCode::OK, "a viewer reads, so marks");
        assert_eq!(app.event_count(&alice, &ws).await, before, "nothing appended to the log");
        for (who, th) in [(&vic, &restricted), (&mal, &th)] {
            let refused = mark(&app, who, th, json!(seq)).await;
            assert_eq!((refused.status, error_type(&refused)), (StatusCode::NOT_FOUND, "NotFound"), "{}", refused.body);
        }
        for body in [json!({"seq": "7"}), json!({"seq": 1, "more": true}), json!({})] {
            let refused = app.send("PUT", &format!("/v1/threads/{th}/read"), Some(&vic), Some(&body.to_string())).await;
            assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {}", refused.body);
        }
        let refused = mark(&app, &vic, "not_a_thread%21", json!(seq)).await;
        assert!(refused.status.is_client_error() && refused.body["error"]["type"].is_string(), "{}", refused.body);

        // The threads shared with a person say it too.
        let shared = app.post(&format!("/v1/threads/{restricted}/members"), &alice, json!({"user": "vic", "role": "viewer"})).await;
        assert_eq!(shared.status, StatusCode::OK, "{}", shared.body);
        say(&app, &alice, &restricted, "Only for some").await;
        let listed = app.get("/v1/threads", &vic).await;
        let listed: Vec<(&str, Option<bool>)> = listed.body.as_array().unwrap().iter().map(|t| (t["id"].as_str().unwrap(), t["unread"].as_bool())).collect();
        assert_eq!(listed, [(restricted.as_str(), Some(true))]);
    }
}

/// Waits until the fold has reached `seq` (src/unread.rs in lattice-log).
async fn folded_to(app: &App, seq: i64) {
    lattice_testkit::until(&format!("the fold to reach {seq}"), async || app.log.unread_folded().await.unwrap() >= seq).await;
}

lattice_testkit::both_backends! {
    /// Three people in three threads say things and read in an order drawn
    /// at random (seeded): after every step each one's list says what the
    /// record of who said what where, and who read how far, says, whether
    /// the fold has reached the step (the rows answer) or not (the log
    /// past the fold answers), and again once it has.
    async fn a_list_says_what_the_record_says_folded_or_not(backend: Backend) {
        let app = App::new(backend).await;
        let names = ["alice", "bob", "carol"];
        let mut tokens = Vec::new();
        for name in names {
            tokens.push(app.token("t1", name, TenantRole::Member, false).await);
        }
        let (ws, first) = app.workspace_with_thread(&tokens[0]).await;
        for name in &names[1..] {
            let added = app.post(&format!("/v1/workspaces/{ws}/members"), &tokens[0], json!({"user": name, "role": "editor"})).await;
            assert_eq!(added.status, StatusCode::OK, "{}", added.body);
        }
        let mut threads = vec![first];
        for title in ["B", "C"] {
            let made = app.post(&format!("/v1/workspaces/{ws}/threads"), &tokens[0], json!({"title": title})).await;
            threads.push(made.body["id"].as_str().unwrap().to_owned());
        }
        // (seq, thread, author) of every message; each person's mark per thread.
        let mut said: Vec<(i64, usize, usize)> = Vec::new();
        let mut marks = [[0i64; 3]; 3];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut draw = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n) as usize
        };
        let mut last = 0;
        let mut unfolded_checks = 0;
        for step in 0..60 {
            let (who, th) = (draw(3), draw(3));
            if draw(3) == 0 {
                // Reads as far as some envelope of the thread (or its end).
                let upto = said.iter().filter(|s| s.1 == th).map(|s| s.0).nth(draw(4)).unwrap_or(last);
                let marked = mark(&app, &tokens[who], &threads[th], json!(upto)).await;
                assert_eq!(marked.status, StatusCode::OK, "{}", marked.body);
                marks[who][th] = marked.body["seq"].as_i64().unwrap();
            } else {
                last = say(&app, &tokens[who], &threads[th], &format!("step {step}")).await;
                said.push((last, th, who));
            }
            if step % 15 == 14 {
                folded_to(&app, last).await;
            }
            if app.log.unread_folded().await.unwrap() < last {
                unfolded_checks += 1;
            }
            for (who, token) in tokens.iter().enumerate() {
                let listed = unread(&app, token, &ws).await;
                for (th, id) in threads.iter().enumerate() {
                    let expected = said.iter().any(|&(seq, t, author)| t == th && author != who && seq > marks[who][th]);
                    let got = listed.iter().find(|(listed, _)| listed == id).expect("listed").1;
                    assert_eq!(got, expected, "step {step}: {} in thread {th}, said {said:?}, marks {marks:?}", names[who]);
                }
            }
        }
        folded_to(&app, last).await;
        for (who, token) in tokens.iter().enumerate() {
            let listed = unread(&app, token, &ws).await;
            for (th, id) in threads.iter().enumerate() {
                let expected = said.iter().any(|&(seq, t, author)| t == th && author != who && seq > marks[who][th]);
                assert_eq!(listed.iter().find(|(l, _)| l == id).unwrap().1, expected, "folded: {} in thread {th}", names[who]);
            }
        }
        assert!(unfolded_checks > 0, "some lists were read before the fold reached their step");
    }
}

//! The seeded data read back through the product, before anything is
//! timed: each measured read answers what was seeded (so no figure is an
//! empty read's), artifacts' digests are the product's, and a seeded run
//! paused on its ask_form goes on when answered.

use std::time::Duration;

use axum::http::StatusCode;
use serde_json::{Value, json};

use super::reads::Read;
use super::side::Side;

const PAGE: usize = 500;

/// Panics unless the thread list says the same on both logs (the same
/// workspace, envelope for envelope): the same threads, each as unread.
pub async fn same_lists(large: &Side, small: &Side) {
    assert_eq!(unread_list(large).await, unread_list(small).await, "the thread list on the two logs");
}

/// Each thread of the list, and whether it is unread.
async fn unread_list(side: &Side) -> Vec<(String, bool)> {
    let (_, uri, _) = Read::ThreadList.request(side, 0);
    let list = side.json(&uri).await;
    list.as_array().unwrap().iter().map(|t| (t["id"].as_str().unwrap().to_owned(), t["unread"].as_bool().unwrap())).collect()
}

/// Panics, saying what differs, unless every read answers what was seeded.
pub async fn reads(side: &Side) {
    let p = &side.probe;
    let page = |read: Read| {
        let (_, uri, _) = read.request(side, 0);
        async move { side.json(&uri).await }
    };

    let first = page(Read::ThreadFirstPage).await;
    let events = first["events"].as_array().unwrap();
    assert_eq!(events.len(), p.thread_length.min(PAGE), "the thread's first page");
    assert_eq!(events[0]["type"], "thread_created");
    assert!(events.iter().all(|e| e["thread"] == p.thread.as_str()));
    for kind in ["message_posted", "artifact_created", "run_paused", "deferred_answered", "model_replied"] {
        assert!(events.iter().any(|e| e["type"] == kind), "no {kind} on the thread's first page");
    }

    let later = page(Read::ThreadLaterPage).await;
    let events = later["events"].as_array().unwrap();
    assert_eq!(events.len(), p.thread_later.min(PAGE), "the thread's later page");
    assert!(events[0]["seq"].as_i64().unwrap() > p.thread_after);

    let list = page(Read::ThreadList).await;
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), p.visible_threads, "the workspace's thread list");
    assert!(list.iter().any(|t| t["id"] == p.thread.as_str()));
    assert!(list.iter().any(|t| t["unread"] == true) && list.iter().any(|t| t["unread"] == false), "unread marks");

    let caught = page(Read::WorkspaceCatchUp).await;
    let events = caught["events"].as_array().unwrap();
    assert_eq!(events.len(), p.ws_later.min(PAGE), "the workspace's catch-up");
    assert!(events.iter().all(|e| e["workspace"] == p.ws.as_str() && e["seq"].as_i64().unwrap() > p.ws_after));

    let submissions = page(Read::FormSubmissions).await;
    let submissions = submissions.as_array().unwrap();
    assert_eq!(submissions.len(), p.submissions, "the form's submissions");
    assert!(submissions.iter().all(|s| s["kind"] == "submission" && s["data"]["form_id"] == p.form.as_str()));
    for s in submissions {
        assert_eq!(s["digest"], lattice_log::digest(&s["data"]), "a submission's digest");
    }

    let effective = page(Read::SwitchResolution).await;
    assert_eq!(effective["ui:mini-apps"], json!({"enabled": true, "because": "ui:mini-apps is on for the workspace"}));
    assert_eq!(effective["ui:forms"], json!({"enabled": true, "because": "ui:forms is on for the tenant"}));

    let run = side.json(&format!("/v1/runs/{}", p.paused_run)).await;
    assert_eq!(run["status"], "paused", "{run}");
    assert_eq!(run["requests"][0]["tool_name"], "ask_form");

    if let Some((app, version)) = &p.app {
        let head = side.json(&format!("/v1/artifacts/{app}")).await;
        assert_eq!(head["version"], *version, "the app's head");
        assert_eq!(head["digest"], lattice_log::digest(&head["data"]), "the app's digest");
    }
}

/// Answers the probe thread's paused ask_form through the API, and waits
/// for the run (the scripted model, reading the seeded transcript) to
/// finish.
pub async fn run_goes_on(side: &Side) {
    let p = &side.probe;
    let body = json!({"tool_call_id": "call_ask_form_1", "answer": {"date": "2026-06-01", "severity": "low"}});
    let (status, bytes, _) = side.call("POST", &format!("/v1/runs/{}/answers", p.paused_run), Some(body.to_string())).await;
    assert_eq!(status, StatusCode::OK, "answering the seeded run: {}", String::from_utf8_lossy(&bytes));
    for _ in 0..200 {
        let run: Value = side.json(&format!("/v1/runs/{}", p.paused_run)).await;
        if run["status"] == "finished" {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the seeded run did not finish once answered");
}

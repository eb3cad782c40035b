//! What the chat offers follows the viewer's role (the server decides
//! either way): a respondent is shown the form and sends it, with no
//! composer; a viewer gets no composer (a form a viewer sends is refused
//! by the server, in the form: `submissions.rs`).

use lattice_e2e::browser::Chrome;
use lattice_e2e::{Client, UpProcess};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_respondent_is_offered_the_form_and_no_composer() {
    let up = UpProcess::start().await;
    let ana = Client::sign_in_as(&up.base, json!({"tenant": "t-roles", "user": "ana", "role": "tenant_admin"})).await;
    let (ws, th) = super::workspace_with_thread(&ana, "Roles").await;
    for (user, role) in [("rita", "respondent"), ("vic", "viewer")] {
        ana.ok("POST", &format!("/v1/workspaces/{ws}/members"), json!({"user": user, "role": role})).await;
    }
    let form = json!({"title": "Shift preference", "schema": {"type": "object", "properties": {"shift": {"title": "Shift", "enum": ["early", "late"]}}, "required": ["shift"]}, "submissions": "per_person"});
    let form = ana.ok("POST", &format!("/v1/threads/{th}/artifacts"), json!({"kind": "form", "data": form})).await["id"].as_str().unwrap().to_owned();
    let rita = Client::sign_in_as(&up.base, json!({"tenant": "t-roles", "user": "rita"})).await;
    let vic = Client::sign_in_as(&up.base, json!({"tenant": "t-roles", "user": "vic"})).await;
    let chrome = Chrome::launch().await;

    let w = chrome.window(&up.base, &rita.token, "light", &format!("/t/{th}")).await;
    w.until("() => !!document.querySelector('.form-artifact form.schema-form')", "the form, to send").await;
    let listed = rita.ok("GET", "/v1/workspaces", Value::Null).await;
    assert_eq!(listed[0]["role"], "respondent", "{listed}");
    w.until("() => !document.querySelector('#composer-text')", "no composer for a respondent").await;
    w.page.get_by_label("late", true).check(None).await.unwrap();
    w.page.locator(".form-artifact form.schema-form button[type=submit]").click(None).await.unwrap();
    w.until("() => !!document.querySelector('.form-artifact .answered')", "sent").await;
    let subs = ana.ok("GET", &format!("/v1/threads/{th}/artifacts?kind=submission&form_id={form}"), Value::Null).await;
    assert_eq!(subs[0]["author"], "rita");
    assert_eq!(subs[0]["data"]["values"], json!({"shift": "late"}));

    // The thread's admin is offered the composer, once the page knows the
    // role, and shares the thread with someone outside the workspace.
    let w = chrome.window(&up.base, &ana.token, "light", &format!("/t/{th}")).await;
    w.until("() => !!document.querySelector('#composer-text')", "the composer for an admin").await;
    w.page.locator(".people summary").click(None).await.unwrap();
    w.page.locator("#share-user").fill("otto", None).await.unwrap();
    w.page.locator(".people button[type=submit]").click(None).await.unwrap();
    w.until("() => /otto is listed as viewer/.test(document.querySelector('.people').textContent)", "the share done").await;

    // A viewer reads the form and is offered nothing to send; so is
    // someone outside the workspace the thread is shared with read-only,
    // who finds it on the first page.
    let otto = Client::sign_in_as(&up.base, json!({"tenant": "t-roles", "user": "otto"})).await;
    let home = chrome.window(&up.base, &otto.token, "light", "/").await;
    home.until(&format!("() => !!document.querySelector('.shared a[href=\"/t/{th}\"]')"), "the thread shared with otto").await;
    for reader in [&vic, &otto] {
        let w = chrome.window(&up.base, &reader.token, "light", &format!("/t/{th}")).await;
        w.until("() => !!document.querySelector('.form-artifact h3, .form-artifact h2')", "the form, to read").await;
        w.until("() => /respondent role/.test(document.querySelector('.form-artifact').textContent)", "a note instead of the form").await;
        let offered: bool = w.eval("() => !!document.querySelector('form.schema-form') || !!document.querySelector('#composer-text')").await;
        assert!(!offered, "a reader was offered a form or the composer");
    }
    let (status, body) = otto.post(&format!("/v1/threads/{th}/messages"), json!({"text": "hi"})).await.unwrap();
    assert_eq!(status, 403, "{body}");
}

/// An ask_form with a deadline: the chat says by when, then that it
/// expired; the run goes on with `expired`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ask_form_past_its_deadline_shows_as_expired() {
    let up = UpProcess::start().await;
    let ana = Client::sign_in_as(&up.base, json!({"tenant": "t-late", "user": "ana", "role": "tenant_admin"})).await;
    let (_, th) = super::workspace_with_thread(&ana, "Deadline").await;
    let chrome = Chrome::launch().await;
    let w = chrome.window(&up.base, &ana.token, "light", &format!("/t/{th}")).await;
    let run = ana.ok("POST", &format!("/v1/threads/{th}/runs"), json!({"prompt": "Report it expires_in_secs=5", "model": "scripted:ask_form"})).await;
    w.until("() => !!document.querySelector('.deadline time')", "when to answer by").await;
    w.until("() => !!document.querySelector('.answered.expired')", "the form, expired").await;
    w.until("() => !document.querySelector('form.schema-form')", "nothing left to send").await;
    let run = ana.ok("GET", &format!("/v1/runs/{}", run["run_id"].as_str().unwrap()), Value::Null).await;
    assert_eq!(run["requests"][0]["answered_by"], "deadline", "{run}");
    assert!(run["requests"][0]["expires_at"].as_str().is_some_and(|at| at.ends_with('Z')), "{run}");
}

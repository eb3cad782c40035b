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

    // The thread's admin is offered the composer, once the page knows the role.
    let w = chrome.window(&up.base, &ana.token, "light", &format!("/t/{th}")).await;
    w.until("() => !!document.querySelector('#composer-text')", "the composer for an admin").await;

    let w = chrome.window(&up.base, &vic.token, "light", &format!("/t/{th}")).await;
    w.until("() => !!document.querySelector('.form-artifact')", "the form, to read").await;
    w.until("() => document.querySelector('.run-status') !== null && !document.querySelector('#composer-text')", "no composer for a viewer").await;
}

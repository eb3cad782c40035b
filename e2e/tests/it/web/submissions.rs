//! A form that takes many submissions: two people send, each through their
//! own page, and each sees both in the form's list; a refusal the server
//! makes shows its words and its code.

use lattice_e2e::browser::Chrome;
use lattice_e2e::{Client, Deployment, On, UpProcess};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_people_submit_and_each_sees_the_list() {
    two_people_submit_and_each_sees_the_list_on(On::Up).await;
}

/// The same against the multi-process stack (REQUIREMENTS.md X2), through the edge.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_people_submit_and_each_sees_the_list_on_the_stack() {
    two_people_submit_and_each_sees_the_list_on(On::Stack).await;
}

async fn two_people_submit_and_each_sees_the_list_on(on: On) {
    let up = Deployment::start(on).await;
    let ana = Client::sign_in(up.base(), "acme", "ana").await;
    let bob = Client::sign_in(up.base(), "acme", "bob").await;
    let (ws, th) = super::workspace_with_thread(&ana, "Retro").await;
    ana.ok("POST", &format!("/v1/workspaces/{ws}/members"), json!({"user": "bob", "role": "editor"})).await;
    let form = ana
        .ok(
            "POST",
            &format!("/v1/threads/{th}/artifacts"),
            json!({"kind": "form", "data": {
                "title": "Ideas for the next sprint",
                "schema": {"type": "object", "properties": {
                    "idea": {"type": "string", "title": "Your idea", "minLength": 3, "maxLength": 200},
                    "votes": {"type": "integer", "title": "Votes", "minimum": 0, "maximum": 5}
                }, "required": ["idea"]},
                "ui": {"submit_label": "Add my idea", "fields": {"idea": {"placeholder": "One line", "help": "Be brief."}}},
                "submissions": "many"
            }}),
        )
        .await;
    let form_id = form["id"].as_str().unwrap().to_owned();

    let chrome = Chrome::launch().await;
    let pages = [
        (chrome.window(up.base(), &ana.token, "light", &format!("/t/{th}")).await, "Ana wants shorter standups"),
        (chrome.window(up.base(), &bob.token, "dark", &format!("/t/{th}")).await, "Bob wants fewer meetings"),
    ];
    let field = format!("form-{form_id}-idea");
    for (w, idea) in &pages {
        w.until(&format!("() => !!document.getElementById('{field}')"), "the form").await;
        w.page.locator(format!("#{field}")).fill(idea, None).await.unwrap();
        w.page.locator(format!("#form-{form_id}-votes")).fill("9", None).await.unwrap();
        w.page.get_by_text("Add my idea", true).click(None).await.unwrap();
        // Votes above the maximum: refused here, under the field, and nothing sent.
        w.until(&format!("() => document.getElementById('form-{form_id}-votes-error').textContent.includes('5')"), "the votes refusal").await;
        w.page.locator(format!("#form-{form_id}-votes")).fill("2", None).await.unwrap();
        w.page.get_by_text("Add my idea", true).click(None).await.unwrap();
        w.until(&format!("() => document.querySelector('#form-{form_id} [role=status]').textContent === 'Sent.'"), "the sent note").await;
    }
    for (w, _) in &pages {
        w.until(
            "() => [...document.querySelectorAll('.submissions summary')].some(s => s.textContent === 'Submissions (2)')",
            "both submissions listed",
        )
        .await;
        let items: Vec<String> = w.eval("() => [...document.querySelectorAll('.submissions li')].map(li => li.textContent)").await;
        assert_eq!(items, vec!["ana: idea: Ana wants shorter standups; votes: 2", "bob: idea: Bob wants fewer meetings; votes: 2"]);
        // A form that takes many stays open for another.
        assert_eq!(w.eval::<String>(&format!("() => document.getElementById('{field}').value")).await, "", "the fields are cleared");
    }
    // The form changes under both: each page says so and shows the new one.
    ana.ok(
        "PATCH",
        &format!("/v1/artifacts/{form_id}"),
        json!({"expected_version": 1, "patch": [
            {"op": "replace", "path": "/title", "value": "Ideas, round two"}
        ]}),
    )
    .await;
    for (w, _) in &pages {
        w.until("() => document.querySelector('.form-artifact .changed') !== null", "the changed note").await;
        let note: String = w.eval("() => document.querySelector('.form-artifact .changed').textContent").await;
        assert!(note.starts_with("This form changed"), "{note}");
        assert_eq!(w.eval::<String>("() => document.querySelector('.form-artifact h2').textContent").await, "Ideas, round two");
    }
    let (_, subs) = ana.get(&format!("/v1/threads/{th}/artifacts?kind=submission&form_id={form_id}")).await.unwrap();
    let authors: Vec<&str> = subs.as_array().unwrap().iter().map(|s| s["author"].as_str().unwrap()).collect();
    assert_eq!(authors.len(), 2, "{subs}");
    assert!(authors.contains(&"ana") && authors.contains(&"bob"), "each is the submitter's own: {authors:?}");
}

/// The server's verdict counts: a respondent made a viewer after the page
/// drew the form sends it; the send passes the page's checks and is
/// refused by the log; the refusal shows in the form, nothing is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_from_the_server_is_shown_in_the_form() {
    let up = UpProcess::start().await;
    let ana = Client::sign_in(&up.base, "acme", "ana").await;
    let vic = Client::sign_in(&up.base, "acme", "vic").await;
    let (ws, th) = super::workspace_with_thread(&ana, "Read only").await;
    ana.ok("POST", &format!("/v1/workspaces/{ws}/members"), json!({"user": "vic", "role": "respondent"})).await;
    let form = ana
        .ok(
            "POST",
            &format!("/v1/threads/{th}/artifacts"),
            json!({"kind": "form", "data": {"title": "Vote", "schema": {"type": "object", "properties": {"yes": {"type": "boolean", "title": "Yes?"}}}, "submissions": "per_person"}}),
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let chrome = Chrome::launch().await;
    let w = chrome.window(&up.base, &vic.token, "light", &format!("/t/{th}")).await;
    w.until(&format!("() => !!document.getElementById('form-{form}-yes')"), "the form").await;
    ana.ok("POST", &format!("/v1/workspaces/{ws}/members"), json!({"user": "vic", "role": "viewer"})).await;
    w.page.locator(format!("#form-{form}-yes")).check(None).await.unwrap();
    w.page.get_by_text("Send", true).click(None).await.unwrap();
    w.until(&format!("() => document.querySelector('#form-{form} [role=alert]').textContent.length > 0"), "the server's refusal").await;
    let said: String = w.eval(&format!("() => document.querySelector('#form-{form} [role=alert]').textContent")).await;
    assert!(said.to_lowercase().contains("forbidden"), "{said}");
    let (_, subs) = ana.get(&format!("/v1/threads/{th}/artifacts?kind=submission&form_id={form}")).await.unwrap();
    assert_eq!(subs, json!([]), "nothing was written");
}

/// A decimal field as the browser reads and writes it (the page's numbers
/// go through the browser's own conversions): the schema's bounds and step
/// drawn as the control's attributes, a value below the minimum refused
/// under the field in a capitalized sentence, and a decimal sent as the
/// number typed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decimal_field_takes_the_number_typed() {
    let up = UpProcess::start().await;
    let ana = Client::sign_in(&up.base, "acme", "ana").await;
    let (_, th) = super::workspace_with_thread(&ana, "Expenses").await;
    let form = ana
        .ok(
            "POST",
            &format!("/v1/threads/{th}/artifacts"),
            json!({"kind": "form", "data": {
                "title": "A refund",
                "schema": {"type": "object", "properties": {
                    "amount": {"type": "number", "title": "Amount", "minimum": 0.5, "maximum": 1000000, "multipleOf": 0.25}
                }, "required": ["amount"]},
                "submissions": "many"
            }}),
        )
        .await;
    let form_id = form["id"].as_str().unwrap().to_owned();
    let chrome = Chrome::launch().await;
    let w = chrome.window(&up.base, &ana.token, "light", &format!("/t/{th}")).await;
    let field = format!("form-{form_id}-amount");
    w.until(&format!("() => !!document.getElementById('{field}')"), "the form").await;
    let attributes: Vec<String> = w.eval(&format!("() => ['min', 'max', 'step'].map(a => document.getElementById('{field}').getAttribute(a))")).await;
    assert_eq!(attributes, vec!["0.5", "1000000", "0.25"]);

    w.page.locator(format!("#{field}")).fill("0.25", None).await.unwrap();
    w.page.get_by_text("Send", true).click(None).await.unwrap();
    w.until(&format!("() => document.getElementById('{field}-error').textContent !== ''"), "the refusal").await;
    let refusal: String = w.eval(&format!("() => document.getElementById('{field}-error').textContent")).await;
    assert!(refusal.starts_with("Must be at least 0.5"), "{refusal}");

    w.page.locator(format!("#{field}")).fill("1.75", None).await.unwrap();
    w.page.get_by_text("Send", true).click(None).await.unwrap();
    w.until(&format!("() => document.querySelector('#form-{form_id} [role=status]').textContent === 'Sent.'"), "the sent note").await;
    let (_, subs) = ana.get(&format!("/v1/threads/{th}/artifacts?kind=submission&form_id={form_id}")).await.unwrap();
    assert_eq!(subs[0]["data"]["values"], json!({"amount": 1.75}), "{subs}");
    assert!(subs[0]["id"].as_str().unwrap().starts_with("sub_"), "the write path gave it its id: {subs}");
}

/// A refusal the page could not foresee shows its words and its stable
/// code: a form whose deadline passes while its page is open is refused
/// by the server as `form_closed`, and the page says so under the form.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_from_the_server_shows_its_code() {
    let up = UpProcess::start().await;
    let ana = Client::sign_in(&up.base, "acme", "ana").await;
    let (_, th) = super::workspace_with_thread(&ana, "Deadline").await;
    let chrome = Chrome::launch().await;
    let w = chrome.window(&up.base, &ana.token, "light", &format!("/t/{th}")).await;
    w.until("() => document.querySelector('h1')?.textContent === 'Deadline'", "the thread's page").await;
    // Made while the page is open, so it is drawn open; it closes soon after.
    let closes_at = lattice_log::rfc3339(lattice_core::clock::system().now_ms() + 5_000);
    let form = ana
        .ok(
            "POST",
            &format!("/v1/threads/{th}/artifacts"),
            json!({"kind": "form", "data": {"title": "Quick poll", "closes_at": closes_at, "submissions": "many",
                "schema": {"type": "object", "properties": {"idea": {"type": "string", "title": "Your idea"}}, "required": ["idea"]}}}),
        )
        .await;
    let form_id = form["id"].as_str().unwrap().to_owned();
    let field = format!("form-{form_id}-idea");
    w.until(&format!("() => !!document.getElementById('{field}')"), "the form, open").await;
    // The deadline by the server's clock: a probe without values is refused
    // for them (422) until the form is closed (409); it commits nothing.
    let probe = json!({"kind": "submission", "data": {"form_id": form_id, "form_version": 1, "values": {}, "nonce": "probe-0001"}});
    let refused = lattice_testkit::eventually("the form to close", async || {
        let (status, body) = ana.post(&format!("/v1/threads/{th}/artifacts"), probe.clone()).await.unwrap();
        (status == 409).then_some(body)
    })
    .await;
    assert_eq!(refused["error"]["code"], "form_closed", "{refused}");
    assert_eq!(refused["error"]["link"], "/docs/errors#form_closed", "{refused}");

    w.page.locator(format!("#{field}")).fill("A late idea", None).await.unwrap();
    w.page.locator(format!("#form-{form_id} button[type=submit]")).click(None).await.unwrap();
    w.until(&format!("() => !!document.querySelector('#form-{form_id} .form-errors .error-code')"), "the refusal's code").await;
    let shown: String = w.eval(&format!("() => document.querySelector('#form-{form_id} .form-errors').textContent")).await;
    assert_eq!(shown, "This form is closed: it takes no more answers. form_closed");
    let code: String = w.eval(&format!("() => document.querySelector('#form-{form_id} .error-code').textContent")).await;
    assert_eq!(code, "form_closed");
    assert!(!ana.all_events(&th).await.iter().any(|e| e["payload"]["kind"] == "submission"), "nothing was submitted");
}

/// A field's choices shown by their labels (a server's titled enum): the
/// person picks the words, the form sends the value.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn choices_show_their_labels_and_send_their_values() {
    let up = UpProcess::start().await;
    let ana = Client::sign_in(&up.base, "acme", "ana").await;
    let (_, th) = super::workspace_with_thread(&ana, "Labels").await;
    let heroes: Vec<String> = (1..=6).map(|i| format!("hero-{i}")).collect();
    let form = ana
        .ok(
            "POST",
            &format!("/v1/threads/{th}/artifacts"),
            json!({"kind": "form", "data": {
                "title": "Pick",
                "schema": {"type": "object", "properties": {
                    "pet": {"type": "string", "title": "Pet", "enum": ["pet-1", "pet-2"]},
                    "hero": {"type": "string", "title": "Hero", "enum": heroes}
                }, "required": ["pet", "hero"]},
                "ui": {"fields": {"pet": {"labels": {"pet-1": "Cat", "pet-2": "Dog"}}, "hero": {"labels": {"hero-2": "Batman"}}}}
            }}),
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let chrome = Chrome::launch().await;
    let w = chrome.window(&up.base, &ana.token, "light", &format!("/t/{th}")).await;
    w.until(&format!("() => !!document.getElementById('form-{form}-hero')"), "the form").await;
    let shown: Vec<String> = w.eval(&format!("() => [...document.querySelectorAll('#form-{form} .choice')].map(l => l.textContent.trim())")).await;
    assert_eq!(shown, ["Cat", "Dog"], "the radios show their labels");
    let options: Vec<String> = w.eval(&format!("() => [...document.querySelectorAll('#form-{form}-hero option')].map(o => o.textContent)")).await;
    assert_eq!(options[2], "Batman", "{options:?}");
    assert_eq!(options[1], "hero-1", "a choice without a label shows its value: {options:?}");
    w.page.get_by_text("Dog", true).click(None).await.unwrap();
    w.page.locator(format!("#form-{form}-hero")).select_option("1", None).await.unwrap();
    w.page.get_by_text("Send", true).click(None).await.unwrap();
    // A form taken once says so when it is answered.
    w.until("() => document.querySelector('.form-artifact').textContent.includes('Already answered.')", "the answered form").await;
    let (_, subs) = ana.get(&format!("/v1/threads/{th}/artifacts?kind=submission&form_id={form}")).await.unwrap();
    assert_eq!(subs[0]["data"]["values"], json!({"pet": "pet-2", "hero": "hero-2"}), "{subs}");
}

//! A connected server that asks: the official `server-everything`
//! (2026.8.31, from npm, over Streamable HTTP) registers
//! `trigger-elicitation-request` only for a client that declares
//! elicitation, and asks its ten-field form (`elicitation/create`) in the
//! middle of the call. In Chromium the person the run acts for answers it
//! as a lattice form, its titled choices by their titles; another editor
//! sees whom it waits for and cannot answer; the server receives exactly
//! the validated values, a decline as a decline, and an answer that fails
//! the form never leaves lattice.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use lattice_e2e::browser::{Chrome, Window};
use lattice_e2e::{Client, Deployment, UpProcess};
use serde_json::{Value, json};

use super::Apps;
use super::servers::package;

/// server-everything over Streamable HTTP on its own port.
pub(super) struct Everything {
    child: Child,
    pub url: String,
}

impl Everything {
    pub(super) async fn start() -> Self {
        let port = lattice_e2e::free_port();
        let child = Command::new("node")
            .args([package("server-everything").display().to_string(), "streamableHttp".into()])
            .env("PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("node runs server-everything");
        // Held from here: dropped (a panic below), the process is killed.
        let everything = Self { child, url: format!("http://127.0.0.1:{port}/mcp") };
        for _ in 0..200 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
                return everything;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("server-everything never listened on {port}");
    }
}

impl Drop for Everything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const TOOL: &str = "everything__trigger-elicitation-request";
const CARD: &str = "section.request.elicitation[aria-label='The everything server asks']";

/// Starts a run of `scripted:call` that calls the asking tool; its id.
async fn ask(apps: &Apps) -> String {
    let started =
        apps.ana.ok("POST", &format!("/v1/threads/{}/runs", apps.th), json!({"prompt": format!("tool={TOOL}"), "model": "scripted:call"})).await;
    started["run_id"].as_str().unwrap().to_owned()
}

/// The run's open question, once asked; the run goes on meanwhile.
async fn question(apps: &Apps, run: &str) -> Value {
    for _ in 0..600 {
        let view = apps.ana.ok("GET", &format!("/v1/runs/{run}"), Value::Null).await;
        if let Some(q) = view["requests"].as_array().unwrap().iter().find(|r| r["tool_name"] == "elicitation" && r["answered_by"].is_null()) {
            assert_eq!(view["status"], "running", "{view}");
            return q.clone();
        }
        assert_ne!(view["status"], "failed", "{view}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the server never asked in run {run}");
}

/// What the server's tool returned to the run, once it ended.
async fn result(apps: &Apps, run: &str) -> String {
    for _ in 0..600 {
        let view = apps.ana.ok("GET", &format!("/v1/runs/{run}"), Value::Null).await;
        if view["status"] == "finished" || view["status"] == "failed" {
            assert_eq!(view["status"], "finished", "{view}");
            let page = apps.ana.ok("GET", &format!("/v1/workspaces/{}/events?format=json", apps.ws), Value::Null).await;
            let returned = page["events"].as_array().unwrap().iter().rev().find(|e| e["type"] == "tool_returned" && e["payload"]["run_id"] == run);
            return returned.map(|e| e["payload"]["result"].to_string()).unwrap_or_default();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("run {run} never ended");
}

/// The text of the newest question card in `w`.
async fn card_text(w: &Window) -> String {
    w.page.locator(CARD).last().text_content().await.ok().flatten().unwrap_or_default()
}

async fn until_card(w: &Window, what: &str, ok: impl Fn(&str) -> bool) -> String {
    for _ in 0..400 {
        let text = card_text(w).await;
        if ok(&text) {
            return text;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what}: the card reads {:?}", card_text(w).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_question_is_answered_in_the_chat_by_its_person_and_the_server_gets_exactly_that() {
    let everything = Everything::start().await;
    let config = format!(
        "[mcp_servers.everything]\nurl = {:?}\nallow_internal = true\ntimeout_secs = 3\npolicy = {{ default = \"allow\" }}\n",
        everything.url
    );
    let apps = Apps::set_up(Deployment::Up(UpProcess::start_configured(&config, &[]).await)).await;
    let bob = Client::sign_in_as(&apps.base, json!({"tenant": "acme", "user": "bob", "role": "member"})).await;
    apps.ana.ok("POST", &format!("/v1/workspaces/{}/members", apps.ws), json!({"user": "bob", "role": "editor"})).await;
    let chrome = Chrome::launch().await;
    let w = apps.window(&chrome).await;
    let seen_by_bob = chrome.window(&apps.base, &bob.token, "light", &format!("/t/{}", apps.th)).await;

    // The tool exists only because lattice declared elicitation.
    let run = ask(&apps).await;
    let q = question(&apps, &run).await;
    let id = q["tool_call_id"].as_str().unwrap().to_owned();
    let text = until_card(&w, "the question in ana's chat", |t| t.contains("Please provide inputs for the following fields:")).await;
    // Titled choices read by their titles, not their values.
    for label in ["Superman", "Green Lantern", "Wonder Woman", "Tuna", "Salmon", "Trout", "Cats", "Dogs", "Reptiles"] {
        assert!(text.contains(label), "{label} in {text:?}");
    }
    assert!(!text.contains("hero-2"), "{text:?}");
    let stormy: bool = w
        .eval(&format!(
            "() => [...document.querySelectorAll(\"{CARD} input, {CARD} textarea\")].some(i => i.value === 'It was a dark and stormy night.')"
        ))
        .await;
    assert!(stormy, "the server's default is filled in");
    // Ana's to answer: listed as waiting for her, not for bob.
    let waiting = apps.ana.ok("GET", "/v1/me/waiting", Value::Null).await;
    assert!(waiting.to_string().contains(&id), "{waiting}");
    assert!(!bob.ok("GET", "/v1/me/waiting", Value::Null).await.to_string().contains(&id));
    // Bob sees whom it waits for, and cannot answer it.
    let bobs = seen_by_bob.page.locator(CARD).last();
    for _ in 0..200 {
        if bobs.text_content().await.ok().flatten().unwrap_or_default().contains("Waiting for ana to answer.") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(bobs.text_content().await.ok().flatten().unwrap_or_default().contains("Waiting for ana to answer."));
    assert_eq!(bobs.locator("input, textarea").count().await.unwrap(), 0, "no inputs for bob");
    let answer = json!({"tool_call_id": id, "answer": {"action": "accept", "content": {"name": "Bob"}}});
    let (status, body) = bob.post(&format!("/v1/runs/{run}/answers"), answer).await.unwrap();
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["error"]["code"], "not_acting_for", "{body}");

    // Ana answers, past the call's three seconds: the person's time is
    // not the server's.
    let card = w.page.locator(CARD).last();
    card.locator("textarea[id$='-name']").fill("Ana Lovelace", None).await.expect("the name field");
    card.get_by_label("Green Lantern", true).check(None).await.expect("Green Lantern");
    card.get_by_label("Dogs", true).check(None).await.expect("Dogs");
    tokio::time::sleep(Duration::from_secs(4)).await;
    card.get_by_text("Send to everything", true).click(None).await.expect("Send to everything");
    let said = result(&apps, &run).await;
    assert!(said.contains("User provided the requested information!"), "{said}");
    assert!(said.contains("Name: Ana Lovelace"), "{said}");
    assert!(said.contains(r#"\"titledSingleSelectEnum\": \"hero-2\""#), "{said}");
    assert!(said.contains(r#"\"legacyTitledEnum\": \"pet-2\""#), "{said}");
    assert!(said.contains(r#"\"integer\": 42"#), "{said}");
    until_card(&w, "the card says who answered", |t| t.contains("Answered by ana")).await;

    // Declined: the server hears a decline.
    let run = ask(&apps).await;
    question(&apps, &run).await;
    until_card(&w, "the second question", |t| t.contains("Decline") && !t.contains("Answered by")).await;
    let card = w.page.locator(CARD).last();
    card.get_by_text("Decline", true).click(None).await.expect("Decline");
    let said = result(&apps, &run).await;
    assert!(said.contains("User declined to provide the requested information."), "{said}");
    until_card(&w, "the card says declined", |t| t.contains("Declined")).await;

    // An answer the form refuses never leaves lattice; the question stays
    // open until it is answered (here, cancelled).
    let run = ask(&apps).await;
    let q = question(&apps, &run).await;
    let id = q["tool_call_id"].as_str().unwrap().to_owned();
    let wrong = json!({"tool_call_id": id, "answer": {"action": "accept", "content": {"name": "Ana", "integer": 500}}});
    let (status, body) = apps.ana.post(&format!("/v1/runs/{run}/answers"), wrong).await.unwrap();
    assert_eq!(status, 422, "{body}");
    assert_eq!(question(&apps, &run).await["tool_call_id"], id.as_str(), "still open");
    apps.ana.ok("POST", &format!("/v1/runs/{run}/answers"), json!({"tool_call_id": id, "answer": {"action": "cancel"}})).await;
    let said = result(&apps, &run).await;
    assert!(said.contains("User cancelled the elicitation dialog."), "{said}");
    assert!(!said.contains("500"), "{said}");

    // Each question and how it ended, audited without its content.
    let page = apps.ana.ok("GET", &format!("/v1/workspaces/{}/events?format=json", apps.ws), Value::Null).await;
    let decisions: Vec<String> = page["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "audit_recorded" && e["payload"]["name"] == "mcp_elicitation")
        .map(|e| e["payload"]["data"]["decision"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(decisions, ["asked", "accepted", "asked", "declined", "asked", "cancelled"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_prompt_arguments_are_completed_as_it_suggests() {
    let everything = Everything::start().await;
    let config = format!("[mcp_servers.everything]\nurl = {:?}\nallow_internal = true\npolicy = {{ default = \"allow\" }}\n", everything.url);
    let apps = Apps::set_up(Deployment::Up(UpProcess::start_configured(&config, &[]).await)).await;
    let complete = |argument: &str, value: &str, arguments: Value| json!({"server": "everything", "prompt": "completable-prompt", "argument": argument, "value": value, "arguments": arguments});
    let path = format!("/v1/threads/{}/offers/complete", apps.th);
    let said = apps.ana.ok("POST", &path, complete("department", "E", json!({}))).await;
    assert_eq!(said["values"], json!(["Engineering"]));
    // The second argument's choices follow from the first's.
    let said = apps.ana.ok("POST", &path, complete("name", "", json!({"department": "Sales"}))).await;
    assert_eq!(said["values"], json!(["David", "Eve", "Frank"]));
    // A prompt with no completions: none.
    let said = apps.ana.ok("POST", &path, json!({"server": "everything", "prompt": "simple-prompt", "argument": "x", "value": ""})).await;
    assert_eq!(said["values"], json!([]));
}

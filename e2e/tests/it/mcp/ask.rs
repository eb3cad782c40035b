//! ask_form over MCP: the form is put in the thread and its id returned at
//! once; `form_submissions` waits for the answer with progress
//! notifications; a person answers in lattice; an unfit schema, a wait over
//! the limit and another tenant's form are refused as tool errors.

use std::time::Duration;

use lattice_agent::tools::{CREATE_APP, SHOW_DASHBOARD, UPDATE_DASHBOARD};
use lattice_e2e::{Client, UpProcess};
use lattice_mcp::{FORM_SUBMISSIONS, SUBMIT_FORM};
use lattice_ui::asks::ASK_FORM;
use lattice_ui::form::Submissions;
use serde_json::{Value, json};

use super::{steps, text};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_form_returns_a_handle_and_form_submissions_waits_for_the_answer() {
    let up = UpProcess::start().await;
    let (ana, bob, _, th) = super::leave_thread(&up.base).await;

    let schema =
        json!({"type": "object", "properties": {"days": {"title": "Days", "type": "integer", "minimum": 1, "maximum": 30}}, "required": ["days"]});
    let plan = json!({"steps": [
        {"call": ASK_FORM, "arguments": {"title": "How many days?", "schema": schema, "thread": th}},
        {"call": ASK_FORM, "arguments": {"title": "Bad", "schema": {"type": "object", "properties": {"x": {"type": "string", "pattern": "^a"}}}, "thread": th}},
    ]});
    let s = steps(&up.base, &ana.token, plan).await;
    let asked = &s["steps"][0];
    assert_eq!(asked["structuredContent"]["status"], "pending", "{asked}");
    assert_eq!(asked["_meta"]["ui"]["resourceUri"], "ui://lattice/views/form");
    let form = asked["structuredContent"]["receipt"]["id"].as_str().unwrap().to_owned();
    assert!(text(asked).contains(FORM_SUBMISSIONS) && text(asked).contains("**Days** (`days`: integer, required)"), "{}", text(asked));
    let refused = &s["steps"][1];
    assert_eq!(refused["isError"], true);
    assert!(text(refused).contains("the form was refused") && text(refused).contains("pattern"), "{}", text(refused));
    // The form is in the thread, ana's, once.
    let art = ana.ok("GET", &format!("/v1/artifacts/{form}"), Value::Null).await;
    assert_eq!((art["kind"].as_str(), art["author"].as_str(), art["data"]["submissions"].as_str()), (Some("form"), Some("ana"), Some("once")));

    // The agent waits; bob answers in lattice six seconds later. A progress
    // notification goes out every 2 s of the wait, and the wait starts only
    // once Node has started and the session is set up (over a second on a
    // busy machine): six seconds leave room for at least one. That the call
    // did not return before the answer, its answer says: bob's values.
    let wait = json!({"steps": [{"call": FORM_SUBMISSIONS, "arguments": {"id": form, "wait_seconds": 60}}]});
    let (base, token) = (up.base.clone(), ana.token.clone());
    let waiting = tokio::spawn(async move { steps(&base, &token, wait).await });
    tokio::time::sleep(Duration::from_secs(6)).await;
    let id = lattice_ui::submission::submission_id(&form, Submissions::Once, "bob", None);
    let body = json!({"id": id, "kind": "submission", "data": {"form_id": form, "form_version": 1, "values": {"days": 4}}});
    let (status, sent) = bob.post(&format!("/v1/threads/{th}/artifacts"), body).await.unwrap();
    assert!((200..300).contains(&status), "{status} {sent}");
    let s = tokio::time::timeout(Duration::from_secs(20), waiting).await.expect("form_submissions answered").unwrap();
    let answered = &s["steps"][0];
    assert_eq!(answered["structuredContent"]["status"], "answered", "{answered}");
    assert_eq!(answered["structuredContent"]["submissions"][0]["by"], "bob");
    assert_eq!(answered["structuredContent"]["submissions"][0]["values"], json!({"days": 4}));
    let progress = answered["progress"].as_array().unwrap();
    assert!(!progress.is_empty(), "progress notifications while waiting: {answered}");
    assert_eq!(progress[0]["total"], 60);

    // Without waiting: the list at once; over the limit, and another tenant: refused.
    let plan = json!({"steps": [
        {"call": FORM_SUBMISSIONS, "arguments": {"id": form}},
        {"call": FORM_SUBMISSIONS, "arguments": {"id": form, "wait_seconds": 601}},
    ]});
    let s = steps(&up.base, &ana.token, plan).await;
    assert_eq!(s["steps"][0]["structuredContent"]["submissions"].as_array().unwrap().len(), 1);
    assert_eq!(s["steps"][1]["isError"], true, "{}", s["steps"][1]);
    let eve = Client::sign_in(&up.base, "globex", "eve").await;
    let plan = json!({"steps": [
        {"call": FORM_SUBMISSIONS, "arguments": {"id": form}},
        {"call": SUBMIT_FORM, "arguments": {"form": form, "form_version": 1, "values": {"days": 2}}},
        {"call": SHOW_DASHBOARD, "arguments": {"title": "Theirs", "panels": [], "thread": th}},
    ]});
    let s = steps(&up.base, &eve.token, plan).await;
    for (i, step) in s["steps"].as_array().unwrap().iter().enumerate() {
        assert_eq!(step["isError"], true, "step {i} of another tenant: {step}");
    }
    assert!(text(&s["steps"][2]).starts_with("thread:"), "{}", s["steps"][2]);
    // Nothing of eve's reached acme's thread.
    let arts = ana.ok("GET", &format!("/v1/threads/{th}/artifacts"), Value::Null).await;
    assert!(arts.as_array().unwrap().iter().all(|a| a["author"] != "eve"), "{arts}");
}

/// A call that names a thread acts on that thread's artifacts only: a
/// dashboard of another workspace is not reached through it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_naming_a_thread_touches_only_that_threads_artifacts() {
    let up = UpProcess::start().await;
    let ana = Client::sign_in_as(&up.base, json!({"tenant": "acme", "user": "ana", "role": "tenant_admin"})).await;
    let mut threads = Vec::new();
    for name in ["One", "Two"] {
        let ws = ana.ok("POST", "/v1/workspaces", json!({"name": name})).await["id"].as_str().unwrap().to_owned();
        threads.push(ana.ok("POST", &format!("/v1/workspaces/{ws}/threads"), json!({"title": name})).await["id"].as_str().unwrap().to_owned());
    }
    let made =
        steps(&up.base, &ana.token, json!({"steps": [{"call": SHOW_DASHBOARD, "arguments": {"title": "D", "panels": [], "thread": threads[0]}}]}))
            .await;
    let id = made["steps"][0]["structuredContent"]["receipt"]["id"].as_str().unwrap().to_owned();
    let s = steps(
        &up.base,
        &ana.token,
        json!({"steps": [
            {"call": UPDATE_DASHBOARD, "arguments": {"id": id, "panels": [{"type": "text", "markdown": "x"}], "thread": threads[1]}},
            {"call": UPDATE_DASHBOARD, "arguments": {"id": id, "panels": [{"type": "text", "markdown": "y"}], "thread": threads[0]}},
        ]}),
    )
    .await;
    assert_eq!(s["steps"][0]["isError"], true, "{s}");
    assert!(text(&s["steps"][0]).contains("is not an artifact of this thread"), "{}", text(&s["steps"][0]));
    assert_eq!(s["steps"][1]["structuredContent"]["receipt"]["version"], 2, "{s}");
}

/// The toolset follows the switches: a session hears
/// notifications/tools/list_changed when a flip changes what it is offered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_switch_flip_tells_open_sessions_their_tools_changed() {
    // No demo: its deployment opts in to mini apps, and the default is what is tested here.
    let up = UpProcess::start_with(&[("LATTICE_SEED_DEMO", "false")]).await;
    let root = Client::sign_in_as(&up.base, json!({"tenant": "ops", "user": "root", "role": "deployment_admin"})).await;
    let bot = Client::sign_in_as(&up.base, json!({"tenant": "acme", "user": "bot", "agent": true})).await;
    let flip = |state: &str| {
        json!({"fetch": {"method": "PUT", "path": "/v1/integrations/deployment/ui:mini-apps", "token": root.token,
        "body": {"state": state, "reason": "the MCP suite"}}})
    };
    let s = steps(
        &up.base,
        &bot.token,
        json!({"steps": [
            {"list": true}, flip("on"), {"wait_list_changed": 5000}, {"list": true},
            {"wait_list_changed": 1000}, flip("on"), {"wait_list_changed": 1500},
        ]}),
    )
    .await;
    let names = |i: usize| s["steps"][i].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect::<Vec<_>>();
    assert!(!names(0).contains(&CREATE_APP.to_owned()), "{s}");
    assert_eq!(s["steps"][1]["status"], 200);
    assert_eq!(s["steps"][2]["list_changed"], 1, "the flip was told: {s}");
    println!("notifications/tools/list_changed {} ms after the flip", s["steps"][2]["ms"]);
    assert!(names(3).contains(&CREATE_APP.to_owned()), "{s}");
    // A flip that changes nothing is not told.
    assert_eq!(s["steps"][6]["list_changed"], 0, "{s}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_with_form_elicitation_gets_a_flat_forms_answer_in_one_call() {
    let up = UpProcess::start().await;
    let ana = Client::sign_in(&up.base, "acme", "ana").await;
    let ws = ana.ok("POST", "/v1/workspaces", json!({"name": "Ops"})).await["id"].as_str().unwrap().to_owned();
    let th = ana.ok("POST", &format!("/v1/workspaces/{ws}/threads"), json!({"title": "Leave"})).await["id"].as_str().unwrap().to_owned();

    let flat = json!({"type": "object", "required": ["days", "kind"], "properties": {
        "days": {"title": "Days", "type": "integer", "minimum": 1, "maximum": 30},
        "kind": {"title": "Kind", "type": "string", "enum": ["holiday", "sick"]}}});
    // Within lattice's forms, beyond elicitation's: a step it cannot bound.
    let beyond = json!({"type": "object", "properties": {"hours": {"title": "Hours", "type": "number", "multipleOf": 0.5}}});
    // A file: elicitation cannot carry one, so it is uploaded in the chat.
    let file =
        json!({"type": "object", "required": ["note"], "properties": {"note": {"title": "Doctor's note", "type": "string", "format": "file"}}});
    let plan = json!({"elicit": "accept", "content": {"days": 3, "kind": "holiday"}, "steps": [
        {"call": ASK_FORM, "arguments": {"title": "How many days?", "schema": flat, "thread": th}},
        {"call": ASK_FORM, "arguments": {"title": "How many hours?", "schema": beyond, "thread": th}},
        {"call": ASK_FORM, "arguments": {"title": "Your note", "schema": file, "thread": th}},
    ]});
    let s = steps(&up.base, &ana.token, plan).await;
    println!("MCP elicitation session: {}", serde_json::to_string_pretty(&s).unwrap());

    // The flat form: asked through the client, answered in the same call.
    assert_eq!(s["elicited"], json!(["How many days?"]), "only the flat form was asked through the client");
    assert_eq!(s["requested"][0]["properties"]["days"], json!({"title": "Days", "type": "integer", "minimum": 1, "maximum": 30}));
    let answered = &s["steps"][0];
    assert_eq!(answered["structuredContent"]["status"], "answered", "{answered}");
    assert_eq!(answered["structuredContent"]["answer"], json!({"days": 3, "kind": "holiday"}));
    assert!(text(answered).contains("<untrusted-data source=\"form answer\" author=\"ana\" boundary=\""), "{}", text(answered));
    let form = answered["structuredContent"]["receipt"]["id"].as_str().unwrap().to_owned();
    let subs = ana.ok("GET", &format!("/v1/threads/{th}/artifacts?kind=submission&form_id={form}"), Value::Null).await;
    let subs = subs.as_array().unwrap();
    assert_eq!(subs.len(), 1, "the answer is in the thread once");
    assert_eq!((subs[0]["author"].as_str(), subs[0]["data"]["values"]["days"].as_i64()), (Some("ana"), Some(3)), "as the caller");

    // The form beyond the flat subset: the handle, and the form waits in lattice.
    let pending = &s["steps"][1];
    assert_eq!(pending["structuredContent"]["status"], "pending", "{pending}");
    assert!(text(pending).contains(FORM_SUBMISSIONS) && text(pending).contains("more than a client"), "{}", text(pending));
    // The form with a file field: not asked through the client; pending,
    // its handle given, the file to be uploaded in the chat's thread.
    let file_form = &s["steps"][2];
    assert_eq!(file_form["structuredContent"]["status"], "pending", "{file_form}");
    assert!(file_form["structuredContent"]["receipt"]["id"].as_str().is_some_and(|id| id.starts_with("art_")), "{file_form}");
    assert!(text(file_form).contains(&format!("uploaded in lattice's chat: answer it at {}/t/{th}", up.base)), "{}", text(file_form));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_opens_links_is_pointed_to_the_form_in_the_chat() {
    let up = UpProcess::start().await;
    let ana = Client::sign_in(&up.base, "acme", "ana").await;
    let ws = ana.ok("POST", "/v1/workspaces", json!({"name": "Ops"})).await["id"].as_str().unwrap().to_owned();
    let th = ana.ok("POST", &format!("/v1/workspaces/{ws}/threads"), json!({"title": "Leave"})).await["id"].as_str().unwrap().to_owned();
    let schema = json!({"type": "object", "properties": {"days": {"type": "integer"}}});
    let plan = json!({"elicit_url": true, "steps": [{"call": ASK_FORM, "arguments": {"title": "How many days?", "schema": schema, "thread": th}}]});
    let s = steps(&up.base, &ana.token, plan).await;
    assert_eq!(s["requested"][0], json!({"mode": "url", "url": format!("{}/t/{th}", up.base)}), "{s}");
    let asked = &s["steps"][0];
    assert_eq!(asked["structuredContent"]["status"], "pending", "the answer comes in lattice");
    assert!(text(asked).contains(&format!("{}/t/{th}", up.base)), "{}", text(asked));
}

/// A restricted thread over MCP: a member not listed on it reaches nothing
/// of it (its form, its submissions, a call naming it), exactly as another
/// tenant; a listed member reads it. An ask_form with a deadline reports
/// when it expires, and then that it expired.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restricted_thread_and_a_deadline_over_mcp() {
    let up = UpProcess::start().await;
    let ana = Client::sign_in(&up.base, "acme", "ana").await;
    let ws = ana.ok("POST", "/v1/workspaces", json!({"name": "HR"})).await["id"].as_str().unwrap().to_owned();
    let th =
        ana.ok("POST", &format!("/v1/workspaces/{ws}/threads"), json!({"title": "Pay", "restricted": true})).await["id"].as_str().unwrap().to_owned();
    for user in ["ed", "lia"] {
        ana.ok("POST", &format!("/v1/workspaces/{ws}/members"), json!({"user": user, "role": "editor"})).await;
    }
    ana.ok("POST", &format!("/v1/threads/{th}/members"), json!({"user": "lia", "role": "viewer"})).await;
    let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}});
    // Long enough for the reads below to happen before it passes on a
    // loaded machine; the wait after them is measured from the ask.
    let plan = json!({"steps": [{"call": ASK_FORM, "arguments": {"title": "Agree?", "schema": schema, "thread": th, "expires_in_secs": 8}}]});
    let s = steps(&up.base, &ana.token, plan).await;
    let asked_by = std::time::Instant::now();
    let asked = &s["steps"][0]["structuredContent"];
    assert_eq!(asked["status"], "pending", "{asked}");
    assert!(asked["expires_at"].as_str().is_some_and(|at| at.ends_with('Z')), "{asked}");
    let form = asked["receipt"]["id"].as_str().unwrap().to_owned();

    let ed = Client::sign_in(&up.base, "acme", "ed").await;
    let plan = json!({"steps": [
        {"call": FORM_SUBMISSIONS, "arguments": {"id": form}},
        {"call": SUBMIT_FORM, "arguments": {"form": form, "form_version": 1, "values": {"ok": true}}},
        {"call": SHOW_DASHBOARD, "arguments": {"title": "Peek", "panels": [], "thread": th}},
    ]});
    let s = steps(&up.base, &ed.token, plan).await;
    for (i, step) in s["steps"].as_array().unwrap().iter().enumerate() {
        assert_eq!(step["isError"], true, "step {i} of an unlisted member: {step}");
    }
    let lia = Client::sign_in(&up.base, "acme", "lia").await;
    let s = steps(&up.base, &lia.token, json!({"steps": [{"call": FORM_SUBMISSIONS, "arguments": {"id": form}}]})).await;
    assert_eq!(s["steps"][0]["structuredContent"]["status"], "pending", "{}", s["steps"][0]);

    tokio::time::sleep_until((asked_by + Duration::from_millis(8_300)).into()).await;
    let s = steps(
        &up.base,
        &ana.token,
        json!({"steps": [
            {"call": FORM_SUBMISSIONS, "arguments": {"id": form}},
            {"call": SUBMIT_FORM, "arguments": {"form": form, "form_version": 1, "values": {"ok": true}}},
        ]}),
    )
    .await;
    assert_eq!(s["steps"][0]["structuredContent"]["status"], "expired", "{}", s["steps"][0]);
    assert_eq!(s["steps"][1]["isError"], true, "a submission after the deadline: {}", s["steps"][1]);
    let arts = ana.ok("GET", &format!("/v1/threads/{th}/artifacts?kind=submission"), Value::Null).await;
    assert_eq!(arts, json!([]));
}

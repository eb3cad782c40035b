//! `lattice up`, the embedded default (O1): one process on SQLite under its
//! data folder, dev sign-in, and a seeded demo whose thread shows a
//! dashboard, a running app, and the scripted agent waiting on a form.

use std::process::{Command, Stdio};
use std::time::Duration;

use lattice_e2e::{Client, binary, free_port};
use lattice_ui::app_policy::GET_STATE;
use lattice_ui::asks::ASK_FORM;
use serde_json::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lattice_up_serves_the_seeded_demo() {
    let dir = std::env::temp_dir().join(format!("lattice-up-{}", free_port()));
    std::fs::create_dir_all(&dir).unwrap();
    let port = free_port();
    let apps_port = free_port();
    let mut child = Command::new(binary())
        .arg("up")
        .current_dir(&dir)
        .env("LATTICE_HTTP_ADDR", format!("127.0.0.1:{port}"))
        .env("LATTICE_APPS_ADDR", format!("127.0.0.1:{apps_port}"))
        .env("LATTICE_APPS_ORIGIN", format!("http://localhost:{apps_port}"))
        .env("LATTICE_LOG", "warn")
        .env_remove("LATTICE_DATABASE_URL")
        .env_remove("LATTICE_PROFILE")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let base = format!("http://127.0.0.1:{port}");
    lattice_e2e::wait_ready(&base).await;
    assert!(dir.join("data/lattice.db").exists(), "the embedded database lives under ./data");

    let demo = Client::sign_in(&base, "demo", "demo").await;
    let (_, workspaces) = demo.get("/v1/workspaces").await.unwrap();
    let ws = workspaces[0]["id"].as_str().expect("the demo workspace").to_owned();
    let (_, threads) = demo.get(&format!("/v1/workspaces/{ws}/threads")).await.unwrap();
    let th = threads[0]["id"].as_str().unwrap().to_owned();
    let mut paused: Option<Value> = None;
    for _ in 0..200 {
        let events = demo.all_events(&th).await;
        if let Some(e) = events.iter().find(|e| e["type"] == "run_paused") {
            paused = Some(e.clone());
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let paused = paused.expect("the demo's run waits on a form");
    assert_eq!(paused["payload"]["requests"][0]["tool_name"], ASK_FORM);

    // In Chromium: the dashboard with its figures, the app running, the
    // form waiting, and no console error.
    let chrome = lattice_e2e::browser::Chrome::launch().await;
    let (chat, console) = chrome.window_with_console(&base, &demo.token, &format!("/t/{th}")).await;
    chat.until(
        "() => !!document.querySelector('.dashboard') && document.querySelectorAll('.dashboard .metric').length > 0",
        "the dashboard's figures",
    )
    .await;
    chat.until("() => !!document.querySelector('.app-frame iframe')", "the app's frame").await;
    chat.until("() => !!document.querySelector('form button[type=submit]')", "the waiting form").await;
    let proxy = chat.page.frame_locator(".app-frame iframe");
    let app = proxy.frame_locator("iframe").locator("body");
    let mut shown = String::new();
    for _ in 0..200 {
        let read = tokio::time::timeout(Duration::from_secs(2), app.text_content()).await;
        shown = read.ok().and_then(|r| r.ok().flatten()).unwrap_or_default();
        if !shown.trim().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!shown.trim().is_empty(), "the demo's app shows nothing");
    // The app has run: its call for its state went through the host to the
    // server, which audited it.
    let mut audited = false;
    for _ in 0..400 {
        let (_, page) = demo.get(&format!("/v1/workspaces/{ws}/events?format=json")).await.unwrap();
        audited = page["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["type"] == "audit_recorded" && e["payload"]["name"] == "app_tool_call" && e["payload"]["data"]["tool"] == GET_STATE);
        if audited {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(audited, "the demo's app never asked for its state");
    // Then one more call through the host from the app's frame, answered,
    // and a word on the console from the app's frame, its proxy's and the
    // page: each frame's messages come in the order it wrote them, so once
    // the three words are in, so is every error written before them.
    let round_trip = format!(
        "() => new Promise((resolve) => {{ const id = 'lattice-e2e'; \
         addEventListener('message', (e) => {{ if (e.data && e.data.id === id) resolve(!e.data.error); }}); \
         parent.postMessage({{jsonrpc: '2.0', id, method: 'tools/call', params: {{name: '{GET_STATE}', arguments: {{}}}}}}, '*'); }})\
         .then((answered) => {{ console.log('lattice-e2e: the app'); return answered; }})"
    );
    let answered: bool = app.evaluate(&round_trip, None::<()>).await.expect("the app's frame answers");
    assert!(answered, "the host refused the app's call");
    let _: bool = proxy.locator("body").evaluate("() => { console.log('lattice-e2e: the proxy'); return true; }", None::<()>).await.unwrap();
    let _: bool = chat.eval("() => { console.log('lattice-e2e: the page'); return true; }").await;
    for word in ["lattice-e2e: the app", "lattice-e2e: the proxy", "lattice-e2e: the page"] {
        console.until_written(word).await;
    }
    let errors = console.errors();
    assert!(errors.is_empty(), "console errors on the demo thread: {errors:?}");
    // The opt-in is the seed's, audited.
    let root = Client::sign_in_as(&base, serde_json::json!({"tenant": "ops", "user": "root", "role": "deployment_admin"})).await;
    let (_, audit) = root.get("/v1/integrations/audit").await.unwrap();
    assert!(audit.as_array().unwrap().iter().any(|r| r["actor"] == "demo-seed" && r["key"] == "ui:mini-apps" && r["new"] == "on"), "{audit}");
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
}

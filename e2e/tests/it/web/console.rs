//! The kill-switch console (REQUIREMENTS.md W7, I4): a workspace admin turns
//! ui:dashboards off; an open chat in another window stops offering
//! dashboards and shows why, pushed, within a second of the click.

use std::time::{Duration, Instant};

use lattice_e2e::browser::Chrome;
use lattice_e2e::{Client, UpProcess};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flip_reaches_an_open_chat_within_a_second() {
    let up = UpProcess::start().await;
    let ana = Client::sign_in(&up.base, "acme", "ana").await;
    let (ws, th) = super::workspace_with_thread(&ana, "Ops").await;
    ana.ok("POST", &format!("/v1/threads/{th}/artifacts"), json!({"kind": "dashboard", "data": super::every_panel("art_none")})).await;

    let chrome = Chrome::launch().await;
    let chat = chrome.window(&up.base, &ana.token, "light", &format!("/t/{th}")).await;
    chat.until("() => !!document.querySelector('.dashboard .panels')", "the dashboard").await;
    chat.until("() => !!document.querySelector('#composer-agent option[value=\"scripted:dashboard\"]')", "dashboards offered").await;

    let console = chrome.window(&up.base, &ana.token, "light", "/admin").await;
    let base = format!("workspace-{ws}-ui-dashboards");
    console.until(&format!("() => !!document.getElementById('{base}-state')"), "the workspace's row").await;
    // Ana administers her workspace only: no deployment or tenant level.
    let levels: Vec<String> = console.eval("() => [...document.querySelectorAll('section.level h2')].map(h => h.textContent)").await;
    assert_eq!(levels, vec!["Workspace Ops"]);
    let row: String = console.eval(&format!("() => document.getElementById('{base}-state').closest('tr').textContent")).await;
    assert!(row.contains("on — ui:dashboards is on by default"), "{row}");

    console.page.locator(format!("#{base}-state")).select_option("off", None).await.unwrap();
    // A reason is required.
    console.page.locator(format!("#{base}-state")).locator("xpath=ancestor::form//button").click(None).await.unwrap();
    console.until(&format!("() => document.getElementById('{base}-message').textContent.startsWith('Give a reason')"), "the reason asked for").await;
    console.page.locator(format!("#{base}-reason")).fill("Dashboards leak figures", None).await.unwrap();
    let clicked = Instant::now();
    console.page.locator(format!("#{base}-state")).locator("xpath=ancestor::form//button").click(None).await.unwrap();
    chat.until_within(
        "() => !!document.querySelector('.dashboard.off .refusal') && !document.querySelector('#composer-agent option[value=\"scripted:dashboard\"]')",
        "the chat to stop offering dashboards",
        Duration::from_secs(1),
    )
    .await;
    let elapsed = clicked.elapsed();
    println!("kill-switch propagation to an open chat: {} ms", elapsed.as_millis());
    let refusal: String = chat.eval("() => document.querySelector('.dashboard.off .refusal').textContent").await;
    assert_eq!(refusal, "Dashboards are turned off here: ui:dashboards is off for the workspace");

    // The console shows the new state, why, and the audit trail.
    console.until("() => [...document.querySelectorAll('table.audit tbody tr')].some(r => r.textContent.includes('Dashboards leak figures'))", "the audit row").await;
    let audit: String = console.eval("() => document.querySelector('table.audit tbody tr').textContent").await;
    assert!(audit.contains("ana") && audit.contains("ui:dashboards") && audit.contains("unset → off"), "{audit}");
    let row: String = console.eval(&format!("() => document.getElementById('{base}-state').closest('tr').textContent")).await;
    assert!(row.contains("off — ui:dashboards is off for the workspace"), "{row}");

    // The log refuses a new dashboard, as the chat said.
    let (status, body) = ana.post(&format!("/v1/threads/{th}/artifacts"), json!({"kind": "dashboard", "data": super::every_panel("art_none")})).await.unwrap();
    assert_eq!(status, 423, "{body}");
}

/// The console lists each app's calls with their decisions, for the
/// workspaces the viewer administers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_shows_each_apps_calls() {
    let up = UpProcess::start().await;
    let root = Client::sign_in_as(&up.base, json!({"tenant": "ops", "user": "root", "role": "deployment_admin"})).await;
    root.ok("PUT", "/v1/integrations/deployment/ui:mini-apps", json!({"state": "on", "reason": "the console suite"})).await;
    let ana = Client::sign_in(&up.base, "acme", "ana").await;
    let (ws, th) = super::workspace_with_thread(&ana, "Apps").await;
    ana.ok("POST", &format!("/v1/workspaces/{ws}/members"), json!({"user": "bot", "role": "editor"})).await;
    let bot = Client::sign_in_as(&up.base, json!({"tenant": "acme", "user": "bot", "agent": true})).await;
    let app = bot.ok("POST", &format!("/v1/threads/{th}/artifacts"), json!({"kind": "app", "data": {"title": "Counter", "summary": "s", "html": "<p>c</p>"}}))
        .await["id"].as_str().unwrap().to_owned();
    ana.ok("POST", &format!("/v1/artifacts/{app}/calls"), json!({"tool": "get_state", "arguments": {}})).await;
    let asked = ana.ok("POST", &format!("/v1/artifacts/{app}/calls"), json!({"tool": "submit", "arguments": {"values": {"n": 1}}})).await;
    ana.ok("POST", &format!("/v1/app-calls/{}", asked["confirmation"].as_str().unwrap()), json!({"accept": false})).await;

    let chrome = Chrome::launch().await;
    let console = chrome.window(&up.base, &ana.token, "light", "/admin").await;
    console.until("() => !!document.querySelector('details.app-calls summary')", "the app's calls").await;
    let summary: String = console.eval("() => document.querySelector('details.app-calls summary').textContent").await;
    assert!(summary.starts_with("Counter (Apps, ") && summary.ends_with(": 3 calls"), "{summary}");
    console.page.locator("details.app-calls summary").click(None).await.unwrap();
    let rows: Vec<String> = console
        .eval("() => [...document.querySelectorAll('details.app-calls tbody tr')].map(r => [...r.children].slice(1).map(c => c.textContent).join(' '))")
        .await;
    assert_eq!(rows, vec!["ana submit declined chat", "ana submit ask chat", "ana get_state allow chat"]);
}

//! The kill-switch console (REQUIREMENTS.md W7, I4): a workspace admin turns
//! ui:dashboards off; an open chat in another window stops offering
//! dashboards and shows why, pushed, within a second of the click.

use std::time::{Duration, Instant};

use lattice_e2e::browser::Chrome;
use lattice_e2e::{Client, UpProcess};
use lattice_ui::app_policy::{GET_STATE, SUBMIT};
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
    console
        .until(
            "() => [...document.querySelectorAll('table.audit tbody tr')].some(r => r.textContent.includes('Dashboards leak figures'))",
            "the audit row",
        )
        .await;
    let audit: String = console.eval("() => document.querySelector('table.audit tbody tr').textContent").await;
    assert!(audit.contains("ana") && audit.contains("ui:dashboards") && audit.contains("unset → off"), "{audit}");
    let row: String = console.eval(&format!("() => document.getElementById('{base}-state').closest('tr').textContent")).await;
    assert!(row.contains("off — ui:dashboards is off for the workspace"), "{row}");

    // The log refuses a new dashboard, as the chat said.
    let (status, body) =
        ana.post(&format!("/v1/threads/{th}/artifacts"), json!({"kind": "dashboard", "data": super::every_panel("art_none")})).await.unwrap();
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
    let app = bot
        .ok("POST", &format!("/v1/threads/{th}/artifacts"), json!({"kind": "app", "data": {"title": "Counter", "summary": "s", "html": "<p>c</p>"}}))
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // The calls a chat host makes for the app, with the capability it gets for it.
    let cap = ana.ok("POST", &format!("/v1/artifacts/{app}/capability"), json!({})).await["capability"].as_str().unwrap().to_owned();
    ana.ok("POST", &format!("/v1/artifacts/{app}/calls"), json!({"tool": GET_STATE, "arguments": {}, "capability": cap})).await;
    let asked =
        ana.ok("POST", &format!("/v1/artifacts/{app}/calls"), json!({"tool": SUBMIT, "arguments": {"values": {"n": 1}}, "capability": cap})).await;
    ana.ok("POST", &format!("/v1/app-calls/{}", asked["confirmation"].as_str().unwrap()), json!({"accept": false})).await;

    let chrome = Chrome::launch().await;
    let console = chrome.window(&up.base, &ana.token, "light", "/admin").await;
    console.until("() => !!document.querySelector('details.app-calls summary')", "the app's calls").await;
    let summary: String = console.eval("() => document.querySelector('details.app-calls summary').textContent").await;
    assert!(summary.starts_with("Counter (Apps, ") && summary.ends_with(": 3 calls"), "{summary}");
    console.page.locator("details.app-calls summary").click(None).await.unwrap();
    let rows: Vec<String> = console
        .eval(
            "() => [...document.querySelectorAll('details.app-calls tbody tr')].map(r => [...r.children].slice(1).map(c => c.textContent).join(' '))",
        )
        .await;
    assert_eq!(rows, vec![format!("ana {SUBMIT} declined chat"), format!("ana {SUBMIT} ask chat"), format!("ana {GET_STATE} allow chat")]);
}

/// The console for an incident: it follows flips made elsewhere, asks
/// before a deployment-wide flip (naming what stops and how many
/// workspaces it reaches), turns everything off at a level in one action,
/// and pages, filters and exports its audit trail.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_is_live_asks_before_a_wide_flip_and_exports_its_audit() {
    let up = UpProcess::start().await;
    let root = Client::sign_in_as(&up.base, json!({"tenant": "ops", "user": "root", "role": "deployment_admin"})).await;
    let other = Client::sign_in_as(&up.base, json!({"tenant": "ops", "user": "vera", "role": "deployment_admin"})).await;
    let ana = Client::sign_in(&up.base, "acme", "ana").await;
    super::workspace_with_thread(&ana, "Ops").await;
    let levels = || async { root.ok("GET", "/v1/integrations/levels", serde_json::Value::Null).await };
    let reach = levels().await[0]["workspaces"].as_u64().unwrap();
    assert_eq!(reach, 2, "the demo's workspace and ana's");

    let chrome = Chrome::launch().await;
    let console = chrome.window(&up.base, &root.token, "light", "/admin").await;
    let row = |key: &str| format!("document.getElementById('deployment-{}-state').closest('tr').textContent", key.replace(':', "-"));
    console.until("() => !!document.getElementById('deployment-ui-forms-state')", "the deployment's rows").await;
    let said: String = console.eval("() => document.querySelector('section.level .reach').textContent").await;
    assert_eq!(said, "A change here reaches 2 workspaces.");

    // Live: another admin's flip shows without a reload.
    let flipped = Instant::now();
    other.ok("PUT", "/v1/integrations/deployment/ui:dashboards", json!({"state": "off", "reason": "elsewhere"})).await;
    console
        .until_within(
            &format!("() => ({}).includes('off — ui:dashboards is off for the deployment')", row("ui:dashboards")),
            "the flip shown",
            Duration::from_secs(1),
        )
        .await;
    println!("a flip made elsewhere shown in the open console after {} ms", flipped.elapsed().as_millis());

    // A deployment-wide flip asks first; cancelling changes nothing.
    console.page.locator("#deployment-ui-forms-state").select_option("off", None).await.unwrap();
    console.page.locator("#deployment-ui-forms-reason").fill("a drill", None).await.unwrap();
    let apply = console.page.locator("#deployment-ui-forms-state").locator("xpath=ancestor::form//button");
    apply.click(None).await.unwrap();
    console.until("() => !!document.querySelector('#lattice-confirm[open]')", "the confirmation").await;
    let asked: String = console.eval("() => document.getElementById('lattice-confirm').textContent").await;
    assert!(
        asked.contains("Turn ui:forms off for the deployment?")
            && asked.contains("This reaches 2 workspaces")
            && asked.contains("no form can be shown"),
        "{asked}"
    );
    console.page.locator("#lattice-confirm-cancel").click(None).await.unwrap();
    console.until("() => document.getElementById('deployment-ui-forms-message').textContent === 'Nothing changed.'", "the cancel acknowledged").await;
    assert_eq!(levels().await[0]["keys"][0]["state"], "unset", "a cancelled flip changed the switch");
    apply.click(None).await.unwrap();
    console.page.locator("#lattice-confirm-ok").click(None).await.unwrap();
    console.until(&format!("() => ({}).includes('off — ui:forms is off for the deployment')", row("ui:forms")), "the confirmed flip").await;

    // Everything off at the level, in one action.
    console.page.locator("#deployment-all-reason").fill("incident 7", None).await.unwrap();
    console.page.locator("form.all-off button").click(None).await.unwrap();
    console.until("() => !!document.querySelector('#lattice-confirm[open]')", "the confirmation").await;
    let asked: String = console.eval("() => document.getElementById('lattice-confirm').textContent").await;
    assert!(
        asked.contains("Turn ui:forms, ui:dashboards, ui:mini-apps off for the deployment?") && asked.contains("every running app stops"),
        "{asked}"
    );
    console.page.locator("#lattice-confirm-ok").click(None).await.unwrap();
    console.until("() => document.getElementById('deployment-all-message').textContent === 'Everything is off here.'", "everything off").await;
    let states: Vec<String> = levels().await[0]["keys"].as_array().unwrap().iter().map(|k| k["state"].as_str().unwrap().to_owned()).collect();
    assert_eq!(states, ["off", "off", "off"]);

    // More changes than a page holds: paged, filtered, exported.
    for i in 0..20 {
        let state = if i % 2 == 0 { "on" } else { "off" };
        other.ok("PUT", "/v1/integrations/deployment/ui:dashboards", json!({"state": state, "reason": format!("toggle {i}")})).await;
    }
    let total = root.ok("GET", "/v1/integrations/audit", serde_json::Value::Null).await.as_array().unwrap().len();
    assert!(total > 20, "{total}");
    console.until(&format!("() => document.getElementById('audit-status')?.textContent === 'Changes 1 to 20 of {total}'"), "the first page").await;
    let next: String =
        console.eval("() => { const b = document.getElementById('audit-next'); return b.outerHTML + ' disabled=' + b.disabled; }").await;
    assert!(next.ends_with("disabled=false"), "{next}");
    console.page.locator("#audit-next").click(None).await.unwrap();
    console
        .until(&format!("() => document.getElementById('audit-status').textContent === 'Changes 21 to {total} of {total}'"), "the second page")
        .await;
    console.page.locator("#audit-key").select_option("ui:forms", None).await.unwrap();
    console.until("() => document.getElementById('audit-status').textContent === 'Changes 1 to 2 of 2'", "the key's changes").await;
    let keys: Vec<String> = console.eval("() => [...document.querySelectorAll('table.audit tbody tr')].map(r => r.children[3].textContent)").await;
    assert_eq!(keys, ["ui:forms", "ui:forms"]);
    console.page.locator("#audit-key").select_option("", None).await.unwrap();
    console.page.locator("#audit-actor").fill("demo-seed", None).await.unwrap();
    console.until("() => document.getElementById('audit-status').textContent === 'Changes 1 to 1 of 1'", "the seed's change").await;
    let csv: String =
        console.eval("() => decodeURIComponent(document.getElementById('audit-csv').getAttribute('href').split(',').slice(1).join(','))").await;
    let lines: Vec<&str> = csv.split("\r\n").filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 2, "{csv}");
    assert_eq!(lines[0], "seq,at,actor,level,key,old,new,reason");
    assert!(lines[1].contains("\"demo-seed\",\"deployment\",\"ui:mini-apps\",\"unset\",\"on\""), "{csv}");
    console.page.locator("#audit-actor").fill("nobody", None).await.unwrap();
    console.until("() => document.getElementById('audit-empty')?.textContent === 'No change matches these filters.'", "nothing matched").await;
}

//! The kill-switch propagation figure (REQUIREMENTS.md I3, I4, X2) on the multi-process
//! stack: a tenant admin turns ui:mini-apps off for the tenant in the
//! console; the open app's frame goes, the MCP tool list (through the edge,
//! from `lattice serve mcp`) loses create_app, and the log service refuses
//! a new app, each measured from the click and each within a second.

use std::time::{Duration, Instant};

use lattice_agent::tools::CREATE_APP;
use lattice_e2e::Client;
use lattice_e2e::browser::Chrome;
use serde_json::json;

use crate::apps::{by_hand, until_logged};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mini_apps_off_for_the_tenant_reaches_frame_mcp_and_log_within_a_second() {
    let stack = super::stack().await;
    let portal = stack.portal.clone();
    let root = Client::sign_in_as(&portal, json!({"tenant": "ops", "user": "root", "role": "deployment_admin"})).await;
    root.ok("PUT", "/v1/integrations/deployment/ui:mini-apps", json!({"state": "on", "reason": "the acceptance suite"})).await;
    let ana = Client::sign_in_as(&portal, json!({"tenant": "acme", "user": "ana", "role": "tenant_admin"})).await;
    let ws = ana.ok("POST", "/v1/workspaces", json!({"name": "Apps"})).await["id"].as_str().unwrap().to_owned();
    let th = ana.ok("POST", &format!("/v1/workspaces/{ws}/threads"), json!({"title": "Apps"})).await["id"].as_str().unwrap().to_owned();
    ana.ok("POST", &format!("/v1/workspaces/{ws}/members"), json!({"user": "bot", "role": "editor"})).await;
    let bot = Client::sign_in_as(&portal, json!({"tenant": "acme", "user": "bot", "agent": true})).await;
    let app = json!({"kind": "app", "data": {"title": "Runner", "summary": "Runs.", "html": by_hand("(async () => { await handshake(); log('running'); })();"), "state": {}}});
    bot.ok("POST", &format!("/v1/threads/{th}/artifacts"), app.clone()).await;
    assert!(super::mcp_tool_names(&portal, &bot.token).await.iter().any(|n| n == CREATE_APP));

    let chrome = Chrome::launch().await;
    let chat = chrome.window(&portal, &ana.token, "light", &format!("/t/{th}")).await;
    until_logged(&chat, "running").await;
    let console = chrome.window(&portal, &ana.token, "light", "/admin").await;
    let base = "tenant-acme-ui-mini-apps";
    console.until(&format!("() => !!document.getElementById('{base}-state')"), "the tenant's row").await;
    console.page.locator(format!("#{base}-state")).select_option("off", None).await.unwrap();
    console.page.locator(format!("#{base}-reason")).fill("Apps misbehave", None).await.unwrap();

    console.page.locator(format!("#{base}-state")).locator("xpath=ancestor::form//button").click(None).await.unwrap();
    // A tenant-wide flip asks first, naming what it stops and whom it reaches.
    console.until("() => !!document.querySelector('#lattice-confirm[open]')", "the confirmation").await;
    let asked: String = console.eval("() => document.getElementById('lattice-confirm').textContent").await;
    assert!(
        asked.contains("Turn ui:mini-apps off for tenant acme?")
            && asked.contains("This reaches 1 workspace")
            && asked.contains("every running app stops"),
        "{asked}"
    );
    let clicked = Instant::now();
    console.page.locator("#lattice-confirm-ok").click(None).await.unwrap();
    let limit = Duration::from_secs(1);
    let mcp = {
        let (portal, token) = (portal.clone(), bot.token.clone());
        tokio::spawn(async move {
            loop {
                if !super::mcp_tool_names(&portal, &token).await.iter().any(|n| n == CREATE_APP) {
                    return clicked.elapsed();
                }
                assert!(clicked.elapsed() < limit * 3, "create_app is still listed over MCP");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
    };
    let log = {
        let (bot, th) = (bot.clone(), th.clone());
        tokio::spawn(async move {
            loop {
                let (status, _) = bot.post(&format!("/v1/threads/{th}/artifacts"), app.clone()).await.unwrap();
                if status == 423 {
                    return clicked.elapsed();
                }
                assert!(clicked.elapsed() < limit * 3, "the log still takes a new app ({status})");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
    };
    chat.until_within("() => !document.querySelector('.app-frame')", "the frame removed", limit).await;
    let frame = clicked.elapsed();
    let (mcp, log) = (mcp.await.unwrap(), log.await.unwrap());
    println!(
        "kill-switch propagation (ui:mini-apps off for the tenant, from the click): frame gone {} ms, MCP tools/list without create_app {} ms, log refuses a new app (423) {} ms",
        frame.as_millis(),
        mcp.as_millis(),
        log.as_millis()
    );
    for (what, took) in [("the frame", frame), ("MCP", mcp), ("the log", log)] {
        assert!(took < limit, "{what} took {took:?}");
    }
    let card: String = chat.eval("() => document.querySelector('.app-card').textContent").await;
    assert!(card.contains("Mini apps are turned off here: ui:mini-apps is off for the tenant"), "{card}");
    drop(stack);
}

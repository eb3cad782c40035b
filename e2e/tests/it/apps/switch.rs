//! Turning ui:mini-apps off while an app runs (REQUIREMENTS.md I3, I4): the running
//! frame goes within a second, the label and summary stay. Archiving an app
//! does the same for that app.

use std::time::{Duration, Instant};

use lattice_e2e::browser::Chrome;
use serde_json::json;

use super::{Apps, by_hand, until_logged};

const APP: &str = "(async () => { await handshake(); log('running'); })();";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_switch_off_removes_the_running_frame_within_a_second() {
    let apps = Apps::start().await;
    apps.app("Runner", &by_hand(APP)).await;
    let chrome = Chrome::launch().await;
    let w = apps.window(&chrome).await;
    until_logged(&w, "running").await;

    let flipped = Instant::now();
    apps.ana.ok("PUT", &format!("/v1/integrations/workspace:{}/ui:mini-apps", apps.ws), json!({"state": "off", "reason": "apps misbehave"})).await;
    w.until_within("() => !document.querySelector('.app-frame')", "the frame removed", Duration::from_secs(1)).await;
    println!("mini-apps off to the frame gone: {} ms", flipped.elapsed().as_millis());
    let card: String = w.eval("() => document.querySelector('.app-card').textContent").await;
    assert!(card.contains("Made by the agent."), "{card}");
    assert!(card.contains("Runner: a test app."), "the summary stays: {card}");
    assert!(card.contains("Mini apps are turned off here: ui:mini-apps is off for the workspace"), "{card}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_archived_app_shows_its_label_and_runs_nothing() {
    let apps = Apps::start().await;
    let id = apps.app("Old", &by_hand(APP)).await;
    let chrome = Chrome::launch().await;
    let w = apps.window(&chrome).await;
    until_logged(&w, "running").await;
    apps.bot.ok("POST", &format!("/v1/artifacts/{id}/archive"), json!({})).await;
    w.until("() => !document.querySelector('.app-frame')", "the frame removed").await;
    let card: String = w.eval("() => document.querySelector('.app-card').textContent").await;
    assert!(card.contains("This app is archived: it no longer runs."), "{card}");
    assert!(card.contains("Old: a test app."), "{card}");
}

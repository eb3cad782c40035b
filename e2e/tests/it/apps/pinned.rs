//! Views that stay: a dashboard or an app pinned beside the thread stays in
//! view while the conversation scrolls, and an agent's later update shows
//! in place, pinned or not, without a reload.

use lattice_e2e::browser::{Chrome, Window};
use serde_json::{Value, json};

use super::{Apps, app_log, by_hand, until_logged};

/// Whether the element `selector` is wholly in the viewport.
async fn in_view(w: &Window, selector: &str) -> bool {
    w.eval(&format!(
        "() => {{ const r = document.querySelector({}).getBoundingClientRect(); return r.height > 0 && r.top >= 0 && r.bottom <= innerHeight + 1 }}",
        json!(selector)
    ))
    .await
}

async fn scroll(w: &Window, to: &str) {
    let _: Value = w.eval(&format!("() => {{ window.scrollTo(0, {to}); return null }}")).await;
    // The browser's observers answer a scroll on their own time; nothing tells the test.
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
}

const COUNTER: &str = r#"
window.onhost = (m) => { if (m.method === 'ui/notifications/tool-result') log('result ' + JSON.stringify(m.params.structuredContent.state)); };
handshake().then(() => log('ready'));
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_view_stays_in_view_and_updates_in_place() {
    let apps = Apps::start().await;
    let messages = format!("/v1/threads/{}/messages", apps.th);
    let say = |n: usize| apps.ana.ok("POST", &messages, json!({"text": format!("Message {n} of a long conversation.")}));
    for n in 0..15 {
        say(n).await;
    }
    let dashboard =
        json!({"title": "Error rate", "as_of": "2026-12-01T00:00:00Z", "panels": [{"type": "metric", "label": "Errors", "value": 1.5, "unit": "%"}]});
    let dash = apps.bot.ok("POST", &format!("/v1/threads/{}/artifacts", apps.th), json!({"kind": "dashboard", "data": dashboard})).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let app = apps.app("Counter", &by_hand(COUNTER)).await;
    for n in 15..40 {
        say(n).await;
    }
    let chrome = Chrome::launch().await;
    let w = apps.window(&chrome).await;
    until_logged(&w, "ready").await;
    w.until("() => document.querySelectorAll('.pin').length === 2", "a pin on the dashboard and on the app").await;
    let _: Value = w.eval("() => { window.notReloaded = true; return null }").await;

    // Pinned, the dashboard stays in view at the bottom and the top of the thread.
    let dash_item = format!("li.item:has(#dash-{dash}-title)");
    w.eval::<Value>(&format!("() => {{ document.querySelector({}).querySelector('.pin').click(); return null }}", json!(dash_item))).await;
    w.until(&format!("() => document.querySelector({}).classList.contains('pinned')", json!(dash_item)), "the dashboard pinned").await;
    let pressed: String =
        w.eval(&format!("() => document.querySelector({}).querySelector('.pin').getAttribute('aria-pressed')", json!(dash_item))).await;
    assert_eq!(pressed, "true");
    let tall: bool = w.eval("() => document.documentElement.scrollHeight > innerHeight * 2").await;
    assert!(tall, "the thread is long enough to scroll");
    scroll(&w, "document.documentElement.scrollHeight").await;
    assert!(in_view(&w, &dash_item).await, "in view at the bottom");
    scroll(&w, "0").await;
    assert!(in_view(&w, &dash_item).await, "in view at the top");
    if let Some(dir) = std::env::var_os("LATTICE_E2E_SHOTS") {
        crate::web::streaming::shot(&w, &std::path::Path::new(&dir).join("pinned.png")).await;
    }

    // An agent's update shows in place, still pinned, the page not reloaded.
    let patch = json!({"expected_version": 1, "patch": [{"op": "replace", "path": "/panels/0/value", "value": 2.5}]});
    apps.bot.ok("PATCH", &format!("/v1/artifacts/{dash}"), patch).await;
    w.until(&format!("() => document.querySelector({}).textContent.includes('2.5')", json!(dash_item)), "the new figure in the pinned view").await;
    assert!(w.eval::<bool>(&format!("() => document.querySelector({}).classList.contains('pinned')", json!(dash_item))).await);
    assert!(w.eval::<bool>("() => window.notReloaded === true").await, "updated without a reload");

    // Pinning the app unpins the dashboard; the running app is the same
    // frame (not started again), and an agent's update reaches it in place.
    let app_item = "li.item:has(.app-frame)";
    w.eval::<Value>(&format!("() => {{ document.querySelector({}).querySelector('.pin').click(); return null }}", json!(app_item))).await;
    w.until(
        &format!(
            "() => document.querySelector({}).classList.contains('pinned') && !document.querySelector({}).classList.contains('pinned')",
            json!(app_item),
            json!(dash_item)
        ),
        "the app pinned instead",
    )
    .await;
    scroll(&w, "document.documentElement.scrollHeight").await;
    assert!(in_view(&w, app_item).await, "the app in view at the bottom");
    let patch = json!({"expected_version": 1, "patch": [{"op": "replace", "path": "/state/count", "value": 2}]});
    apps.bot.ok("PATCH", &format!("/v1/artifacts/{app}"), patch).await;
    assert_eq!(until_logged(&w, "result {\"count\":2}").await, "result {\"count\":2}");
    let log = app_log(&w).await;
    assert_eq!(log.lines().filter(|l| *l == "ready").count(), 1, "the app was not started again: {log}");
    assert!(w.eval::<bool>("() => window.notReloaded === true").await);

    // The pin is remembered for the thread in this browser.
    w.page.reload(None).await.unwrap();
    w.until(
        &format!("() => !!document.querySelector({}) && document.querySelector({}).classList.contains('pinned')", json!(app_item), json!(app_item)),
        "still pinned after a reload",
    )
    .await;
}

//! An app that speaks MCP Apps' JSON-RPC by hand, with no SDK: the
//! handshake, its data, get_state / set_state / submit (confirmed in the
//! host's dialog), a refused tool, and every decision in the log.

use lattice_agent::tools::CREATE_APP;
use lattice_e2e::browser::Chrome;
use lattice_ui::app_policy::{GET_STATE, SET_STATE, SUBMIT};
use serde_json::json;

use super::{Apps, On, by_hand, until_logged};

const APP: &str = r#"
window.onhost = (m) => {
  if (m.method === 'ui/notifications/tool-input') log('tool-input ' + m.params.arguments.title);
  if (m.method === 'ui/notifications/tool-result') log('tool-result ' + JSON.stringify(m.params.structuredContent.state));
};
(async () => {
  const init = await handshake();
  log('initialized ' + init.protocolVersion + ' ' + init.hostInfo.name + ' ' + init.hostContext.theme + ' ' + (init.hostContext.styles.variables['--color-background-primary'] ? 'tokens' : 'no tokens'));
  await new Promise(r => setTimeout(r, 100));
  const s = await call('tools/call', {name: 'get_state', arguments: {}});
  log('get_state ' + JSON.stringify(s.structuredContent.state));
  const v = await call('tools/call', {name: 'set_state', arguments: {patch: [{op: 'replace', path: '/count', value: 5}]}});
  log('set_state ' + v.structuredContent.version);
  try { await call('tools/call', {name: 'create_app', arguments: {}}); log('create_app ran'); } catch (e) { log('create_app refused: ' + e.message); }
  const sub = await call('tools/call', {name: 'submit', arguments: {values: {count: 5, note: 'five'}}});
  log('submit ' + sub.structuredContent.id);
})();
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_by_hand_completes_the_lifecycle_and_calls_its_tools() {
    lifecycle_and_tools(On::Up).await;
}

/// The same against the multi-process stack (REQUIREMENTS.md X2), through the edge.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_by_hand_completes_the_lifecycle_and_calls_its_tools_on_the_stack() {
    lifecycle_and_tools(On::Stack).await;
}

async fn lifecycle_and_tools(on: On) {
    let apps = Apps::start_on(on).await;
    let id = apps.app("Counter", &by_hand(APP)).await;
    let chrome = Chrome::launch().await;
    let w = apps.window(&chrome).await;

    // The host's label and summary, outside the frame.
    w.until("() => !!document.querySelector('.app-card .app-label')", "the app's label").await;
    let label: String = w.eval("() => document.querySelector('.app-card .app-label').textContent").await;
    assert!(label.starts_with("Made by the agent. Runs sandboxed and can't reach the network."), "{label}");
    assert!(label.contains("version 1"), "{label}");
    // The frame comes once the switch has said mini apps are on (they fail closed).
    w.until("() => !!document.querySelector('.app-frame iframe')", "the app's frame").await;
    let sandbox: String = w.eval("() => document.querySelector('.app-frame iframe').getAttribute('sandbox')").await;
    assert_eq!(sandbox, "allow-scripts allow-same-origin");

    let init = until_logged(&w, "initialized").await;
    assert_eq!(init, "initialized 2026-01-26 lattice light tokens");
    assert_eq!(until_logged(&w, "tool-input").await, "tool-input Counter");
    assert_eq!(until_logged(&w, "tool-result").await, "tool-result {\"count\":1}");
    assert_eq!(until_logged(&w, GET_STATE).await, "get_state {\"count\":1}");
    assert_eq!(until_logged(&w, SET_STATE).await, "set_state 2");
    let refused = until_logged(&w, CREATE_APP).await;
    assert!(refused.starts_with("create_app refused:"), "{refused}");

    // submit: the host shows exactly what will be sent, and sends on "Send".
    w.until("() => !!document.querySelector('dialog#lattice-confirm[open]')", "the confirmation dialog").await;
    let shown: serde_json::Value =
        serde_json::from_str(&w.eval::<String>("() => document.getElementById('lattice-confirm-text').textContent").await).unwrap();
    assert_eq!(shown, json!({"count": 5, "note": "five"}));
    w.page.locator("#lattice-confirm-ok").click(None).await.unwrap();
    let sent = until_logged(&w, SUBMIT).await;
    let sub_id = sent.trim_start_matches("submit ").to_owned();
    assert!(sub_id.starts_with("sub_"), "{sent}");

    // What reached the log: the state as the viewer, the submission as her.
    let app = apps.artifact(&id).await;
    assert_eq!(app["version"], 2);
    assert_eq!(app["data"]["state"], json!({"count": 5}));
    let sub = apps.artifact(&sub_id).await;
    assert_eq!(sub["author"], "ana");
    assert_eq!(sub["data"]["values"], json!({"count": 5, "note": "five"}));
    let decisions: Vec<(String, String)> =
        apps.audit().await.iter().map(|d| (d["tool"].as_str().unwrap().to_owned(), d["decision"].as_str().unwrap().to_owned())).collect();
    assert_eq!(
        decisions,
        vec![
            (GET_STATE.into(), "allow".into()),
            (SET_STATE.into(), "allow".into()),
            (SUBMIT.into(), "ask".into()),
            (SUBMIT.into(), "confirmed".into())
        ]
    );
    assert!(apps.audit().await.iter().all(|d| d["via"] == "chat"), "decided on the server for the chat host");
}

const LINKS: &str = r#"
window.onhost = (m) => {
  if (m.method === 'ui/notifications/host-context-changed') log('context ' + m.params.theme + ' ' + m.params.styles.variables['--color-background-primary']);
};
(async () => {
  await handshake();
  try { await call('ui/open-link', {url: 'javascript:alert(1)'}); log('script link opened'); } catch (e) { log('script link refused: ' + e.message); }
  const url = 'ht' + 'tps://example.org/docs?q=lattice#top';
  try { await call('ui/open-link', {url}); log('link opened'); } catch (e) { log('link refused: ' + e.message); }
  log('ready for the theme');
})();
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_open_only_on_confirmation_and_the_theme_reaches_the_app() {
    let apps = Apps::start().await;
    apps.app("Links", &by_hand(LINKS)).await;
    let chrome = Chrome::launch().await;
    let w = apps.window(&chrome).await;

    let refused = until_logged(&w, "script link").await;
    assert_eq!(refused, "script link refused: Invalid URL: only http and https links open");
    // The host's dialog shows the full address; declining opens nothing.
    w.until("() => !!document.querySelector('dialog#lattice-confirm[open]')", "the link dialog").await;
    let shown: String = w.eval("() => document.getElementById('lattice-confirm-text').textContent").await;
    assert_eq!(shown, "https://example.org/docs?q=lattice#top");
    w.page.locator("#lattice-confirm-cancel").click(None).await.unwrap();
    assert_eq!(until_logged(&w, "link").await, "link refused: Link opening denied by user");

    // Every change of scheme is sent again (host-context-changed).
    until_logged(&w, "ready for the theme").await;
    w.page.locator("#scheme").select_option("dark", None).await.unwrap();
    let changed = until_logged(&w, "context").await;
    assert!(changed.starts_with("context dark "), "{changed}");
}

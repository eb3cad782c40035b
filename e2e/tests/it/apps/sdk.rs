//! An app written against the official `@modelcontextprotocol/ext-apps`
//! `App` class, loaded through `data-lattice-sdk`: it runs unchanged.

use lattice_agent::tools::SHOW_DASHBOARD;
use lattice_e2e::browser::Chrome;
use lattice_ui::app_policy::{GET_STATE, SET_STATE, SUBMIT};
use serde_json::json;

use super::{Apps, until_logged};

const APP: &str = r#"<!doctype html><html><head><meta charset="utf-8"></head><body><pre id="log"></pre>
<script data-lattice-sdk="ext-apps"></script>
<script>
const lines = [];
const log = (s) => { lines.push(s); document.getElementById('log').textContent = lines.join('\n'); };
const app = new ExtApps.App({ name: 'sdk-counter', version: '1.0.0' });
app.ontoolresult = (r) => log('tool-result ' + JSON.stringify(r.structuredContent.state));
app.connect().then(async () => {
  log('connected ' + app.getHostVersion().name + ' ' + app.getHostVersion().version);
  const s = await app.callServerTool({ name: 'get_state', arguments: {} });
  log('get_state ' + JSON.stringify(s.structuredContent.state));
  const v = await app.callServerTool({ name: 'set_state', arguments: { patch: [{ op: 'add', path: '/by', value: 'sdk' }] } });
  log('set_state ' + v.structuredContent.version);
  try { await app.callServerTool({ name: 'show_dashboard', arguments: {} }); log('show_dashboard ran'); } catch (e) { log('show_dashboard refused'); }
  const sub = await app.callServerTool({ name: 'submit', arguments: { values: { from: 'sdk' } } });
  log('submit ' + sub.structuredContent.id);
}).catch((e) => log('failed ' + e));
</script></body></html>"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_on_the_official_sdk_runs_unchanged() {
    let apps = Apps::start().await;
    let id = apps.app("SDK counter", APP).await;
    let chrome = Chrome::launch().await;
    let w = apps.window(&chrome).await;

    let connected = until_logged(&w, "connected").await;
    assert!(connected.starts_with("connected lattice "), "{connected}");
    assert!(connected.contains("@modelcontextprotocol/ext-apps@2.0.4"), "hostInfo names the vendored SDK: {connected}");
    assert_eq!(until_logged(&w, "tool-result").await, "tool-result {\"count\":1}");
    assert_eq!(until_logged(&w, GET_STATE).await, "get_state {\"count\":1}");
    assert_eq!(until_logged(&w, SET_STATE).await, "set_state 2");
    assert_eq!(until_logged(&w, SHOW_DASHBOARD).await, "show_dashboard refused");
    w.until("() => !!document.querySelector('dialog#lattice-confirm[open]')", "the confirmation dialog").await;
    w.page.locator("#lattice-confirm-ok").click(None).await.unwrap();
    let sent = until_logged(&w, SUBMIT).await;
    assert!(sent.starts_with("submit sub_"), "{sent}");
    assert_eq!(apps.artifact(&id).await["data"]["state"], json!({"count": 1, "by": "sdk"}));
}

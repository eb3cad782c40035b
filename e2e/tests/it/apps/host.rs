//! The chat as an MCP Apps host (2026-01-26), to an app written by hand
//! against the spec (raw JSON-RPC) and to one on the official SDK: the
//! host context, display modes, what an app tells the model, and a
//! message it asks to post.

use lattice_e2e::browser::{Chrome, Window};
use lattice_e2e::model::ModelService;
use serde_json::{Value, json};

use super::{Apps, by_hand, until_logged};

/// The outer frame's size and the window's.
async fn frame_and_window(w: &Window) -> (f64, f64, f64, f64) {
    let v: Vec<f64> = w
        .eval("() => { const r = document.querySelector('.app-frame iframe').getBoundingClientRect(); return [r.width, r.height, innerWidth, innerHeight] }")
        .await;
    (v[0], v[1], v[2], v[3])
}

/// Whether the model service was sent `text` inside an untrusted-data
/// fence in its last request.
fn told_the_model(model: &ModelService, text: &str) -> bool {
    let asked = model.asked.lock().unwrap();
    let Some(last) = asked.last() else { return false };
    last["messages"].as_array().unwrap().iter().any(|m| {
        let content = m["content"].as_str().unwrap_or_default();
        m["role"] == "user" && content.contains("<untrusted-data source=\"app context\"") && content.contains(text)
    })
}

async fn asked_the_model(apps: &Apps, model: &ModelService, prompt: &str) {
    let before = model.asked.lock().unwrap().len();
    let run = apps.ana.ok("POST", &format!("/v1/threads/{}/runs", apps.th), json!({"prompt": prompt})).await["run_id"].as_str().unwrap().to_owned();
    for _ in 0..200 {
        let status = apps.ana.ok("GET", &format!("/v1/runs/{run}"), Value::Null).await["status"].as_str().unwrap().to_owned();
        if status != "running" {
            assert_eq!(status, "finished");
            assert!(model.asked.lock().unwrap().len() > before);
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the run did not finish");
}

const BY_HAND: &str = r#"
window.onhost = (m) => {
  if (m.method === 'ui/notifications/host-context-changed') log('changed ' + JSON.stringify(m.params));
};
(async () => {
  const init = await call('ui/initialize', {protocolVersion: '2026-01-26', appInfo: {name: 'by-hand', version: '1'},
    appCapabilities: {availableDisplayModes: ['inline', 'fullscreen']}});
  notify('ui/notifications/initialized', {});
  const c = init.hostContext;
  log('context ' + JSON.stringify({keys: Object.keys(c).sort(), theme: c.theme, variables: Object.keys(c.styles.variables).length,
    background: c.styles.variables['--color-background-primary'], font: c.styles.variables['--font-sans'], locale: c.locale,
    timeZone: c.timeZone, platform: c.platform, mode: c.displayMode, modes: c.availableDisplayModes, dimensions: c.containerDimensions,
    device: c.deviceCapabilities, insets: c.safeAreaInsets}));
  log('capabilities ' + JSON.stringify(init.hostCapabilities));
  log('pip ' + (await call('ui/request-display-mode', {mode: 'pip'})).mode);
  log('fullscreen ' + (await call('ui/request-display-mode', {mode: 'fullscreen'})).mode);
  await call('ui/update-model-context', {content: [{type: 'text', text: 'The person is looking at the EU region.'}], structuredContent: {region: 'eu'}});
  log('context kept');
  window.say = async () => log('message ' + JSON.stringify(await call('ui/message', {role: 'user', content: [{type: 'text', text: 'Summarise the EU figures, please.'}]})));
})().catch((e) => log('failed ' + JSON.stringify(e)));
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_by_hand_gets_the_host_context_fullscreen_and_the_models_ear() {
    let model = ModelService::default();
    let base_url = model.clone().start().await;
    let apps = Apps::start_with(&[("LATTICE_MODEL_BASE_URL", base_url.as_str()), ("LATTICE_MODEL_NAME", "host-test")]).await;
    apps.app("By hand", &by_hand(BY_HAND)).await;
    let chrome = Chrome::launch().await;
    let w = apps.window(&chrome).await;

    // Every field of the host context, the spec's 76 theming variables
    // resolved for the scheme in force.
    let context: Value = serde_json::from_str(until_logged(&w, "context ").await.trim_start_matches("context ")).unwrap();
    let keys: Vec<&str> = context["keys"].as_array().unwrap().iter().map(|k| k.as_str().unwrap()).collect();
    for key in [
        "availableDisplayModes",
        "containerDimensions",
        "deviceCapabilities",
        "displayMode",
        "locale",
        "platform",
        "safeAreaInsets",
        "styles",
        "theme",
        "timeZone",
    ] {
        assert!(keys.contains(&key), "{key} in {keys:?}");
    }
    assert_eq!(context["theme"], "light");
    assert_eq!(context["variables"], 76);
    assert_eq!(context["background"], "#ffffff", "light-dark() resolved for the light scheme");
    assert!(context["font"].as_str().unwrap().contains("system-ui"));
    assert!(!context["timeZone"].as_str().unwrap().is_empty());
    assert!(!context["locale"].as_str().unwrap().is_empty());
    assert_eq!(context["platform"], "web");
    assert_eq!(context["mode"], "inline");
    assert_eq!(context["modes"], json!(["inline", "fullscreen", "pip"]));
    assert!(context["dimensions"]["maxWidth"].as_f64().unwrap() > 0.0);
    assert!(context["device"]["hover"].is_boolean() && context["device"]["touch"].is_boolean());
    assert_eq!(context["insets"], json!({"top": 0, "right": 0, "bottom": 0, "left": 0}));
    let capabilities = until_logged(&w, "capabilities ").await;
    assert!(capabilities.contains("\"updateModelContext\"") && capabilities.contains("\"message\""), "{capabilities}");

    // A mode the app did not declare stays refused; fullscreen is granted
    // and the frame fills the window, with the host's way back.
    assert_eq!(until_logged(&w, "pip ").await, "pip inline");
    assert_eq!(until_logged(&w, "fullscreen ").await, "fullscreen fullscreen");
    let changed = until_logged(&w, "changed ").await;
    assert!(changed.contains("\"displayMode\":\"fullscreen\""), "{changed}");
    let (fw, fh, ww, wh) = frame_and_window(&w).await;
    assert!(fw >= ww - 12.0 && fh >= wh - 60.0, "the frame {fw}×{fh} fills the window {ww}×{wh}");
    let back: String = w.eval("() => document.querySelector('.app-frame.fullscreen .exit-mode').textContent").await;
    assert_eq!(back, "Exit full screen");
    if let Some(dir) = std::env::var_os("LATTICE_E2E_SHOTS") {
        crate::web::streaming::shot(&w, &std::path::Path::new(&dir).join("app-fullscreen.png")).await;
    }
    w.press("Escape").await;
    w.until("() => !document.querySelector('.app-frame.fullscreen') && !document.querySelector('.exit-mode')", "back in the thread").await;
    let (fw, _, ww, _) = frame_and_window(&w).await;
    assert!(fw < ww - 100.0, "inline again: {fw} of {ww}");

    // What the app told the model reaches its next request, fenced.
    until_logged(&w, "context kept").await;
    asked_the_model(&apps, &model, "What am I looking at?").await;
    assert!(told_the_model(&model, "The person is looking at the EU region."), "{:?}", model.asked.lock().unwrap().last());
    assert!(told_the_model(&model, r#"{"region":"eu"}"#));

    // A message the app asks to post goes in as the person, once confirmed.
    let _: Value = w
        .page
        .frame_locator(".app-frame iframe")
        .frame_locator("iframe")
        .locator("#log")
        .evaluate("() => { window.say(); return null }", None::<()>)
        .await
        .unwrap();
    w.until("() => !!document.querySelector('dialog#lattice-confirm[open]')", "the confirmation").await;
    let shown: String = w.eval("() => document.querySelector('dialog#lattice-confirm').textContent").await;
    assert!(shown.contains("Summarise the EU figures, please."), "the person reads what is posted: {shown}");
    w.page.locator("#lattice-confirm-ok").click(None).await.unwrap();
    assert_eq!(until_logged(&w, "message ").await, "message {}");
    let posted: Vec<Value> =
        apps.ana.all_events(&apps.th).await.into_iter().filter(|e| e["type"] == "message_posted" && e["actor"]["kind"] == "person").collect();
    assert_eq!(posted.len(), 1);
    assert_eq!(posted[0]["payload"]["text"], "Summarise the EU figures, please.");
    assert_eq!(posted[0]["actor"]["user"], "ana");
}

const SDK: &str = r#"<!doctype html><html><head><meta charset="utf-8"></head><body><pre id="log"></pre>
<script data-lattice-sdk="ext-apps"></script>
<script>
const lines = [];
const log = (s) => { lines.push(s); document.getElementById('log').textContent = lines.join('\n'); };
const app = new ExtApps.App({ name: 'sdk-host', version: '1.0.0' }, { availableDisplayModes: ['inline', 'fullscreen'] });
app.onhostcontextchanged = (c) => { if (c.displayMode) log('changed ' + c.displayMode); };
app.connect().then(async () => {
  const c = app.getHostContext();
  log('context ' + JSON.stringify({theme: c.theme, variables: Object.keys(c.styles.variables).length, timeZone: c.timeZone, modes: c.availableDisplayModes}));
  ExtApps.applyHostStyleVariables(c.styles.variables);
  log('applied ' + getComputedStyle(document.documentElement).getPropertyValue('--color-text-primary').trim());
  const r = await app.requestDisplayMode({ mode: 'fullscreen' });
  log('fullscreen ' + r.mode);
  await app.updateModelContext({ content: [{ type: 'text', text: 'The SDK app shows the APAC region.' }] });
  log('context kept');
}).catch((e) => log('failed ' + e));
</script></body></html>"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_on_the_official_sdk_gets_the_same_through_its_api() {
    let model = ModelService::default();
    let base_url = model.clone().start().await;
    let apps = Apps::start_with(&[("LATTICE_MODEL_BASE_URL", base_url.as_str()), ("LATTICE_MODEL_NAME", "host-test")]).await;
    apps.app("SDK host", SDK).await;
    let chrome = Chrome::launch().await;
    let w = apps.window(&chrome).await;

    let context: Value = serde_json::from_str(until_logged(&w, "context ").await.trim_start_matches("context ")).unwrap();
    assert_eq!(context["theme"], "light");
    assert_eq!(context["variables"], 76);
    assert!(!context["timeZone"].as_str().unwrap().is_empty());
    assert_eq!(context["modes"], json!(["inline", "fullscreen", "pip"]));
    assert_eq!(until_logged(&w, "applied ").await, "applied #16181d", "the SDK applies the host's colours");
    assert_eq!(until_logged(&w, "fullscreen ").await, "fullscreen fullscreen");
    assert_eq!(until_logged(&w, "changed ").await, "changed fullscreen");
    let (fw, fh, ww, wh) = frame_and_window(&w).await;
    assert!(fw >= ww - 12.0 && fh >= wh - 60.0, "the frame {fw}×{fh} fills the window {ww}×{wh}");
    w.page.locator(".exit-mode").click(None).await.unwrap();
    w.until("() => !document.querySelector('.app-frame.fullscreen')", "the button returns it").await;

    until_logged(&w, "context kept").await;
    asked_the_model(&apps, &model, "What does the app show?").await;
    assert!(told_the_model(&model, "The SDK app shows the APAC region."));
}

//! Mini apps in real headless Chromium (REQUIREMENTS.md W4–W6, E1–E3, I3): the two
//! frames, the host bridge, the official SDK, the limits, and the escape
//! suite.

mod bridge;
mod domains;
mod elicitation;
mod escape;
mod examples;
mod host;
mod limits;
mod links;
mod offers;
mod on_a_phone;
mod pinned;
mod sdk;
mod servers;
mod switch;

use std::time::Duration;

pub use lattice_e2e::On;
use lattice_e2e::browser::{Chrome, Window};
use lattice_e2e::{Client, Deployment};
use serde_json::{Value, json};

/// A deployment with mini apps on, a workspace and thread of `ana`'s with
/// the agent `bot` in it.
pub struct Apps {
    /// The portal's origin.
    pub base: String,
    pub deployment: Deployment,
    pub ana: Client,
    pub bot: Client,
    pub ws: String,
    pub th: String,
}

impl Apps {
    pub async fn start() -> Self {
        Self::start_on(On::Up).await
    }

    pub async fn start_on(on: On) -> Self {
        Self::set_up(Deployment::start(on).await).await
    }

    /// On `lattice up` with extra environment (a model service).
    pub async fn start_with(env: &[(&str, &str)]) -> Self {
        Self::set_up(Deployment::Up(lattice_e2e::UpProcess::start_with(env).await)).await
    }

    async fn set_up(deployment: Deployment) -> Self {
        let base = deployment.base().to_owned();
        let up = &base;
        let root = Client::sign_in_as(up, json!({"tenant": "ops", "user": "root", "role": "deployment_admin"})).await;
        root.ok("PUT", "/v1/integrations/deployment/ui:mini-apps", json!({"state": "on", "reason": "the app suites"})).await;
        let ana = Client::sign_in_as(up, json!({"tenant": "acme", "user": "ana", "role": "tenant_admin"})).await;
        let ws = ana.ok("POST", "/v1/workspaces", json!({"name": "Apps"})).await["id"].as_str().unwrap().to_owned();
        let th = ana.ok("POST", &format!("/v1/workspaces/{ws}/threads"), json!({"title": "Apps"})).await["id"].as_str().unwrap().to_owned();
        ana.ok("POST", &format!("/v1/workspaces/{ws}/members"), json!({"user": "bot", "role": "editor"})).await;
        let bot = Client::sign_in_as(up, json!({"tenant": "acme", "user": "bot", "agent": true})).await;
        Self { base, deployment, ana, bot, ws, th }
    }

    /// The agent makes an app; returns its id.
    pub async fn app(&self, title: &str, html: &str) -> String {
        let data = json!({"title": title, "summary": format!("{title}: a test app."), "html": html, "state": {"count": 1}});
        self.bot.ok("POST", &format!("/v1/threads/{}/artifacts", self.th), json!({"kind": "app", "data": data})).await["id"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// Ana's window on the thread.
    pub async fn window(&self, chrome: &Chrome) -> Window {
        chrome.window(&self.base, &self.ana.token, "light", &format!("/t/{}", self.th)).await
    }

    pub async fn artifact(&self, id: &str) -> Value {
        self.ana.ok("GET", &format!("/v1/artifacts/{id}"), Value::Null).await
    }

    /// The audit events apps' calls left in the workspace's log.
    pub async fn audit(&self) -> Vec<Value> {
        let page = self.ana.ok("GET", &format!("/v1/workspaces/{}/events?format=json", self.ws), Value::Null).await;
        page["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["type"] == "audit_recorded" && e["payload"]["name"] == "app_tool_call")
            .map(|e| e["payload"]["data"].clone())
            .collect()
    }
}

/// The text of `#log` inside the running app (the inner frame).
pub async fn app_log(w: &Window) -> String {
    let log = w.page.frame_locator(".app-frame iframe").frame_locator("iframe").locator("#log");
    // Reading runs script in the app's frame: a frame that no longer
    // answers (an app that spins) fails the read instead of hanging it.
    let read = async {
        if log.count().await.unwrap_or(0) == 0 {
            return String::new();
        }
        log.text_content().await.ok().flatten().unwrap_or_default()
    };
    tokio::time::timeout(Duration::from_secs(10), read).await.expect("the app's frame answers a read of its log within 10 s")
}

/// Waits until the app's log has a line starting with `prefix`.
pub async fn until_logged(w: &Window, prefix: &str) -> String {
    for _ in 0..400 {
        let log = app_log(w).await;
        if let Some(line) = log.lines().find(|l| l.starts_with(prefix)) {
            return line.to_owned();
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the app never logged {prefix:?}; its log: {}", app_log(w).await);
}

/// A small JSON-RPC client for hand-written test apps, then `body`.
pub fn by_hand(body: &str) -> String {
    format!(
        r#"<!doctype html><html><head><meta charset="utf-8"></head><body><pre id="log"></pre><script>
const lines = [];
const log = (s) => {{ lines.push(s); document.getElementById('log').textContent = lines.join('\n'); console.log('app: ' + s); }};
let next = 1; const pending = new Map();
window.addEventListener('message', (e) => {{
  const m = e.data; if (!m || m.jsonrpc !== '2.0') return;
  if (m.id !== undefined && !m.method && pending.has(m.id)) {{ const p = pending.get(m.id); pending.delete(m.id); m.error ? p.reject(m.error) : p.resolve(m.result); return; }}
  if (m.method === 'ui/resource-teardown') {{ parent.postMessage({{jsonrpc: '2.0', id: m.id, result: {{}}}}, '*'); }}
  if (window.onhost) window.onhost(m);
}});
const call = (method, params) => new Promise((resolve, reject) => {{ const id = next++; pending.set(id, {{resolve, reject}}); parent.postMessage({{jsonrpc: '2.0', id, method, params}}, '*'); }});
const notify = (method, params) => parent.postMessage({{jsonrpc: '2.0', method, params}}, '*');
async function handshake() {{
  const init = await call('ui/initialize', {{protocolVersion: '2026-01-26', appInfo: {{name: 'by-hand', version: '1'}}, appCapabilities: {{}}}});
  notify('ui/notifications/initialized', {{}});
  return init;
}}
</script><script>{body}</script></body></html>"#
    )
}

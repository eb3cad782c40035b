//! The host side of MCP Apps (REQUIREMENTS.md W5, W6): JSON-RPC over postMessage with
//! the sandbox proxy of each running app.
//!
//! A message counts only when it comes from a frame this page made
//! (`event.source`) on the apps origin; it is dropped when it is larger
//! than 64 KB, and a frame's requests beyond 60 a minute get no answer.
//! Nothing is sent to an app before it says `ui/notifications/initialized`.
//! `tools/call` reaches get_state, set_state and submit only, and each is
//! handed to the server (`POST /v1/artifacts/{app}/calls`), which decides
//! with the deployment's policy, records the decision with the call's
//! effect, and says when the person must confirm; the person's answer goes
//! back as its own request. Nothing is decided here.

use std::cell::RefCell;
use std::collections::VecDeque;

use serde::Deserialize;
use serde_json::{Value, json};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::Closure;
use lattice_wire::{AppCall, Confirmation, Outcome};
use web_sys::{HtmlIFrameElement, MessageEvent};

use crate::api;
use crate::components::confirm;

pub const MAX_MESSAGE_BYTES: usize = 64 * 1024;
pub const CALLS_PER_MINUTE: usize = 60;
pub const PROTOCOL: &str = "2026-01-26";

/// What `/config.json` says.
#[derive(Debug, Clone, Deserialize)]
pub struct PageConfig {
    pub apps_origin: String,
    pub sandbox: String,
    #[serde(default)]
    pub sdk: Option<String>,
    /// Whether `/#token=` sign-in links are taken (embedded and local
    /// profiles only).
    #[serde(default)]
    pub link_sign_in: bool,
}

/// The app a frame runs.
#[derive(Debug, Clone)]
pub struct AppInfo {
    pub id: String,
    pub version: u64,
    pub title: String,
    pub summary: String,
    pub html: String,
    pub state: Value,
}

struct Frame {
    id: u64,
    iframe: HtmlIFrameElement,
    app: AppInfo,
    initialized: bool,
    calls: VecDeque<f64>,
    teardown: Option<(Value, Box<dyn FnOnce()>)>,
    next_id: u64,
}

thread_local! {
    static FRAMES: RefCell<Vec<Frame>> = const { RefCell::new(Vec::new()) };
    static NEXT: RefCell<u64> = const { RefCell::new(1) };
    static CONFIG: RefCell<Option<PageConfig>> = const { RefCell::new(None) };
    static LISTENING: RefCell<bool> = const { RefCell::new(false) };
}

fn now() -> f64 {
    js_sys::Date::now()
}

/// The page's configuration, read once.
pub async fn config() -> Option<PageConfig> {
    if let Some(c) = CONFIG.with(|c| c.borrow().clone()) {
        return Some(c);
    }
    let c: PageConfig = api::get("/config.json").await.ok()?;
    CONFIG.with(|slot| *slot.borrow_mut() = Some(c.clone()));
    Some(c)
}

fn apps_origin() -> String {
    CONFIG.with(|c| c.borrow().as_ref().map(|c| c.apps_origin.clone()).unwrap_or_default())
}

/// Starts speaking with a frame; returns its id.
pub fn register(iframe: HtmlIFrameElement, app: AppInfo) -> u64 {
    listen();
    let id = NEXT.with(|n| {
        let mut n = n.borrow_mut();
        *n += 1;
        *n
    });
    FRAMES.with(|f| {
        f.borrow_mut().push(Frame {
            id,
            iframe,
            app,
            initialized: false,
            calls: VecDeque::new(),
            teardown: None,
            next_id: 1,
        })
    });
    id
}

pub fn unregister(id: u64) {
    FRAMES.with(|f| f.borrow_mut().retain(|fr| fr.id != id));
}

/// Keeps the frame's idea of its artifact current (new versions, state).
pub fn update(id: u64, version: u64, state: Value) {
    with_frame(id, |f| {
        f.app.version = version;
        f.app.state = state;
    });
}

/// Asks the app to wind down (`ui/resource-teardown`); `done` runs on its
/// answer, or after `wait_ms` without one.
pub fn teardown(id: u64, wait_ms: i32, done: impl FnOnce() + 'static) {
    let done: std::rc::Rc<RefCell<Option<Box<dyn FnOnce()>>>> = std::rc::Rc::new(RefCell::new(Some(Box::new(done))));
    let initialized = with_frame(id, |f| f.initialized).unwrap_or(false);
    if initialized {
        let request_id = with_frame(id, |f| {
            let rid = json!(format!("host-{}", f.next_id));
            f.next_id += 1;
            rid
        });
        if let Some(rid) = request_id {
            let on_answer = done.clone();
            with_frame(id, |f| {
                f.teardown = Some((rid.clone(), Box::new(move || {
                    if let Some(d) = on_answer.borrow_mut().take() {
                        d();
                    }
                })))
            });
            send(id, &json!({"jsonrpc": "2.0", "id": rid, "method": "ui/resource-teardown", "params": {"reason": "the app is no longer shown"}}));
        }
    }
    leptos::task::spawn_local(async move {
        crate::stream::sleep(if initialized { wait_ms } else { 0 }).await;
        if let Some(d) = done.borrow_mut().take() {
            d();
        }
    });
}

/// Tells every running app the host's context changed (theme, modes).
pub fn context_changed() {
    let ids: Vec<u64> = FRAMES.with(|f| f.borrow().iter().filter(|fr| fr.initialized).map(|fr| fr.id).collect());
    let context = host_context();
    for id in ids {
        send(id, &json!({"jsonrpc": "2.0", "method": "ui/notifications/host-context-changed", "params": context}));
    }
}

fn with_frame<T>(id: u64, f: impl FnOnce(&mut Frame) -> T) -> Option<T> {
    FRAMES.with(|frames| frames.borrow_mut().iter_mut().find(|fr| fr.id == id).map(f))
}

fn send(id: u64, message: &Value) {
    let target = with_frame(id, |f| f.iframe.content_window()).flatten();
    if let Some(window) = target
        && let Ok(value) = js_sys::JSON::parse(&message.to_string())
    {
        let _ = window.post_message(&value, &apps_origin());
    }
}

fn answer(id: u64, request: &Value, result: Value) {
    send(id, &json!({"jsonrpc": "2.0", "id": request, "result": result}));
}

fn refuse(id: u64, request: &Value, code: i64, message: &str) {
    send(id, &json!({"jsonrpc": "2.0", "id": request, "error": {"code": code, "message": message}}));
}

fn listen() {
    if LISTENING.with(|l| std::mem::replace(&mut *l.borrow_mut(), true)) {
        return;
    }
    let handler = Closure::<dyn Fn(MessageEvent)>::new(on_message);
    if let Some(w) = web_sys::window() {
        let _ = w.add_event_listener_with_callback("message", handler.as_ref().unchecked_ref());
    }
    handler.forget();
}

fn on_message(event: MessageEvent) {
    if event.origin() != apps_origin() {
        return;
    }
    let Some(source) = event.source() else { return };
    let source: &js_sys::Object = source.unchecked_ref();
    let frame = FRAMES.with(|f| {
        f.borrow()
            .iter()
            .find(|fr| fr.iframe.content_window().is_some_and(|w| js_sys::Object::is(w.as_ref(), source)))
            .map(|fr| fr.id)
    });
    let Some(id) = frame else { return };
    let Some(text) = js_sys::JSON::stringify(&event.data()).ok().and_then(|s| s.as_string()) else { return };
    if text.len() > MAX_MESSAGE_BYTES {
        return;
    }
    let Ok(message) = serde_json::from_str::<Value>(&text) else { return };
    let method = message.get("method").and_then(Value::as_str).unwrap_or_default().to_owned();
    let request = message.get("id").cloned().filter(|_| !method.is_empty());
    if let Some(rid) = &request {
        // Requests past the budget get silence.
        let over = with_frame(id, |f| {
            let t = now();
            while f.calls.front().is_some_and(|at| t - at > 60_000.0) {
                f.calls.pop_front();
            }
            if f.calls.len() >= CALLS_PER_MINUTE {
                return true;
            }
            f.calls.push_back(t);
            false
        })
        .unwrap_or(true);
        if over {
            return;
        }
        handle_request(id, rid.clone(), &method, message.get("params").cloned().unwrap_or(Value::Null));
        return;
    }
    if method.is_empty() {
        // An answer to a request of the host's (teardown).
        let rid = message.get("id").cloned().unwrap_or(Value::Null);
        let done = with_frame(id, |f| match &f.teardown {
            Some((expected, _)) if *expected == rid => f.teardown.take().map(|(_, d)| d),
            _ => None,
        })
        .flatten();
        if let Some(done) = done {
            done();
        }
        return;
    }
    let params = message.get("params").cloned().unwrap_or(Value::Null);
    match method.as_str() {
        "ui/notifications/sandbox-proxy-ready" => {
            let html = with_frame(id, |f| f.app.html.clone()).unwrap_or_default();
            send(id, &json!({"jsonrpc": "2.0", "method": "ui/notifications/sandbox-resource-ready", "params": {"html": html, "sandbox": "allow-scripts"}}));
        }
        "ui/notifications/initialized" => {
            let Some(app) = with_frame(id, |f| {
                f.initialized = true;
                f.app.clone()
            }) else {
                return;
            };
            send(id, &json!({"jsonrpc": "2.0", "method": "ui/notifications/tool-input", "params": {"arguments": {"title": app.title, "summary": app.summary}}}));
            send(id, &json!({"jsonrpc": "2.0", "method": "ui/notifications/tool-result", "params": app_result(&app)}));
        }
        "ui/notifications/size-changed" => {
            if let Some(h) = params.get("height").and_then(Value::as_f64) {
                let clamped = h.clamp(80.0, 800.0);
                with_frame(id, |f| {
                    let _ = f.iframe.style().set_property("height", &format!("{clamped}px"));
                });
            }
        }
        _ => {}
    }
}

fn app_result(app: &AppInfo) -> Value {
    json!({
        "content": [{"type": "text", "text": app.summary}],
        "structuredContent": {"app": app.id, "version": app.version, "title": app.title, "summary": app.summary, "state": app.state},
    })
}

fn handle_request(id: u64, rid: Value, method: &str, params: Value) {
    let initialized = with_frame(id, |f| f.initialized).unwrap_or(false);
    match method {
        "ui/initialize" => {
            let sdk = CONFIG.with(|c| c.borrow().as_ref().and_then(|c| c.sdk.clone()));
            answer(
                id,
                &rid,
                json!({
                    "protocolVersion": PROTOCOL,
                    "hostInfo": {"name": "lattice", "version": sdk.map_or_else(|| env!("CARGO_PKG_VERSION").to_owned(), |s| format!("{} ({s})", env!("CARGO_PKG_VERSION")))},
                    "hostCapabilities": {"openLinks": {}, "serverTools": {}, "logging": {}},
                    "hostContext": host_context(),
                }),
            );
        }
        "ping" => answer(id, &rid, json!({})),
        _ if !initialized => refuse(id, &rid, -32002, "the app has not finished initializing"),
        "tools/call" => {
            let name = params.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
            let arguments = params.get("arguments").cloned().unwrap_or_else(|| json!({}));
            if !matches!(name.as_str(), "get_state" | "set_state" | "submit") {
                refuse(id, &rid, -32602, &format!("{name:?} is not a tool an app may call (get_state, set_state, submit)"));
                return;
            }
            leptos::task::spawn_local(async move { call_tool(id, rid, name, arguments).await });
        }
        "ui/open-link" => {
            let url = params.get("url").and_then(Value::as_str).unwrap_or_default().to_owned();
            leptos::task::spawn_local(async move { open_link(id, rid, url).await });
        }
        "notifications/message" => {}
        other => refuse(id, &rid, -32601, &format!("{other} is not supported by this host")),
    }
}

async fn open_link(id: u64, rid: Value, url: String) {
    let lower = url.to_ascii_lowercase();
    if !(lower.starts_with("https://") || lower.starts_with("http://")) {
        refuse(id, &rid, -32000, "Invalid URL: only http and https links open");
        return;
    }
    let title = with_frame(id, |f| f.app.title.clone()).unwrap_or_default();
    if confirm::ask(&format!("{title} wants to open a link"), "The app asks to open this address in a new tab:", &url, "Open link").await {
        if let Some(w) = web_sys::window() {
            let _ = w.open_with_url_and_target_and_features(&url, "_blank", "noopener,noreferrer");
        }
        answer(id, &rid, json!({}));
    } else {
        refuse(id, &rid, -32000, "Link opening denied by user");
    }
}

/// Hands an app's call to the server and answers the app with what it
/// says; when the person must confirm, asks them with the exact arguments
/// the server recorded, and sends their answer back.
async fn call_tool(id: u64, rid: Value, name: String, arguments: Value) {
    let Some(app) = with_frame(id, |f| f.app.clone()) else { return };
    let body = AppCall { tool: name.clone(), arguments };
    let mut outcome = match api::post::<Outcome>(&format!("/v1/artifacts/{}/calls", app.id), &body).await {
        Ok(outcome) => outcome,
        Err(e) => return answer(id, &rid, tool_error(&e.message())),
    };
    if let Outcome::Confirm { confirmation, arguments: asked, .. } = &outcome {
        let (title, lead, button, shown) = match name.as_str() {
            "submit" => (
                format!("Send from {}?", app.title),
                "The app will send exactly this, as you:".to_owned(),
                "Send",
                serde_json::to_string_pretty(asked.get("values").unwrap_or(&Value::Null)).unwrap_or_default(),
            ),
            _ => (format!("Allow {} to call {name}?", app.title), "With these arguments:".to_owned(), "Allow", serde_json::to_string_pretty(asked).unwrap_or_default()),
        };
        let accept = confirm::ask(&title, &lead, &shown, button).await;
        outcome = match api::post::<Outcome>(&format!("/v1/app-calls/{confirmation}"), &Confirmation { accept }).await {
            Ok(outcome) => outcome,
            Err(e) => return answer(id, &rid, tool_error(&e.message())),
        };
    }
    match outcome {
        Outcome::Done { text, result } => answer(id, &rid, json!({"content": [{"type": "text", "text": text}], "structuredContent": result})),
        Outcome::Refused { reason } => answer(id, &rid, tool_error(&reason)),
        Outcome::Confirm { .. } => answer(id, &rid, tool_error("the call was not confirmed")),
    }
}

fn tool_error(why: &str) -> Value {
    json!({"content": [{"type": "text", "text": why}], "isError": true})
}

/// The host's context: theme, modes, size, locale, and the tokens under
/// lattice's names and MCP Apps' names.
pub fn host_context() -> Value {
    let window = web_sys::window();
    let root = window.as_ref().and_then(|w| w.document()).and_then(|d| d.document_element());
    let style = match (&window, &root) {
        (Some(w), Some(r)) => w.get_computed_style(r).ok().flatten(),
        _ => None,
    };
    let token = |name: &str| style.as_ref().and_then(|s| s.get_property_value(name).ok()).map(|v| v.trim().to_owned()).unwrap_or_default();
    let media = |q: &str| window.as_ref().and_then(|w| w.match_media(q).ok().flatten()).is_some_and(|m| m.matches());
    let scheme = crate::theme::scheme();
    let dark = scheme == "dark" || (scheme == "system" && media("(prefers-color-scheme: dark)"));
    // lattice's own names ride beside MCP Apps' (whose list is closed).
    let mut ours = serde_json::Map::new();
    for name in ["--paper", "--paper-2", "--fg", "--fg-muted", "--line", "--accent", "--accent-fg", "--danger", "--ok", "--focus", "--chart-1", "--chart-2", "--chart-3", "--chart-4", "--chart-5", "--chart-6"] {
        ours.insert(name.into(), Value::String(token(name)));
    }
    let mut variables = serde_json::Map::new();
    for (mcp, ours) in [
        ("--color-background-primary", "--paper"),
        ("--color-background-secondary", "--paper-2"),
        ("--color-text-primary", "--fg"),
        ("--color-text-secondary", "--fg-muted"),
        ("--color-text-danger", "--danger"),
        ("--color-text-success", "--ok"),
        ("--color-border-primary", "--line"),
        ("--color-ring-primary", "--focus"),
        ("--font-sans", "--font"),
        ("--font-mono", "--mono"),
        ("--border-radius-md", "--radius"),
    ] {
        variables.insert(mcp.into(), Value::String(token(ours)));
    }
    let width = root.as_ref().map_or(0, |r| r.client_width());
    json!({
        "theme": if dark { "dark" } else { "light" },
        "displayMode": "inline",
        "availableDisplayModes": ["inline"],
        "containerDimensions": {"maxHeight": 800, "maxWidth": width.max(320)},
        "locale": window.as_ref().and_then(|w| w.navigator().language()).unwrap_or_else(|| "en".into()),
        "platform": "web",
        "styles": {"variables": variables},
        "lattice": {
            "variables": ours,
            "colorVisionMode": if crate::theme::cvd() { "cvd" } else { "default" },
            "reducedMotion": media("(prefers-reduced-motion: reduce)"),
        },
    })
}

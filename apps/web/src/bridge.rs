//! The host side of MCP Apps (REQUIREMENTS.md W5, W6): JSON-RPC over postMessage with
//! the sandbox proxy of each running app.
//!
//! A message counts only when it comes from a frame this page made
//! (`event.source`) on the apps origin; it is dropped when it is larger
//! than 64 KB, and a frame's requests beyond 60 a minute get no answer.
//! Nothing is sent to an app before it says `ui/notifications/initialized`.
//! `tools/call` reaches get_state, set_state and submit only, and each is
//! handed to the server (`POST /v1/artifacts/{app}/calls`) with the app's
//! capability, which this page asks the server for (as an MCP host's view
//! is given its own) and keeps: the frame never sees it, nor the session's
//! token. The server decides with the deployment's policy, records the
//! decision with the call's effect, and says when the person must confirm;
//! the person's answer goes back as its own request, sent only from this
//! page's dialog. Nothing is decided here.

use std::cell::RefCell;
use std::collections::VecDeque;

use lattice_wire::{AppCall, AppCapability, Confirmation, Outcome};
use serde_json::{Value, json};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::Closure;
use web_sys::{HtmlIFrameElement, MessageEvent};

use crate::components::confirm;
use crate::data::{api_client, page_config};

pub const MAX_MESSAGE_BYTES: usize = 64 * 1024;
pub const CALLS_PER_MINUTE: usize = 60;
pub const PROTOCOL: &str = "2026-01-26";

/// The app a frame runs.
#[derive(Debug, Clone)]
pub struct AppInfo {
    pub id: String,
    pub version: u64,
    pub title: String,
    pub summary: String,
    pub html: String,
    pub state: Value,
    /// The run that made it, if an agent did.
    pub run: Option<String>,
    /// The thread it is in: where its `ui/message` goes.
    pub thread: String,
    /// Its latest version was made by an agent (`update_app`), not by the
    /// app itself.
    pub updated_by_agent: bool,
}

struct Frame {
    id: u64,
    iframe: HtmlIFrameElement,
    app: AppInfo,
    initialized: bool,
    calls: VecDeque<f64>,
    /// The app's capability, and until when (ms) it is used.
    capability: Option<(String, f64)>,
    teardown: Option<(Value, Box<dyn FnOnce()>)>,
    next_id: u64,
    /// The display mode in force, and those the app said it supports.
    mode: &'static str,
    app_modes: Vec<String>,
    /// The host's bar with the way back to inline, while another mode is
    /// in force.
    exit: Option<(web_sys::HtmlElement, Closure<dyn Fn()>)>,
}

thread_local! {
    static FRAMES: RefCell<Vec<Frame>> = const { RefCell::new(Vec::new()) };
    static NEXT: RefCell<u64> = const { RefCell::new(1) };
    static LISTENING: RefCell<bool> = const { RefCell::new(false) };
}

fn now() -> f64 {
    js_sys::Date::now()
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
            capability: None,
            teardown: None,
            next_id: 1,
            mode: "inline",
            app_modes: Vec::new(),
            exit: None,
        })
    });
    id
}

pub fn unregister(id: u64) {
    FRAMES.with(|f| f.borrow_mut().retain(|fr| fr.id != id));
}

/// Keeps the frame's idea of its artifact current (new versions, state).
/// A new version an agent made (`update_app`) is a tool call on this app:
/// the app is told its input and result, as for the call that made it.
pub fn update(id: u64, info: AppInfo) {
    let newer_by_agent = with_frame(id, |f| {
        let newer = info.version > f.app.version && info.updated_by_agent && f.initialized;
        f.app.version = info.version;
        f.app.state = info.state.clone();
        newer
    })
    .unwrap_or(false);
    if newer_by_agent {
        send(id, &json!({"jsonrpc": "2.0", "method": "ui/notifications/tool-input", "params": {"arguments": {"id": info.id, "state": info.state}}}));
        send(id, &json!({"jsonrpc": "2.0", "method": "ui/notifications/tool-result", "params": app_result(&info)}));
    }
}

/// What runs once a teardown is over, taken by whichever comes first: the
/// app's answer or the wait running out.
type Once = std::rc::Rc<RefCell<Option<Box<dyn FnOnce()>>>>;

/// Asks the app to wind down (`ui/resource-teardown`); `done` runs on its
/// answer, or after `wait_ms` without one.
pub fn teardown(id: u64, wait_ms: i32, done: impl FnOnce() + 'static) {
    let done: Once = std::rc::Rc::new(RefCell::new(Some(Box::new(done))));
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
                f.teardown = Some((
                    rid.clone(),
                    Box::new(move || {
                        if let Some(d) = on_answer.borrow_mut().take() {
                            d();
                        }
                    }),
                ))
            });
            send(id, &json!({"jsonrpc": "2.0", "id": rid, "method": "ui/resource-teardown", "params": {"reason": "the app is no longer shown"}}));
        }
    }
    leptos::task::spawn_local(async move {
        crate::data::stream::sleep(if initialized { wait_ms } else { 0 }).await;
        if let Some(d) = done.borrow_mut().take() {
            d();
        }
    });
}

/// Tells every running app the host's context changed (theme, size).
pub fn context_changed() {
    let ids: Vec<u64> = FRAMES.with(|f| f.borrow().iter().filter(|fr| fr.initialized).map(|fr| fr.id).collect());
    for id in ids {
        send(id, &json!({"jsonrpc": "2.0", "method": "ui/notifications/host-context-changed", "params": host_context(id)}));
    }
}

/// Tells the apps a run made that the run was cancelled.
pub fn run_cancelled(run: &str) {
    let ids: Vec<u64> =
        FRAMES.with(|f| f.borrow().iter().filter(|fr| fr.initialized && fr.app.run.as_deref() == Some(run)).map(|fr| fr.id).collect());
    for id in ids {
        send(id, &json!({"jsonrpc": "2.0", "method": "ui/notifications/tool-cancelled", "params": {"reason": "the run was cancelled"}}));
    }
}

/// Hands the arguments of an `update_app` still being written to the app
/// it updates.
pub fn tool_input_partial(app: &str, arguments: &Value) {
    let ids: Vec<u64> = FRAMES.with(|f| f.borrow().iter().filter(|fr| fr.initialized && fr.app.id == app).map(|fr| fr.id).collect());
    for id in ids {
        send(id, &json!({"jsonrpc": "2.0", "method": "ui/notifications/tool-input-partial", "params": {"arguments": arguments}}));
    }
}

/// Puts a frame in a display mode and tells the app; another mode than
/// inline gets the host's button back, and Escape on the page returns too.
fn set_mode(id: u64, mode: &'static str) {
    let Some(holder) = with_frame(id, |f| f.iframe.parent_element()).flatten() else { return };
    let classes = holder.class_list();
    let _ = classes.remove_2("fullscreen", "pip");
    if mode != "inline" {
        let _ = classes.add_1(mode);
    }
    let old = with_frame(id, |f| {
        f.mode = mode;
        f.exit.take()
    })
    .flatten();
    if let Some((button, _)) = old {
        button.remove();
    }
    let document = web_sys::window().and_then(|w| w.document());
    if mode != "inline"
        && let Some(document) = document
        && let (Ok(bar), Ok(label), Ok(button)) = (document.create_element("div"), document.create_element("span"), document.create_element("button"))
        && let Ok(button) = button.dyn_into::<web_sys::HtmlElement>()
    {
        // The host's bar stays above the app, so an app that fills the
        // window still says whose it is and never hides the way back.
        let title = with_frame(id, |f| f.app.title.clone()).unwrap_or_default();
        let _ = bar.set_attribute("class", "mode-bar");
        label.set_text_content(Some(&format!("Mini app: {title}. Made by the agent; it can't reach the network.")));
        let _ = button.set_attribute("type", "button");
        let _ = button.set_attribute("class", "exit-mode");
        button.set_text_content(Some(if mode == "fullscreen" { "Exit full screen" } else { "Back into the thread" }));
        let back = Closure::<dyn Fn()>::new(move || set_mode(id, "inline"));
        button.set_onclick(Some(back.as_ref().unchecked_ref()));
        let _ = bar.append_child(&label);
        let _ = bar.append_child(&button);
        let _ = holder.insert_before(&bar, holder.first_child().as_ref());
        let _ = button.focus();
        if let Ok(bar) = bar.dyn_into::<web_sys::HtmlElement>() {
            with_frame(id, |f| f.exit = Some((bar, back)));
        }
    }
    let context = host_context(id);
    let changed = json!({"displayMode": mode, "containerDimensions": context["containerDimensions"]});
    send(id, &json!({"jsonrpc": "2.0", "method": "ui/notifications/host-context-changed", "params": changed}));
}

fn with_frame<T>(id: u64, f: impl FnOnce(&mut Frame) -> T) -> Option<T> {
    FRAMES.with(|frames| frames.borrow_mut().iter_mut().find(|fr| fr.id == id).map(f))
}

fn send(id: u64, message: &Value) {
    let target = with_frame(id, |f| f.iframe.content_window()).flatten();
    if let Some(window) = target
        && let Ok(value) = js_sys::JSON::parse(&message.to_string())
    {
        let _ = window.post_message(&value, &page_config::apps_origin());
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
    // Escape on the page returns every app to its place in the thread.
    let escape = Closure::<dyn Fn(web_sys::KeyboardEvent)>::new(|e: web_sys::KeyboardEvent| {
        if e.key() == "Escape" {
            let out: Vec<u64> = FRAMES.with(|f| f.borrow().iter().filter(|fr| fr.mode != "inline").map(|fr| fr.id).collect());
            for id in out {
                set_mode(id, "inline");
            }
        }
    });
    let resized = Closure::<dyn Fn()>::new(context_changed);
    if let Some(w) = web_sys::window() {
        let _ = w.add_event_listener_with_callback("message", handler.as_ref().unchecked_ref());
        let _ = w.add_event_listener_with_callback("keydown", escape.as_ref().unchecked_ref());
        let _ = w.add_event_listener_with_callback("resize", resized.as_ref().unchecked_ref());
    }
    handler.forget();
    escape.forget();
    resized.forget();
}

fn on_message(event: MessageEvent) {
    if event.origin() != page_config::apps_origin() {
        return;
    }
    let Some(source) = event.source() else { return };
    let source: &js_sys::Object = source.unchecked_ref();
    let frame = FRAMES
        .with(|f| f.borrow().iter().find(|fr| fr.iframe.content_window().is_some_and(|w| js_sys::Object::is(w.as_ref(), source))).map(|fr| fr.id));
    let Some(id) = frame else { return };
    let Some(text) = js_sys::JSON::stringify(&event.data()).ok().and_then(|s| s.as_string()) else { return };
    if text.len() > MAX_MESSAGE_BYTES {
        return;
    }
    let Ok(message) = lattice_core::json::from_str::<Value>(&text) else { return };
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
            send(
                id,
                &json!({"jsonrpc": "2.0", "method": "ui/notifications/sandbox-resource-ready", "params": {"html": html, "sandbox": "allow-scripts"}}),
            );
        }
        "ui/notifications/initialized" => {
            let Some(app) = with_frame(id, |f| {
                f.initialized = true;
                f.app.clone()
            }) else {
                return;
            };
            send(
                id,
                &json!({"jsonrpc": "2.0", "method": "ui/notifications/tool-input", "params": {"arguments": {"title": app.title, "summary": app.summary}}}),
            );
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
            let modes: Vec<String> = params
                .pointer("/appCapabilities/availableDisplayModes")
                .and_then(Value::as_array)
                .map(|m| m.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                .unwrap_or_default();
            with_frame(id, |f| f.app_modes = modes);
            let sdk = page_config::sdk();
            answer(
                id,
                &rid,
                json!({
                    "protocolVersion": PROTOCOL,
                    "hostInfo": {"name": "lattice", "version": sdk.map_or_else(|| env!("CARGO_PKG_VERSION").to_owned(), |s| format!("{} ({s})", env!("CARGO_PKG_VERSION")))},
                    "hostCapabilities": {
                        "openLinks": {}, "serverTools": {}, "logging": {},
                        "updateModelContext": {"text": {}, "structuredContent": {}},
                        "message": {"text": {}},
                    },
                    "hostContext": host_context(id),
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
        "ui/request-display-mode" => {
            let asked = params.get("mode").and_then(Value::as_str).unwrap_or_default();
            // A mode this host offers and the app said it supports; else
            // the mode in force stays.
            let declared = with_frame(id, |f| f.app_modes.iter().any(|m| m == asked)).unwrap_or(false);
            let granted = crate::data::host_context::MODES.iter().find(|m| **m == asked).filter(|_| declared || asked == "inline");
            if let Some(mode) = granted {
                set_mode(id, mode);
            }
            let in_force = with_frame(id, |f| f.mode).unwrap_or("inline");
            answer(id, &rid, json!({"mode": in_force}));
        }
        "ui/update-model-context" => {
            leptos::task::spawn_local(async move { update_model_context(id, rid, params).await });
        }
        "ui/message" => {
            leptos::task::spawn_local(async move { post_message(id, rid, params).await });
        }
        "notifications/message" => {}
        other => refuse(id, &rid, -32601, &format!("{other} is not supported by this host")),
    }
}

/// The text of content blocks (the kinds this host takes: text).
fn text_of(content: Option<&Value>) -> String {
    content
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// Keeps what the app wants the model to know, on the server: the last one
/// wins, and the thread's next model call reads it as untrusted data.
async fn update_model_context(id: u64, rid: Value, params: Value) {
    let Some(app) = with_frame(id, |f| f.app.clone()) else { return };
    let body = lattice_wire::AppContext { text: text_of(params.get("content")), structured: params.get("structuredContent").cloned() };
    match api_client::put::<lattice_wire::AppContextKept>(&format!("/v1/artifacts/{}/context", app.id), &body).await {
        Ok(_) => answer(id, &rid, json!({})),
        Err(e) => refuse(id, &rid, -32000, &e.message()),
    }
}

/// Posts what the app asks to say in the thread, as the person, once the
/// person has read it and agreed.
async fn post_message(id: u64, rid: Value, params: Value) {
    let Some(app) = with_frame(id, |f| f.app.clone()) else { return };
    let text = text_of(params.get("content"));
    if params.get("role").and_then(Value::as_str) != Some("user") || text.trim().is_empty() {
        return refuse(id, &rid, -32602, "ui/message takes role \"user\" and text content");
    }
    if !confirm::ask(&format!("{} wants to post in the thread", app.title), "The app will post this message as you:", &text, "Post").await {
        return answer(id, &rid, json!({"isError": true}));
    }
    match api_client::post::<lattice_wire::Posted>(&format!("/v1/threads/{}/messages", app.thread), &lattice_wire::PostMessage { text }).await {
        Ok(_) => answer(id, &rid, json!({})),
        Err(_) => answer(id, &rid, json!({"isError": true})),
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
    let capability = match capability_for(id, &app.id).await {
        Ok(capability) => capability,
        Err(e) => return answer(id, &rid, tool_error(&e.message())),
    };
    let body = AppCall { tool: name.clone(), arguments, capability: Some(capability) };
    let mut outcome = match api_client::post::<Outcome>(&format!("/v1/artifacts/{}/calls", app.id), &body).await {
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
            _ => (
                format!("Allow {} to call {name}?", app.title),
                "With these arguments:".to_owned(),
                "Allow",
                serde_json::to_string_pretty(asked).unwrap_or_default(),
            ),
        };
        // The confirmation is the person's: it goes out only from this
        // page's own dialog, with the session's token, which the app's frame
        // has no way to reach (no message of the bridge confirms).
        let accept = confirm::ask(&title, &lead, &shown, button).await;
        outcome = match api_client::post::<Outcome>(&format!("/v1/app-calls/{confirmation}"), &Confirmation { accept }).await {
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

/// The capability to make the calls of the app a frame runs: given by the
/// server to this page, the person's session, for an app it shows; kept
/// with the frame and asked for again a minute before it expires.
async fn capability_for(id: u64, app: &str) -> crate::data::request::Result<String> {
    let kept = with_frame(id, |f| f.capability.clone()).flatten().filter(|(_, until)| now() < *until);
    if let Some((capability, _)) = kept {
        return Ok(capability);
    }
    let given: AppCapability = api_client::post(&format!("/v1/artifacts/{app}/capability"), &json!({})).await?;
    let until = now() + (given.expires_in_secs as f64 - 60.0).max(0.0) * 1000.0;
    with_frame(id, |f| f.capability = Some((given.capability.clone(), until)));
    Ok(given.capability)
}

fn tool_error(why: &str) -> Value {
    json!({"content": [{"type": "text", "text": why}], "isError": true})
}

/// The host's context for one frame (see [`crate::data::host_context`]).
pub fn host_context(id: u64) -> Value {
    let window = web_sys::window();
    let root = window.as_ref().and_then(|w| w.document()).and_then(|d| d.document_element());
    let style = match (&window, &root) {
        (Some(w), Some(r)) => w.get_computed_style(r).ok().flatten(),
        _ => None,
    };
    let token = |name: &str| style.as_ref().and_then(|s| s.get_property_value(name).ok()).map(|v| v.trim().to_owned()).unwrap_or_default();
    let media = |q: &str| window.as_ref().and_then(|w| w.match_media(q).ok().flatten()).is_some_and(|m| m.matches());
    let scheme = crate::data::theme::scheme();
    let px = |name: &str| crate::data::text::number_in(token(name).trim_end_matches("px").trim()).unwrap_or(0.0);
    let time_zone = js_sys::Intl::DateTimeFormat::new(&js_sys::Array::new(), &js_sys::Object::new()).resolved_options();
    let time_zone = js_sys::Reflect::get(&time_zone, &"timeZone".into()).ok().and_then(|z| z.as_string()).unwrap_or_else(|| "UTC".into());
    let page = crate::data::host_context::Page {
        dark: scheme == "dark" || (scheme == "system" && media("(prefers-color-scheme: dark)")),
        cvd: crate::data::theme::cvd(),
        reduced_motion: media("(prefers-reduced-motion: reduce)"),
        locale: window.as_ref().and_then(|w| w.navigator().language()).unwrap_or_else(|| "en".into()),
        time_zone,
        touch: media("(pointer: coarse)"),
        hover: media("(hover: hover)"),
        insets: [px("--safe-top"), px("--safe-right"), px("--safe-bottom"), px("--safe-left")],
    };
    let mode = with_frame(id, |f| f.mode).unwrap_or("inline");
    let (width, height) = window.as_ref().map_or((0.0, 0.0), |w| {
        let n = |v: Result<wasm_bindgen::JsValue, _>| v.ok().and_then(|v| v.as_f64()).unwrap_or(0.0);
        (n(w.inner_width()), n(w.inner_height()))
    });
    let frame = with_frame(id, |f| (f64::from(f.iframe.client_width()), f64::from(f.iframe.client_height()))).unwrap_or((0.0, 0.0));
    let dimensions = match mode {
        "inline" => json!({"maxHeight": 800, "maxWidth": frame.0.max(320.0).round()}),
        _ if frame.0 > 0.0 => json!({"width": frame.0.round(), "height": frame.1.round()}),
        _ => json!({"width": width.round(), "height": height.round()}),
    };
    crate::data::host_context::context(&page, token, mode, dimensions)
}

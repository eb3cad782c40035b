//! The frames this page made, each with the app it runs and what the host
//! knows of it, and the messages posted to one (only ever to the apps
//! origin).

use std::cell::RefCell;
use std::collections::VecDeque;

use serde_json::{Value, json};
use wasm_bindgen::prelude::Closure;
use web_sys::HtmlIFrameElement;

use crate::data::page_config;

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
    /// The connected MCP server it came from, if one did: its calls go
    /// back to that server (through lattice's server), and it is told the
    /// call that showed it.
    pub server: Option<ServerOrigin>,
}

/// Where a connected server's app came from.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerOrigin {
    pub name: String,
    /// The arguments and result of the tool call that showed it.
    pub input: Value,
    pub result: Value,
    /// The origins it declared (`_meta.ui.csp`): asked for in its frame's
    /// address, granted by the apps origin as far as the operator allows.
    pub csp: Value,
}

impl ServerOrigin {
    /// The `server` of an app's data, if it has one.
    pub fn of(data: &Value) -> Option<Self> {
        let server = data.get("server")?;
        Some(Self {
            name: server.get("name")?.as_str()?.to_owned(),
            input: server.get("input").cloned().unwrap_or_else(|| json!({})),
            result: server.get("result").cloned().unwrap_or(Value::Null),
            csp: server.pointer("/ui/csp").cloned().unwrap_or(Value::Null),
        })
    }
}

pub(super) struct Frame {
    pub(super) id: u64,
    pub(super) iframe: HtmlIFrameElement,
    pub(super) app: AppInfo,
    pub(super) initialized: bool,
    pub(super) calls: VecDeque<f64>,
    /// The app's capability, and until when (ms) it is used.
    pub(super) capability: Option<(String, f64)>,
    pub(super) teardown: Option<(Value, Box<dyn FnOnce()>)>,
    pub(super) next_id: u64,
    /// The display mode in force, and those the app said it supports.
    pub(super) mode: &'static str,
    pub(super) app_modes: Vec<String>,
    /// The host's bar with the way back to inline, while another mode is
    /// in force.
    pub(super) exit: Option<(web_sys::HtmlElement, Closure<dyn Fn()>)>,
}

thread_local! {
    pub(super) static FRAMES: RefCell<Vec<Frame>> = const { RefCell::new(Vec::new()) };
    static NEXT: RefCell<u64> = const { RefCell::new(1) };
}

pub(super) fn now() -> f64 {
    js_sys::Date::now()
}

/// A frame to speak with, kept; its id.
pub(super) fn add(iframe: HtmlIFrameElement, app: AppInfo) -> u64 {
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

pub(super) fn with_frame<T>(id: u64, f: impl FnOnce(&mut Frame) -> T) -> Option<T> {
    FRAMES.with(|frames| frames.borrow_mut().iter_mut().find(|fr| fr.id == id).map(f))
}

pub(super) fn send(id: u64, message: &Value) {
    let target = with_frame(id, |f| f.iframe.content_window()).flatten();
    if let Some(window) = target
        && let Ok(value) = js_sys::JSON::parse(&message.to_string())
    {
        let _ = window.post_message(&value, &page_config::apps_origin());
    }
}

pub(super) fn answer(id: u64, request: &Value, result: Value) {
    send(id, &json!({"jsonrpc": "2.0", "id": request, "result": result}));
}

pub(super) fn refuse(id: u64, request: &Value, code: i64, message: &str) {
    send(id, &json!({"jsonrpc": "2.0", "id": request, "error": {"code": code, "message": message}}));
}

pub(super) fn app_result(app: &AppInfo) -> Value {
    json!({
        "content": [{"type": "text", "text": app.summary}],
        "structuredContent": {"app": app.id, "version": app.version, "title": app.title, "summary": app.summary, "state": app.state},
    })
}

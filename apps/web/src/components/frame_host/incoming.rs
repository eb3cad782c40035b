//! What apps send: a message counts only when it comes from a frame this
//! page made, on the apps origin, within the size and rate limits; each
//! request is answered here or handed on.

use std::cell::RefCell;

use lattice_ui::app_policy::APP_TOOLS;
use serde_json::{Value, json};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::Closure;
use web_sys::{HtmlIFrameElement, MessageEvent};

use super::calls::{call_tool, open_link, post_message, update_model_context};
use super::context::{context_changed, host_context};
use super::frames::{self, AppInfo, FRAMES, answer, app_result, now, refuse, send, with_frame};
use super::modes::set_mode;
use crate::data::page_config;

const MAX_MESSAGE_BYTES: usize = 64 * 1024;

const CALLS_PER_MINUTE: usize = 60;

const PROTOCOL: &str = "2026-01-26";

/// The longest tool name a server's app may call.
const TOOL_NAME_MAX: usize = 128;

thread_local! {
    static LISTENING: RefCell<bool> = const { RefCell::new(false) };
}

/// Starts speaking with a frame; returns its id.
pub fn register(iframe: HtmlIFrameElement, app: AppInfo) -> u64 {
    listen();
    frames::add(iframe, app)
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
            let Some((html, server)) = with_frame(id, |f| (f.app.html.clone(), f.app.server.clone())) else { return };
            let mut params = json!({"html": html, "sandbox": "allow-scripts"});
            if let Some(server) = server {
                params["server"] = json!(server.name);
                params["csp"] = server.csp;
            }
            send(id, &json!({"jsonrpc": "2.0", "method": "ui/notifications/sandbox-resource-ready", "params": params}));
        }
        "ui/notifications/initialized" => {
            let Some(app) = with_frame(id, |f| {
                f.initialized = true;
                f.app.clone()
            }) else {
                return;
            };
            // A server's app is told the call that showed it; lattice's own
            // its title, summary and state.
            let (input, result) = match &app.server {
                Some(server) => (server.input.clone(), server.result.clone()),
                None => (json!({"title": app.title, "summary": app.summary}), app_result(&app)),
            };
            send(id, &json!({"jsonrpc": "2.0", "method": "ui/notifications/tool-input", "params": {"arguments": input}}));
            send(id, &json!({"jsonrpc": "2.0", "method": "ui/notifications/tool-result", "params": result}));
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
            // A server's app calls its server's tools (the server decides
            // which); lattice's own the three it has.
            let from_server = with_frame(id, |f| f.app.server.is_some()).unwrap_or(false);
            if from_server && (name.is_empty() || name.len() > TOOL_NAME_MAX) {
                refuse(id, &rid, -32602, "a tool's name is 1 to 128 characters");
                return;
            }
            if !from_server && !APP_TOOLS.contains(&name.as_str()) {
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

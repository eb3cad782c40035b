//! The host context of one frame, read from the page around it (see
//! [`crate::data::host_context`] for what it says), and told again to
//! every running app when it changes.

use serde_json::{Value, json};

use super::frames::{FRAMES, send, with_frame};

/// Tells every running app the host's context changed (theme, size).
pub fn context_changed() {
    let ids: Vec<u64> = FRAMES.with(|f| f.borrow().iter().filter(|fr| fr.initialized).map(|fr| fr.id).collect());
    for id in ids {
        send(id, &json!({"jsonrpc": "2.0", "method": "ui/notifications/host-context-changed", "params": host_context(id)}));
    }
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

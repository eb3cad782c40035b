//! Display modes: inline in the thread, full screen or picture-in-picture,
//! with the host's bar and its way back above the app.

use serde_json::json;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::Closure;

use super::context::host_context;
use super::frames::{send, with_frame};

/// Puts a frame in a display mode and tells the app; another mode than
/// inline gets the host's button back, and Escape on the page returns too.
pub(super) fn set_mode(id: u64, mode: &'static str) {
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

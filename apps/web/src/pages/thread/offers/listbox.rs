//! What the composer's two lists share: the active option moved by the
//! arrow keys (the focus stays in the text field that filters the list)
//! and kept in view, text matched whatever its case, and the focus moved
//! to what a pick draws once it is drawn.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// The option an arrow key makes active among `n`, wrapping at the ends;
/// `None` for any other key.
pub(super) fn stepped(key: &str, active: usize, n: usize) -> Option<usize> {
    match key {
        "ArrowDown" if n > 0 => Some((active + 1) % n),
        "ArrowUp" if n > 0 => Some((active + n - 1) % n),
        _ => None,
    }
}

/// `text` in lower case by the browser's Unicode tables: the standard
/// library's would ship its own.
pub(super) fn lower(text: &str) -> String {
    String::from(js_sys::JsString::from(text).to_lower_case())
}

/// Scrolls the list `list` (positioned, so it is its options' offset
/// parent) just enough to show its option `option`. The page itself does
/// not move: the composer stays where the person looks.
pub(super) fn keep_in_view(list: &str, option: &str) {
    let document = document();
    let (Some(list), Some(option)) =
        (document.get_element_by_id(list), document.get_element_by_id(option).and_then(|o| o.dyn_into::<web_sys::HtmlElement>().ok()))
    else {
        return;
    };
    let (top, bottom) = (option.offset_top(), option.offset_top() + option.offset_height());
    if top < list.scroll_top() {
        list.set_scroll_top(top);
    } else if bottom > list.scroll_top() + list.client_height() {
        list.set_scroll_top(bottom - list.client_height());
    }
}

/// Focuses the element `id` after the next frame: what a pick draws is
/// drawn by then.
pub(super) fn focus_soon(id: String) {
    request_animation_frame(move || {
        if let Some(element) = document().get_element_by_id(&id).and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok()) {
            let _ = element.focus();
        }
    });
}

//! A thread opens at its newest item and stays there as items arrive or
//! grow (a reply being written, a form's chunk drawn), as a chat does;
//! a reader who scrolled up is left where they are, and told that there is
//! something new below ("New messages", which takes them there).

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;

/// How close to the end still counts as at the end, in pixels.
const AT_THE_END: i32 = 48;

fn scroll_height() -> i32 {
    document().document_element().map_or(0, |e| e.scroll_height())
}

fn at_the_end() -> bool {
    let w = window();
    let seen = scroll_y() + w.inner_height().ok().and_then(|h| h.as_f64()).unwrap_or(0.0);
    seen as i32 + AT_THE_END >= scroll_height()
}

fn scroll_y() -> f64 {
    window().scroll_y().unwrap_or(0.0)
}

thread_local! {
    /// Where the page was last seen scrolled to, by the page or the reader,
    /// and how tall it was then.
    static LAST_Y: std::cell::Cell<f64> = const { std::cell::Cell::new(0.0) };
    static LAST_H: std::cell::Cell<i32> = const { std::cell::Cell::new(0) };
}

pub(super) fn to_the_end() {
    window().scroll_to_with_x_and_y(0.0, f64::from(scroll_height()));
    LAST_Y.set(scroll_y());
    LAST_H.set(scroll_height());
}

/// Follows the page's end while the reader is there; returns whether
/// items arrived below a reader who is not (`count`: how many items the
/// thread has). `seen` is told whenever the reader has the newest item in
/// view: arrived while they were at the end, or reached by scrolling.
pub(super) fn follow(count: Memo<usize>, seen: impl Fn() + Clone + 'static) -> RwSignal<bool> {
    let unseen = RwSignal::new(false);
    let following = StoredValue::new(true);
    LAST_Y.set(scroll_y());
    LAST_H.set(scroll_height());
    // Only the reader moving up stops the following: not the browser
    // keeping the view steady as something above grows (which moves it
    // down), nor the page getting shorter (which moves it up); coming back
    // to the end starts it again.
    let reached = seen.clone();
    let scrolled = window_event_listener(leptos::ev::scroll, move |_| {
        let (y, h) = (scroll_y(), scroll_height());
        if at_the_end() {
            following.set_value(true);
            unseen.set(false);
            reached();
        } else if y < LAST_Y.get() - 1.0 && h >= LAST_H.get() {
            following.set_value(false);
        }
        LAST_Y.set(y);
        LAST_H.set(h);
    });
    // Whatever makes the page taller (an item, a reply as it is written,
    // a chunk drawn) keeps a following reader at the end. Scroll events
    // come before this in a frame, so a reader who has just scrolled away
    // is no longer followed by now.
    let grown = Closure::<dyn FnMut()>::new(move || {
        if following.get_value() {
            to_the_end();
        }
    });
    let observer = web_sys::ResizeObserver::new(grown.as_ref().unchecked_ref()).ok();
    if let (Some(o), Some(body)) = (&observer, document().body()) {
        o.observe(&body);
    }
    let observer = send_wrapper::SendWrapper::new((observer, grown));
    on_cleanup(move || {
        scrolled.remove();
        if let Some(o) = &observer.0 {
            o.disconnect();
        }
    });
    // Decided in the next frame, after the browser has told of the
    // reader's own scrolling (scroll events come first in a frame).
    Effect::new(move |before: Option<usize>| {
        let now = count.get();
        if before.is_some_and(|b| now > b) {
            let seen = seen.clone();
            request_animation_frame(move || {
                if following.get_value() {
                    to_the_end();
                    seen();
                } else {
                    unseen.set(true);
                }
            });
        }
        now
    });
    unseen
}

//! Pinning: a dashboard or an app kept beside the thread (one at a time),
//! remembered in this browser for each thread.

use leptos::prelude::*;

use super::ctx::Ctx;

/// Where a thread's pinned view is remembered, in this browser.
fn pin_key(thread: &str) -> String {
    format!("lattice.pinned.{thread}")
}

pub(super) fn saved_pin(thread: &str) -> Option<String> {
    web_sys::window()?.local_storage().ok()??.get_item(&pin_key(thread)).ok()?
}

fn save_pin(thread: &str, pinned: Option<&str>) {
    if let Some(storage) = web_sys::window().and_then(|w| w.local_storage().ok().flatten()) {
        let _ = match pinned {
            Some(id) => storage.set_item(&pin_key(thread), id),
            None => storage.remove_item(&pin_key(thread)),
        };
    }
}

/// Pins a dashboard or an app beside the thread, where it stays in view
/// while the conversation scrolls (one at a time), or unpins it.
pub(super) fn pin_button(ctx: Ctx, id: String) -> impl IntoView {
    let this = id.clone();
    let pinned = Memo::new(move |_| ctx.pinned.get().as_deref() == Some(this.as_str()));
    let toggle = move |_| {
        let next = (!pinned.get_untracked()).then(|| id.clone());
        save_pin(&ctx.thread.get_value(), next.as_deref());
        ctx.pinned.set(next);
    };
    view! {
        <div class="view-tools">
            <button type="button" class="quiet pin" aria-pressed=move || if pinned.get() { "true" } else { "false" } on:click=toggle>
                {move || if pinned.get() { "Unpin" } else { "Pin beside the thread" }}
            </button>
        </div>
    }
}

//! The composer: a message posted to the thread, or the agent asked to
//! run with it. Enter sends and Shift+Enter breaks the line; what is being
//! written is kept per thread in this browser until it is sent, so moving
//! to another thread and back loses nothing.

use lattice_wire::{PostMessage, Posted, RunStarted, StartRun};
use leptos::prelude::*;

use super::agent_menu::agent_menu;
use super::ctx::Ctx;
use crate::data::{api_client, drafts};

#[component]
pub(super) fn Composer(ctx: Ctx) -> impl IntoView {
    let draft = drafts::Draft::of(&ctx.thread.get_value());
    let text = RwSignal::new(draft.read());
    let model = RwSignal::new(String::new());
    let message = RwSignal::new(String::new());
    let sent = move || {
        text.set(String::new());
        drafts::Draft::of(&ctx.thread.get_value()).keep("");
        message.set(String::new());
    };
    let send = move || {
        let body = PostMessage { text: text.get_untracked() };
        if body.text.trim().is_empty() {
            return;
        }
        let thread = ctx.thread.get_value();
        leptos::task::spawn_local(async move {
            match api_client::post::<Posted>(&format!("/v1/threads/{thread}/messages"), &body).await {
                Ok(_) => sent(),
                Err(e) => message.set(e.message()),
            }
        });
    };
    let post = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        send();
    };
    let keys = move |ev: leptos::ev::KeyboardEvent| {
        if ev.key() == "Enter" && !ev.shift_key() && !ev.is_composing() {
            ev.prevent_default();
            send();
        }
    };
    let input = move |ev: leptos::ev::Event| {
        let value = event_target_value(&ev);
        drafts::Draft::of(&ctx.thread.get_value()).keep(&value);
        text.set(value);
    };
    let ask = move |_| {
        let prompt = text.get_untracked();
        let prompt = if prompt.trim().is_empty() { "Go ahead.".to_owned() } else { prompt };
        let chosen = model.get_untracked();
        let body = StartRun { prompt, model: (!chosen.is_empty()).then_some(chosen), chain: None, command: None, attachments: Vec::new() };
        let thread = ctx.thread.get_value();
        leptos::task::spawn_local(async move {
            match api_client::post::<RunStarted>(&format!("/v1/threads/{thread}/runs"), &body).await {
                Ok(_) => sent(),
                Err(e) => message.set(e.message()),
            }
        });
    };
    let menu = agent_menu(ctx, model);
    view! {
        <form class="composer" on:submit=post aria-label="Write to the thread">
            <label for="composer-text">"Message"</label>
            <textarea id="composer-text" rows="2" aria-describedby="composer-keys" prop:value=move || text.get() on:input=input on:keydown=keys></textarea>
            <p id="composer-keys" class="sr">"Enter sends; Shift+Enter starts a new line."</p>
            <div class="composer-actions">
                <button type="submit" class="primary">"Post"</button>
                {menu}
                <button type="button" on:click=ask>"Ask the agent"</button>
            </div>
            <p class="form-errors" role="alert">{move || message.get()}</p>
        </form>
    }
}

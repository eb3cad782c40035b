//! The composer: a message posted to the thread, or the agent asked to
//! run with it.

use lattice_wire::{PostMessage, Posted, RunStarted, StartRun};
use leptos::prelude::*;

use super::agent_menu::agent_menu;
use super::ctx::Ctx;
use crate::data::api_client;

#[component]
pub(super) fn Composer(ctx: Ctx) -> impl IntoView {
    let text = RwSignal::new(String::new());
    let model = RwSignal::new(String::new());
    let message = RwSignal::new(String::new());
    let post = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let body = PostMessage { text: text.get_untracked() };
        let thread = ctx.thread.get_value();
        leptos::task::spawn_local(async move {
            match api_client::post::<Posted>(&format!("/v1/threads/{thread}/messages"), &body).await {
                Ok(_) => {
                    text.set(String::new());
                    message.set(String::new());
                }
                Err(e) => message.set(e.message()),
            }
        });
    };
    let ask = move |_| {
        let prompt = text.get_untracked();
        let prompt = if prompt.trim().is_empty() { "Go ahead.".to_owned() } else { prompt };
        let chosen = model.get_untracked();
        let body = StartRun { prompt, model: (!chosen.is_empty()).then_some(chosen), chain: None };
        let thread = ctx.thread.get_value();
        leptos::task::spawn_local(async move {
            match api_client::post::<RunStarted>(&format!("/v1/threads/{thread}/runs"), &body).await {
                Ok(_) => {
                    text.set(String::new());
                    message.set(String::new());
                }
                Err(e) => message.set(e.message()),
            }
        });
    };
    let menu = agent_menu(ctx, model);
    view! {
        <form class="composer" on:submit=post aria-label="Write to the thread">
            <label for="composer-text">"Message"</label>
            <textarea id="composer-text" rows="3" prop:value=move || text.get() on:input=move |ev| text.set(event_target_value(&ev))></textarea>
            <div class="composer-actions">
                <button type="submit" class="primary">"Post"</button>
                {menu}
                <button type="button" on:click=ask>"Ask the agent"</button>
            </div>
            <p class="form-errors" role="alert">{move || message.get()}</p>
        </form>
    }
}

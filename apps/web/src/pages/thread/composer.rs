//! The composer: a message posted to the thread, or the agent asked to
//! run with it. Enter sends and Shift+Enter breaks the line; what is being
//! written is kept per thread in this browser until it is sent, so moving
//! to another thread and back loses nothing. A connected server's command
//! ("/" at the start) and resources attached go with the agent's run:
//! with either chosen, Enter asks the agent and "Post" waits.

use lattice_wire::{PostMessage, Posted, RunStarted, StartRun};
use leptos::prelude::*;

use super::agent_menu::agent_menu;
use super::ctx::Ctx;
use super::offers::lazy_offers;
use super::offers::picks::{ASK, Picks, TEXT, argument_id};
use crate::data::{api_client, drafts};

#[component]
pub(super) fn Composer(ctx: Ctx) -> impl IntoView {
    let draft = drafts::Draft::of(&ctx.thread.get_value());
    let text = RwSignal::new(draft.read());
    let model = RwSignal::new(String::new());
    let message = RwSignal::new(String::new());
    let picks = Picks::new();
    let sent = move || {
        text.set(String::new());
        drafts::Draft::of(&ctx.thread.get_value()).keep("");
        message.set(String::new());
        picks.clear();
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
    let ask = move || {
        let (command, attachments) = match picks.for_run() {
            Ok(chosen) => chosen,
            Err((why, field)) => {
                message.set(why);
                if let Some(field) = document().get_element_by_id(&argument_id(field)) {
                    let _ = wasm_bindgen::JsCast::unchecked_into::<web_sys::HtmlElement>(field).focus();
                }
                return;
            }
        };
        let prompt = text.get_untracked();
        let prompt = match (prompt.trim().is_empty(), picks.0.with_untracked(|c| c.command.as_ref().map(|c| c.command.clone()))) {
            (false, _) => prompt,
            (true, Some(command)) => command,
            (true, None) => "Go ahead.".to_owned(),
        };
        let chosen = model.get_untracked();
        let body = StartRun { prompt, model: (!chosen.is_empty()).then_some(chosen), chain: None, command, attachments };
        let thread = ctx.thread.get_value();
        leptos::task::spawn_local(async move {
            match api_client::post::<RunStarted>(&format!("/v1/threads/{thread}/runs"), &body).await {
                Ok(_) => sent(),
                Err(e) => message.set(picks.named(e.message())),
            }
        });
    };
    // What is chosen from the servers goes with a run: sent on its own as
    // a message, it would be lost without a word.
    let either = move || if untrack(|| picks.any()) { ask() } else { send() };
    let post = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        either();
    };
    // The command list, once loaded, takes the keys it needs before these.
    let keys = move |ev: leptos::ev::KeyboardEvent| {
        if ev.key() == "Enter" && !ev.shift_key() && !ev.is_composing() {
            ev.prevent_default();
            either();
        }
    };
    let input = move |ev: leptos::ev::Event| {
        let value = event_target_value(&ev);
        drafts::Draft::of(&ctx.thread.get_value()).keep(&value);
        text.set(value);
    };
    let menu = agent_menu(ctx, model);
    let offers = lazy_offers(ctx.thread.get_value(), picks, text, message);
    view! {
        <form class="composer" on:submit=post aria-label="Write to the thread">
            <label for=TEXT>"Message"</label>
            <textarea id=TEXT rows="2" aria-describedby="composer-keys" prop:value=move || text.get() on:input=input on:keydown=keys></textarea>
            <p id="composer-keys" class="sr">"Enter sends; Shift+Enter starts a new line. A \"/\" at the start lists the commands of the connected servers."</p>
            {offers}
            <div class="composer-actions">
                <button type="submit" class="primary" disabled=move || picks.any()>"Post"</button>
                {menu}
                <button type="button" id=ASK on:click=move |_| ask()>"Ask the agent"</button>
            </div>
            <p class="form-errors" role="alert">{move || message.get()}</p>
        </form>
    }
}

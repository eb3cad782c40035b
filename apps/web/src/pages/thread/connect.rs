//! A call of a connected server's tool that waits for the person the run
//! acts for to sign in to that server with their own account (a request
//! with `sign_in`): for them, "Connect <server>", which takes them to the
//! server's sign-in and, through the connections page, back here, and
//! "Not now", which tells the agent they did not connect; for everyone
//! else, whom it waits for. Back from the sign-in, the card finds the
//! server connected and answers for them, once, so the call goes on with
//! no other click. A chunk of its own, like the card of a call put to a
//! person: only a thread where a server asks for a sign-in shows one.

use std::cell::RefCell;
use std::collections::HashSet;

use lattice_core::SignInNeeded;
use lattice_wire::Answer;
use leptos::prelude::*;
use serde::de::IgnoredAny;
use serde_json::json;

use super::ctx::Ctx;
use crate::components::chunks::when_loaded;
use crate::data::session::Session;
use crate::data::thread_fold::request_key;
use crate::data::{api_client, connections};

thread_local! {
    /// The requests this page answered by itself: each once, however
    /// often its card is drawn again or the window comes back into focus.
    /// By run and tool call id: a model may give the calls of two runs the
    /// same id, and a later run's request is not one answered already.
    static ANSWERED_HERE: RefCell<HashSet<String>> = RefCell::new(HashSet::new());
}

pub(super) fn connect_card(ctx: Ctx, run: String, tool_call_id: String, needed: SignInNeeded, acting_for: String) -> impl IntoView {
    when_loaded("the sign-in", connect_view(ctx, run, tool_call_id, needed, acting_for))
}

#[lazy]
fn connect_view(ctx: Ctx, run: String, tool_call_id: String, needed: SignInNeeded, acting_for: String) -> AnyView {
    let SignInNeeded { server, scope } = needed;
    let session = expect_context::<Session>();
    let key = request_key(&run, &tool_call_id);
    let answered = Memo::new(move |_| ctx.state.with(|t| t.answered.get(&key).cloned()));
    // Whether the viewer is the one it waits for, once `/v1/me` has said
    // who the viewer is.
    let person = acting_for.clone();
    let mine = Memo::new(move |_| session.me.with(|me| me.as_ref().map(|m| m.user == person)));
    let refused = RwSignal::new(None::<String>);
    // Off only once the switch says so (the server refuses either way):
    // no flash of "off" while the switches load.
    let key = format!("{}{server}", lattice_core::ServerKey::PREFIX);
    let off = Memo::new(move |_| ctx.switches.with(|s| s.as_ref().and_then(|m| m.get(&key)).filter(|e| !e.enabled).map(|e| e.because.clone())));

    let this_request = format!("{run}/{tool_call_id}");
    let answer = {
        let tool_call_id = tool_call_id.clone();
        move |approved: bool| {
            let (run, tool_call_id) = (run.clone(), tool_call_id.clone());
            async move {
                let body = Answer { tool_call_id, answer: json!({"approved": approved}) };
                if let Err(e) = api_client::post::<IgnoredAny>(&format!("/v1/runs/{run}/answers"), &body).await {
                    refused.set(Some(e.message()));
                }
            }
        }
    };

    // Back from the sign-in (or signed in from another tab, and back to
    // this one): the server is connected, so the call goes on. Looked at
    // when the card shows to the one it waits for, and each time the
    // window comes back into focus.
    let back = RwSignal::new(0_u32);
    let focused = window_event_listener(leptos::ev::focus, move |_| back.update(|n| *n += 1));
    on_cleanup(move || focused.remove());
    let (on_its_own, for_server) = (answer.clone(), server.clone());
    Effect::new(move |_| {
        back.track();
        let request = this_request.clone();
        if mine.get() != Some(true) || answered.with(Option::is_some) || ANSWERED_HERE.with(|a| a.borrow().contains(&request)) {
            return;
        }
        let (answer, server) = (on_its_own.clone(), for_server.clone());
        leptos::task::spawn_local(async move {
            if matches!(connections::connected(&server).await, Ok(true)) && ANSWERED_HERE.with(|a| a.borrow_mut().insert(request)) {
                answer(true).await;
            }
        });
    });

    let going = RwSignal::new(false);
    let connect = {
        let server = server.clone();
        move |_| {
            if going.get_untracked() {
                return;
            }
            going.set(true);
            let (server, scope) = (server.clone(), scope.clone());
            leptos::task::spawn_local(async move {
                if let Err(why) = connections::begin(&server, scope, true).await {
                    refused.set(Some(why));
                    going.set(false);
                }
            });
        }
    };
    let not_now = move |_| leptos::task::spawn_local(answer(false));
    let who = if acting_for.is_empty() { "the person the agent acts for".to_owned() } else { acting_for };
    let waiting = format!("Waiting for {who} to connect {server}.");
    let needs = format!("The agent needs an account on the {server} server to go on.");
    let label = format!("Connect {server}");
    let button = label.clone();
    view! {
        <section class="request sign-in" aria-label=label>
            <p><strong>{needs}</strong></p>
            {move || match (answered.get(), off.get(), mine.get()) {
                (Some(who), _, _) => view! { <p class="answered">"Answered by " {who} "."</p> }.into_any(),
                (None, Some(why), _) => view! { <p class="refusal">"This server is turned off here: " {why}</p> }.into_any(),
                (None, None, Some(true)) => view! {
                    <p class="muted">"You sign in at the server with your own account; the agent then calls it as you."</p>
                    <p class="actions">
                        <button type="button" class="primary" aria-disabled=move || going.get().to_string() on:click=connect.clone()>{button.clone()}</button>
                        <button type="button" class="quiet" on:click=not_now.clone()>"Not now"</button>
                    </p>
                }.into_any(),
                (None, None, Some(false)) => view! { <p class="muted">{waiting.clone()}</p> }.into_any(),
                // Until `/v1/me` answers, nobody is told it waits for someone else.
                (None, None, None) => ().into_any(),
            }}
            {move || refused.get().map(|r| view! { <p class="refusal" role="alert">{r}</p> })}
        </section>
    }
    .into_any()
}

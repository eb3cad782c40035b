//! What waits for the viewer's answer (`/waiting`): every form and every
//! agent's question, across their workspaces, soonest deadline first, each
//! with who asked, where (a link to the thread, where it is answered) and
//! when it closes. Live: the list is the one the side list follows
//! ([`crate::data::waiting`]), so an answer, a deadline passed, a new form
//! or access taken away show at once. A chunk of its own, fetched when
//! first shown.

use lattice_wire::{WaitingItem, Waits};
use leptos::prelude::*;
use leptos_router::components::A;

use crate::components::chunks::when_loaded;
use crate::components::time::time;
use crate::data::waiting::Waiting;

#[component]
pub fn WaitingPage() -> impl IntoView {
    when_loaded("what waits for you", waiting_view())
}

#[lazy]
fn waiting_view() -> AnyView {
    view! { <Inbox/> }.into_any()
}

#[component]
fn Inbox() -> impl IntoView {
    let waiting = expect_context::<Waiting>();
    // The whole items, read here from the list as it came.
    let heard = Memo::new(move |_| {
        waiting.0.with(|h| {
            h.as_ref().map(|h| {
                h.as_ref()
                    .map_err(Clone::clone)
                    .and_then(|h| lattice_core::json::from_str::<Vec<WaitingItem>>(&h.json).map_err(|e| format!("The list can't be read ({e})")))
            })
        })
    });
    let list = move || heard.with(|l| l.as_ref().and_then(|l| l.as_ref().ok()).cloned().unwrap_or_default());
    // The list keyed by what waits: an item stays drawn while it waits, and
    // goes when it no longer does.
    let key = |w: &WaitingItem| match &w.waits {
        Waits::AskForm { run, tool_call_id } => format!("{run}/{tool_call_id}"),
        Waits::Form { id, version } => format!("{id}@{version}"),
    };
    view! {
        <h1>"Waiting for you"</h1>
        {move || heard.with(|l| match l {
            None => view! { <p class="loading">"Loading what waits for you…"</p> }.into_any(),
            Some(Err(e)) => view! { <p class="refusal" role="alert">{e.clone()}". Reload the page to try again."</p> }.into_any(),
            Some(Ok(list)) if list.is_empty() => view! {
                <p class="empty">"Nothing waits for your answer. A form someone asks you to fill in will show here as it is asked."</p>
            }.into_any(),
            Some(Ok(list)) => view! { <p class="muted">{format!("{} waiting, the soonest to close first.", list.len())}</p> }.into_any(),
        })}
        <ol class="waiting">
            <For each=list key=key children=item/>
        </ol>
    }
}

fn item(w: WaitingItem) -> impl IntoView {
    let asked_by = if w.asked_by_agent { format!("the agent, for {}", w.asked_by) } else { w.asked_by };
    view! {
        <li class="waiting-item">
            <h2 class="waiting-title"><A href=format!("/t/{}", w.thread.id)>{w.title}</A></h2>
            <p class="closes">{match w.closes_at {
                Some(at) => view! { "Closes " {time(at)} }.into_any(),
                None => view! { "No deadline" }.into_any(),
            }}</p>
            <p class="muted">
                "Asked by " <span class="asked-by">{asked_by}</span> ", " {time(w.asked_at)}
                " in " <span class="where">{w.workspace.name} " / " {w.thread.title}</span>
            </p>
        </li>
    }
}

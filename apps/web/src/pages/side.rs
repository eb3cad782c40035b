//! The side list beside every page: what waits for the viewer's answer
//! (a count, live), the viewer's workspaces with their threads (a thread
//! where a form waits for them marked so), and the threads shared with it,
//! so a person moves between conversations without leaving the one they
//! are in. Read again when the address changes (a thread or workspace just
//! made shows at once); the lists are a chunk of their own, fetched once
//! the page has painted; a thread with something new from someone else
//! since the person last had its end in view is marked unread (bold, and
//! "unread" to a screen reader). On a small screen it folds away behind a
//! "Conversations" button, and folds again once a link in it is followed.

use lattice_wire::{Thread, Workspace};
use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::use_location;

use crate::components::chunks::when_loaded;
use crate::data::api_client;
use crate::data::session::Session;
use crate::data::waiting::Waiting;

#[component]
pub fn SideList() -> impl IntoView {
    let waiting = expect_context::<Waiting>();
    let live = waiting.follow();
    on_cleanup(move || live.close());
    // Unfolded, on a small screen (on a wide one the list is always there).
    let open = RwSignal::new(false);
    // Moving to another address folds the list, and ends the landing.
    let session = expect_context::<Session>();
    let path = use_location().pathname;
    Effect::new(move |first: Option<()>| {
        path.track();
        open.set(false);
        if first.is_some() {
            session.landing.set(false);
        }
    });
    let count = Memo::new(move |_| waiting.count().unwrap_or(0));
    view! {
        <nav class="side" class:open=move || open.get() aria-label="Conversations">
            <button type="button" class="side-toggle" aria-controls="side-nav" aria-expanded=move || open.get().to_string()
                on:click=move |_| open.update(|o| *o = !*o)>
                "Conversations"
                {move || (count.get() > 0).then(|| view! { " " <span class="count">{move || count.get()}<span class="sr">" waiting"</span></span> })}
            </button>
            // A link followed in it folds it, as the new address does.
            <div id="side-nav" class="side-nav" on:click=move |_| open.set(false)>
                <A href="/waiting" attr:class="side-waiting">
                    "Waiting for you"
                    {move || (count.get() > 0).then(|| view! { " " <span class="count">{move || count.get()}<span class="sr">" waiting"</span></span> })}
                </A>
                {when_loaded("your conversations", lists_view())}
            </div>
        </nav>
    }
}

/// The workspaces and threads: a chunk of their own, fetched once the page
/// has painted (the count above is in the first load).
#[lazy]
fn lists_view() -> AnyView {
    view! { <Lists/> }.into_any()
}

#[component]
fn Lists() -> impl IntoView {
    let lists = RwSignal::new(None::<(Vec<(Workspace, Vec<Thread>)>, Vec<Thread>)>);
    let waiting = expect_context::<Waiting>();
    let path = use_location().pathname;
    // Read again when the person comes back to the page, to see what is new
    // elsewhere (and when the address or what waits changes).
    let back = RwSignal::new(0_u32);
    let focused = window_event_listener(leptos::ev::focus, move |_| back.update(|n| *n += 1));
    on_cleanup(move || focused.remove());
    Effect::new(move |_| {
        path.track();
        back.track();
        waiting.0.track();
        leptos::task::spawn_local(async move {
            let Ok(workspaces) = api_client::get::<Vec<Workspace>>("/v1/workspaces").await else { return };
            let mut held = Vec::new();
            for w in workspaces {
                let threads = api_client::get::<Vec<Thread>>(&format!("/v1/workspaces/{}/threads", w.id)).await.unwrap_or_default();
                held.push((w, threads));
            }
            let shared = api_client::get::<Vec<Thread>>("/v1/threads").await.unwrap_or_default();
            lists.try_set(Some((held, shared)));
        });
    });
    let thread_links = move |threads: Vec<Thread>| {
        threads
            .into_iter()
            .map(|t| {
                let id = t.id.clone();
                let asks = Memo::new(move |_| waiting.in_thread(&id));
                let href = format!("/t/{}", t.id);
                // The thread in view is being read, whatever the list said.
                let here = href.clone();
                let listed_unread = t.unread == Some(true);
                let unread = Memo::new(move |_| listed_unread && path.with(|p| *p != here));
                view! {
                    <li>
                        <A href=href attr:class=move || if unread.get() { "unread" } else { "" }>
                            {t.title}
                            {move || unread.get().then(|| view! { <span class="sr">", unread"</span> })}
                            {move || asks.get().then(|| view! { " " <span class="mark">"form waiting"</span> })}
                        </A>
                    </li>
                }
            })
            .collect_view()
    };
    move || match lists.get() {
        // The list's place is held while it loads: nothing beside it moves.
        None => view! { <p class="muted">"Loading…"</p> }.into_any(),
        Some((held, shared)) => view! {
            <ul class="side-list">
                {held.into_iter().map(|(w, threads)| view! {
                    <li>
                        <A href=format!("/w/{}", w.id) attr:class="side-ws">{w.name}</A>
                        <ul>{thread_links(threads)}</ul>
                    </li>
                }).collect_view()}
            </ul>
            {(!shared.is_empty()).then(|| view! {
                <p class="side-ws">"Shared with you"</p>
                <ul class="side-list">{thread_links(shared)}</ul>
            })}
        }
        .into_any(),
    }
}

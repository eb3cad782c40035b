//! The viewer's workspaces, and making one: a chunk of its own, fetched
//! when `/` is first shown (the side list beside it is in the first load).

use lattice_wire::{CreateWorkspace, Created, Thread, Workspace};
use leptos::prelude::*;
use leptos_router::NavigateOptions;
use leptos_router::components::A;
use leptos_router::hooks::use_navigate;

use crate::components::chunks::when_loaded;
use crate::data::session::Session;

#[component]
pub fn Home() -> impl IntoView {
    when_loaded("your workspaces", home_view())
}

#[lazy]
fn home_view() -> AnyView {
    view! { <Workspaces/> }.into_any()
}

#[component]
fn Workspaces() -> impl IntoView {
    let workspaces = RwSignal::new(None::<Result<Vec<Workspace>, String>>);
    leptos::task::spawn_local(async move {
        workspaces.set(Some(crate::data::api_client::get("/v1/workspaces").await.map_err(|e| e.message())));
    });
    // Threads shared with the viewer (from outside its workspaces, or
    // restricted ones it is listed on).
    let shared = RwSignal::new(None::<Vec<Thread>>);
    leptos::task::spawn_local(async move {
        let list = crate::data::api_client::get::<Vec<Thread>>("/v1/threads").await.unwrap_or_default();
        shared.try_set(Some(list));
    });
    let name = RwSignal::new(String::new());
    let message = RwSignal::new(String::new());
    let navigate = use_navigate();
    // Someone who only answers forms lands where their forms are (and
    // may still come back here).
    let to_waiting = navigate.clone();
    let session = expect_context::<Session>();
    Effect::new(move |_| {
        let answers_only = workspaces.with(|w| {
            let Some(Ok(w)) = w else { return false };
            shared.with(|s| {
                s.as_ref().is_some_and(|s| only_answers(w.iter().map(|w| w.role.as_str()).chain(s.iter().filter_map(|t| t.role.as_deref()))))
            })
        });
        if answers_only && session.landing.get_untracked() {
            to_waiting("/waiting", NavigateOptions { replace: true, ..Default::default() });
        }
    });
    let create = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let navigate = navigate.clone();
        let body = CreateWorkspace { name: name.get_untracked() };
        leptos::task::spawn_local(async move {
            match crate::data::api_client::post::<Created>("/v1/workspaces", &body).await {
                Ok(c) => navigate(&format!("/w/{}", c.id), Default::default()),
                Err(e) => message.set(e.message()),
            }
        });
    };
    view! {
        <h1>"Workspaces"</h1>
        {move || match workspaces.get() {
            None => view! { <p class="loading">"Loading…"</p> }.into_any(),
            Some(Err(e)) => view! { <p class="refusal" role="alert">{e}</p> }.into_any(),
            Some(Ok(list)) if list.is_empty() => view! { <p>"You have no workspace yet."</p> }.into_any(),
            Some(Ok(list)) => view! {
                <ul class="list">
                    {list.into_iter().map(|w| view! {
                        <li><A href=format!("/w/{}", w.id)>{w.name}</A>" " <span class="muted">{format!("({})", w.role)}</span></li>
                    }).collect_view()}
                </ul>
            }.into_any(),
        }}
        {move || shared.get().filter(|s| !s.is_empty()).map(|shared| view! {
            <h2>"Shared with you"</h2>
            <ul class="list shared">
                {shared.into_iter().map(|t| view! {
                    <li><A href=format!("/t/{}", t.id)>{t.title}</A>" " <span class="muted">{format!("({})", t.role.unwrap_or_default())}</span></li>
                }).collect_view()}
            </ul>
        })}
        <form class="inline" on:submit=create>
            <label for="new-workspace">"New workspace"</label>
            <input id="new-workspace" prop:value=move || name.get() on:input=move |ev| name.set(event_target_value(&ev))/>
            <button type="submit">"Create"</button>
            <p class="form-errors" role="alert">{move || message.get()}</p>
        </form>
    }
}

/// Whether the viewer's roles (in its workspaces and the threads shared
/// with it) let it answer forms and nothing more: a respondent somewhere,
/// an editor or admin nowhere.
fn only_answers<'a>(mut roles: impl Iterator<Item = &'a str> + Clone) -> bool {
    roles.clone().any(|r| r == "respondent") && roles.all(|r| r == "respondent" || r == "viewer")
}

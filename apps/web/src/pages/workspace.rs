//! A workspace: its threads, and starting one; a chunk of its own,
//! fetched when a workspace is first shown.

use lattice_wire::{CreateThread, Created, Thread};
use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::{use_navigate, use_params_map};

use crate::components::chunks::when_loaded;

#[component]
pub fn WorkspacePage() -> impl IntoView {
    when_loaded("the workspace", workspace_view())
}

#[lazy]
fn workspace_view() -> AnyView {
    view! { <Threads/> }.into_any()
}

#[component]
fn Threads() -> impl IntoView {
    let params = use_params_map();
    let ws = move || params.read().get("ws").unwrap_or_default();
    let threads = RwSignal::new(None::<Result<Vec<Thread>, String>>);
    Effect::new(move |_| {
        let ws = ws();
        leptos::task::spawn_local(async move {
            threads.set(Some(crate::data::api_client::get(&format!("/v1/workspaces/{ws}/threads")).await.map_err(|e| e.message())));
        });
    });
    let title = RwSignal::new(String::new());
    let restricted = RwSignal::new(false);
    let message = RwSignal::new(String::new());
    let navigate = use_navigate();
    let create = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let navigate = navigate.clone();
        let body = CreateThread { title: title.get_untracked(), restricted: restricted.get_untracked() };
        let ws = ws();
        leptos::task::spawn_local(async move {
            match crate::data::api_client::post::<Created>(&format!("/v1/workspaces/{ws}/threads"), &body).await {
                Ok(c) => navigate(&format!("/t/{}", c.id), Default::default()),
                Err(e) => message.set(e.message()),
            }
        });
    };
    view! {
        <h1>"Threads"</h1>
        {move || match threads.get() {
            None => view! { <p class="loading">"Loading…"</p> }.into_any(),
            Some(Err(e)) => view! { <p class="refusal" role="alert">{e}</p> }.into_any(),
            Some(Ok(list)) if list.is_empty() => view! { <p>"No thread yet."</p> }.into_any(),
            Some(Ok(list)) => view! {
                <ul class="list">
                    {list.into_iter().map(|t| view! {
                        <li>
                            <A href=format!("/t/{}", t.id)>{t.title}</A>" "
                            {t.restricted.then(|| view! { <span class="badge">"restricted"</span>" " })}
                            <span class="muted">{format!("by {}", t.created_by)}</span>
                        </li>
                    }).collect_view()}
                </ul>
            }.into_any(),
        }}
        <form class="inline" on:submit=create>
            <label for="new-thread">"New thread"</label>
            <input id="new-thread" prop:value=move || title.get() on:input=move |ev| title.set(event_target_value(&ev))/>
            <label class="check">
                <input type="checkbox" id="new-thread-restricted" prop:checked=move || restricted.get()
                    on:change=move |ev| restricted.set(event_target_checked(&ev))/>
                " Restricted: only the people listed on it, and the workspace's admins, see it"
            </label>
            <button type="submit">"Start"</button>
            <p class="form-errors" role="alert">{move || message.get()}</p>
        </form>
    }
}

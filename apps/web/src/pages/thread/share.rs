//! Sharing a thread: an admin lists a person on it. A chunk of its own:
//! only admins are offered it.

use lattice_wire::Posted;
use leptos::prelude::*;

use crate::components::chunks::when_loaded;
use crate::data::api_client;

/// The sharing panel, fetched when an admin's page first shows it.
pub(super) fn lazy_share(thread: String) -> impl IntoView {
    when_loaded("sharing", share_view(thread))
}

#[lazy]
fn share_view(thread: String) -> AnyView {
    view! { <Share thread/> }.into_any()
}

/// An admin lists a person on the thread: who sees a restricted thread,
/// or someone outside the workspace it is shared with.
#[component]
fn Share(thread: String) -> impl IntoView {
    let user = RwSignal::new(String::new());
    let role = RwSignal::new("viewer".to_owned());
    let said = RwSignal::new(None::<Result<String, String>>);
    let share = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let body = lattice_wire::ShareThread { user: user.get_untracked(), role: role.get_untracked() };
        let path = format!("/v1/threads/{thread}/members");
        leptos::task::spawn_local(async move {
            let done = api_client::post::<Posted>(&path, &body).await;
            said.set(Some(done.map(|_| format!("{} is listed as {}.", body.user, body.role)).map_err(|e| e.message())));
        });
    };
    view! {
        <details class="people">
            <summary>"People"</summary>
            <form class="inline" on:submit=share>
                <label for="share-user">"Share with"</label>
                <input id="share-user" autocomplete="off" prop:value=move || user.get() on:input=move |ev| user.set(event_target_value(&ev))/>
                <label for="share-role">"as"</label>
                <select id="share-role" on:change=move |ev| role.set(event_target_value(&ev))>
                    <option value="viewer" selected=true>"viewer (reads)"</option>
                    <option value="respondent">"respondent (reads, answers forms)"</option>
                    <option value="editor">"editor (a workspace member only)"</option>
                </select>
                <button type="submit">"Share"</button>
            </form>
            {move || said.get().map(|r| match r {
                Ok(done) => view! { <p class="muted" role="status">{done}</p> }.into_any(),
                Err(e) => view! { <p class="refusal" role="alert">{e}</p> }.into_any(),
            })}
        </details>
    }
}

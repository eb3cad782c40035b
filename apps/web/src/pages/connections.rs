//! The person's connected accounts (`/settings/connections`): each server
//! they sign in to with their own account, whether they have and since
//! when, and a button to connect or disconnect. It is also where a
//! server's sign-in comes back to (`#state=…&code=…`, or `#error=…`): the
//! sign-in is finished here with the person's own token, and the person
//! goes back to the page that began it (a thread whose call waited for
//! it), or is told it is done. A chunk of its own, fetched when first shown.

use lattice_wire::ServerConnection;
use leptos::prelude::*;
use leptos_router::NavigateOptions;
use leptos_router::hooks::use_navigate;

use crate::components::chunks::when_loaded;
use crate::components::time::time;
use crate::data::connections::{self, Came};

#[component]
pub fn ConnectionsPage() -> impl IntoView {
    when_loaded("your connected accounts", connections_view())
}

#[lazy]
fn connections_view() -> AnyView {
    view! { <Connections/> }.into_any()
}

#[component]
fn Connections() -> impl IntoView {
    let list = RwSignal::new(None::<Result<Vec<ServerConnection>, String>>);
    // What was just done, said once ("Connected to github.").
    let status = RwSignal::new(String::new());
    let refused = RwSignal::new(None::<String>);
    let load = move || {
        leptos::task::spawn_local(async move {
            list.try_set(Some(connections::list().await.map_err(|e| e.message())));
        });
    };
    let navigate = use_navigate();
    // The sign-in coming back is finished first: the list read after it
    // shows the server connected.
    match connections::take_from_url() {
        None => load(),
        Some(Came::Error(why)) => {
            refused.set(Some(format!("The sign-in to the server did not finish: {why}")));
            load();
        }
        Some(Came::Answer(answer)) => leptos::task::spawn_local(async move {
            match connections::finish(&answer).await {
                Ok(server) => match connections::take_return() {
                    Some(to) => navigate(&to, NavigateOptions { replace: true, ..Default::default() }),
                    None => {
                        status.try_set(format!("Connected to {server}."));
                    }
                },
                Err(e) => {
                    // A sign-in that failed leaves no way back to follow later.
                    let _ = connections::take_return();
                    refused.try_set(Some(format!("The sign-in to the server did not finish: {}", e.message())));
                }
            }
            load();
        }),
    }
    view! {
        <h1>"Connected accounts"</h1>
        <p>"Some of the servers the agent uses ask each person to sign in with their own account: the agent then calls them as you, and sees only what you may. Connect one here, or when the agent asks you to in a thread; disconnecting makes lattice forget what the server gave it for you."</p>
        <p class="status" role="status">{move || status.get()}</p>
        {move || refused.get().map(|r| view! { <p class="refusal" role="alert">{r}</p> })}
        {move || match list.get() {
            None => view! { <p class="loading">"Loading your connected accounts…"</p> }.into_any(),
            Some(Err(e)) => view! { <p class="refusal" role="alert">{e}</p> }.into_any(),
            Some(Ok(rows)) if rows.is_empty() => view! { <p class="empty">"No server here asks you to sign in with your own account."</p> }.into_any(),
            Some(Ok(rows)) => view! {
                <ul class="list connections">
                    {rows.into_iter().map(|c| row(c, status, refused, load)).collect_view()}
                </ul>
            }.into_any(),
        }}
    }
}

/// One server: its name, whether the person is connected and since when,
/// and the button that changes it.
fn row(c: ServerConnection, status: RwSignal<String>, refused: RwSignal<Option<String>>, load: impl Fn() + Clone + 'static) -> impl IntoView {
    let name_id = format!("connection-{}", c.server);
    let state = match (c.connected, c.connected_at) {
        (true, Some(at)) => view! { "Connected since " {time(at)} }.into_any(),
        (true, None) => view! { "Connected" }.into_any(),
        (false, _) => view! { "Not connected" }.into_any(),
    };
    let server = c.server.clone();
    let busy = RwSignal::new(false);
    let button = if c.connected {
        let disconnect = move |_| {
            if busy.get_untracked() {
                return;
            }
            busy.set(true);
            let (server, load) = (server.clone(), load.clone());
            leptos::task::spawn_local(async move {
                match connections::disconnect(&server).await {
                    Ok(()) => status.set(format!("Disconnected from {server}.")),
                    Err(e) => refused.set(Some(e.message())),
                }
                busy.try_set(false);
                load();
            });
        };
        view! { <button type="button" aria-describedby=name_id.clone() aria-disabled=move || busy.get().to_string() on:click=disconnect>"Disconnect"</button> }
            .into_any()
    } else {
        let connect = move |_| {
            if busy.get_untracked() {
                return;
            }
            busy.set(true);
            let server = server.clone();
            leptos::task::spawn_local(async move {
                // Back here once it is finished: this page says it is done.
                if let Err(why) = connections::begin(&server, None, false).await {
                    refused.set(Some(why));
                    busy.set(false);
                }
            });
        };
        view! { <button type="button" class="primary" aria-describedby=name_id.clone() aria-disabled=move || busy.get().to_string() on:click=connect>"Connect"</button> }
            .into_any()
    };
    let shown = c.server.clone();
    view! {
        <li data-server=c.server>
            <strong id=name_id>{shown}</strong>" "
            <span class="muted">{state}</span>" "
            {button}
        </li>
    }
}

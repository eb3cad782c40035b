//! The console's People panel: who holds what in each workspace the viewer
//! administers, and taking it away — a role lowered, a member removed, a
//! person signed out everywhere. Each is one command; the server decides
//! (a workspace admin manages members, a tenant admin signs people out)
//! and every stream the person has open ends with it.

use lattice_wire::{AddMember, LevelView, Member, Posted};
use leptos::prelude::*;

use crate::components::confirm;
use crate::data::api_client;

const ROLES: [&str; 4] = ["viewer", "respondent", "editor", "admin"];

/// The workspaces the viewer administers (id, name), as the levels say.
pub(super) fn administered(levels: &[LevelView]) -> Vec<(String, String)> {
    levels.iter().filter_map(|l| l.level.strip_prefix("workspace:").map(|ws| (ws.to_owned(), l.name.clone()))).collect()
}

#[component]
pub(super) fn People(levels: Vec<LevelView>) -> impl IntoView {
    let workspaces = administered(&levels);
    view! {
        <section aria-labelledby="people-title">
            <h2 id="people-title">"People"</h2>
            <p>"Who holds what in each workspace you administer. A change reaches every chat, stream and session the person has open within a second."</p>
            {if workspaces.is_empty() {
                view! { <p>"You administer no workspace."</p> }.into_any()
            } else {
                workspaces.into_iter().map(|(ws, name)| view! { <Members ws=ws name=name/> }).collect_view().into_any()
            }}
        </section>
    }
}

#[component]
fn Members(ws: String, name: String) -> impl IntoView {
    let members = RwSignal::new(None::<Vec<Member>>);
    let said = RwSignal::new(None::<String>);
    let path = format!("/v1/workspaces/{ws}/members");
    let load = {
        let path = path.clone();
        move || {
            let path = path.clone();
            leptos::task::spawn_local(async move {
                match api_client::get::<Vec<Member>>(&path).await {
                    Ok(list) => members.set(Some(list)),
                    Err(e) => said.set(Some(e.message())),
                }
            });
        }
    };
    load();
    let caption = format!("Members of {name}");
    let region = caption.clone();
    view! {
        <div class="table-scroll" role="region" aria-label=region tabindex="0">
        <table class="members">
            <caption>{caption}</caption>
            <thead><tr><th scope="col">"Person"</th><th scope="col">"Role"</th><th scope="col">"Take away"</th></tr></thead>
            <tbody>
                {move || members.get().unwrap_or_default().into_iter().map(|m| {
                    view! { <MemberRow ws=ws.clone() member=m said=said reload=Callback::new({ let load = load.clone(); move |()| load() })/> }
                }).collect_view()}
            </tbody>
        </table>
        </div>
        {move || said.get().map(|s| view! { <p class="said" role="status">{s}</p> })}
    }
}

#[component]
fn MemberRow(ws: String, member: Member, said: RwSignal<Option<String>>, reload: Callback<()>) -> impl IntoView {
    let user = member.user.clone();
    let label = format!("Role of {user}");
    let (ws_role, user_role) = (ws.clone(), user.clone());
    let change = move |ev: leptos::ev::Event| {
        let role = event_target_value(&ev);
        let (ws, user) = (ws_role.clone(), user_role.clone());
        leptos::task::spawn_local(async move {
            let body = AddMember { user: user.clone(), role: role.clone() };
            match api_client::post::<Posted>(&format!("/v1/workspaces/{ws}/members"), &body).await {
                Ok(_) => said.set(Some(format!("{user} is now {role}."))),
                Err(e) => said.set(Some(e.message())),
            }
            reload.run(());
        });
    };
    let (ws_remove, user_remove) = (ws.clone(), user.clone());
    let remove = move |_| {
        let (ws, user) = (ws_remove.clone(), user_remove.clone());
        leptos::task::spawn_local(async move {
            let lead = "They lose the workspace and its threads at once, with every stream they have open.";
            if !confirm::ask(&format!("Remove {user}?"), lead, &format!("Workspace {ws}"), "Remove").await {
                return;
            }
            match api_client::delete::<Posted>(&format!("/v1/workspaces/{ws}/members/{}", api_client::query(&user))).await {
                Ok(_) => said.set(Some(format!("{user} was removed."))),
                Err(e) => said.set(Some(e.message())),
            }
            reload.run(());
        });
    };
    let user_out = user.clone();
    let sign_out = move |_| {
        let user = user_out.clone();
        leptos::task::spawn_local(async move {
            let lead = "Every token and session they hold ends now, in every workspace of the tenant; they sign in again.";
            if !confirm::ask(&format!("Sign {user} out everywhere?"), lead, &user, "Sign out").await {
                return;
            }
            match api_client::post::<Posted>(&format!("/v1/people/{}/sign-out", api_client::query(&user)), &serde_json::Value::Null).await {
                Ok(_) => said.set(Some(format!("{user} is signed out everywhere."))),
                Err(e) => said.set(Some(e.message())),
            }
        });
    };
    let current = member.role.clone();
    view! {
        <tr>
            <th scope="row">{user.clone()}</th>
            <td>
                <select aria-label=label on:change=change>
                    {ROLES.iter().map(|r| {
                        let held = *r == current;
                        view! { <option value=*r selected=held>{*r}</option> }
                    }).collect_view()}
                </select>
            </td>
            <td>
                <button type="button" on:click=remove>"Remove"</button>
                " "
                <button type="button" on:click=sign_out>"Sign out everywhere"</button>
            </td>
        </tr>
    }
}

//! The console's "Keys for agents" panel: the API keys the viewer may see
//! (a tenant admin the tenant's, a workspace admin those of the workspaces
//! they administer), making one, shown once, and revoking one. A key is a
//! bearer token for an agent that calls lattice from outside, acting with
//! the role it was made with (in the whole tenant, or in one workspace).
//! The server decides who may do what; the panel offers what it allows.

use lattice_wire::{ApiKeyCreated, ApiKeyView, CreateApiKey, Posted};
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use crate::components::confirm;
use crate::components::time::time;
use crate::data::api_client;
use crate::data::request::Failure;

/// The roles of a key of the whole tenant, and of a workspace's.
const TENANT_ROLES: [(&str, &str); 2] = [("member", "Member"), ("tenant_admin", "Tenant admin")];
const WORKSPACE_ROLES: [(&str, &str); 4] = [("viewer", "Viewer"), ("respondent", "Respondent"), ("editor", "Editor"), ("admin", "Admin")];

/// The longest a key may be made to last, in days (the server's limit).
const MAX_DAYS: u32 = 3650;

/// The roles a key of `workspace` ("" for the whole tenant) may have, and
/// the one offered first: an agent's usual.
fn roles_of(workspace: &str) -> (&'static [(&'static str, &'static str)], &'static str) {
    if workspace.is_empty() { (&TENANT_ROLES, "member") } else { (&WORKSPACE_ROLES, "editor") }
}

/// The panel, shown when the viewer may make or see keys: the list's read
/// refused (403) hides it, as does a viewer who administers nothing.
/// `workspaces`: the workspaces the viewer administers (id, name).
#[component]
pub(super) fn ApiKeys(workspaces: Memo<Vec<(String, String)>>, tenant_admin: Signal<bool>) -> impl IntoView {
    let listed = RwSignal::new(None::<Result<Vec<ApiKeyView>, String>>);
    let refused = RwSignal::new(false);
    let said = RwSignal::new(None::<String>);
    let load = move || {
        leptos::task::spawn_local(async move {
            match api_client::get::<Vec<ApiKeyView>>("/v1/api-keys").await {
                Ok(list) => listed.set(Some(Ok(list))),
                Err(Failure::Refused { status: 403, .. }) => refused.set(true),
                Err(e) => listed.set(Some(Err(e.message()))),
            }
        });
    };
    load();
    let reload = Callback::new(move |()| load());
    let shown = move || {
        !refused.get()
            && listed.with(|listed| match listed {
                None => false,
                Some(Err(_)) => true,
                Some(Ok(list)) => tenant_admin.get() || !workspaces.with(Vec::is_empty) || !list.is_empty(),
            })
    };
    view! {
        <Show when=shown>
            <section aria-labelledby="keys-title">
                <h2 id="keys-title">"Keys for agents"</h2>
                <p>"An API key lets an agent outside lattice call it (the API and MCP) with the role it is made with, in the whole tenant or in one workspace. Revoking one refuses its next request."</p>
                <NewKey workspaces tenant_admin reload/>
                {move || match listed.get() {
                    Some(Err(e)) => view! { <p class="refusal" role="alert">{e}</p> }.into_any(),
                    Some(Ok(list)) if list.is_empty() => view! { <p>"No key has been made yet."</p> }.into_any(),
                    Some(Ok(list)) => view! { <KeyList keys=list workspaces said reload/> }.into_any(),
                    None => ().into_any(),
                }}
                {move || said.get().map(|s| view! { <p class="said" role="status">{s}</p> })}
            </section>
        </Show>
    }
}

#[component]
fn NewKey(workspaces: Memo<Vec<(String, String)>>, tenant_admin: Signal<bool>, reload: Callback<()>) -> impl IntoView {
    let name = RwSignal::new(String::new());
    let days = RwSignal::new(String::new());
    // What the person chose; `None` (or a choice no longer offered) is the
    // first offered.
    let scope = RwSignal::new(None::<String>);
    let role = RwSignal::new(None::<String>);
    let made = RwSignal::new(None::<(String, String)>);
    let error = RwSignal::new(String::new());
    // "" is the whole tenant, offered to its admins.
    let scopes = Memo::new(move |_| {
        let mut offered = if tenant_admin.get() { vec![(String::new(), "Whole tenant".to_owned())] } else { Vec::new() };
        offered.extend(workspaces.get());
        offered
    });
    let chosen_scope = move || {
        let offered = scopes.get();
        scope.get().filter(|s| offered.iter().any(|(id, _)| id == s)).or_else(|| offered.first().map(|(id, _)| id.clone())).unwrap_or_default()
    };
    let chosen_role = move || {
        let (roles, usual) = roles_of(&chosen_scope());
        role.get().filter(|r| roles.iter().any(|(value, _)| value == r)).unwrap_or_else(|| usual.to_owned())
    };
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let key_name = name.get_untracked().trim().to_owned();
        if key_name.is_empty() {
            error.set("Give the key a name: what uses it.".into());
            return;
        }
        let typed = days.get_untracked();
        let expires_in_days = match typed.trim() {
            "" => None,
            d => match d.parse::<u32>() {
                Ok(d) if (1..=MAX_DAYS).contains(&d) => Some(d),
                _ => {
                    error.set(format!("Days: a whole number from 1 to {MAX_DAYS}, or none for a key that works until it is revoked."));
                    return;
                }
            },
        };
        let workspace = chosen_scope();
        let body =
            CreateApiKey { name: key_name.clone(), role: chosen_role(), workspace: (!workspace.is_empty()).then_some(workspace), expires_in_days };
        leptos::task::spawn_local(async move {
            match api_client::post::<ApiKeyCreated>("/v1/api-keys", &body).await {
                Ok(created) => {
                    error.set(String::new());
                    name.set(String::new());
                    days.set(String::new());
                    made.set(Some((key_name, created.key)));
                    reload.run(());
                }
                Err(e) => error.set(e.message()),
            }
        });
    };
    view! {
        <form class="new-key" on:submit=submit aria-labelledby="new-key-title">
            <h3 id="new-key-title">"Make a key"</h3>
            <div class="field">
                <label for="key-name">"Name"</label>
                <input id="key-name" aria-describedby="key-name-help" prop:value=move || name.get() on:input=move |ev| name.set(event_target_value(&ev))/>
                <p id="key-name-help" class="help">"What uses it, such as the agent's name: shown in the list and the audit."</p>
            </div>
            <div class="field">
                <label for="key-scope">"Workspace"</label>
                <select id="key-scope" on:change=move |ev| { scope.set(Some(event_target_value(&ev))); role.set(None); }>
                    {move || {
                        let chosen = chosen_scope();
                        scopes.get().into_iter().map(|(id, shown)| {
                            let selected = id == chosen;
                            view! { <option value=id selected=selected>{shown}</option> }
                        }).collect_view()
                    }}
                </select>
            </div>
            <div class="field">
                <label for="key-role">"Role"</label>
                <select id="key-role" on:change=move |ev| role.set(Some(event_target_value(&ev)))>
                    {move || {
                        let chosen = chosen_role();
                        roles_of(&chosen_scope()).0.iter().map(|(value, shown)| {
                            let selected = *value == chosen;
                            view! { <option value=*value selected=selected>{*shown}</option> }
                        }).collect_view()
                    }}
                </select>
            </div>
            <div class="field">
                <label for="key-days">"Days until it expires"</label>
                <input id="key-days" type="number" min="1" max=MAX_DAYS.to_string() step="1" inputmode="numeric" aria-describedby="key-days-help"
                    prop:value=move || days.get() on:input=move |ev| days.set(event_target_value(&ev))/>
                <p id="key-days-help" class="help">"Optional: left empty, the key works until it is revoked."</p>
            </div>
            <div class="form-actions">
                <button type="submit" class="primary">"Make the key"</button>
            </div>
            <p class="form-errors" role="alert">{move || error.get()}</p>
        </form>
        {move || made.get().map(|(key_name, key)| view! {
            <p role="status">{format!("The key {key_name} was made.")}</p>
            <CopyField id="new-key" label="New key" value=key once=true/>
        })}
    }
}

#[component]
fn KeyList(keys: Vec<ApiKeyView>, workspaces: Memo<Vec<(String, String)>>, said: RwSignal<Option<String>>, reload: Callback<()>) -> impl IntoView {
    view! {
        <div class="table-scroll" role="region" aria-label="The keys for agents" tabindex="0">
        <table class="keys">
            <caption>"Keys"</caption>
            <thead><tr>
                <th scope="col">"Name"</th><th scope="col">"Role"</th><th scope="col">"Workspace"</th><th scope="col">"Made by"</th>
                <th scope="col">"Made"</th><th scope="col">"Last used"</th><th scope="col">"Expires"</th><th scope="col">"Revoked"</th>
            </tr></thead>
            <tbody>
                {keys.into_iter().map(|k| {
                    let place = match &k.workspace {
                        None => "whole tenant".to_owned(),
                        Some(ws) => workspaces.with_untracked(|list| list.iter().find(|(id, _)| id == ws).map(|(_, name)| name.clone())).unwrap_or_else(|| ws.clone()),
                    };
                    let revoked = match k.revoked_at {
                        Some(at) => time(at).into_any(),
                        None => {
                            let (id, name, shown) = (k.id.clone(), k.name.clone(), format!("{} ({}, {place})", k.name, k.role));
                            let revoke = move |_| {
                                let (id, name, shown) = (id.clone(), name.clone(), shown.clone());
                                leptos::task::spawn_local(async move {
                                    let lead = "Whatever uses it is refused from its next request on. This cannot be undone.";
                                    if !confirm::ask(&format!("Revoke the key {name}?"), lead, &shown, "Revoke").await {
                                        return;
                                    }
                                    match api_client::delete::<Posted>(&format!("/v1/api-keys/{}", api_client::query(&id))).await {
                                        Ok(_) => said.set(Some(format!("The key {name} is revoked."))),
                                        Err(e) => said.set(Some(e.message())),
                                    }
                                    reload.run(());
                                });
                            };
                            view! { <button type="button" class="danger" on:click=revoke>"Revoke"</button> }.into_any()
                        }
                    };
                    view! {
                        <tr>
                            <th scope="row">{k.name}</th>
                            <td>{k.role}</td>
                            <td>{place}</td>
                            <td>{k.created_by}</td>
                            <td>{time(k.created_at)}</td>
                            <td>{when(k.last_used_at, "never")}</td>
                            <td>{when(k.expires_at, "never")}</td>
                            <td>{revoked}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
        </div>
    }
}

/// A time, or what stands for none.
pub(super) fn when(at: Option<String>, otherwise: &'static str) -> AnyView {
    match at {
        Some(at) => time(at).into_any(),
        None => otherwise.into_any(),
    }
}

/// A value to copy, in a read-only field with its label and a Copy button;
/// a secret shown `once` says so, and takes the focus as it appears.
#[component]
pub(super) fn CopyField(id: &'static str, label: &'static str, value: String, #[prop(optional)] once: bool) -> impl IntoView {
    let field = NodeRef::<leptos::html::Input>::new();
    let copied = RwSignal::new("");
    if once {
        field.on_load(|input| {
            let _ = input.focus();
            input.select();
        });
    }
    let note = format!("{id}-note");
    let text = value.clone();
    let copy = move |_| {
        // `navigator.clipboard` is offered on secure origins only.
        let clipboard = web_sys::window()
            .and_then(|w| js_sys::Reflect::get(&w.navigator(), &"clipboard".into()).ok())
            .filter(|c| !c.is_undefined() && !c.is_null())
            .map(|c| c.unchecked_into::<web_sys::Clipboard>());
        let Some(clipboard) = clipboard else {
            selected(field, &copied);
            return;
        };
        let written = clipboard.write_text(&text);
        leptos::task::spawn_local(async move {
            match JsFuture::from(written).await {
                Ok(_) => copied.set("Copied."),
                Err(_) => selected(field, &copied),
            }
        });
    };
    view! {
        <div class="copy-field">
            <label for=id>{label}</label>
            <div class="inline">
                <input id=id type="text" readonly spellcheck="false" autocomplete="off" prop:value=value aria-describedby=once.then(|| note.clone()) node_ref=field/>
                <button type="button" on:click=copy>"Copy"</button>
                <span role="status">{move || copied.get()}</span>
            </div>
            {once.then(|| view! { <p id=note class="shown-once">"Copy it now: it is not shown again"</p> })}
        </div>
    }
}

/// Where the page may not write to the clipboard: the value is selected for
/// the person to copy.
fn selected(field: NodeRef<leptos::html::Input>, copied: &RwSignal<&'static str>) {
    if let Some(input) = field.try_get_untracked().flatten() {
        let _ = input.focus();
        input.select();
    }
    copied.set("Selected: copy it with Ctrl+C (⌘C on a Mac).");
}

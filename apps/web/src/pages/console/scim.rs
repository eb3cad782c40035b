//! The console's "Directory (SCIM)" panel, for the tenant's admins: where
//! the identity provider's SCIM client provisions the tenant's people and
//! groups (`<origin>/scim/v2`), the tokens it does so with (issued, shown
//! once; listed; revoked). The panel is hidden from anyone the tokens'
//! read refuses (403).

use lattice_wire::{Posted, ScimTokenCreated, ScimTokenView};
use leptos::prelude::*;

use super::keys::{CopyField, when};
use crate::components::confirm;
use crate::components::time::time;
use crate::data::api_client;
use crate::data::request::Failure;

#[component]
pub(super) fn ScimTokens() -> impl IntoView {
    let listed = RwSignal::new(None::<Result<Vec<ScimTokenView>, String>>);
    let refused = RwSignal::new(false);
    let made = RwSignal::new(None::<String>);
    let said = RwSignal::new(None::<String>);
    let load = move || {
        leptos::task::spawn_local(async move {
            match api_client::get::<Vec<ScimTokenView>>("/v1/scim-tokens").await {
                Ok(list) => listed.set(Some(Ok(list))),
                Err(Failure::Refused { status: 403, .. }) => refused.set(true),
                Err(e) => listed.set(Some(Err(e.message()))),
            }
        });
    };
    load();
    let reload = Callback::new(move |()| load());
    let issue = move |_| {
        leptos::task::spawn_local(async move {
            match api_client::post::<ScimTokenCreated>("/v1/scim-tokens", &serde_json::Value::Null).await {
                Ok(created) => {
                    said.set(None);
                    made.set(Some(created.token));
                }
                Err(e) => said.set(Some(e.message())),
            }
            reload.run(());
        });
    };
    let base = web_sys::window().and_then(|w| w.location().origin().ok()).unwrap_or_default() + "/scim/v2";
    view! {
        <Show when=move || !refused.get() && listed.with(Option::is_some)>
            <section aria-labelledby="scim-title">
                <h2 id="scim-title">"Directory (SCIM)"</h2>
                <p>"Your identity provider's SCIM client keeps the tenant's people and groups here: give it this base URL and a token. Revoking a token refuses the client's next request."</p>
                <CopyField id="scim-base" label="SCIM base URL" value=base.clone()/>
                <div class="form-actions">
                    <button type="button" class="primary" on:click=issue>"Issue a token"</button>
                </div>
                {move || made.get().map(|token| view! {
                    <p role="status">"A token was issued."</p>
                    <CopyField id="new-scim-token" label="New SCIM token" value=token once=true/>
                })}
                {move || match listed.get() {
                    Some(Err(e)) => view! { <p class="refusal" role="alert">{e}</p> }.into_any(),
                    Some(Ok(list)) if list.is_empty() => view! { <p>"No token has been issued yet."</p> }.into_any(),
                    Some(Ok(list)) => view! { <TokenList tokens=list said reload/> }.into_any(),
                    None => ().into_any(),
                }}
                {move || said.get().map(|s| view! { <p class="said" role="status">{s}</p> })}
            </section>
        </Show>
    }
}

#[component]
fn TokenList(tokens: Vec<ScimTokenView>, said: RwSignal<Option<String>>, reload: Callback<()>) -> impl IntoView {
    view! {
        <div class="table-scroll" role="region" aria-label="The SCIM tokens" tabindex="0">
        <table class="keys">
            <caption>"SCIM tokens"</caption>
            <thead><tr>
                <th scope="col">"Token"</th><th scope="col">"Issued by"</th><th scope="col">"Issued"</th>
                <th scope="col">"Last used"</th><th scope="col">"Revoked"</th>
            </tr></thead>
            <tbody>
                {tokens.into_iter().map(|t| {
                    let revoked = match t.revoked_at {
                        Some(at) => time(at).into_any(),
                        None => {
                            let id = t.id.clone();
                            let revoke = move |_| {
                                let id = id.clone();
                                leptos::task::spawn_local(async move {
                                    let lead = "The SCIM client that uses it is refused from its next request on. This cannot be undone.";
                                    if !confirm::ask("Revoke this SCIM token?", lead, &id, "Revoke").await {
                                        return;
                                    }
                                    match api_client::delete::<Posted>(&format!("/v1/scim-tokens/{}", api_client::query(&id))).await {
                                        Ok(_) => said.set(Some(format!("The token {id} is revoked."))),
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
                            <th scope="row">{t.id}</th>
                            <td>{t.created_by}</td>
                            <td>{time(t.created_at)}</td>
                            <td>{when(t.last_used_at, "never")}</td>
                            <td>{revoked}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
        </div>
    }
}

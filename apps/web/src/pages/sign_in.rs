//! Dev sign-in (embedded and local profiles): a tenant and a user name
//! mint a token. Elsewhere a sign-in link (`/#token=…`) is the way in.

use lattice_wire::{DevTokenRequest, TokenResponse};
use leptos::prelude::*;

use crate::components::chunks::when_loaded;
use crate::data::request::Failure;
use crate::data::session::Session;
use crate::data::token;

/// The sign-in form: a chunk of its own, fetched when the page has no one
/// signed in (a signed-in first load does without it).
#[component]
pub fn SignIn() -> impl IntoView {
    when_loaded("the sign-in", sign_in_view())
}

#[lazy]
fn sign_in_view() -> AnyView {
    view! { <DevSignIn/> }.into_any()
}

#[component]
fn DevSignIn() -> impl IntoView {
    let session = expect_context::<Session>();
    let tenant = RwSignal::new("demo".to_owned());
    let user = RwSignal::new("demo".to_owned());
    let role = RwSignal::new("tenant_admin".to_owned());
    let message = RwSignal::new(String::new());
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let body = DevTokenRequest { tenant: tenant.get_untracked(), user: user.get_untracked(), role: Some(role.get_untracked()), agent: false };
        leptos::task::spawn_local(async move {
            match crate::data::api_client::post::<TokenResponse>("/v1/dev/token", &body).await {
                Ok(t) => {
                    token::keep(&t.token);
                    session.landing.set(true);
                    session.refresh();
                }
                Err(Failure::Refused { status: 404, .. }) => {
                    message.set("Dev sign-in is off in this deployment. Open the sign-in link your operator gave you.".into())
                }
                Err(e) => message.set(e.message()),
            }
        });
    };
    view! {
        <section class="sign-in" aria-labelledby="sign-in-title">
            <h1 id="sign-in-title">"Sign in"</h1>
            <p>"Development sign-in: choose a tenant and a user name."</p>
            <form on:submit=submit>
                <div class="field">
                    <label for="tenant">"Tenant"</label>
                    <input id="tenant" autocomplete="organization" prop:value=move || tenant.get() on:input=move |ev| tenant.set(event_target_value(&ev))/>
                </div>
                <div class="field">
                    <label for="user">"User"</label>
                    <input id="user" autocomplete="username" prop:value=move || user.get() on:input=move |ev| user.set(event_target_value(&ev))/>
                </div>
                <div class="field">
                    <label for="role">"Role"</label>
                    <select id="role" on:change=move |ev| role.set(event_target_value(&ev))>
                        <option value="member" selected=move || role.get() == "member">"Member"</option>
                        <option value="tenant_admin" selected=move || role.get() == "tenant_admin">"Tenant admin"</option>
                        <option value="deployment_admin" selected=move || role.get() == "deployment_admin">"Deployment admin"</option>
                    </select>
                </div>
                <button type="submit" class="primary">"Sign in"</button>
                <p class="form-errors" role="alert">{move || message.get()}</p>
            </form>
        </section>
    }
}

//! Signing in: a button for each identity provider the deployment trusts
//! (`GET /v1/auth/providers`), which begins a sign-in there
//! ([`crate::data::sign_in::begin`]), and the dev sign-in (a tenant and a
//! user name mint a token) where the deployment takes it (the embedded and
//! local profiles, as `/config.json`'s `link_sign_in` says). Why the last
//! sign-in did not finish, if it did not, is said first.

use lattice_wire::{AuthProvider, DevTokenRequest, TokenResponse};
use leptos::prelude::*;

use crate::components::chunks::when_loaded;
use crate::data::request::Failure;
use crate::data::session::Session;
use crate::data::{api_client, page_config, sign_in, token};

/// The sign-in page: a chunk of its own, fetched when the page has no one
/// signed in (a signed-in first load does without it).
#[component]
pub fn SignIn() -> impl IntoView {
    when_loaded("the sign-in", sign_in_view())
}

#[lazy]
fn sign_in_view() -> AnyView {
    view! { <SignInPage/> }.into_any()
}

/// The ways in this deployment offers.
#[derive(Clone)]
struct Ways {
    providers: Vec<AuthProvider>,
    /// Why the providers could not be read, if they could not.
    unread: Option<String>,
    dev: bool,
}

#[component]
fn SignInPage() -> impl IntoView {
    let ways = RwSignal::new(None::<Ways>);
    leptos::task::spawn_local(async move {
        let (providers, unread) = match api_client::get::<Vec<AuthProvider>>("/v1/auth/providers").await {
            Ok(list) => (list, None),
            Err(e) => (Vec::new(), Some(e.message())),
        };
        let dev = page_config::config().await.is_some_and(|c| c.link_sign_in);
        ways.set(Some(Ways { providers, unread, dev }));
    });
    let refusal = sign_in::take_refusal().map(|why| format!("The sign-in did not finish: {why}"));
    view! {
        <section class="sign-in" aria-labelledby="sign-in-title">
            <h1 id="sign-in-title">"Sign in"</h1>
            {refusal.map(|said| view! { <p class="refusal" role="alert">{said}</p> })}
            {move || match ways.get() {
                None => view! { <p class="loading">"Loading the ways to sign in…"</p> }.into_any(),
                Some(ways) => view! { <WaysIn ways/> }.into_any(),
            }}
        </section>
    }
}

#[component]
fn WaysIn(ways: Ways) -> impl IntoView {
    let Ways { providers, unread, dev } = ways;
    let unread = unread.map(|why| view! { <p class="refusal" role="alert">{format!("The ways to sign in could not be read: {why}")}</p> });
    if providers.is_empty() && !dev {
        let none = unread.is_none().then(|| view! { <p>"No sign-in is configured for this deployment. Ask your operator how to sign in."</p> });
        return view! { {unread} {none} }.into_any();
    }
    let with_providers = !providers.is_empty();
    let buttons = with_providers.then(|| view! { <Providers providers/> });
    let dev = dev.then(|| {
        if with_providers {
            view! {
                <section class="dev-sign-in" aria-labelledby="dev-sign-in-title">
                    <h2 id="dev-sign-in-title">"Development sign-in"</h2>
                    <p>"Choose a tenant and a user name."</p>
                    <DevSignIn/>
                </section>
            }
            .into_any()
        } else {
            view! {
                <p>"Development sign-in: choose a tenant and a user name."</p>
                <DevSignIn/>
            }
            .into_any()
        }
    });
    view! { {unread} {buttons} {dev} }.into_any()
}

/// One button a provider; a press goes to the provider (the page leaves).
#[component]
fn Providers(providers: Vec<AuthProvider>) -> impl IntoView {
    let failed = RwSignal::new(String::new());
    view! {
        <ul class="providers">
            {providers.into_iter().map(|p| {
                let start = p.start;
                let go = move |_| {
                    let start = start.clone();
                    leptos::task::spawn_local(async move {
                        if let Err(why) = sign_in::begin(&start).await {
                            failed.set(format!("The sign-in could not begin: {why}"));
                        }
                    });
                };
                view! { <li><button type="button" class="primary" on:click=go>"Sign in with " {p.title}</button></li> }
            }).collect_view()}
        </ul>
        <p class="form-errors" role="alert">{move || failed.get()}</p>
    }
}

/// Dev sign-in (embedded and local profiles): a tenant and a user name
/// mint a token.
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
            match api_client::post::<TokenResponse>("/v1/dev/token", &body).await {
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
    }
}

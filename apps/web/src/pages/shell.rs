//! The shell: the header (navigation, scheme, colour-blind mode, who is
//! signed in and a link to their connected accounts) and the routes of the
//! chat host (CONTRACT "The chat host").

use leptos::prelude::*;
use leptos_router::components::{A, Route, Router, Routes};
use leptos_router::path;

use super::connections::ConnectionsPage;
use super::console::page::LazyConsole;
use super::home::Home;
use super::side::SideList;
use super::sign_in::SignIn;
use super::thread::page::ThreadPage;
use super::waiting::WaitingPage;
use super::workspace::WorkspacePage;
use crate::data::session::{self, Session};
use crate::data::theme::Theme;
use crate::data::waiting::Waiting;

#[component]
pub fn App() -> impl IntoView {
    let session = Session::new();
    let theme = Theme::new();
    provide_context(session);
    provide_context(theme);
    provide_context(Waiting::default());
    view! {
        <Router>
            <a class="skip" href="#main">"Skip to content"</a>
            <Header/>
            <div class="layout">
                <Show when=move || session.signed_in.get()>
                    <SideList/>
                </Show>
                <main id="main" tabindex="-1">
                    <Show when=move || session.signed_in.get() fallback=|| view! { <SignIn/> }>
                        <Routes fallback=|| view! { <h1>"Not found"</h1><p>"There is nothing at this address."</p> }>
                            <Route path=path!("/") view=Home/>
                            <Route path=path!("/w/:ws") view=WorkspacePage/>
                            <Route path=path!("/t/:thread") view=ThreadPage/>
                            <Route path=path!("/waiting") view=WaitingPage/>
                            <Route path=path!("/admin") view=LazyConsole/>
                            <Route path=path!("/settings/connections") view=ConnectionsPage/>
                        </Routes>
                    </Show>
                </main>
            </div>
        </Router>
    }
}

#[component]
fn Header() -> impl IntoView {
    let session = expect_context::<Session>();
    let theme = expect_context::<Theme>();
    let signed_in = move || session.signed_in.get();
    view! {
        <header class="top">
            <nav aria-label="Main">
                <A href="/" attr:class="brand">"lattice"</A>
                <Show when=signed_in>
                    <A href="/">"Workspaces"</A>
                    <A href="/admin">"Admin console"</A>
                </Show>
            </nav>
            <div class="prefs">
                <label for="scheme">"Scheme"</label>
                <select id="scheme" on:change=move |ev| theme.scheme.set(event_target_value(&ev))>
                    <option value="system" selected=move || theme.scheme.get() == "system">"System"</option>
                    <option value="light" selected=move || theme.scheme.get() == "light">"Light"</option>
                    <option value="dark" selected=move || theme.scheme.get() == "dark">"Dark"</option>
                </select>
                <input type="checkbox" id="cvd" prop:checked=move || theme.cvd.get()
                    on:change=move |ev| theme.cvd.set(event_target_checked(&ev))/>
                <label for="cvd">"Colour-blind mode"</label>
                <Show when=signed_in>
                    <span class="who">{move || session.me.get().map(|m| format!("{} ({})", m.user, m.tenant))}</span>
                    // The person's own settings, beside who they are.
                    <A href="/settings/connections">"Connected accounts"</A>
                    <button type="button" on:click=|_| leptos::task::spawn_local(session::sign_out())>"Sign out"</button>
                </Show>
            </div>
        </header>
    }
}

//! The chat host and the admin console (REQUIREMENTS.md W1–W3, W7, W8): a Leptos
//! client-side app. It talks only to `/v1` of its own origin, with the
//! bearer token it keeps in `localStorage`; forms are validated here with the
//! same `lattice-ui` code the server runs, and the server's verdict counts.
//!
//! Three layers, each a folder; a module names only its own layer and the
//! ones below (`cargo xtask circles` keeps the files free of import circles):
//!
//! - [`data`], data and transport: the `/v1` client and the requests under
//!   it, the reads started before the page is built, the live streams, the
//!   session, the page's configuration and preferences kept in this browser,
//!   and what is read from the wire (a thread folded for showing, the host
//!   context an app is told). It names no component and no page.
//! - [`components`], the reusable views and what runs behind them: forms,
//!   dashboards and charts, the mini apps' frame and its host, the host's
//!   confirmation dialog, the chunks loaded later. They name no page.
//! - [`pages`]: the shell (header and routes) and one module a route.
//!
//! This file wires them: where a module needs what one above it holds, it
//! is handed down from here (to the `/v1` client, the session's forgetting
//! of a refused token; to the session, the dialog a sign-in link's question
//! is asked in).

mod components;
mod data;
mod pages;

use data::token::Arrived;
use wasm_bindgen::prelude::wasm_bindgen;

#[wasm_bindgen(start)]
pub fn start() {
    // A token the server refuses (401) is forgotten by the session.
    data::api_client::on_unauthorized(data::session::forget);
    let arrived = data::token::take_from_url();
    data::theme::apply_saved();
    // Before anything is mounted, so the page starts as whoever it ends up
    // signed in as; on wasm-bindgen's executor.
    match arrived {
        None => mount(),
        Some(Arrived::Link(token)) => wasm_bindgen_futures::spawn_local(async move {
            data::session::sign_in_with_link(token, components::confirm::ask).await;
            mount();
        }),
        Some(Arrived::SignIn(code)) => wasm_bindgen_futures::spawn_local(async move {
            data::sign_in::finish(code).await;
            mount();
        }),
        Some(Arrived::SignInError(reason)) => {
            data::sign_in::refused(reason);
            mount();
        }
    }
}

/// How long a read started before the page waits for the page to take it.
const EARLY_READS_KEPT: std::time::Duration = std::time::Duration::from_secs(15);

fn mount() {
    data::early_reads::start();
    // A sign-in session's token is renewed while the person is active.
    if data::token::token().is_some() {
        data::renewal::start();
    }
    leptos::mount::mount_to_body(pages::shell::App);
    leptos::prelude::set_timeout(data::early_reads::abandon_untaken, EARLY_READS_KEPT);
}

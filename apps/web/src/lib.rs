//! The chat host and the admin console (REQUIREMENTS.md W1–W3, W7, W8): a Leptos
//! client-side app. It talks only to `/v1` of its own origin, with the
//! bearer token it keeps in `localStorage`; forms are validated here with the
//! same `lattice-ui` code the server runs, and the server's verdict counts.

mod components;
mod data;
mod pages;

use wasm_bindgen::prelude::wasm_bindgen;

#[wasm_bindgen(start)]
pub fn start() {
    // A token the server refuses is forgotten, and the sign-in page shows.
    data::api_client::on_unauthorized(data::session::forget);
    let link = data::token::take_token_from_url();
    data::theme::apply_saved();
    match link {
        None => mount(),
        // Before anything is mounted, so on wasm-bindgen's executor.
        Some(token) => wasm_bindgen_futures::spawn_local(async move {
            data::session::sign_in_with_link(token, components::confirm::ask).await;
            mount();
        }),
    }
}

/// How long a read started before the page waits for the page to take it.
const EARLY_READS_KEPT: std::time::Duration = std::time::Duration::from_secs(15);

fn mount() {
    data::early_reads::start();
    leptos::mount::mount_to_body(pages::shell::App);
    leptos::prelude::set_timeout(data::early_reads::abandon_untaken, EARLY_READS_KEPT);
}

//! The signed-in viewer, as the views follow it: whether a token is kept
//! ([`crate::data::token`]) and who `/v1/me` says the viewer is; a sign-in
//! link taken or refused; signing out.

use leptos::prelude::*;

use crate::data::{api_client, page_config, token};

/// Forgets the token, and tells the views of the session in context
/// (the sign-in page shows).
pub fn forget() {
    token::remove();
    if let Some(session) = use_context::<Session>() {
        session.me.set(None);
        session.signed_in.set(false);
    }
}

/// A sign-in link's token: kept only where the deployment takes sign-in
/// links (the embedded and local profiles), and never in place of a
/// signed-in session without the person saying so. Decided before the page
/// mounts, so the page starts as whoever it ends up signed in as.
/// `confirm` asks the person (title, lead, what is shown, the button's
/// words): the crate root passes the host's dialog.
pub async fn sign_in_with_link(token: String, confirm: impl AsyncFnOnce(&str, &str, &str, &str) -> bool) {
    let takes_links = page_config::config().await.is_some_and(|c| c.link_sign_in);
    if !takes_links {
        web_sys::console::warn_1(&"sign-in links are off in this deployment: the link was ignored".into());
        return;
    }
    let current = token::token();
    if current.as_deref().is_some_and(|c| c != token) {
        let (new, now) = (who_in(&token), current.as_deref().map(who_in).unwrap_or_default());
        let switch = confirm("Sign in as someone else?", &format!("You are signed in as {now}. This link signs in as:"), &new, "Switch").await;
        if !switch {
            return;
        }
    } else if current.is_some() {
        return;
    }
    token::keep(&token);
}

/// "user (tenant)", as a token's claims say (unverified: for showing only).
fn who_in(token: &str) -> String {
    let claims = token.split('.').nth(1).and_then(|payload| {
        let b64 = payload.replace('-', "+").replace('_', "/");
        let padded = format!("{b64}{}", "=".repeat((4 - b64.len() % 4) % 4));
        web_sys::window()?.atob(&padded).ok()
    });
    let claims: serde_json::Value = claims.and_then(|c| lattice_core::json::from_str(&c).ok()).unwrap_or_default();
    format!("{} ({})", claims["sub"].as_str().unwrap_or("someone"), claims["tenant"].as_str().unwrap_or("an unknown tenant"))
}

/// Who the token says the viewer is.
pub use lattice_wire::Me;

/// The signed-in viewer, shared with every view.
#[derive(Clone, Copy)]
pub struct Session {
    /// Who `/v1/me` says the viewer is, once it has answered.
    pub me: RwSignal<Option<Me>>,
    /// Whether a token is kept. The pages show at once, their reads beside
    /// `/v1/me` rather than after it; a token the server refuses (401 to
    /// any request) is forgotten, and the sign-in page shows.
    pub signed_in: RwSignal<bool>,
    /// Whether the viewer has just arrived (opened the chat, or signed in)
    /// and not moved on yet: where someone lands can depend on who they are.
    pub landing: RwSignal<bool>,
}

impl Session {
    pub fn new() -> Self {
        let session = Self { me: RwSignal::new(None), signed_in: RwSignal::new(false), landing: RwSignal::new(true) };
        session.refresh();
        session
    }

    pub fn refresh(self) {
        self.signed_in.set(token::token().is_some());
        if token::token().is_none() {
            return;
        }
        leptos::task::spawn_local(async move {
            if let Ok(me) = api_client::get::<Me>("/v1/me").await {
                self.me.set(Some(me));
            }
        });
    }
}

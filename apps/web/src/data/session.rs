//! The signed-in viewer, as the views follow it: whether a token is kept
//! ([`crate::data::token`]) and who `/v1/me` says the viewer is; a sign-in
//! link taken or refused; signing out.

use std::cell::Cell;

use leptos::prelude::*;

use crate::data::{api_client, page_config, token};

thread_local! {
    /// The page's session, for what forgets the token outside any view (a
    /// 401 answered to a task, where no reactive owner is current).
    static SHOWN: Cell<Option<Session>> = const { Cell::new(None) };
}

/// Forgets the token, and tells the views of the session (the sign-in page
/// shows).
pub fn forget() {
    token::remove();
    if let Some(session) = SHOWN.get() {
        session.me.set(None);
        session.signed_in.set(false);
    }
}

/// Signs out. A sign-in session's token (one naming a `sid`) ends its
/// session on the server first (`POST /v1/auth/sign-out`: its tokens are
/// refused and its streams end), and the browser then goes to the
/// provider's end-session address when the server names one, so the
/// provider's session ends too (RP-initiated logout). Any other token (a
/// dev sign-in's, an operator's) is forgotten here only. The answer, a
/// `lattice_wire::SignedOut`, is read as a JSON value (see
/// `sign_in::finish`).
pub async fn sign_out() {
    let at_provider = match token::token() {
        Some(t) if token::claims(&t)["sid"].is_string() => api_client::post::<serde_json::Value>("/v1/auth/sign-out", &serde_json::Value::Null)
            .await
            .ok()
            .and_then(|s| s["end_session_url"].as_str().map(str::to_owned)),
        _ => None,
    };
    forget();
    // An address of the web, never a `javascript:` one.
    if let Some(url) = at_provider.filter(|u| u.starts_with("https://") || u.starts_with("http://"))
        && let Some(window) = web_sys::window()
    {
        let _ = window.location().assign(&url);
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
    let claims = token::claims(token);
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
        SHOWN.set(Some(session));
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

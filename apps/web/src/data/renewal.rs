//! Keeps a person who is active signed in. A sign-in session's token (one
//! that names a `sid`) lasts minutes: while the person uses the page, it is
//! renewed (`POST /v1/auth/renew`) once less than half of its life is left;
//! a person who has done nothing since the last renewal (no pointer, key,
//! wheel, scroll or focus) is let go, and the first request after it
//! expires answers 401, which forgets it and shows the sign-in page. Dev
//! sign-ins' and operators' tokens are not renewed.
//!
//! The token is read from storage at each look, so every tab of the chat
//! renews the one token they share, and a tab that finds it renewed by
//! another waits for the new one's half-life.

use std::cell::Cell;
use std::time::Duration;

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::Closure;

use crate::data::{api_client, token};

/// How often the token's age is looked at: a token lasts a minute at
/// least, so a renewal comes before 60% of its life.
const LOOK_EVERY: Duration = Duration::from_secs(5);

/// What the person does that counts as being there (heard on the window,
/// in the capture phase, so a list's own scroll and a field's focus count).
const ACTIVITY: [&str; 6] = ["pointerdown", "pointermove", "keydown", "wheel", "scroll", "focus"];

thread_local! {
    static STARTED: Cell<bool> = const { Cell::new(false) };
    /// Whether the person did anything since the last renewal.
    static ACTIVE: Cell<bool> = const { Cell::new(false) };
    static RENEWING: Cell<bool> = const { Cell::new(false) };
}

/// Starts listening and looking (once; later calls do nothing). Called
/// when the page mounts signed in: a sign-in session's token arrives only
/// with a page load (`/#signin=`).
pub fn start() {
    if STARTED.replace(true) {
        return;
    }
    let Some(window) = web_sys::window() else { return };
    let noted = Closure::<dyn Fn()>::new(|| ACTIVE.set(true));
    let options = web_sys::AddEventListenerOptions::new();
    options.set_passive(true);
    options.set_capture(true);
    for name in ACTIVITY {
        let _ = window.add_event_listener_with_callback_and_add_event_listener_options(name, noted.as_ref().unchecked_ref(), &options);
    }
    // Heard for as long as the page lives.
    noted.forget();
    leptos::prelude::set_interval(look, LOOK_EVERY);
}

/// Renews the kept token if it is a sign-in session's, past half its life,
/// not expired, and the person was active since the last renewal.
fn look() {
    let Some(current) = token::token() else { return };
    let claims = token::claims(&current);
    let (true, Some(issued), Some(expires)) = (claims["sid"].is_string(), claims["iat"].as_i64(), claims["exp"].as_i64()) else { return };
    let now = (js_sys::Date::now() / 1000.0) as i64;
    if now < issued + (expires - issued) / 2 || now >= expires || !ACTIVE.get() || RENEWING.replace(true) {
        return;
    }
    ACTIVE.set(false);
    leptos::task::spawn_local(async move {
        // A 401 (the session ended or was signed out) has the client forget
        // the token, as every refused request does. The answer is a
        // `lattice_wire::SessionTokenView`, read as a JSON value (see
        // `sign_in::finish`).
        match api_client::post::<serde_json::Value>("/v1/auth/renew", &serde_json::Value::Null).await {
            // Unless the person signed out or in as someone else meanwhile.
            Ok(renewed) if token::token().as_deref() == Some(current.as_str()) => {
                if let Some(renewed) = renewed["token"].as_str() {
                    token::keep(renewed);
                }
            }
            Ok(_) => {}
            // Tried again at the next look.
            Err(_) => ACTIVE.set(true),
        }
        RENEWING.set(false);
    });
}

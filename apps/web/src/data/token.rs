//! The session token (REQUIREMENTS.md T4): in `localStorage` of this origin only, never
//! a cookie. What arrives in the address is taken from it before the page
//! mounts: `/#token=<jwt>` (a sign-in link), `/#signin=<code>` and
//! `/#signin_error=<reason>` (the end of a sign-in at the company's
//! identity provider).

const KEY: &str = "lattice.token";

pub fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok()?
}

pub fn token() -> Option<String> {
    storage()?.get_item(KEY).ok()?.filter(|t| !t.is_empty())
}

pub fn keep(token: &str) {
    if let Some(s) = storage() {
        let _ = s.set_item(KEY, token);
    }
}

/// Drops the kept token; [`crate::data::session::forget`] also tells the
/// views.
pub fn remove() {
    if let Some(s) = storage() {
        let _ = s.remove_item(KEY);
    }
}

/// What a token says of itself (its payload, unverified: for showing, and
/// for knowing when to renew it; the server decides). `Null` for a text
/// that is no JWT.
pub fn claims(token: &str) -> serde_json::Value {
    let payload = token.split('.').nth(1).and_then(|payload| {
        let b64 = payload.replace('-', "+").replace('_', "/");
        let padded = format!("{b64}{}", "=".repeat((4 - b64.len() % 4) % 4));
        web_sys::window()?.atob(&padded).ok()
    });
    payload.and_then(|c| lattice_core::json::from_str(&c).ok()).unwrap_or_default()
}

/// What the address brought, taken from it.
pub enum Arrived {
    /// `#token=`: a sign-in link's token, decided on by
    /// [`crate::data::session::sign_in_with_link`].
    Link(String),
    /// `#signin=`: the one-time code a provider's sign-in ended with,
    /// traded by [`crate::data::session::finish_sign_in`].
    SignIn(String),
    /// `#signin_error=`: why a provider's sign-in did not end signed in, in
    /// words (decoded), for the sign-in page.
    SignInError(String),
}

/// Takes `#token=…`, `#signin=…` or `#signin_error=…` from the address and
/// drops it from there at once, so it is not left in the history.
pub fn take_from_url() -> Option<Arrived> {
    let window = web_sys::window()?;
    let location = window.location();
    let hash = location.hash().unwrap_or_default();
    let arrived = if let Some(token) = hash.strip_prefix("#token=") {
        Arrived::Link(token.to_owned())
    } else if let Some(code) = hash.strip_prefix("#signin=") {
        Arrived::SignIn(code.to_owned())
    } else if let Some(reason) = hash.strip_prefix("#signin_error=") {
        // Form-encoded by the server: a space is a `+`.
        let reason = js_sys::decode_uri_component(&reason.replace('+', " ")).ok().and_then(|r| r.as_string());
        Arrived::SignInError(reason.unwrap_or_else(|| "the sign-in did not finish".to_owned()))
    } else {
        return None;
    };
    let path = location.pathname().unwrap_or_else(|_| "/".into());
    if let Ok(history) = window.history() {
        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&path));
    }
    Some(arrived)
}

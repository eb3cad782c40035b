//! The session token (REQUIREMENTS.md T4): in `localStorage` of this origin only, never
//! a cookie. `/#token=<jwt>` signs in with a token and leaves the URL.

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

/// Takes `#token=…` from the address and drops it from there at once, so
/// it is not left in the history; what to do with it is decided by
/// [`crate::data::session::sign_in_with_link`].
pub fn take_token_from_url() -> Option<String> {
    let window = web_sys::window()?;
    let location = window.location();
    let hash = location.hash().unwrap_or_default();
    let token = hash.strip_prefix("#token=")?.to_owned();
    let path = location.pathname().unwrap_or_else(|_| "/".into());
    if let Ok(history) = window.history() {
        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&path));
    }
    Some(token)
}

//! The session token (SPEC T4): in `localStorage` of this origin only, never
//! a cookie. `/#token=<jwt>` signs in with a token and leaves the URL.

use leptos::prelude::*;
use serde::Deserialize;

const KEY: &str = "lattice.token";

fn storage() -> Option<web_sys::Storage> {
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

pub fn forget() {
    if let Some(s) = storage() {
        let _ = s.remove_item(KEY);
    }
    if let Some(session) = use_context::<Session>() {
        session.me.set(None);
    }
}

/// Takes `#token=…` from the address, keeps it, and drops it from the
/// address so it is not left in the history.
pub fn take_token_from_url() {
    let Some(window) = web_sys::window() else { return };
    let location = window.location();
    let hash = location.hash().unwrap_or_default();
    if let Some(token) = hash.strip_prefix("#token=") {
        keep(token);
        let path = location.pathname().unwrap_or_else(|_| "/".into());
        if let Ok(history) = window.history() {
            let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&path));
        }
    }
}

/// Who the token says the viewer is.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Me {
    pub tenant: String,
    pub user: String,
    pub role: String,
}

/// The signed-in viewer, shared with every view.
#[derive(Clone, Copy)]
pub struct Session {
    pub me: RwSignal<Option<Me>>,
    /// Whether `/v1/me` has answered once (before that, nothing is shown).
    pub checked: RwSignal<bool>,
}

impl Session {
    pub fn new() -> Self {
        let session = Self { me: RwSignal::new(None), checked: RwSignal::new(false) };
        session.refresh();
        session
    }

    pub fn refresh(self) {
        leptos::task::spawn_local(async move {
            let me = if token().is_some() { crate::api::get::<Me>("/v1/me").await.ok() } else { None };
            self.me.set(me);
            self.checked.set(true);
        });
    }
}

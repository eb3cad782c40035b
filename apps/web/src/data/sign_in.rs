//! Signing in at the company's identity provider (docs/WEB.md "Signing
//! in"). The page that begins a sign-in makes a random secret, keeps it in
//! this tab's `sessionStorage` and sends only its digest to the provider's
//! `start` ([`begin`]); the server sends the browser back to
//! `/#signin=<one-time code>`, and the code and the secret are traded for
//! the session's token before the page mounts ([`finish`]), so only the tab
//! that began a sign-in ends it signed in. A sign-in that failed says why
//! on the sign-in page ([`take_refusal`]).

use std::cell::RefCell;

use serde_json::{Value, json};
use wasm_bindgen_futures::JsFuture;

use crate::data::{api_client, token};

/// Where this tab keeps the secret while it is away at the provider.
const BINDING: &str = "lattice.signin.binding";

const HEX: &[u8; 16] = b"0123456789abcdef";

thread_local! {
    static REFUSAL: RefCell<Option<String>> = const { RefCell::new(None) };
}

fn session_storage() -> Option<web_sys::Storage> {
    web_sys::window()?.session_storage().ok()?
}

/// Why the last sign-in did not end signed in, for the sign-in page to
/// say (once).
pub fn take_refusal() -> Option<String> {
    REFUSAL.with(|r| r.borrow_mut().take())
}

/// Notes why a sign-in failed (the provider's or the server's words).
pub fn refused(reason: String) {
    REFUSAL.with(|r| *r.borrow_mut() = Some(reason));
}

/// Sends the browser to a provider's `start` (a path of this origin) with
/// the digest of a new secret this tab keeps.
pub async fn begin(start: &str) -> Result<(), String> {
    let window = web_sys::window().ok_or("no window")?;
    // Only a path of this origin: the server's answer names no other place.
    if !start.starts_with('/') || start.starts_with("//") {
        return Err(format!("the sign-in's address is not one of this site: {start}"));
    }
    let crypto = window.crypto().map_err(|_| "this browser offers no cryptography")?;
    let mut bytes = [0u8; 32];
    crypto.get_random_values_with_u8_array(&mut bytes).map_err(|_| "this browser offers no random numbers")?;
    // base64url, as the server's own secrets are written.
    let latin1: String = bytes.iter().map(|&b| char::from(b)).collect();
    let secret = window.btoa(&latin1).map_err(|_| "base64")?.replace('+', "-").replace('/', "_").replace('=', "");
    let digest = crypto.subtle().digest_with_str_and_u8_array("SHA-256", secret.as_bytes()).map_err(|_| "this browser offers no SHA-256")?;
    let digest = JsFuture::from(digest).await.map_err(|_| "this browser offers no SHA-256")?;
    let hex: String =
        js_sys::Uint8Array::new(&digest).to_vec().iter().flat_map(|b| [HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]).map(char::from).collect();
    session_storage().and_then(|s| s.set_item(BINDING, &secret).ok()).ok_or("this browser keeps nothing for the tab (sessionStorage)")?;
    let join = if start.contains('?') { '&' } else { '?' };
    window.location().assign(&format!("{start}{join}binding={hex}")).map_err(|_| "the browser did not go to the sign-in".to_owned())
}

/// Trades the one-time code a sign-in came back with, and the secret this
/// tab kept when it began, for the session's token, and keeps the token.
/// A refusal is said on the sign-in page.
///
/// The request is `lattice_wire::RedeemSignIn` and the answer a
/// `SessionTokenView`, written and read as JSON values: this runs in the
/// first load, which carries a JSON value's reading already and no derived
/// code for these two.
pub async fn finish(code: String) {
    let storage = session_storage();
    let binding = storage.as_ref().and_then(|s| s.get_item(BINDING).ok().flatten());
    if let Some(s) = &storage {
        let _ = s.remove_item(BINDING);
    }
    match api_client::post::<Value>("/v1/auth/session", &json!({"code": code, "binding": binding})).await {
        Ok(session) => token::keep(session["token"].as_str().unwrap_or_default()),
        // The server's reason as it says it, as after `#signin_error=`.
        Err(e) => refused(match e.error() {
            Some(lattice_core::Error::Unauthorized { reason, .. }) => reason.clone(),
            _ => e.message(),
        }),
    }
}

//! `/v1` over `fetch`, with the session's token ([`crate::data::request`]):
//! JSON in and out, the live streams' responses, and a refused token
//! forgotten.

use std::cell::Cell;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{RequestInit, Response};

use crate::data::early_reads;
use crate::data::request::{self, Failure, JSON, Result, js};
use crate::data::token;

thread_local! {
    /// What a refused token (401) does: the token is dropped, and the crate
    /// root has the session forget it (this module knows no session).
    static ON_UNAUTHORIZED: Cell<fn()> = const { Cell::new(token::remove as fn()) };
}

/// Runs `forget` on every 401 instead of only dropping the token.
pub fn on_unauthorized(forget: fn()) {
    ON_UNAUTHORIZED.set(forget);
}

// Each reading type's function only parses the text the shared,
// untyped request brought: a typed copy of the whole request (its state
// machine, its headers, its errors) was 1.2 to 1.9 KB of the first load a
// type.

pub async fn get<T: DeserializeOwned>(path: &str) -> Result<T> {
    parse(&text(open(path, JSON, None).await?).await?)
}

pub async fn post<T: DeserializeOwned>(path: &str, body: &impl Serialize) -> Result<T> {
    parse(&call("POST", path, serde_json::to_value(body).expect("a request serializes")).await?)
}

pub async fn put<T: DeserializeOwned>(path: &str, body: &impl Serialize) -> Result<T> {
    parse(&call("PUT", path, serde_json::to_value(body).expect("a request serializes")).await?)
}

pub async fn delete<T: DeserializeOwned>(path: &str) -> Result<T> {
    parse(&call("DELETE", path, Value::Null).await?)
}

/// A DELETE the server answers with no body (204): there is nothing to read.
pub async fn delete_no_content(path: &str) -> Result<()> {
    call("DELETE", path, Value::Null).await.map(drop)
}

/// A GET; the caller reads the response (the live streams). The same read
/// started before the page was built ([`crate::data::early_reads`]) is taken over.
pub async fn open(path: &str, accept: &str, signal: Option<&web_sys::AbortSignal>) -> Result<Response> {
    let response = match early_reads::take(path, accept, signal) {
        Some(started) => started,
        None => request::start(path, accept, signal)?,
    };
    answer(response).await
}

/// A request with a JSON body; the answer's text.
async fn call(method: &str, path: &str, body: Value) -> Result<String> {
    let headers = request::headers(JSON)?;
    headers.set("content-type", JSON).map_err(js)?;
    let init = RequestInit::new();
    init.set_method(method);
    init.set_body(&JsValue::from_str(&body.to_string()));
    init.set_headers(&headers);
    text(answer(request::send(path, &init)?).await?).await
}

/// A public file of the portal (`/config.json`): asked for with no token
/// and no headers, as the page's `<link rel="preload">` asked for it, so
/// the preloaded answer is the one read.
pub async fn public<T: DeserializeOwned>(path: &str) -> Result<T> {
    parse(&text(answer(request::send(path, &RequestInit::new())?).await?).await?)
}

/// A success's text; the server's refusal otherwise.
async fn text(response: Response) -> Result<String> {
    let text = JsFuture::from(response.text().map_err(js)?).await.map_err(js)?.as_string().unwrap_or_default();
    if response.ok() { Ok(text) } else { Err(request::refusal(response.status(), &text)) }
}

fn parse<T: DeserializeOwned>(text: &str) -> Result<T> {
    lattice_core::json::from_str(text).map_err(|e| Failure::Unreachable(format!("an unexpected answer: {e}")))
}

async fn answer(response: js_sys::Promise) -> Result<Response> {
    let response: Response = JsFuture::from(response).await.map_err(js)?.unchecked_into();
    if response.status() == 401 {
        // The token expired or was revoked: back to signing in.
        ON_UNAUTHORIZED.get()();
    }
    Ok(response)
}

/// Percent-encodes a query value.
pub fn query(value: &str) -> String {
    js_sys::encode_uri_component(value).as_string().unwrap_or_default()
}

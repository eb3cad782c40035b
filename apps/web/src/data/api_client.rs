//! `/v1` over `fetch`, with the session's bearer token. Refusals come back
//! as the server's typed error (REQUIREMENTS.md L8), so a view can put each one where
//! it belongs.

use lattice_core::Error;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{Headers, Request, RequestInit, Response};

use crate::data::session;

/// Why a call failed: the server's typed refusal, or no answer at all.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    Refused {
        status: u16,
        error: Error,
    },
    Unreachable(String),
    /// A live stream ended for good, in words for a person.
    Ended(String),
}

impl Failure {
    /// Words for a person.
    pub fn message(&self) -> String {
        match self {
            Self::Refused { error, .. } => error.to_string(),
            Self::Unreachable(why) => format!("The server can't be reached ({why}). Try again."),
            Self::Ended(why) => why.clone(),
        }
    }

    pub fn error(&self) -> Option<&Error> {
        match self {
            Self::Refused { error, .. } => Some(error),
            Self::Unreachable(_) | Self::Ended(_) => None,
        }
    }
}

pub type Result<T> = std::result::Result<T, Failure>;

/// The `accept` of the JSON reads and of the live streams.
pub const JSON: &str = "application/json";
pub const EVENT_STREAM: &str = "text/event-stream";

pub async fn get<T: DeserializeOwned>(path: &str) -> Result<T> {
    read(open(path, JSON, None).await?).await
}

pub async fn post<T: DeserializeOwned>(path: &str, body: &impl Serialize) -> Result<T> {
    call("POST", path, serde_json::to_value(body).expect("a request serializes")).await
}

pub async fn put<T: DeserializeOwned>(path: &str, body: &impl Serialize) -> Result<T> {
    call("PUT", path, serde_json::to_value(body).expect("a request serializes")).await
}

pub async fn delete<T: DeserializeOwned>(path: &str) -> Result<T> {
    call("DELETE", path, Value::Null).await
}

/// A GET; the caller reads the response (the live streams). The same read
/// started before the page was built ([`crate::data::early_reads`]) is taken over.
pub async fn open(path: &str, accept: &str, signal: Option<&web_sys::AbortSignal>) -> Result<Response> {
    let response = match crate::data::early_reads::take(path, accept, signal) {
        Some(started) => started,
        None => start(path, accept, signal)?,
    };
    answer(response).await
}

/// Sends a GET with the session's token; the promise of its response.
pub fn start(path: &str, accept: &str, signal: Option<&web_sys::AbortSignal>) -> Result<js_sys::Promise> {
    let init = RequestInit::new();
    init.set_method("GET");
    let headers = headers(accept)?;
    init.set_headers(&headers);
    if let Some(signal) = signal {
        init.set_signal(Some(signal));
    }
    send(path, &init)
}

async fn call<T: DeserializeOwned>(method: &str, path: &str, body: Value) -> Result<T> {
    let headers = headers(JSON)?;
    headers.set("content-type", JSON).map_err(js)?;
    let init = RequestInit::new();
    init.set_method(method);
    init.set_body(&JsValue::from_str(&body.to_string()));
    init.set_headers(&headers);
    read(answer(send(path, &init)?).await?).await
}

/// A public file of the portal (`/config.json`): asked for with no token
/// and no headers, as the page's `<link rel="preload">` asked for it, so
/// the preloaded answer is the one read.
pub async fn public<T: DeserializeOwned>(path: &str) -> Result<T> {
    read(answer(send(path, &RequestInit::new())?).await?).await
}

async fn read<T: DeserializeOwned>(response: Response) -> Result<T> {
    let text = JsFuture::from(response.text().map_err(js)?).await.map_err(js)?.as_string().unwrap_or_default();
    if response.ok() {
        lattice_core::json::from_str(&text).map_err(|e| Failure::Unreachable(format!("an unexpected answer: {e}")))
    } else {
        Err(refusal(response.status(), &text))
    }
}

fn headers(accept: &str) -> Result<Headers> {
    let headers = Headers::new().map_err(js)?;
    headers.set("accept", accept).map_err(js)?;
    if let Some(token) = session::token() {
        headers.set("authorization", &format!("Bearer {token}")).map_err(js)?;
    }
    Ok(headers)
}

fn send(path: &str, init: &RequestInit) -> Result<js_sys::Promise> {
    let request = Request::new_with_str_and_init(path, init).map_err(js)?;
    let window = web_sys::window().ok_or_else(|| Failure::Unreachable("no window".into()))?;
    Ok(window.fetch_with_request(&request))
}

async fn answer(response: js_sys::Promise) -> Result<Response> {
    let response: Response = JsFuture::from(response).await.map_err(js)?.unchecked_into();
    if response.status() == 401 {
        // The token expired or was revoked: back to signing in.
        session::forget();
    }
    Ok(response)
}

/// The body of a refusal: `{"error": {...}}`, or words when a proxy answered.
pub fn refusal(status: u16, text: &str) -> Failure {
    match lattice_core::json::from_str::<lattice_wire::ErrorBody>(text) {
        Ok(body) => Failure::Refused { status, error: body.error },
        Err(_) => Failure::Unreachable(format!("status {status}")),
    }
}

fn js(e: JsValue) -> Failure {
    Failure::Unreachable(
        e.as_string().or_else(|| js_sys::JSON::stringify(&e).ok().and_then(|s| s.as_string())).unwrap_or_else(|| "a network error".into()),
    )
}

/// Percent-encodes a query value.
pub fn query(value: &str) -> String {
    js_sys::encode_uri_component(value).as_string().unwrap_or_default()
}

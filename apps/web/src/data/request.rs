//! One request to this origin over `fetch`, with the session's token, and
//! why a request failed: the server's typed refusal (REQUIREMENTS.md L8),
//! so a view can put each one where it belongs, or no answer at all.

use lattice_core::Error;
use wasm_bindgen::JsValue;
use web_sys::{Headers, Request, RequestInit};

use crate::data::token;

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
    /// Words for a person, a refusal's with its stable code.
    pub fn message(&self) -> String {
        match self {
            Self::Refused { error, .. } => format!("{error} ({})", error.code()),
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

/// `accept`, and the session's token when there is one.
pub fn headers(accept: &str) -> Result<Headers> {
    let headers = Headers::new().map_err(js)?;
    headers.set("accept", accept).map_err(js)?;
    if let Some(token) = token::token() {
        headers.set("authorization", &format!("Bearer {token}")).map_err(js)?;
    }
    Ok(headers)
}

pub fn send(path: &str, init: &RequestInit) -> Result<js_sys::Promise> {
    let request = Request::new_with_str_and_init(path, init).map_err(js)?;
    let window = web_sys::window().ok_or_else(|| Failure::Unreachable("no window".into()))?;
    Ok(window.fetch_with_request(&request))
}

/// The body of a refusal: `{"error": {...}}`, or words when a proxy answered.
pub fn refusal(status: u16, text: &str) -> Failure {
    match lattice_core::json::from_str::<lattice_wire::ErrorBody>(text) {
        Ok(body) => Failure::Refused { status, error: body.error.error },
        Err(_) => Failure::Unreachable(format!("status {status}")),
    }
}

/// A failure of the browser's own (no network, a broken body), in its words.
pub fn js(e: JsValue) -> Failure {
    Failure::Unreachable(
        e.as_string().or_else(|| js_sys::JSON::stringify(&e).ok().and_then(|s| s.as_string())).unwrap_or_else(|| "a network error".into()),
    )
}

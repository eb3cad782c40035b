//! The reads a page at this address is sure to make first, started before
//! the page is built: they travel while the module builds it, instead of
//! after. [`crate::data::api_client`] hands a started read to the first caller asking
//! for the same path with the same `accept`; nothing else changes for it
//! (the same headers, the same handling of a refusal).

use std::cell::RefCell;

use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use web_sys::AbortController;

use crate::data::request::{self, EVENT_STREAM, JSON};
use crate::data::{paths, token};

struct Started {
    path: String,
    accept: &'static str,
    response: js_sys::Promise,
    abort: AbortController,
}

thread_local! {
    static STARTED: RefCell<Vec<Started>> = const { RefCell::new(Vec::new()) };
}

/// Starts the viewer's `/v1/me` and, on a thread's page, the thread's
/// record and its event stream from the start.
pub fn start() {
    if token::token().is_none() {
        return;
    }
    let path = web_sys::window().and_then(|w| w.location().pathname().ok()).unwrap_or_default();
    let mut reads = vec![("/v1/me".to_owned(), JSON)];
    if let Some(thread) = path.strip_prefix("/t/").filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')) {
        reads.push((paths::events_path(thread, None), EVENT_STREAM));
        reads.push((paths::record_path(thread), JSON));
    }
    for (path, accept) in reads {
        let Ok(abort) = AbortController::new() else { return };
        let Ok(response) = request::start(&path, accept, Some(&abort.signal())) else { return };
        STARTED.with(|s| s.borrow_mut().push(Started { path, accept, response, abort }));
    }
}

/// Aborts the reads no page took: a stream left open would hold one of the
/// browser's few connections to the origin for as long as the tab lives.
pub fn abandon_untaken() {
    for started in STARTED.with(|s| std::mem::take(&mut *s.borrow_mut())) {
        started.abort.abort();
    }
}

/// The started read of `path`, if there is one nobody took yet. An abort of
/// `signal` aborts it.
pub fn take(path: &str, accept: &str, signal: Option<&web_sys::AbortSignal>) -> Option<js_sys::Promise> {
    let started = STARTED.with(|s| {
        let mut s = s.borrow_mut();
        let at = s.iter().position(|r| r.path == path && r.accept == accept)?;
        Some(s.swap_remove(at))
    })?;
    if let Some(signal) = signal {
        let abort = started.abort;
        signal.set_onabort(Some(Closure::once_into_js(move || abort.abort()).unchecked_ref()));
    }
    Some(started.response)
}

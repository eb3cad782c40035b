//! Server-Sent Events over `fetch`, so the bearer token travels in a header
//! (an `EventSource` can't send one). A dropped stream reconnects from the
//! last event id it saw, so nothing is lost or repeated (REQUIREMENTS.md L7).

use std::cell::RefCell;
use std::collections::HashMap;

use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, ReadableStreamDefaultReader};

use crate::data::api_client;
use crate::data::request::{EVENT_STREAM, Failure, refusal};

/// The event a live stream ends with when its reader loses access.
const ACCESS_LOST: &str = "access_lost";

/// One server-sent event.
pub struct Event {
    pub id: Option<String>,
    pub name: String,
    pub data: String,
}

thread_local! {
    static OPEN: RefCell<HashMap<u64, AbortController>> = RefCell::new(HashMap::new());
    static NEXT: RefCell<u64> = const { RefCell::new(0) };
}

/// A stream that runs until closed. It is a plain number, so a view's
/// cleanup (which must be `Send`) can hold it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handle(u64);

impl Handle {
    pub fn close(self) {
        if let Some(c) = OPEN.with(|o| o.borrow_mut().remove(&self.0)) {
            c.abort();
        }
    }

    fn is_open(self) -> bool {
        OPEN.with(|o| o.borrow().contains_key(&self.0))
    }
}

/// Follows `url(after)` until closed: `on_event` gets every event; the
/// last id seen is where a reconnect resumes. `on_refused` hears that the
/// stream was refused for good (an error message).
pub fn follow(url: impl Fn(Option<&str>) -> String + 'static, on_event: impl Fn(Event) + 'static, on_refused: impl Fn(Failure) + 'static) -> Handle {
    follow_told(url, on_event, on_refused, |_| {})
}

/// As [`follow`]; `on_connected` hears each time the stream is connected
/// (true) or broke and is being tried again (false).
pub fn follow_told(
    url: impl Fn(Option<&str>) -> String + 'static,
    on_event: impl Fn(Event) + 'static,
    on_refused: impl Fn(Failure) + 'static,
    on_connected: impl Fn(bool) + 'static,
) -> Handle {
    let id = NEXT.with(|n| {
        let mut n = n.borrow_mut();
        *n += 1;
        *n
    });
    let handle = Handle(id);
    OPEN.with(|o| o.borrow_mut().insert(id, AbortController::new().expect("AbortController")));
    leptos::task::spawn_local(async move {
        let mut last_id: Option<String> = None;
        let mut backoff = 250;
        while handle.is_open() {
            let Some(signal) = OPEN.with(|o| o.borrow().get(&id).map(|c| c.signal())) else { break };
            match read(&url(last_id.as_deref()), &signal, &mut last_id, &on_event, &on_connected).await {
                Ok(()) => backoff = 250,
                Err(Some(refused)) => {
                    on_refused(refused);
                    handle.close();
                    break;
                }
                Err(None) => backoff = (backoff * 2).min(5000),
            }
            if handle.is_open() {
                on_connected(false);
                sleep(backoff).await;
                // A fresh controller: the old one may have been used up.
                OPEN.with(|o| {
                    if let Some(c) = o.borrow_mut().get_mut(&id) {
                        *c = AbortController::new().expect("AbortController");
                    }
                });
            }
        }
    });
    handle
}

/// Reads one connection to its end. `Err(Some)`: refused for good (4xx);
/// `Err(None)`: the connection broke and may be tried again.
async fn read(
    url: &str,
    signal: &web_sys::AbortSignal,
    last_id: &mut Option<String>,
    on_event: &impl Fn(Event),
    on_connected: &impl Fn(bool),
) -> Result<(), Option<Failure>> {
    let response = api_client::open(url, EVENT_STREAM, Some(signal)).await.map_err(|_| None)?;
    if !response.ok() {
        let status = response.status();
        let text = match response.text() {
            Ok(p) => JsFuture::from(p).await.ok().and_then(|t| t.as_string()).unwrap_or_default(),
            Err(_) => String::new(),
        };
        return Err(if (400..500).contains(&status) { Some(refusal(status, &text)) } else { None });
    }
    on_connected(true);
    let body = response.body().ok_or(None)?;
    let reader: ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    let mut buffer: Vec<u8> = Vec::new();
    loop {
        let chunk = JsFuture::from(reader.read()).await.map_err(|_| None)?;
        if js_sys::Reflect::get(&chunk, &JsValue::from_str("done")).ok().and_then(|d| d.as_bool()).unwrap_or(true) {
            return Ok(());
        }
        let value = js_sys::Reflect::get(&chunk, &JsValue::from_str("value")).map_err(|_| None)?;
        buffer.extend(js_sys::Uint8Array::new(&value).to_vec());
        for block in take_blocks(&mut buffer) {
            if let Some(event) = parse(&block) {
                // The reader lost the right to read this (removed, unlisted,
                // signed out): said once, and never reconnected.
                if event.name == ACCESS_LOST {
                    return Err(Some(Failure::Ended("You no longer have access to this thread".into())));
                }
                if event.id.is_some() {
                    last_id.clone_from(&event.id);
                }
                on_event(event);
            }
        }
    }
}

/// The event blocks whole in `buffer`, taken out of it; what is left is
/// the start of the next.
fn take_blocks(buffer: &mut Vec<u8>) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut start = 0;
    while let Some(end) = find_blank_line(&buffer[start..]) {
        blocks.push(String::from_utf8_lossy(&buffer[start..start + end + 2]).into_owned());
        start += end + 2;
    }
    buffer.drain(..start);
    blocks
}

fn find_blank_line(buffer: &[u8]) -> Option<usize> {
    buffer.windows(2).position(|w| w == b"\n\n")
}

/// One event block: `id:`, `event:` and `data:` lines; comments are
/// keep-alives.
fn parse(block: &str) -> Option<Event> {
    let mut event = Event { id: None, name: "message".into(), data: String::new() };
    let mut has_data = false;
    for line in block.lines() {
        let (field, value) = line.split_once(':').map_or((line, ""), |(f, v)| (f, v.strip_prefix(' ').unwrap_or(v)));
        match field {
            "id" => event.id = Some(value.to_owned()),
            "event" => event.name = value.to_owned(),
            "data" => {
                if has_data {
                    event.data.push('\n');
                }
                event.data.push_str(value);
                has_data = true;
            }
            _ => {}
        }
    }
    has_data.then_some(event)
}

pub async fn sleep(ms: i32) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(w) = web_sys::window() {
            let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms);
        }
    });
    let _ = JsFuture::from(promise).await;
}

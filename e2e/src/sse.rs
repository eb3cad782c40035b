//! Server-sent events as the suites read them: every stream a suite follows
//! is read by `eventsource-stream`, the one reader of lattice's Rust
//! clients (the model client reads its service's stream with it too), so
//! frames split across reads, multi-line data, comments and CRLF are read
//! as the spec says, and no suite cuts lines by hand.

use std::time::Duration;

use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use serde_json::Value;

pub use eventsource_stream::Event;

/// A response's events as they arrive; an error ends the stream's use.
pub type Events = BoxStream<'static, Result<Event, String>>;

/// The events of `response`'s body.
pub fn events(response: reqwest::Response) -> Events {
    response.bytes_stream().eventsource().map(|event| event.map_err(|e| e.to_string())).boxed()
}

/// The next event within `within`: `None` when the stream ended or failed,
/// a panic when it stayed silent.
pub async fn next(events: &mut Events, within: Duration) -> Option<Event> {
    match tokio::time::timeout(within, events.next()).await {
        Ok(Some(Ok(event))) => Some(event),
        Ok(Some(Err(_)) | None) => None,
        Err(_) => panic!("the stream said nothing for {within:?}"),
    }
}

/// Whether `event` is named `name` or its data holds `name`.
pub fn says(event: &Event, name: &str) -> bool {
    event.event == name || event.data.contains(name)
}

/// The JSON-RPC answer to an MCP POST (streamable HTTP): the body when it
/// is JSON, else the data of the first event of its stream that answers a
/// request (a result or an error with an id); `Null` when there is none.
pub async fn json_rpc_answer(response: reqwest::Response) -> Value {
    let streamed = response.headers().get("content-type").and_then(|v| v.to_str().ok()).is_some_and(|v| v.starts_with("text/event-stream"));
    if !streamed {
        return response.json().await.unwrap_or(Value::Null);
    }
    let mut events = events(response);
    while let Some(Ok(event)) = events.next().await {
        let Ok(message) = serde_json::from_str::<Value>(&event.data) else { continue };
        if message.get("id").is_some() && (message.get("result").is_some() || message.get("error").is_some()) {
            return message;
        }
    }
    Value::Null
}

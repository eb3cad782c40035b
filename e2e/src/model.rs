//! A local OpenAI-compatible chat-completions service for the suites (no
//! model is reachable from the tests): it answers from a queue of replies,
//! streamed as services stream them, and keeps every request it was sent.
//! With nothing queued it streams "ok".

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::response::{IntoResponse, Response};
use lattice_ui::asks::ASK_FORM;
use serde_json::{Value, json};

/// What the local model service answers next.
pub enum Reply {
    /// 429 with `Retry-After: 1`.
    Busy,
    /// A chat-completions stream: each chunk after `pause`.
    Stream { chunks: Vec<Value>, pause: Duration },
}

#[derive(Clone, Default)]
pub struct ModelService {
    replies: Arc<Mutex<VecDeque<Reply>>>,
    /// Every request body, in order.
    pub asked: Arc<Mutex<Vec<Value>>>,
}

impl ModelService {
    /// Serves on a free local port; answers the API root (`…/v1`).
    pub async fn start(self) -> String {
        let service = self.clone();
        let app = axum::Router::new().route(
            "/v1/chat/completions",
            axum::routing::post(move |axum::Json(body): axum::Json<Value>| {
                let service = service.clone();
                async move {
                    service.asked.lock().unwrap().push(body);
                    let next = service.replies.lock().unwrap().pop_front();
                    match next {
                        Some(Reply::Busy) => (
                            axum::http::StatusCode::TOO_MANY_REQUESTS,
                            [("retry-after", "1")],
                            axum::Json(json!({"error": {"message": "slow down"}})),
                        )
                            .into_response(),
                        Some(Reply::Stream { chunks, pause }) => stream(chunks, pause),
                        None => stream(vec![text("ok")], Duration::ZERO),
                    }
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        format!("http://{addr}/v1")
    }

    /// Queues what the next call is answered.
    pub fn then(&self, reply: Reply) {
        self.replies.lock().unwrap().push_back(reply);
    }
}

pub fn stream(chunks: Vec<Value>, pause: Duration) -> Response {
    let mut lines: Vec<String> = chunks.into_iter().map(|c| format!("data: {c}\n\n")).collect();
    lines.push("data: [DONE]\n\n".into());
    let body = futures_util::stream::unfold(lines.into_iter(), move |mut rest| async move {
        let line = rest.next()?;
        // A stub model's pace: chunks come apart, as over a network.
        tokio::time::sleep(pause).await;
        Some((Ok::<_, std::convert::Infallible>(line), rest))
    });
    Response::builder().header("content-type", "text/event-stream").body(axum::body::Body::from_stream(body)).unwrap()
}

pub fn text(piece: &str) -> Value {
    json!({"choices": [{"index": 0, "delta": {"content": piece}}]})
}

/// A piece of the arguments of an `ask_form` call (`call_form`).
pub fn arguments(first: bool, piece: &str) -> Value {
    tool_call("call_form", ASK_FORM, first, piece)
}

/// A piece of a tool call's arguments; the first piece names the call.
pub fn tool_call(id: &str, name: &str, first: bool, piece: &str) -> Value {
    let call = if first {
        json!({"index": 0, "id": id, "type": "function", "function": {"name": name, "arguments": piece}})
    } else {
        json!({"index": 0, "function": {"arguments": piece}})
    };
    json!({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]})
}

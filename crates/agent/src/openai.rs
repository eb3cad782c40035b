//! An OpenAI-compatible chat-completions client with tool calling (A6):
//! base URL, key and model from configuration. It streams: the reply's
//! text and each tool call's arguments are told as they arrive (server-sent
//! `chat.completion.chunk`s, read by `eventsource-stream`), and a service
//! that answers with one whole JSON body is read as well. A busy or failing
//! service (429, 5xx) is asked again by `backon`, after its `Retry-After` or
//! an exponential backoff with jitter, a few times before the run fails, as
//! long as nothing of the reply has been told yet.
//!
//! A reply the service stopped at the model's token limit (`finish_reason:
//! "length"`) is no whole reply: it comes back as [`ModelError::Cut`], with
//! the text that came, and a tool call cut in its arguments says so rather
//! than that they are not JSON. Tool calls keep the order the model made
//! them in (their `index` in a stream, their place in a whole body).

use std::time::Duration;

use backon::{ExponentialBuilder, Retryable};
use eventsource_stream::{EventStreamError, Eventsource};
use futures_util::StreamExt;
use lattice_core::ToolCall;
use serde_json::{Value, json};

use crate::model::{ChatMessage, Delta, Deltas, Model, ModelError, ModelReply, ModelRequest};

/// Tries after the first, by default.
const RETRIES: u32 = 4;
/// The first backoff; each later one doubles, up to [`LONGEST_WAIT`].
const FIRST_WAIT: Duration = Duration::from_millis(500);
/// The longest wait between two tries, a `Retry-After` included: a
/// service that asks for longer has failed this run.
const LONGEST_WAIT: Duration = Duration::from_secs(30);
/// The most a reply may hold (its text, its tool calls' arguments and the
/// stream's framing), counted as it arrives.
pub const MAX_REPLY_BYTES: usize = 1024 * 1024;
/// How often a tool call's arguments are made whole and told while they
/// arrive: often enough to watch, rarely enough that a long call is not
/// parsed again for every few characters.
const TOOL_INPUT_EVERY: Duration = Duration::from_millis(100);

#[derive(Clone)]
pub struct OpenAiModel {
    http: reqwest::Client,
    base_url: String,
    api_key: Option<String>,
    model: String,
    retries: u32,
    first_wait: Duration,
    /// The longest silence of the service: before its answer starts, and
    /// between two parts of a streamed answer.
    idle: Duration,
    /// The most tokens a reply may hold (`max_tokens`), if bounded here.
    max_tokens: Option<u32>,
}

impl OpenAiModel {
    /// `base_url` is the API root, e.g. `https://host/v1`; requests go to
    /// `{base_url}/chat/completions`.
    pub fn new(base_url: &str, api_key: Option<String>, model: &str, timeout: Duration) -> Result<Self, ModelError> {
        // TLS by rustls with ring; the system's roots (and SSL_CERT_FILE).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder().connect_timeout(timeout).build().map_err(|e| ModelError::Unreachable(e.to_string()))?;
        Ok(Self {
            http,
            base_url: base_url.trim_end_matches('/').to_owned(),
            api_key,
            model: model.to_owned(),
            retries: RETRIES,
            first_wait: FIRST_WAIT,
            idle: timeout,
            max_tokens: None,
        })
    }

    /// Asks for replies of at most `max_tokens` tokens: a longer one is cut
    /// by the service and comes back as [`ModelError::Cut`].
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Asks again `retries` times at most, the first wait `first_wait`.
    pub fn with_retries(mut self, retries: u32, first_wait: Duration) -> Self {
        self.retries = retries;
        self.first_wait = first_wait;
        self
    }

    /// One call: the reply, or the error with the service's `Retry-After`
    /// and whether anything of the reply was told already.
    async fn call(&self, body: &Value, deltas: &Deltas) -> Result<ModelReply, Failed> {
        let mut call = self.http.post(format!("{}/chat/completions", self.base_url)).json(body);
        if let Some(key) = &self.api_key {
            call = call.bearer_auth(key);
        }
        let quiet = |e: ModelError| Failed { error: e, retry_after: None, told: false };
        let failed = |e: reqwest::Error| if e.is_timeout() { ModelError::Timeout } else { ModelError::Unreachable(e.to_string()) };
        let mut response =
            tokio::time::timeout(self.idle, call.send()).await.map_err(|_| quiet(ModelError::Timeout))?.map_err(|e| quiet(failed(e)))?;
        let status = response.status();
        let retry_after = response.headers().get("retry-after").and_then(|v| v.to_str().ok()).and_then(retry_after);
        let streamed =
            response.headers().get(reqwest::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|v| v.starts_with("text/event-stream"));
        if !status.is_success() || !streamed {
            let text = self.read_whole(&mut response).await.map_err(quiet)?;
            if !status.is_success() {
                let message = serde_json::from_str::<Value>(&text)
                    .ok()
                    .and_then(|v| v.pointer("/error/message").and_then(Value::as_str).map(str::to_owned))
                    .unwrap_or_else(|| text.chars().take(200).collect());
                return Err(Failed { error: ModelError::Status { status: status.as_u16(), message }, retry_after, told: false });
            }
            return parse_reply(&text).map_err(quiet);
        }
        // The body as it arrives: each piece within the idle time, the
        // whole within the size limit; then read as server-sent events.
        let idle = self.idle;
        let pieces = futures_util::stream::try_unfold((response, 0), move |(mut response, total)| async move {
            let Some(piece) = tokio::time::timeout(idle, response.chunk()).await.map_err(|_| ModelError::Timeout)?.map_err(failed)? else {
                return Ok(None);
            };
            let total = total + piece.len();
            if total > MAX_REPLY_BYTES {
                return Err(too_long());
            }
            Ok(Some((piece, (response, total))))
        });
        let mut events = std::pin::pin!(pieces.eventsource());
        let mut reply = Streamed::default();
        while let Some(event) = events.next().await {
            let told_before = reply.told;
            let read = match event {
                Ok(event) => reply.data(&event.data, deltas),
                Err(EventStreamError::Transport(error)) => Err(error),
                Err(error) => Err(ModelError::Malformed(format!("the event stream is broken: {error}"))),
            };
            if let Err(error) = read {
                return Err(Failed { error, retry_after: None, told: told_before || reply.told });
            }
            if reply.done {
                break;
            }
        }
        reply.finish(deltas).map_err(|error| Failed { error, retry_after: None, told: true })
    }

    /// A whole body, refused past [`MAX_REPLY_BYTES`] as it arrives.
    async fn read_whole(&self, response: &mut reqwest::Response) -> Result<String, ModelError> {
        let mut bytes = Vec::new();
        loop {
            let chunk = tokio::time::timeout(self.idle, response.chunk()).await.map_err(|_| ModelError::Timeout)?;
            match chunk.map_err(|e| if e.is_timeout() { ModelError::Timeout } else { ModelError::Unreachable(e.to_string()) })? {
                Some(chunk) => {
                    bytes.extend_from_slice(&chunk);
                    if bytes.len() > MAX_REPLY_BYTES {
                        return Err(too_long());
                    }
                }
                None => return Ok(String::from_utf8_lossy(&bytes).into_owned()),
            }
        }
    }
}

/// A call that failed: why, what the service asked to wait, and whether
/// part of the reply was told (then asking again would tell it twice).
struct Failed {
    error: ModelError,
    retry_after: Option<Duration>,
    told: bool,
}

fn too_long() -> ModelError {
    ModelError::Malformed(format!("the reply is longer than {MAX_REPLY_BYTES} bytes"))
}

/// A streamed reply as it is put together.
#[derive(Default)]
struct Streamed {
    text: String,
    /// The tool calls by their `index`, in the model's order.
    calls: Vec<StreamedCall>,
    tokens: Option<u64>,
    /// Why the service says the reply ended (`stop`, `tool_calls`, `length`).
    finish_reason: Option<String>,
    done: bool,
    /// Whether a delta was told.
    told: bool,
}

#[derive(Default)]
struct StreamedCall {
    /// Its `index` in the stream: its place among the reply's calls.
    index: u64,
    id: String,
    name: String,
    arguments: String,
    /// When its arguments were last told, and what they were.
    told_at: Option<std::time::Instant>,
    told: Option<Value>,
}

impl Streamed {
    /// One event's data: a chunk, or `[DONE]`.
    fn data(&mut self, data: &str, deltas: &Deltas) -> Result<(), ModelError> {
        if data.trim() == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| ModelError::Malformed(format!("a streamed chunk is not JSON: {e}")))?;
        if let Some(error) = chunk.get("error") {
            let message = error.get("message").and_then(Value::as_str).unwrap_or("the stream failed").to_owned();
            return Err(ModelError::Status { status: 502, message });
        }
        if let Some(total) = chunk.pointer("/usage/total_tokens").and_then(Value::as_u64) {
            self.tokens = Some(total);
        }
        if let Some(reason) = chunk.pointer("/choices/0/finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_owned());
        }
        let Some(delta) = chunk.pointer("/choices/0/delta") else { return Ok(()) };
        if let Some(text) = delta.get("content").and_then(Value::as_str).filter(|t| !t.is_empty()) {
            self.text.push_str(text);
            self.told = true;
            deltas(Delta::Text(text.to_owned()));
        }
        for part in delta.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
            // The call's place is its index, whatever order the parts come in.
            let index = part.get("index").and_then(Value::as_u64).unwrap_or(0);
            let at = match self.calls.binary_search_by_key(&index, |c| c.index) {
                Ok(at) => at,
                Err(at) => {
                    self.calls.insert(at, StreamedCall { index, ..StreamedCall::default() });
                    at
                }
            };
            let call = &mut self.calls[at];
            if let Some(id) = part.get("id").and_then(Value::as_str) {
                call.id = id.to_owned();
            }
            if let Some(name) = part.pointer("/function/name").and_then(Value::as_str) {
                call.name.push_str(name);
            }
            if let Some(args) = part.pointer("/function/arguments").and_then(Value::as_str) {
                call.arguments.push_str(args);
            }
            if call.told_at.is_none_or(|at| at.elapsed() >= TOOL_INPUT_EVERY) {
                self.told |= call.tell(deltas);
            }
        }
        Ok(())
    }

    /// The whole reply: its text, and its tool calls in the model's order
    /// with their arguments parsed (a call's last arguments told once more
    /// if they changed); a reply cut at the token limit is
    /// [`ModelError::Cut`].
    fn finish(mut self, deltas: &Deltas) -> Result<ModelReply, ModelError> {
        let mut calls = Vec::with_capacity(self.calls.len());
        for call in &mut self.calls {
            call.tell(deltas);
            let id = if call.id.is_empty() { format!("call_{}", call.index) } else { std::mem::take(&mut call.id) };
            calls.push(RawCall { id, name: std::mem::take(&mut call.name), arguments: std::mem::take(&mut call.arguments) });
        }
        let text = Some(self.text).filter(|t| !t.is_empty());
        reply_of(text, calls, self.tokens, self.finish_reason.as_deref())
    }
}

/// A tool call as the service sent it, its arguments still text.
struct RawCall {
    id: String,
    name: String,
    arguments: String,
}

/// The reply of the text and the calls the service sent, and why it says
/// the reply ended: a reply cut at the token limit is [`ModelError::Cut`],
/// naming the call it was cut in, if any.
fn reply_of(text: Option<String>, calls: Vec<RawCall>, tokens: Option<u64>, finish_reason: Option<&str>) -> Result<ModelReply, ModelError> {
    let cut = finish_reason == Some("length");
    let mut tool_calls = Vec::with_capacity(calls.len());
    for (i, call) in calls.into_iter().enumerate() {
        if call.name.is_empty() {
            if cut {
                return Err(ModelError::cut(Some(format!("while writing tool call {i}")), text, tokens));
            }
            return Err(ModelError::Malformed(format!("tool_calls[{i}] has no function name")));
        }
        let raw = if call.arguments.trim().is_empty() { "{}" } else { call.arguments.as_str() };
        let arguments: Value = match serde_json::from_str(raw) {
            Ok(arguments) => arguments,
            Err(_) if cut => {
                return Err(ModelError::cut(Some(format!("while writing the arguments of {} (tool_calls[{i}])", call.name)), text, tokens));
            }
            Err(e) => return Err(ModelError::Malformed(format!("tool_calls[{i}] arguments are not JSON: {e}"))),
        };
        tool_calls.push(ToolCall { id: call.id, name: call.name, arguments });
    }
    if cut {
        // Whole calls of a cut reply may not be all it meant to make.
        let during = (!tool_calls.is_empty()).then(|| format!("after {} tool call(s), which were not made", tool_calls.len()));
        return Err(ModelError::cut(during, text, tokens));
    }
    Ok(ModelReply { text, tool_calls, tokens })
}

impl StreamedCall {
    /// Tells the arguments as far as they have come, if that is more than
    /// was told; answers whether it told.
    fn tell(&mut self, deltas: &Deltas) -> bool {
        if self.name.is_empty() {
            return false;
        }
        self.told_at = Some(std::time::Instant::now());
        let Some(arguments) = crate::partial::complete(&self.arguments) else { return false };
        if self.told.as_ref() == Some(&arguments) {
            return false;
        }
        self.told = Some(arguments.clone());
        let id = if self.id.is_empty() { format!("call_{}", self.index) } else { self.id.clone() };
        deltas(Delta::ToolInput { id, name: self.name.clone(), arguments });
        true
    }
}

/// A `Retry-After` in seconds (the form model services send; an HTTP date
/// is not read, and the backoff stands in for it).
fn retry_after(value: &str) -> Option<Duration> {
    value.trim().parse::<f64>().ok().filter(|s| s.is_finite() && *s >= 0.0).map(Duration::from_secs_f64)
}

/// Whether asking again may help: the service is busy or failed.
fn worth_retrying(error: &ModelError) -> bool {
    matches!(error, ModelError::Status { status, .. } if *status == 429 || (500..600).contains(status))
}

impl OpenAiModel {
    fn body(&self, request: &ModelRequest) -> Value {
        let messages: Vec<Value> = request
            .messages
            .iter()
            .map(|m| match m {
                ChatMessage::System { content } => json!({"role": "system", "content": content}),
                ChatMessage::User { content } => json!({"role": "user", "content": content}),
                ChatMessage::Assistant { content, tool_calls } => {
                    let mut msg = json!({"role": "assistant", "content": content});
                    if !tool_calls.is_empty() {
                        msg["tool_calls"] = tool_calls
                            .iter()
                            .map(|c| {
                                json!({"id": c.id, "type": "function",
                                "function": {"name": c.name, "arguments": c.arguments.to_string()}})
                            })
                            .collect();
                    }
                    msg
                }
                ChatMessage::Tool { tool_call_id, content } => {
                    json!({"role": "tool", "tool_call_id": tool_call_id, "content": content})
                }
            })
            .collect();
        let mut body = json!({"model": self.model, "messages": messages, "stream": true, "stream_options": {"include_usage": true}});
        if let Some(max_tokens) = self.max_tokens {
            body["max_tokens"] = json!(max_tokens);
        }
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|t| {
                    json!({"type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.parameters}})
                })
                .collect();
        }
        body
    }
}

#[async_trait::async_trait]
impl Model for OpenAiModel {
    /// A client span by the GenAI conventions: `chat {model}`.
    #[tracing::instrument(
        name = "model.chat",
        skip_all,
        fields(otel.name = %format!("chat {}", self.model), otel.kind = "client", gen_ai.operation.name = "chat", gen_ai.provider.name = "openai", gen_ai.request.model = %self.model)
    )]
    async fn stream(&self, request: ModelRequest, deltas: &Deltas) -> Result<ModelReply, ModelError> {
        let body = self.body(&request);
        // Jitter adds up to the delay again: the doubling stops at half the
        // longest wait.
        let backoff = ExponentialBuilder::default()
            .with_min_delay(self.first_wait)
            .with_max_delay(LONGEST_WAIT / 2)
            .with_jitter()
            .with_max_times(self.retries as usize);
        let mut attempt = 0;
        (|| self.call(&body, deltas))
            .retry(backoff)
            // Asking again would tell twice what was told.
            .when(|failed| !failed.told && worth_retrying(&failed.error))
            // What the service asked for stands in for the backoff; asked
            // for longer than the longest wait, the run fails now.
            .adjust(|failed, backoff| match (backoff, failed.retry_after) {
                (None, _) => None,
                (Some(_), Some(asked)) => Some(asked).filter(|asked| *asked <= LONGEST_WAIT),
                (Some(backoff), None) => Some(backoff),
            })
            .notify(|failed, wait| {
                attempt += 1;
                tracing::warn!(error = %failed.error, attempt, wait_ms = wait.as_millis() as u64, "the model service is busy or failing; asking again");
            })
            .await
            .map_err(|failed| failed.error)
    }

    async fn reply(&self, request: ModelRequest) -> Result<ModelReply, ModelError> {
        self.stream(request, &|_| {}).await
    }
}

/// Reads `choices[0].message`: its content and its tool calls, in the
/// order it lists them, whose arguments arrive as a JSON string; and
/// `choices[0].finish_reason`, a reply cut at the token limit being
/// [`ModelError::Cut`].
pub fn parse_reply(text: &str) -> Result<ModelReply, ModelError> {
    let body: Value = serde_json::from_str(text).map_err(|e| ModelError::Malformed(e.to_string()))?;
    let message = body.pointer("/choices/0/message").ok_or_else(|| ModelError::Malformed("no choices[0].message".into()))?;
    let content = message.get("content").and_then(Value::as_str).map(str::to_owned).filter(|s| !s.is_empty());
    let calls = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, call)| RawCall {
            id: call.get("id").and_then(Value::as_str).map(str::to_owned).unwrap_or_else(|| format!("call_{i}")),
            name: call.pointer("/function/name").and_then(Value::as_str).unwrap_or_default().to_owned(),
            arguments: call.pointer("/function/arguments").and_then(Value::as_str).unwrap_or("{}").to_owned(),
        })
        .collect();
    let tokens = body.pointer("/usage/total_tokens").and_then(Value::as_u64);
    reply_of(content, calls, tokens, body.pointer("/choices/0/finish_reason").and_then(Value::as_str))
}

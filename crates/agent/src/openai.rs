//! An OpenAI-compatible chat-completions client with tool calling (A6):
//! base URL, key and model from configuration. Non-streaming: a run records
//! a model's whole reply as one step anyway. A busy or failing service
//! (429, 5xx) is asked again, after its `Retry-After` or an exponential
//! backoff with full jitter, a few times before the run fails.

use std::time::Duration;

use lattice_core::ToolCall;
use serde_json::{Value, json};

use crate::model::{ChatMessage, Model, ModelError, ModelReply, ModelRequest};

/// Tries after the first, by default.
const RETRIES: u32 = 4;
/// The first backoff; each later one doubles, up to [`LONGEST_WAIT`].
const FIRST_WAIT: Duration = Duration::from_millis(500);
/// The longest wait between two tries, a `Retry-After` included: a
/// service that asks for longer has failed this run.
const LONGEST_WAIT: Duration = Duration::from_secs(30);

#[derive(Clone)]
pub struct OpenAiModel {
    http: reqwest::Client,
    base_url: String,
    api_key: Option<String>,
    model: String,
    retries: u32,
    first_wait: Duration,
}

impl OpenAiModel {
    /// `base_url` is the API root, e.g. `https://host/v1`; requests go to
    /// `{base_url}/chat/completions`.
    pub fn new(base_url: &str, api_key: Option<String>, model: &str, timeout: Duration) -> Result<Self, ModelError> {
        // TLS by rustls with ring; the system's roots (and SSL_CERT_FILE).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .build()
            .map_err(|e| ModelError::Unreachable(e.to_string()))?;
        Ok(Self {
            http,
            base_url: base_url.trim_end_matches('/').to_owned(),
            api_key,
            model: model.to_owned(),
            retries: RETRIES,
            first_wait: FIRST_WAIT,
        })
    }

    /// Asks again `retries` times at most, the first wait `first_wait`.
    pub fn with_retries(mut self, retries: u32, first_wait: Duration) -> Self {
        self.retries = retries;
        self.first_wait = first_wait;
        self
    }

    /// How long to wait before try `attempt` (1 for the first retry):
    /// what the service asked for, or a random share of the doubled backoff.
    fn wait(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(asked) = retry_after {
            return asked;
        }
        let ceiling = self.first_wait.saturating_mul(1 << (attempt - 1).min(16)).min(LONGEST_WAIT);
        ceiling.mul_f64(rand::random::<f64>())
    }

    /// One call: the reply, or the error with the service's `Retry-After`.
    async fn call(&self, body: &Value) -> Result<ModelReply, (ModelError, Option<Duration>)> {
        let mut call = self.http.post(format!("{}/chat/completions", self.base_url)).json(body);
        if let Some(key) = &self.api_key {
            call = call.bearer_auth(key);
        }
        let failed = |e: reqwest::Error| (if e.is_timeout() { ModelError::Timeout } else { ModelError::Unreachable(e.to_string()) }, None);
        let response = call.send().await.map_err(failed)?;
        let status = response.status();
        let retry_after = response.headers().get("retry-after").and_then(|v| v.to_str().ok()).and_then(retry_after);
        let text = response.text().await.map_err(failed)?;
        if !status.is_success() {
            let message = serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|v| v.pointer("/error/message").and_then(Value::as_str).map(str::to_owned))
                .unwrap_or_else(|| text.chars().take(200).collect());
            return Err((ModelError::Status { status: status.as_u16(), message }, retry_after));
        }
        parse_reply(&text).map_err(|e| (e, None))
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
                            .map(|c| json!({"id": c.id, "type": "function",
                                "function": {"name": c.name, "arguments": c.arguments.to_string()}}))
                            .collect();
                    }
                    msg
                }
                ChatMessage::Tool { tool_call_id, content } => {
                    json!({"role": "tool", "tool_call_id": tool_call_id, "content": content})
                }
            })
            .collect();
        let mut body = json!({"model": self.model, "messages": messages});
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|t| json!({"type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}))
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
    async fn reply(&self, request: ModelRequest) -> Result<ModelReply, ModelError> {
        let body = self.body(&request);
        let mut attempt = 0;
        loop {
            match self.call(&body).await {
                Ok(reply) => return Ok(reply),
                Err((error, retry_after)) => {
                    attempt += 1;
                    let wait = self.wait(attempt, retry_after);
                    if attempt > self.retries || !worth_retrying(&error) || wait > LONGEST_WAIT {
                        return Err(error);
                    }
                    tracing::warn!(%error, attempt, wait_ms = wait.as_millis() as u64, "the model service is busy or failing; asking again");
                    tokio::time::sleep(wait).await;
                }
            }
        }
    }
}

/// Reads `choices[0].message`: its content and its tool calls, whose
/// arguments arrive as a JSON string.
pub fn parse_reply(text: &str) -> Result<ModelReply, ModelError> {
    let body: Value = serde_json::from_str(text).map_err(|e| ModelError::Malformed(e.to_string()))?;
    let message = body.pointer("/choices/0/message").ok_or_else(|| ModelError::Malformed("no choices[0].message".into()))?;
    let content = message.get("content").and_then(Value::as_str).map(str::to_owned).filter(|s| !s.is_empty());
    let mut tool_calls = Vec::new();
    for (i, call) in message.get("tool_calls").and_then(Value::as_array).into_iter().flatten().enumerate() {
        let name = call
            .pointer("/function/name")
            .and_then(Value::as_str)
            .ok_or_else(|| ModelError::Malformed(format!("tool_calls[{i}] has no function name")))?;
        let raw = call.pointer("/function/arguments").and_then(Value::as_str).unwrap_or("{}");
        let arguments: Value = serde_json::from_str(if raw.trim().is_empty() { "{}" } else { raw })
            .map_err(|e| ModelError::Malformed(format!("tool_calls[{i}] arguments are not JSON: {e}")))?;
        let id = call.get("id").and_then(Value::as_str).map(str::to_owned).unwrap_or_else(|| format!("call_{i}"));
        tool_calls.push(ToolCall { id, name: name.to_owned(), arguments });
    }
    Ok(ModelReply { text: content, tool_calls })
}

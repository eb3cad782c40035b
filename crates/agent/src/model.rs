//! What the runner asks a model, and what it gets back.

use std::collections::BTreeMap;
use std::sync::Arc;

use lattice_core::ToolCall;
use serde::{Deserialize, Serialize};

use crate::tools::ToolDefinition;

/// One message of the conversation a model sees.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum ChatMessage {
    System { content: String },
    User { content: String },
    Assistant { content: Option<String>, tool_calls: Vec<ToolCall> },
    Tool { tool_call_id: String, content: String },
}

#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    pub messages: Vec<ChatMessage>,
    /// The tools offered for this call: only those whose switch is on.
    pub tools: Vec<ToolDefinition>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelReply {
    pub text: Option<String>,
    pub tool_calls: Vec<ToolCall>,
    /// Tokens the call used (prompt and reply), when the service says.
    pub tokens: Option<u64>,
}

/// What a model has written so far, told while it writes.
#[derive(Debug, Clone, PartialEq)]
pub enum Delta {
    /// Text added to the reply.
    Text(String),
    /// A tool call's arguments as far as they have come, made whole.
    ToolInput { id: String, name: String, arguments: serde_json::Value },
}

/// Where a streaming model tells its deltas.
pub type Deltas = dyn Fn(Delta) + Send + Sync;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    #[error("the model service did not answer in time")]
    Timeout,
    #[error("the model service answered {status}: {message}")]
    Status { status: u16, message: String },
    #[error("the model service's answer is not readable: {0}")]
    Malformed(String),
    #[error("cannot reach the model service: {0}")]
    Unreachable(String),
    #[error("no model named {0:?} is configured")]
    Unknown(String),
    /// The reply stopped at the model's token limit (`finish_reason:
    /// "length"`): it is not a whole reply, and nothing of it is acted on.
    /// What came of its text and the tokens it used are kept, to show and
    /// to count.
    #[error("{reason}")]
    Cut { reason: String, text: Option<String>, tokens: Option<u64> },
}

impl ModelError {
    /// A reply cut at the model's token limit; `during` says where, when a
    /// tool call's arguments were being written (`while writing ask_form's
    /// arguments`).
    pub fn cut(during: Option<String>, text: Option<String>, tokens: Option<u64>) -> Self {
        let mut reason = "the reply was cut at the model's token limit".to_owned();
        if let Some(during) = during {
            reason.push(' ');
            reason.push_str(&during);
        }
        Self::Cut { reason, text, tokens }
    }
}

#[async_trait::async_trait]
pub trait Model: Send + Sync {
    async fn reply(&self, request: ModelRequest) -> Result<ModelReply, ModelError>;

    /// The reply, telling `deltas` what is written as it is written; a
    /// model that does not stream tells nothing.
    async fn stream(&self, request: ModelRequest, deltas: &Deltas) -> Result<ModelReply, ModelError> {
        let _ = deltas;
        self.reply(request).await
    }
}

/// The models a deployment offers, by the name a run asks for.
#[derive(Clone, Default)]
pub struct Models {
    by_name: BTreeMap<String, Arc<dyn Model>>,
    default: Option<String>,
}

impl Models {
    /// Adds a model; `default` makes it the one used when a run names none.
    pub fn with(mut self, name: impl Into<String>, model: Arc<dyn Model>, default: bool) -> Self {
        let name = name.into();
        if default {
            self.default = Some(name.clone());
        }
        self.by_name.insert(name, model);
        self
    }

    pub fn default_name(&self) -> Option<&str> {
        self.default.as_deref()
    }

    pub fn get(&self, name: &str) -> Result<Arc<dyn Model>, ModelError> {
        self.by_name.get(name).cloned().ok_or_else(|| ModelError::Unknown(name.to_owned()))
    }

    pub fn names(&self) -> Vec<String> {
        self.by_name.keys().cloned().collect()
    }
}

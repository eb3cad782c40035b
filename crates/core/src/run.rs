//! Runs (REQUIREMENTS.md L6): an agent's turn as a state machine whose every step is
//! an envelope in the log, so a paused run survives a restart.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::role::TenantRole;

/// Where a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Running,
    Paused,
    Finished,
    Failed,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Paused => "paused",
            Self::Finished => "finished",
            Self::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Running, Self::Paused, Self::Finished, Self::Failed].into_iter().find(|x| x.as_str() == s)
    }
}

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: Value,
}

/// A tool call that waits for a person: what `run_paused` records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeferredRequest {
    pub tool_call_id: String,
    pub tool_name: String,
    pub args: Value,
    /// How long a person has to answer; past it, lattice answers `expired`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_in_secs: Option<u64>,
    /// When the deadline passes (RFC 3339), set by the log as it records
    /// the pause.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// Set when the call waits for the person the run acts for to sign in
    /// to a connected server (a request that shows "Connect <server>"),
    /// not for a decision: answered once they have, the call is made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sign_in: Option<SignInNeeded>,
}

/// The server a call waits on a person's sign-in to, and the scope it
/// asked for beyond what they granted (step-up), if it said one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignInNeeded {
    pub server: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

/// What a person brought from a connected server to a run they started:
/// a server's prompt they ran as a command (its messages), or a resource
/// they attached (its text), as read when the run started. The model
/// reads it fenced as a program's words, like a tool's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunContext {
    pub server: String,
    pub kind: ContextKind,
    /// The prompt's name, or the resource's URI.
    pub name: String,
    pub text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContextKind {
    Prompt,
    Resource,
}

impl ContextKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Prompt => "prompt",
            Self::Resource => "resource",
        }
    }
}

/// At most this many pieces of a server's context in one run.
pub const CONTEXT_MAX_ITEMS: usize = 8;
/// At most this many bytes of them together (the text's, as stored).
pub const CONTEXT_MAX_BYTES: usize = 256 * 1024;

/// The name of a request that puts a connected server's question
/// (`elicitation/create`) to the person a run acts for. No server tool is
/// called so (theirs are `<server>__<tool>`).
pub const ELICITATION: &str = "elicitation";

/// The longest deadline a request may carry: a week.
pub const MAX_EXPIRES_IN_SECS: u64 = 7 * 24 * 3600;

/// One step of a run, recorded by the runner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "snake_case")]
pub enum RunStep {
    /// What the model answered: text, tool calls, or both.
    ModelReplied {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        #[serde(default)]
        tool_calls: Vec<ToolCall>,
        /// Tokens the call used, as the model service counted them.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tokens: Option<u64>,
    },
    /// A tool's result, as the model will read it.
    ToolReturned { tool_call_id: String, tool_name: String, result: Value, is_error: bool },
    /// The run waits for these requests to be answered.
    Paused { requests: Vec<DeferredRequest> },
    /// A person is asked while the run goes on: a connected server's
    /// question in the middle of one of its calls ([`ELICITATION`]). The
    /// requests open; the run stays running, its call waiting.
    Asked { requests: Vec<DeferredRequest> },
    /// The run goes on, acting for whoever answered.
    Resumed { actor: String, role: TenantRole },
    Finished {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
    },
    Failed {
        reason: String,
        /// What kind of end it was, for clients that act on it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        failure: Option<RunFailure>,
    },
}

/// Why a run ended without finishing, as a client can match on it; the
/// reason beside it says the same in words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunFailure {
    /// A person cancelled it.
    Cancelled,
    /// It made as many model calls as a run may.
    ModelCalls,
    /// Its model calls used as many tokens as a run may.
    Tokens,
    /// It ran as long as a run may.
    WallTime,
    /// The model service failed or could not be reached.
    Model,
}

impl RunFailure {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Cancelled => "cancelled",
            Self::ModelCalls => "model_calls",
            Self::Tokens => "tokens",
            Self::WallTime => "wall_time",
            Self::Model => "model",
        }
    }
}

//! A form artifact: a FormSchema that takes submissions without a run
//! waiting (REQUIREMENTS.md A2, U8).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::hints::UiHints;

/// How many submissions a form takes, and from whom (REQUIREMENTS.md U8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Submissions {
    /// One submission in all.
    #[default]
    Once,
    /// One per person.
    PerPerson,
    /// Any number; each carries a nonce its client made.
    Many,
}

/// The `data` of a `form` artifact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Form {
    pub title: String,
    /// A JSON Schema 2020-12 object of the allowed subset (REQUIREMENTS.md U1).
    pub schema: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ui: Option<UiHints>,
    #[serde(default)]
    pub submissions: Submissions,
    #[serde(default)]
    pub closed: bool,
    /// When the form stops taking submissions (RFC 3339): an MCP client's
    /// ask_form with a deadline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closes_at: Option<String>,
}

impl Form {
    /// Whether the form has stopped taking submissions at `now_ms`.
    pub fn closed_at(&self, now_ms: i64) -> bool {
        self.closed || self.closes_at.as_deref().and_then(lattice_core::rfc3339::date_time_ms).is_some_and(|at| at <= now_ms)
    }
}

/// The largest form payload, in bytes of JSON: the schema's 32 KB and room
/// for its title and hints.
pub const FORM_MAX_BYTES: usize = 64 * 1024;

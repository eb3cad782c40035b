//! A form artifact: a schema that takes submissions.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How many submissions a form takes, and from whom (SPEC U8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Submissions {
    /// One submission in all.
    #[default]
    Once,
    /// One per person.
    PerPerson,
    /// Any number; each carries a client nonce.
    Many,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Form {
    pub title: String,
    /// A JSON Schema 2020-12 object of the allowed subset.
    pub schema: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ui: Option<Value>,
    #[serde(default)]
    pub submissions: Submissions,
    #[serde(default)]
    pub closed: bool,
}

/// The largest form payload, in bytes of JSON (the schema's own limit of
/// 32 KB is the schema checker's).
pub const FORM_MAX_BYTES: usize = 64 * 1024;

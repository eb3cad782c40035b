//! The typed errors of SPEC L8. Every refusal a client can see is one of
//! these; the HTTP layer maps them to status codes in one place.

use serde::{Deserialize, Serialize};

/// One refused field: where it stands, which rule refused it, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldError {
    /// A dotted path such as `properties.zip.pattern` or `values.severity`;
    /// empty for the document itself.
    pub path: String,
    /// The keyword or rule that refused it (`maxLength`, `required`, `id`…).
    pub keyword: String,
    pub message: String,
}

impl FieldError {
    pub fn new(path: impl Into<String>, keyword: impl Into<String>, message: impl Into<String>) -> Self {
        Self { path: path.into(), keyword: keyword.into(), message: message.into() }
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// What a command or a read can be refused with.
#[derive(Debug, Clone, PartialEq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum Error {
    /// The request is not readable: bad JSON, a missing body, a bad query.
    #[error("malformed request: {reason}")]
    Malformed { reason: String },
    /// No token, or one that does not verify.
    #[error("unauthorized: {reason}")]
    Unauthorized { reason: String },
    /// Also returned for things that exist but the caller may not see, so
    /// that another tenant learns nothing, not even whether an id exists.
    #[error("not found")]
    NotFound,
    #[error("forbidden: {reason}")]
    Forbidden { reason: String },
    #[error("{key} is not enabled here")]
    NotEnabled { key: String },
    #[error("validation failed: {}", display_errors(errors))]
    ValidationFailed { errors: Vec<FieldError> },
    #[error("invalid state: {reason}")]
    InvalidState {
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        answered_by: Option<String>,
    },
    /// An optimistic-concurrency mismatch (`expected`/`actual` versions), or
    /// an id that exists already (`reason` says which).
    #[error("conflict: {reason}")]
    Conflict {
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expected: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        actual: Option<u64>,
    },
    #[error("too large: {size} bytes exceeds the limit {limit}")]
    TooLarge { limit: u64, size: u64 },
    #[error("rate limited")]
    RateLimited,
    /// A dependency (the database, NATS) did not answer. Never the client's
    /// fault, so the only error that maps to a 5xx.
    #[error("unavailable: {reason}")]
    Unavailable { reason: String },
}

fn display_errors(errors: &[FieldError]) -> String {
    errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
}

impl Error {
    pub fn forbidden(reason: impl Into<String>) -> Self {
        Self::Forbidden { reason: reason.into() }
    }

    pub fn invalid_state(reason: impl Into<String>) -> Self {
        Self::InvalidState { reason: reason.into(), answered_by: None }
    }

    pub fn field(path: impl Into<String>, keyword: impl Into<String>, message: impl Into<String>) -> Self {
        Self::ValidationFailed { errors: vec![FieldError::new(path, keyword, message)] }
    }

    pub fn exists(what: impl Into<String>) -> Self {
        Self::Conflict { reason: format!("{} already exists", what.into()), expected: None, actual: None }
    }

    pub fn version_conflict(expected: u64, actual: u64) -> Self {
        Self::Conflict {
            reason: format!("expected version {expected}, the head is {actual}"),
            expected: Some(expected),
            actual: Some(actual),
        }
    }

    pub fn unavailable(reason: impl std::fmt::Display) -> Self {
        Self::Unavailable { reason: reason.to_string() }
    }

    /// The wire name of the variant (`"ValidationFailed"`, …).
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::Malformed { .. } => "Malformed",
            Self::Unauthorized { .. } => "Unauthorized",
            Self::NotFound => "NotFound",
            Self::Forbidden { .. } => "Forbidden",
            Self::NotEnabled { .. } => "NotEnabled",
            Self::ValidationFailed { .. } => "ValidationFailed",
            Self::InvalidState { .. } => "InvalidState",
            Self::Conflict { .. } => "Conflict",
            Self::TooLarge { .. } => "TooLarge",
            Self::RateLimited => "RateLimited",
            Self::Unavailable { .. } => "Unavailable",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    #[test]
    fn wire_shape_is_tagged_by_type() {
        let e = Error::field("values.note", "maxLength", "600 exceeds the limit 500");
        expect![[r#"{"type":"ValidationFailed","errors":[{"path":"values.note","keyword":"maxLength","message":"600 exceeds the limit 500"}]}"#]]
            .assert_eq(&serde_json::to_string(&e).unwrap());
        expect![[r#"{"type":"Conflict","reason":"expected version 1, the head is 2","expected":1,"actual":2}"#]]
            .assert_eq(&serde_json::to_string(&Error::version_conflict(1, 2)).unwrap());
        expect![[r#"{"type":"NotFound"}"#]].assert_eq(&serde_json::to_string(&Error::NotFound).unwrap());
    }
}

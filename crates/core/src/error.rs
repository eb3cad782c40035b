//! The typed errors of REQUIREMENTS.md L8. Every refusal a client can see is one of
//! these; the HTTP layer maps them to status codes in one place. Each
//! carries a stable [`Code`] beside its type: the types whose refusals
//! have several causes hold it as a field, the others have one code each.

use serde::{Deserialize, Serialize, Serializer};

use crate::code::Code;
use crate::flat::need;

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
        if self.path.is_empty() { write!(f, "{}", self.message) } else { write!(f, "{}: {}", self.path, self.message) }
    }
}

/// What a command or a read can be refused with.
///
/// On the wire (`Serialize`): `{"type": …, "code": …, …its fields}`.
#[derive(Debug, Clone, PartialEq, thiserror::Error, Deserialize)]
#[serde(try_from = "ErrorWire")]
pub enum Error {
    /// The request is not readable: bad JSON, a missing body, a bad query.
    #[error("malformed request: {reason}")]
    Malformed { code: Code, reason: String },
    /// No token, or one that does not verify.
    #[error("unauthorized: {reason}")]
    Unauthorized { code: Code, reason: String },
    /// Also returned for things that exist but the caller may not see, so
    /// that another tenant learns nothing, not even whether an id exists.
    #[error("not found")]
    NotFound,
    #[error("forbidden: {reason}")]
    Forbidden { code: Code, reason: String },
    #[error("{key} is not enabled here")]
    NotEnabled { key: String },
    /// At most [`MAX_ERRORS`] errors, and how many more there were.
    #[error("validation failed: {}", display_errors(errors, *more))]
    ValidationFailed { errors: Vec<FieldError>, more: u64 },
    #[error("invalid state: {reason}")]
    InvalidState { code: Code, reason: String, answered_by: Option<String> },
    /// An optimistic-concurrency mismatch (`expected`/`actual` versions), or
    /// an id that exists already (`reason` says which).
    #[error("conflict: {reason}")]
    Conflict { code: Code, reason: String, expected: Option<u64>, actual: Option<u64> },
    #[error("too large: {size} bytes exceeds the limit {limit}")]
    TooLarge { code: Code, limit: u64, size: u64 },
    /// Too many requests from one caller; `retry_after_secs` says when to
    /// try again (also sent as `Retry-After`).
    #[error("rate limited: try again in {retry_after_secs} s")]
    RateLimited { retry_after_secs: u64 },
    /// The request named a host this deployment does not answer for (a
    /// guard against DNS rebinding).
    #[error("misdirected request: this server does not answer for host {host:?}")]
    MisdirectedRequest { host: String },
    /// The path is served, but not with this method (the `Allow` header
    /// says with which).
    #[error("method not allowed: {method} is not served here")]
    MethodNotAllowed { method: String },
    /// The request accepts none of the types the answer could be written
    /// in (its `Accept`).
    #[error("not acceptable: {reason}")]
    NotAcceptable { reason: String },
    /// The body is of a type not taken here (its `Content-Type`).
    #[error("unsupported media type: {reason}")]
    UnsupportedMediaType { reason: String },
    /// A dependency (the database, NATS) did not answer. Never the client's
    /// fault, so the only error that maps to a 5xx.
    #[error("unavailable: {reason}")]
    Unavailable { reason: String },
}

/// An error as it is written and read: every variant's fields side by
/// side, its `type` and `code` first. Reading takes and refuses what the
/// derived reading of the tagged enum would, in one pass over the text
/// instead of buffering it first (that buffering's code was a tenth of the
/// chat host's errors). A `code` that is missing, unknown (from a newer
/// server) or of another type reads as the type's generic code; a `link`
/// is ignored.
#[derive(Deserialize)]
struct ErrorWire {
    #[serde(rename = "type")]
    kind: String,
    code: Option<String>,
    reason: Option<String>,
    key: Option<String>,
    errors: Option<Vec<FieldError>>,
    #[serde(default)]
    more: u64,
    answered_by: Option<String>,
    expected: Option<u64>,
    actual: Option<u64>,
    limit: Option<u64>,
    size: Option<u64>,
    retry_after_secs: Option<u64>,
    host: Option<String>,
    method: Option<String>,
    link: Option<String>,
}

/// An error as a body carries it over HTTP: with the `link` to its code's
/// documentation (`None` from a server that sends none). Read in the same
/// one pass as [`Error`].
#[derive(Debug, Clone, PartialEq)]
pub struct WithLink {
    pub error: Error,
    pub link: Option<String>,
}

impl<'de> Deserialize<'de> for WithLink {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut wire = ErrorWire::deserialize(d)?;
        let link = wire.link.take();
        let error = Error::try_from(wire).map_err(serde::de::Error::custom)?;
        Ok(Self { error, link })
    }
}

impl Serialize for WithLink {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        ErrorOut::of(&self.error, self.link.as_deref()).serialize(s)
    }
}

impl TryFrom<ErrorWire> for Error {
    type Error = String;

    fn try_from(w: ErrorWire) -> Result<Self, String> {
        let kind = w.kind.as_str();
        let code = || {
            w.code.as_deref().and_then(Code::parse).filter(|c| c.type_name() == kind).or_else(|| Code::default_of(kind)).unwrap_or(Code::Malformed)
        };
        Ok(match kind {
            "Malformed" => Self::Malformed { code: code(), reason: need(w.reason, "reason")? },
            "Unauthorized" => Self::Unauthorized { code: code(), reason: need(w.reason, "reason")? },
            "NotFound" => Self::NotFound,
            "Forbidden" => Self::Forbidden { code: code(), reason: need(w.reason, "reason")? },
            "NotEnabled" => Self::NotEnabled { key: need(w.key, "key")? },
            "ValidationFailed" => Self::ValidationFailed { errors: need(w.errors, "errors")?, more: w.more },
            "InvalidState" => Self::InvalidState { code: code(), reason: need(w.reason, "reason")?, answered_by: w.answered_by },
            "Conflict" => Self::Conflict { code: code(), reason: need(w.reason, "reason")?, expected: w.expected, actual: w.actual },
            "TooLarge" => Self::TooLarge { code: code(), limit: need(w.limit, "limit")?, size: need(w.size, "size")? },
            "RateLimited" => Self::RateLimited { retry_after_secs: need(w.retry_after_secs, "retry_after_secs")? },
            "MisdirectedRequest" => Self::MisdirectedRequest { host: need(w.host, "host")? },
            "MethodNotAllowed" => Self::MethodNotAllowed { method: need(w.method, "method")? },
            "NotAcceptable" => Self::NotAcceptable { reason: need(w.reason, "reason")? },
            "UnsupportedMediaType" => Self::UnsupportedMediaType { reason: need(w.reason, "reason")? },
            "Unavailable" => Self::Unavailable { reason: need(w.reason, "reason")? },
            other => return Err(format!("unknown error type `{other}`")),
        })
    }
}

/// An error as it is written: its `type` and `code` (and, over HTTP, the
/// `link` to its documentation) first, then the fields its type has, as
/// the derived writing of the tagged enum had them.
#[derive(Serialize)]
struct ErrorOut<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    code: Code,
    #[serde(skip_serializing_if = "Option::is_none")]
    link: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    errors: Option<&'a [FieldError]>,
    #[serde(skip_serializing_if = "is_zero")]
    more: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    answered_by: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    expected: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    actual: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    limit: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    size: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    retry_after_secs: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    host: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    method: Option<&'a str>,
}

impl<'a> ErrorOut<'a> {
    fn of(e: &'a Error, link: Option<&'a str>) -> Self {
        let mut out = ErrorOut {
            kind: e.type_name(),
            code: e.code(),
            link,
            reason: None,
            key: None,
            errors: None,
            more: 0,
            answered_by: None,
            expected: None,
            actual: None,
            limit: None,
            size: None,
            retry_after_secs: None,
            host: None,
            method: None,
        };
        match e {
            Error::Malformed { reason, .. }
            | Error::Unauthorized { reason, .. }
            | Error::Forbidden { reason, .. }
            | Error::NotAcceptable { reason }
            | Error::UnsupportedMediaType { reason }
            | Error::Unavailable { reason } => out.reason = Some(reason),
            Error::NotFound => {}
            Error::NotEnabled { key } => out.key = Some(key),
            Error::ValidationFailed { errors, more } => {
                out.errors = Some(errors);
                out.more = *more;
            }
            Error::InvalidState { reason, answered_by, .. } => {
                out.reason = Some(reason);
                out.answered_by = answered_by.as_deref();
            }
            Error::Conflict { reason, expected, actual, .. } => {
                out.reason = Some(reason);
                out.expected = *expected;
                out.actual = *actual;
            }
            Error::TooLarge { limit, size, .. } => {
                out.limit = Some(*limit);
                out.size = Some(*size);
            }
            Error::RateLimited { retry_after_secs } => out.retry_after_secs = Some(*retry_after_secs),
            Error::MisdirectedRequest { host } => out.host = Some(host),
            Error::MethodNotAllowed { method } => out.method = Some(method),
        }
        out
    }
}

impl Serialize for Error {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        ErrorOut::of(self, None).serialize(s)
    }
}

/// An error as the HTTP layer writes it: with the `link` to its code's
/// documentation after its code.
pub struct Linked<'a> {
    pub error: &'a Error,
    pub link: &'a str,
}

impl Serialize for Linked<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        ErrorOut::of(self.error, Some(self.link)).serialize(s)
    }
}

fn display_errors(errors: &[FieldError], more: u64) -> String {
    let listed = errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ");
    if more == 0 { listed } else { format!("{listed}; and {more} more") }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A refusal names at most this many field errors; the rest are counted.
pub const MAX_ERRORS: usize = 16;
/// The longest message, path or reason a refusal carries, in bytes: with
/// [`MAX_ERRORS`] errors a refusal's body stays under 16 KB whatever was
/// sent.
pub const MAX_MESSAGE_BYTES: usize = 400;
pub const MAX_PATH_BYTES: usize = 200;
pub const MAX_KEYWORD_BYTES: usize = 40;

/// Field errors as a check finds them: the first [`MAX_ERRORS`] are kept,
/// the rest only counted, so a refusal costs no more to build than it may
/// say.
#[derive(Debug, Default)]
pub struct FieldErrors {
    errors: Vec<FieldError>,
    more: u64,
}

impl FieldErrors {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, error: FieldError) {
        self.push_with(|| error);
    }

    /// Adds the error `make` builds, building it only if it will be named.
    pub fn push_with(&mut self, make: impl FnOnce() -> FieldError) {
        if self.errors.len() < MAX_ERRORS {
            self.errors.push(make().bounded());
        } else {
            self.more += 1;
        }
    }

    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    pub fn into_result(self) -> Result<(), Error> {
        if self.errors.is_empty() { Ok(()) } else { Err(Error::ValidationFailed { errors: self.errors, more: self.more }) }
    }
}

impl FieldError {
    /// The same error with its path, keyword and message cut to their
    /// bounds.
    pub fn bounded(self) -> Self {
        Self {
            path: truncate(self.path, MAX_PATH_BYTES),
            keyword: truncate(self.keyword, MAX_KEYWORD_BYTES),
            message: truncate(self.message, MAX_MESSAGE_BYTES),
        }
    }
}

/// `s` cut to at most `max` bytes on a character boundary, ending in `…`
/// when it was cut.
pub fn truncate(s: String, max: usize) -> String {
    if s.len() <= max {
        return s;
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

impl Error {
    pub fn malformed(code: Code, reason: impl Into<String>) -> Self {
        Self::Malformed { code, reason: reason.into() }
    }

    pub fn unauthorized(code: Code, reason: impl Into<String>) -> Self {
        Self::Unauthorized { code, reason: reason.into() }
    }

    pub fn forbidden(code: Code, reason: impl Into<String>) -> Self {
        Self::Forbidden { code, reason: reason.into() }
    }

    pub fn invalid_state(code: Code, reason: impl Into<String>) -> Self {
        Self::InvalidState { code, reason: reason.into(), answered_by: None }
    }

    /// A request answered already, saying by whom.
    pub fn already_answered(by: impl Into<String>) -> Self {
        let by = by.into();
        Self::InvalidState { code: Code::AlreadyAnswered, reason: format!("already answered by {by}"), answered_by: Some(by) }
    }

    /// A conflict that names no versions.
    pub fn conflict(code: Code, reason: impl Into<String>) -> Self {
        Self::Conflict { code, reason: reason.into(), expected: None, actual: None }
    }

    pub fn too_large(code: Code, limit: u64, size: u64) -> Self {
        Self::TooLarge { code, limit, size }
    }

    pub fn field(path: impl Into<String>, keyword: impl Into<String>, message: impl Into<String>) -> Self {
        Self::ValidationFailed { errors: vec![FieldError::new(path, keyword, message).bounded()], more: 0 }
    }

    /// A validation failure naming the first [`MAX_ERRORS`] of `errors`
    /// (`Ok` when there are none).
    pub fn invalid(errors: Vec<FieldError>) -> Result<(), Self> {
        let mut list = FieldErrors::new();
        for e in errors {
            list.push(e);
        }
        list.into_result()
    }

    /// The same error with every text in it cut to its bound: what goes on
    /// the wire.
    pub fn bounded(self) -> Self {
        let cut = |s: String| truncate(s, MAX_MESSAGE_BYTES);
        match self {
            Self::Malformed { code, reason } => Self::Malformed { code, reason: cut(reason) },
            Self::Unauthorized { code, reason } => Self::Unauthorized { code, reason: cut(reason) },
            Self::Forbidden { code, reason } => Self::Forbidden { code, reason: cut(reason) },
            Self::NotEnabled { key } => Self::NotEnabled { key: cut(key) },
            Self::ValidationFailed { errors, more } => {
                let extra = errors.len().saturating_sub(MAX_ERRORS) as u64;
                Self::ValidationFailed { errors: errors.into_iter().take(MAX_ERRORS).map(FieldError::bounded).collect(), more: more + extra }
            }
            Self::InvalidState { code, reason, answered_by } => Self::InvalidState { code, reason: cut(reason), answered_by: answered_by.map(cut) },
            Self::Conflict { code, reason, expected, actual } => Self::Conflict { code, reason: cut(reason), expected, actual },
            Self::Unavailable { reason } => Self::Unavailable { reason: cut(reason) },
            Self::MisdirectedRequest { host } => Self::MisdirectedRequest { host: truncate(host, MAX_PATH_BYTES) },
            Self::MethodNotAllowed { method } => Self::MethodNotAllowed { method: truncate(method, MAX_KEYWORD_BYTES) },
            Self::NotAcceptable { reason } => Self::NotAcceptable { reason: cut(reason) },
            Self::UnsupportedMediaType { reason } => Self::UnsupportedMediaType { reason: cut(reason) },
            other @ (Self::NotFound | Self::TooLarge { .. } | Self::RateLimited { .. }) => other,
        }
    }

    pub fn exists(what: impl Into<String>) -> Self {
        Self::Conflict { code: Code::AlreadyExists, reason: format!("{} already exists", what.into()), expected: None, actual: None }
    }

    pub fn version_conflict(expected: u64, actual: u64) -> Self {
        Self::Conflict {
            code: Code::VersionConflict,
            reason: format!("expected version {expected}, the head is {actual}"),
            expected: Some(expected),
            actual: Some(actual),
        }
    }

    /// Why it was refused, as a stable code (`form_closed`, …).
    pub fn code(&self) -> Code {
        match self {
            Self::Malformed { code, .. }
            | Self::Unauthorized { code, .. }
            | Self::Forbidden { code, .. }
            | Self::InvalidState { code, .. }
            | Self::Conflict { code, .. }
            | Self::TooLarge { code, .. } => *code,
            Self::NotFound => Code::NotFound,
            Self::NotEnabled { .. } => Code::NotEnabled,
            Self::ValidationFailed { .. } => Code::ValidationFailed,
            Self::RateLimited { .. } => Code::RateLimited,
            Self::MisdirectedRequest { .. } => Code::MisdirectedRequest,
            Self::MethodNotAllowed { .. } => Code::MethodNotAllowed,
            Self::NotAcceptable { .. } => Code::NotAcceptable,
            Self::UnsupportedMediaType { .. } => Code::UnsupportedMediaType,
            Self::Unavailable { .. } => Code::Unavailable,
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
            Self::RateLimited { .. } => "RateLimited",
            Self::MisdirectedRequest { .. } => "MisdirectedRequest",
            Self::MethodNotAllowed { .. } => "MethodNotAllowed",
            Self::NotAcceptable { .. } => "NotAcceptable",
            Self::UnsupportedMediaType { .. } => "UnsupportedMediaType",
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
        expect![[r#"{"type":"ValidationFailed","code":"validation_failed","errors":[{"path":"values.note","keyword":"maxLength","message":"600 exceeds the limit 500"}]}"#]].assert_eq(&serde_json::to_string(&e).unwrap());
        expect![[r#"{"type":"Conflict","code":"version_conflict","reason":"expected version 1, the head is 2","expected":1,"actual":2}"#]]
            .assert_eq(&serde_json::to_string(&Error::version_conflict(1, 2)).unwrap());
        expect![[r#"{"type":"NotFound","code":"not_found"}"#]].assert_eq(&serde_json::to_string(&Error::NotFound).unwrap());
        expect![[r#"{"type":"InvalidState","code":"form_closed","reason":"the form is closed"}"#]]
            .assert_eq(&serde_json::to_string(&Error::invalid_state(Code::FormClosed, "the form is closed")).unwrap());
        expect![[r#"{"type":"InvalidState","code":"already_answered","link":"/docs/errors#already_answered","reason":"already answered by ana","answered_by":"ana"}"#]].assert_eq(&serde_json::to_string(&Linked { error: &Error::already_answered("ana"), link: "/docs/errors#already_answered" }).unwrap());
    }

    /// A body without a code (an older server's), with one this build does
    /// not know (a newer server's) or with one of another type reads as its
    /// type's generic code; the code it names otherwise; a link is ignored.
    #[test]
    fn a_code_is_read_when_known_and_of_its_type() {
        let read = |text: &str| serde_json::from_str::<Error>(text).unwrap().code();
        assert_eq!(read(r#"{"type":"InvalidState","reason":"x"}"#), Code::InvalidState);
        assert_eq!(read(r#"{"type":"InvalidState","code":"form_closed","link":"/docs/errors#form_closed","reason":"x"}"#), Code::FormClosed);
        assert_eq!(read(r#"{"type":"InvalidState","code":"from_the_future","reason":"x"}"#), Code::InvalidState);
        assert_eq!(read(r#"{"type":"InvalidState","code":"quota_exceeded","reason":"x"}"#), Code::InvalidState);
        assert_eq!(read(r#"{"type":"NotFound","code":"form_closed"}"#), Code::NotFound);
        assert_eq!(read(r#"{"type":"Conflict","reason":"x","expected":1,"actual":2}"#), Code::Conflict);
    }

    /// Every variant reads back what it wrote, with and without its
    /// optional fields; a required field missing, or a `type` no variant
    /// has, is refused.
    #[test]
    fn every_error_reads_back_and_a_partial_one_is_refused() {
        let reason = || "why".to_owned();
        let mut every = vec![
            Error::Malformed { code: Code::MalformedBody, reason: reason() },
            Error::Unauthorized { code: Code::TokenExpired, reason: reason() },
            Error::NotFound,
            Error::Forbidden { code: Code::RoleTooLow, reason: reason() },
            Error::NotEnabled { key: "ui:forms".into() },
            Error::ValidationFailed { errors: vec![FieldError::new("values.a", "required", "is required")], more: 0 },
            Error::ValidationFailed { errors: vec![], more: 3 },
            Error::InvalidState { code: Code::FormClosed, reason: reason(), answered_by: None },
            Error::InvalidState { code: Code::AlreadyAnswered, reason: reason(), answered_by: Some("ana".into()) },
            Error::Conflict { code: Code::AlreadyExists, reason: reason(), expected: None, actual: None },
            Error::Conflict { code: Code::VersionConflict, reason: reason(), expected: Some(1), actual: Some(2) },
            Error::TooLarge { code: Code::QuotaExceeded, limit: 10, size: 11 },
            Error::RateLimited { retry_after_secs: 2 },
            Error::MisdirectedRequest { host: "evil.example".into() },
            Error::MethodNotAllowed { method: "DELETE".into() },
            Error::NotAcceptable { reason: reason() },
            Error::UnsupportedMediaType { reason: reason() },
            Error::Unavailable { reason: reason() },
        ];
        // Every code reads back as itself.
        every.extend(Code::ALL.iter().map(|c| c.example()));
        for e in &every {
            // A variant added to Error is added above too.
            match e {
                Error::Malformed { .. }
                | Error::Unauthorized { .. }
                | Error::NotFound
                | Error::Forbidden { .. }
                | Error::NotEnabled { .. }
                | Error::ValidationFailed { .. }
                | Error::InvalidState { .. }
                | Error::Conflict { .. }
                | Error::TooLarge { .. }
                | Error::RateLimited { .. }
                | Error::MisdirectedRequest { .. }
                | Error::MethodNotAllowed { .. }
                | Error::NotAcceptable { .. }
                | Error::UnsupportedMediaType { .. }
                | Error::Unavailable { .. } => {}
            }
            let text = serde_json::to_string(e).unwrap();
            assert_eq!(&serde_json::from_str::<Error>(&text).unwrap(), e, "{text}");
            let linked = serde_json::to_string(&Linked { error: e, link: "/docs/errors" }).unwrap();
            assert_eq!(&serde_json::from_str::<Error>(&linked).unwrap(), e, "{linked}");
            assert_eq!(&serde_json::from_value::<Error>(serde_json::to_value(e).unwrap()).unwrap(), e, "{text}");
        }
        for text in [
            r#"{"type":"Malformed"}"#,
            r#"{"type":"TooLarge","limit":10}"#,
            r#"{"type":"ValidationFailed","more":1}"#,
            r#"{"type":"NoSuchError","reason":"x"}"#,
            r#"{"reason":"x"}"#,
            r#"{"type":"Forbidden","reason":7}"#,
            r#"{"type":"MethodNotAllowed"}"#,
        ] {
            assert!(serde_json::from_str::<Error>(text).is_err(), "{text}");
        }
    }
}

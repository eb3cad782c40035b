//! Every error body lattice can answer with: for each variant of
//! `lattice_core::Error` (and each optional field both ways), the status,
//! the headers the mapping adds and the JSON body `ApiError` writes, as
//! one committed snapshot (`tests/snapshots/error_bodies.txt`). A variant
//! added to `Error` does not compile here until it is listed; a changed
//! status, field or header fails here. Rewrite the snapshot with
//! `UPDATE_EXPECT=1` and review the diff.

use axum::http::header;
use axum::response::IntoResponse;
use lattice_core::{Code, Error, FieldError};
use lattice_http::{ApiError, status_of};

/// Which variant `e` is, as a number: a `match` with no wildcard, so a
/// variant added to `Error` fails to compile here until it has its arm
/// (and its example in [`every_error`]).
fn variant(e: &Error) -> usize {
    match e {
        Error::Malformed { .. } => 0,
        Error::Unauthorized { .. } => 1,
        Error::Forbidden { .. } => 2,
        Error::NotFound => 3,
        Error::MethodNotAllowed { .. } => 4,
        Error::NotAcceptable { .. } => 5,
        Error::Conflict { .. } => 6,
        Error::InvalidState { .. } => 7,
        Error::TooLarge { .. } => 8,
        Error::UnsupportedMediaType { .. } => 9,
        Error::ValidationFailed { .. } => 10,
        Error::NotEnabled { .. } => 11,
        Error::RateLimited { .. } => 12,
        Error::MisdirectedRequest { .. } => 13,
        Error::Unavailable { .. } => 14,
    }
}

/// How many arms [`variant`] has.
const VARIANTS: usize = 15;

/// One of each variant, with each optional field present and absent, and
/// a refusal cut to its bounds.
fn every_error() -> Vec<(&'static str, Error)> {
    vec![
        ("a body that is not JSON", Error::malformed(Code::MalformedBody, "the body is not valid JSON: expected value")),
        ("no token", Error::unauthorized(Code::TokenMissing, "no bearer token")),
        ("a viewer posting", Error::forbidden(Code::RoleTooLow, "posting a message needs the editor role here; you are viewer")),
        ("nothing there, or nothing the caller may see", Error::NotFound),
        ("a path not served with this method", Error::MethodNotAllowed { method: "DELETE".into() }),
        ("an Accept the answer cannot meet", Error::NotAcceptable { reason: "client must accept text/event-stream".into() }),
        ("a stale version", Error::version_conflict(3, 4)),
        ("an id that exists", Error::exists("artifact sub_1")),
        ("an archived artifact", Error::invalid_state(Code::ArtifactArchived, "the artifact is archived")),
        ("an answered request", Error::already_answered("usr_ana")),
        ("a body over its limit", Error::too_large(Code::BodyTooLarge, 1_048_576, 2_097_152)),
        ("a body of another type", Error::UnsupportedMediaType { reason: "content-type must be application/json".into() }),
        ("one refused field", Error::field("values.severity", "enum", "\"urgent\" is not one of low, high")),
        (
            "more refused fields than a refusal names",
            Error::ValidationFailed {
                errors: (0..lattice_core::error::MAX_ERRORS + 2)
                    .map(|i| FieldError::new(format!("values.f{i}"), "required", "is required"))
                    .collect(),
                more: 0,
            },
        ),
        ("a switch that is off", Error::NotEnabled { key: "ui:dashboards".into() }),
        ("a runaway writer", Error::RateLimited { retry_after_secs: 2 }),
        ("a rate limit of less than a second", Error::RateLimited { retry_after_secs: 0 }),
        ("a Host this deployment is not", Error::MisdirectedRequest { host: "rebind.attacker.example".into() }),
        ("the database does not answer", Error::unavailable("the database does not answer")),
        ("a reason longer than a refusal says", Error::malformed(Code::Malformed, "x".repeat(lattice_core::error::MAX_MESSAGE_BYTES + 10))),
    ]
}

#[test]
fn every_variant_has_an_example() {
    let mut seen = [false; VARIANTS];
    for (_, e) in every_error() {
        seen[variant(&e)] = true;
    }
    let missing: Vec<usize> = (0..VARIANTS).filter(|i| !seen[*i]).collect();
    assert!(missing.is_empty(), "arms of `variant` with no example in `every_error`: {missing:?}");
}

/// The status and JSON body of every error, and the headers the mapping
/// sets (`WWW-Authenticate` on 401, `Retry-After` on 429).
#[tokio::test]
async fn every_error_body() {
    let mut snapshot = String::new();
    for (what, error) in every_error() {
        let name = error.type_name();
        let status = status_of(&error);
        let response = ApiError(error).into_response();
        assert_eq!(response.status(), status, "{what}: the response's status is the table's");
        let mut head = format!("{} {}", status.as_u16(), status.canonical_reason().unwrap_or_default());
        for name in [header::CONTENT_TYPE, header::WWW_AUTHENTICATE, header::RETRY_AFTER] {
            if let Some(value) = response.headers().get(&name) {
                head.push_str(&format!("\n{name}: {}", value.to_str().unwrap()));
            }
        }
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
        let body: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(body["error"]["type"], name, "{what}: the body names its type");
        // What a client reads back is the error that was sent (bounded).
        let read: Error = serde_json::from_value(body["error"].clone()).unwrap_or_else(|e| panic!("{what}: {e}: {body}"));
        assert_eq!(read.type_name(), name);
        snapshot.push_str(&format!("### {name}: {what}\n{head}\n{}\n\n", serde_json::to_string_pretty(&body).unwrap()));
    }
    expect_test::expect_file!["snapshots/error_bodies.txt"].assert_eq(snapshot.trim_end());
}

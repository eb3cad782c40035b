//! Extractors that refuse bad input with typed errors: a bearer token that
//! verifies, and JSON bodies and queries whose every fault is a 4xx naming
//! the field, never a 500.

use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use lattice_core::Error;
use lattice_log::Authenticated;
use serde::de::DeserializeOwned;

use crate::error::ApiError;
use crate::state::AppState;

/// The authenticated caller.
pub struct Caller(pub Authenticated);

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let header = parts.headers.get(axum::http::header::AUTHORIZATION).map(|h| h.as_bytes());
        let who = state.log.authenticate(header).await?;
        // Writes count against the caller's rate; reads do not.
        if !parts.method.is_safe() {
            state.guard.admit_write(who.principal())?;
        }
        Ok(Caller(who))
    }
}

/// A JSON body, read within the configured size limit.
pub struct Body<T>(pub T);

impl<T: DeserializeOwned> FromRequest<AppState> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let declared = lattice_http::error::declared_length(req.headers());
        let bytes = lattice_http::error::read_within(req.into_body(), declared, state.max_body_bytes).await?;
        Ok(Body(parse_json(&bytes)?))
    }
}

/// Syntax errors are malformed (400); a readable document of the wrong shape
/// is a validation failure (422) naming where it went wrong.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, Error> {
    if bytes.is_empty() {
        return Err(Error::malformed(lattice_core::Code::MalformedBody, "the request needs a JSON body"));
    }
    let value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| Error::malformed(lattice_core::Code::MalformedBody, format!("the body is not valid JSON: {e}")))?;
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { path };
        Error::field(path, "type", strip_position(&e.into_inner().to_string()))
    })
}

/// serde_json appends " at line 1 column 9", which says nothing to a client
/// that did not write the JSON by hand.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

/// A query string.
pub struct Query<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let axum::extract::Query(value) = axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map_err(|e| Error::malformed(lattice_core::Code::MalformedQuery, e.body_text()))?;
        Ok(Query(value))
    }
}

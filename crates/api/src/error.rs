//! The one place lattice's typed errors (SPEC L8) become HTTP responses:
//! `{"error": {"type": "ValidationFailed", …}}` with the status CONTRACT gives.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use lattice_core::Error;

/// An error on its way to the wire.
#[derive(Debug)]
pub struct ApiError(pub Error);

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        Self(e)
    }
}

pub fn status_of(e: &Error) -> StatusCode {
    match e {
        Error::Malformed { .. } => StatusCode::BAD_REQUEST,
        Error::Unauthorized { .. } => StatusCode::UNAUTHORIZED,
        Error::Forbidden { .. } => StatusCode::FORBIDDEN,
        Error::NotFound => StatusCode::NOT_FOUND,
        Error::Conflict { .. } | Error::InvalidState { .. } => StatusCode::CONFLICT,
        Error::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
        Error::ValidationFailed { .. } => StatusCode::UNPROCESSABLE_ENTITY,
        Error::NotEnabled { .. } => StatusCode::LOCKED,
        Error::RateLimited => StatusCode::TOO_MANY_REQUESTS,
        Error::Unavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = status_of(&self.0);
        let mut response = (status, axum::Json(serde_json::json!({ "error": self.0 }))).into_response();
        if status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(axum::http::header::WWW_AUTHENTICATE, axum::http::HeaderValue::from_static("Bearer"));
        }
        response
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

//! The one place lattice's typed errors (REQUIREMENTS.md L8) become HTTP responses:
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
        Error::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
        Error::MisdirectedRequest { .. } => StatusCode::MISDIRECTED_REQUEST,
        Error::Unavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
    }
}

impl IntoResponse for ApiError {
    /// Every text in the body is cut to its bound (`Error::bounded`): a
    /// refusal stays under 16 KB whatever the request held.
    fn into_response(self) -> Response {
        let error = self.0.bounded();
        let status = status_of(&error);
        let retry_after = match &error {
            Error::RateLimited { retry_after_secs } => Some(*retry_after_secs),
            _ => None,
        };
        let mut response = (status, axum::Json(serde_json::json!({ "error": error }))).into_response();
        let headers = response.headers_mut();
        if status == StatusCode::UNAUTHORIZED {
            headers.insert(axum::http::header::WWW_AUTHENTICATE, axum::http::HeaderValue::from_static("Bearer"));
        }
        if let Some(secs) = retry_after {
            headers.insert(axum::http::header::RETRY_AFTER, axum::http::HeaderValue::from(secs.max(1)));
        }
        response
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

//! The one place lattice's typed errors (REQUIREMENTS.md L8) become HTTP responses:
//! `{"error": {"type": "ValidationFailed", …}}` with the status CONTRACT gives.
//! Every HTTP surface (the `/v1` API, the MCP transport, the edge) fails
//! through [`ApiError`]; nothing writes a refusal's status and body by hand.
//!
//! What a library answers by itself (axum's bare 404 and 405, a static
//! file's, rmcp's plain-text refusals at `/mcp`) is read back as the typed
//! error it stands for ([`error_of`]) and written through the same mapping
//! by [`typed_refusals`], so a client meets one shape whichever part of a
//! service refused it.
//!
//! Every body names its stable `code` and a `link` to the code's
//! documentation, which the deployment serves itself
//! ([`ERRORS_PATH`](crate::ERRORS_PATH), written by
//! [`errors_page`](crate::error_docs::errors_page) from the one table of
//! codes).

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use lattice_core::error::Linked;
use lattice_core::{Code, Error};

use crate::error_link::link_of;

/// An error on its way to the wire.
#[derive(Debug)]
pub struct ApiError(pub Error);

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        Self(e)
    }
}

/// The status of each type of error: the one table there is.
pub fn status_of(e: &Error) -> StatusCode {
    match e {
        Error::Malformed { .. } => StatusCode::BAD_REQUEST,
        Error::Unauthorized { .. } => StatusCode::UNAUTHORIZED,
        Error::Forbidden { .. } => StatusCode::FORBIDDEN,
        Error::NotFound => StatusCode::NOT_FOUND,
        Error::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
        Error::NotAcceptable { .. } => StatusCode::NOT_ACCEPTABLE,
        Error::Conflict { .. } | Error::InvalidState { .. } => StatusCode::CONFLICT,
        Error::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
        Error::UnsupportedMediaType { .. } => StatusCode::UNSUPPORTED_MEDIA_TYPE,
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
        let error = match self.0.bounded() {
            // A wait of less than a second is a second, in the body as in
            // `Retry-After` (which counts whole seconds).
            Error::RateLimited { retry_after_secs } => Error::RateLimited { retry_after_secs: retry_after_secs.max(1) },
            error => error,
        };
        let status = status_of(&error);
        let retry_after = match &error {
            Error::RateLimited { retry_after_secs } => Some(*retry_after_secs),
            _ => None,
        };
        let link = link_of(error.code());
        let mut response = (status, axum::Json(serde_json::json!({ "error": Linked { error: &error, link: &link } }))).into_response();
        let headers = response.headers_mut();
        if status == StatusCode::UNAUTHORIZED {
            headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        if let Some(secs) = retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

/// A request's body, read whole within `limit` bytes, or `TooLarge`
/// naming that limit and the body's real size: its declared
/// `Content-Length` when that is over the limit (refused before a byte is
/// read), else the bytes that had come when the limit was passed (nothing
/// further is read).
pub async fn read_within(body: Body, declared: Option<u64>, limit: usize) -> Result<Bytes, Error> {
    let limit_u64 = limit as u64;
    let declared = declared.or_else(|| body.size_hint().exact());
    if let Some(size) = declared.filter(|d| *d > limit_u64) {
        return Err(Error::too_large(Code::BodyTooLarge, limit_u64, size));
    }
    if body.size_hint().exact() == Some(0) {
        return Ok(Bytes::new());
    }
    let mut body = body;
    let mut held = Vec::new();
    while let Some(frame) = std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx)).await {
        let frame = frame.map_err(|e| Error::malformed(Code::MalformedBody, format!("the body could not be read: {e}")))?;
        let Ok(data) = frame.into_data() else { continue };
        if held.len() + data.len() > limit {
            return Err(Error::too_large(Code::BodyTooLarge, limit_u64, (held.len() + data.len()) as u64));
        }
        held.extend_from_slice(&data);
    }
    Ok(Bytes::from(held))
}

/// A request's declared `Content-Length`, if it names one.
pub fn declared_length(headers: &axum::http::HeaderMap) -> Option<u64> {
    headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse().ok())
}

/// The typed error a refusal that a library wrote by itself stands for,
/// read from its status and its text (`said`): `None` for a status no
/// library in lattice writes without saying more than its status (413, 422,
/// 423…), which is then passed on as it is. Every 5xx is `Unavailable`,
/// the only error lattice answers with a 5xx.
pub fn error_of(method: &Method, status: StatusCode, said: &str) -> Option<Error> {
    let reason = || reason_of(status, said);
    Some(match status {
        StatusCode::BAD_REQUEST => Error::malformed(Code::Malformed, reason()),
        StatusCode::UNAUTHORIZED => Error::unauthorized(Code::Unauthorized, reason()),
        StatusCode::FORBIDDEN => Error::forbidden(Code::Forbidden, reason()),
        StatusCode::NOT_FOUND => Error::NotFound,
        StatusCode::METHOD_NOT_ALLOWED => Error::MethodNotAllowed { method: method.to_string() },
        StatusCode::NOT_ACCEPTABLE => Error::NotAcceptable { reason: reason() },
        StatusCode::UNSUPPORTED_MEDIA_TYPE => Error::UnsupportedMediaType { reason: reason() },
        s if s.is_server_error() => Error::Unavailable { reason: reason() },
        _ => return None,
    })
}

/// A library's text as a refusal's reason: without the status's own name
/// in front ("Not Acceptable: Client must…" says "client must…"), in the
/// errors' lower case; the status's name when it said nothing.
fn reason_of(status: StatusCode, said: &str) -> String {
    let name = status.canonical_reason().unwrap_or("refused");
    let said = said.trim();
    let said = said.strip_prefix(name).and_then(|rest| rest.strip_prefix(':')).map_or(said, str::trim_start);
    if said.is_empty() {
        return name.to_ascii_lowercase();
    }
    let mut chars = said.chars();
    match (chars.next(), chars.next()) {
        // "ID is required" keeps its capitals; "Client must" does not.
        (Some(first), Some(second)) if first.is_uppercase() && !second.is_uppercase() => {
            format!("{}{}", first.to_lowercase(), &said[first.len_utf8()..])
        }
        _ => said.to_owned(),
    }
}

/// The most of a library's refusal that is read to learn what it says.
const SAID_BYTES: u64 = 4096;

/// A layer that writes every refusal a library made by itself (an error
/// status without a JSON body) through the one mapping: what [`error_of`]
/// reads it as, with its `Allow` header kept. JSON answers pass untouched
/// (the mapping's own, and JSON-RPC errors, which stay JSON-RPC), and so
/// does every success, stream and unknown refusal.
pub async fn typed_refusals(req: Request, next: Next) -> Response {
    let method = req.method().clone();
    let response = next.run(req).await;
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) || is_json(&response) {
        return response;
    }
    // Only a small body that is all there is: a stream is passed on.
    if response.body().size_hint().upper().is_none_or(|n| n > SAID_BYTES) {
        return response;
    }
    let (parts, body) = response.into_parts();
    let Ok(said) = axum::body::to_bytes(body, SAID_BYTES as usize).await else {
        return ApiError(Error::unavailable("the refusal could not be read")).into_response();
    };
    let Some(error) = error_of(&method, status, &String::from_utf8_lossy(&said)) else {
        return Response::from_parts(parts, Body::from(said));
    };
    let mut typed = ApiError(error).into_response();
    if let Some(allow) = parts.headers.get(header::ALLOW) {
        typed.headers_mut().insert(header::ALLOW, allow.clone());
    }
    typed
}

fn is_json(response: &Response) -> bool {
    response.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|t| {
        // JSON, or a JSON of its own (`application/scim+json`): written
        // by a handler, never by a library.
        t.split(';')
            .next()
            .map(|e| e.trim().to_ascii_lowercase())
            .is_some_and(|e| e == "application/json" || (e.starts_with("application/") && e.ends_with("+json")))
    })
}

/// A fallback answering a method a path is not served with
/// (`Router::method_not_allowed_fallback`): axum adds the `Allow` header.
pub async fn method_not_allowed(method: Method) -> ApiError {
    ApiError(Error::MethodNotAllowed { method: method.to_string() })
}

/// A fallback answering a path nothing is served at.
pub async fn not_found() -> ApiError {
    ApiError(Error::NotFound)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_librarys_words_become_a_reason() {
        for (status, said, reason) in [
            (StatusCode::NOT_ACCEPTABLE, "Not Acceptable: Client must accept text/event-stream", "client must accept text/event-stream"),
            (StatusCode::BAD_REQUEST, "Bad Request: Session ID is required", "session ID is required"),
            (StatusCode::BAD_REQUEST, "", "bad request"),
            (StatusCode::FORBIDDEN, "Forbidden: Origin header is not allowed", "origin header is not allowed"),
            (StatusCode::UNSUPPORTED_MEDIA_TYPE, "fail to deserialize request body", "fail to deserialize request body"),
            (StatusCode::BAD_REQUEST, "ID missing", "ID missing"),
        ] {
            assert_eq!(reason_of(status, said), reason, "{said:?}");
        }
    }

    #[test]
    fn statuses_a_library_writes_read_back_as_their_types() {
        let read = |status: StatusCode| error_of(&Method::PUT, status, "").map(|e| (e.type_name(), status_of(&e)));
        for status in [400, 401, 403, 404, 405, 406, 415, 500, 502, 503, 504] {
            let status = StatusCode::from_u16(status).unwrap();
            let (name, back) = read(status).unwrap_or_else(|| panic!("{status}"));
            // The status comes back as it went, but a 5xx, which is 503.
            let expected = if status.is_server_error() { StatusCode::SERVICE_UNAVAILABLE } else { status };
            assert_eq!(back, expected, "{status} is read as {name}");
        }
        for status in [408, 409, 413, 422, 423, 429] {
            assert_eq!(read(StatusCode::from_u16(status).unwrap()), None, "{status}");
        }
        assert_eq!(
            error_of(&Method::PUT, StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed"),
            Some(Error::MethodNotAllowed { method: "PUT".into() })
        );
    }
}

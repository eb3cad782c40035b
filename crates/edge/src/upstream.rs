//! `/v1` and the live streams, passed to the log service (`lattice serve
//! edge`). Bodies stream both ways, so Server-Sent Events flow as they are
//! written; hop-by-hop headers stay on their hop.

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::TryStreamExt;

#[derive(Clone)]
struct Upstream {
    base: String,
    client: reqwest::Client,
}

/// Forwards `/v1/*`, `/openapi.json` and `/readyz` to `base` (the log
/// service, e.g. `http://127.0.0.1:8090`).
pub fn upstream_router(base: &str) -> Router {
    let upstream = Upstream { base: base.trim_end_matches('/').to_owned(), client: reqwest::Client::new() };
    Router::new()
        .route("/v1/{*rest}", axum::routing::any(forward))
        .route("/openapi.json", axum::routing::get(forward))
        .route("/readyz", axum::routing::get(forward))
        .with_state(upstream)
}

const HOP_BY_HOP: [HeaderName; 6] =
    [header::CONNECTION, header::HOST, header::TRANSFER_ENCODING, header::TE, header::TRAILER, header::UPGRADE];

fn copy_headers(from: &HeaderMap, to: &mut HeaderMap) {
    for (name, value) in from {
        if !HOP_BY_HOP.contains(name) && name != header::CONTENT_LENGTH {
            to.append(name, value.clone());
        }
    }
}

async fn forward(State(up): State<Upstream>, req: Request) -> Response {
    let path = req.uri().path_and_query().map_or("/", |p| p.as_str()).to_owned();
    let method = req.method().clone();
    let mut headers = HeaderMap::new();
    copy_headers(req.headers(), &mut headers);
    // Requests are small (the log service caps them); stream the answer only.
    let body = match axum::body::to_bytes(req.into_body(), 8 * 1024 * 1024).await {
        Ok(b) => b,
        Err(_) => return (StatusCode::PAYLOAD_TOO_LARGE, "the request is too large").into_response(),
    };
    let sent = up.client.request(method, format!("{}{path}", up.base)).headers(headers).body(body).send().await;
    match sent {
        Ok(answer) => {
            let mut response = Response::builder().status(answer.status());
            if let Some(h) = response.headers_mut() {
                copy_headers(answer.headers(), h);
            }
            let stream = answer.bytes_stream().map_err(std::io::Error::other);
            response.body(Body::from_stream(stream)).unwrap_or_else(|_| StatusCode::BAD_GATEWAY.into_response())
        }
        Err(e) => {
            tracing::warn!(error = %e, "the log service did not answer");
            (
                StatusCode::BAD_GATEWAY,
                axum::Json(serde_json::json!({"error": {"type": "Unavailable", "reason": "the log service did not answer"}})),
            )
                .into_response()
        }
    }
}

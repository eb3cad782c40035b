//! `/v1` and the live streams, passed to the log service, and `/mcp` to
//! the MCP exporter (`lattice serve edge`). Bodies stream both ways without being held, so Server-Sent
//! Events flow as they are written; hop-by-hop headers stay on their hop.
//! A bare hyper client keeps the extra hop cheap (`cargo xtask bench edge`).

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderName, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

#[derive(Clone)]
struct Upstream {
    /// `http://host:port`, no trailing slash.
    base: String,
    client: Client<HttpConnector, Body>,
    /// What answers there, for the error when it does not.
    name: &'static str,
}

impl Upstream {
    fn new(base: &str, name: &'static str) -> Self {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        let client = Client::builder(TokioExecutor::new()).build(connector);
        Self { base: base.trim_end_matches('/').to_owned(), client, name }
    }
}

/// Forwards `/v1/*`, `/openapi.json` and `/readyz` to `base` (the log
/// service, e.g. `http://127.0.0.1:8090`).
pub fn upstream_router(base: &str) -> Router {
    Router::new()
        .route("/v1/{*rest}", axum::routing::any(forward))
        .route("/openapi.json", axum::routing::get(forward))
        .route("/readyz", axum::routing::get(forward))
        .with_state(Upstream::new(base, "the log service"))
}

/// Forwards `/mcp` to `base` (`lattice serve mcp`), so MCP clients find it
/// beside the chat, as with `lattice up`.
pub fn mcp_router(base: &str) -> Router {
    Router::new().route("/mcp", axum::routing::any(forward)).with_state(Upstream::new(base, "the MCP exporter"))
}

const HOP_BY_HOP: [HeaderName; 7] = [
    header::CONNECTION,
    header::HOST,
    header::TRANSFER_ENCODING,
    header::TE,
    header::TRAILER,
    header::UPGRADE,
    header::PROXY_AUTHORIZATION,
];

fn unavailable(name: &str) -> Response {
    (
        StatusCode::BAD_GATEWAY,
        axum::Json(serde_json::json!({"error": {"type": "Unavailable", "reason": format!("{name} did not answer")}})),
    )
        .into_response()
}

async fn forward(State(up): State<Upstream>, req: Request) -> Response {
    let (mut parts, body) = req.into_parts();
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let Ok(uri) = format!("{}{path}", up.base).parse::<Uri>() else { return unavailable(up.name) };
    parts.uri = uri;
    for name in HOP_BY_HOP {
        parts.headers.remove(name);
    }
    // The upstream's span is a child of this request's.
    if let Some(traceparent) = lattice_telemetry::traceparent().and_then(|t| t.parse().ok()) {
        parts.headers.insert("traceparent", traceparent);
    }
    match up.client.request(Request::from_parts(parts, body)).await {
        Ok(answer) => {
            let (mut parts, body) = answer.into_parts();
            for name in HOP_BY_HOP {
                parts.headers.remove(name);
            }
            Response::from_parts(parts, Body::new(body))
        }
        Err(e) => {
            tracing::warn!(error = %e, upstream = up.name, "no answer");
            unavailable(up.name)
        }
    }
}

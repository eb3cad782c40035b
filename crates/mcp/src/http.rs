//! `/mcp`: the exporter over streamable HTTP. Every request carries a
//! bearer token, verified once here (the exporter reads the caller from the
//! request); every message a client posts counts against the caller's
//! write rate; browser-based hosts on the allowed origins get CORS.

use std::sync::Arc;

use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use lattice_api::ApiError;
use lattice_api::guard::Guard;
use lattice_core::Error;
use lattice_log::Authenticator;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::Exporter;

/// The `/mcp` routes, serving `exporter` to every session: the app state
/// writes it merges are per app, whichever session they come from.
pub fn router(exporter: Exporter, auth: Authenticator, guard: Arc<Guard>, allowed_origins: Vec<String>) -> axum::Router {
    let service = StreamableHttpService::new(
        move || Ok(exporter.clone()),
        Arc::new(LocalSessionManager::default()),
        // The Host check is every service's, in one place (lattice-api's guard).
        StreamableHttpServerConfig::default()
            .disable_allowed_hosts()
            .with_allowed_origins(allowed_origins.clone())
            .enforce_origin_validation(),
    );
    let router = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn(move |req: Request, next: Next| admit(auth.clone(), guard.clone(), req, next)));
    if allowed_origins.is_empty() {
        return router;
    }
    // The preflight is answered before the token check, which it carries
    // no token for.
    let allowed: Vec<HeaderValue> = allowed_origins.iter().filter_map(|o| o.parse().ok()).collect();
    let cors = tower_http::cors::CorsLayer::new()
        .allow_origin(allowed)
        .allow_methods([Method::GET, Method::POST, Method::DELETE])
        .allow_headers([
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            header::ACCEPT,
            HeaderName::from_static("mcp-session-id"),
            HeaderName::from_static("mcp-protocol-version"),
            HeaderName::from_static("last-event-id"),
        ])
        .expose_headers([HeaderName::from_static("mcp-session-id")]);
    router.layer(cors)
}

async fn admit(auth: Authenticator, guard: Arc<Guard>, mut req: Request, next: Next) -> Response {
    let header = req.headers().get(header::AUTHORIZATION).map(HeaderValue::as_bytes);
    let who = match auth.verify_header(header) {
        Ok(who) => who,
        Err(Error::Unauthorized { reason }) => {
            return ApiError(Error::Unauthorized { reason: format!("MCP needs a bearer token: {reason}") }).into_response();
        }
        Err(e) => return ApiError(e).into_response(),
    };
    if req.method() == Method::POST
        && let Err(e) = guard.admit_write(who.principal())
    {
        return ApiError(e).into_response();
    }
    req.extensions_mut().insert(who);
    next.run(req).await
}

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
use axum::http::StatusCode;
use lattice_log::{Authenticator, Sessions};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::Exporter;

/// The `/mcp` routes, serving `exporter` to every session: the app state
/// writes it merges are per app, whichever session they come from.
pub fn router(exporter: Exporter, auth: Authenticator, guard: Arc<Guard>, allowed_origins: Vec<String>) -> axum::Router {
    let sessions = exporter.log.sessions();
    // The Host check is every service's, in one place (lattice-api's guard).
    let mut config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .with_allowed_origins(allowed_origins.clone())
        .enforce_origin_validation();
    // Any replica serves any session (crate::sessions says why).
    config.session_store = Some(Arc::new(crate::sessions::SharedSessions(sessions.clone())));
    let service = StreamableHttpService::new(move || Ok(exporter.clone()), Arc::new(LocalSessionManager::default()), config);
    let router = axum::Router::new().nest_service("/mcp", service).layer(axum::middleware::from_fn(move |req: Request, next: Next| {
        admit(auth.clone(), guard.clone(), sessions.clone(), req, next)
    }));
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

/// Where `/mcp`'s protected-resource metadata is (RFC 9728: the
/// well-known prefix before the resource's path).
pub const RESOURCE_METADATA: &str = "/.well-known/oauth-protected-resource/mcp";

/// The protected-resource metadata of `/mcp` (RFC 9728): the resource, the
/// authorization servers configured to issue its tokens, and that a token
/// goes in the `Authorization` header. lattice is not an authorization
/// server: it verifies the tokens it is configured to trust.
pub fn protected_resource(authorization_servers: Vec<String>) -> axum::Router {
    axum::Router::new().route(
        RESOURCE_METADATA,
        axum::routing::get(move |headers: axum::http::HeaderMap| {
            let servers = authorization_servers.clone();
            async move {
                axum::Json(serde_json::json!({
                    "resource": format!("{}/mcp", origin(&headers)),
                    "authorization_servers": servers,
                    "bearer_methods_supported": ["header"],
                    "resource_name": "lattice",
                }))
            }
        }),
    )
}

/// The origin a request was addressed to: the name the edge in front
/// received it on, or its own Host (which the guard has checked against the
/// configured names), and the scheme a proxy in front says it took. Only
/// ever written back to the same caller.
pub(crate) fn origin(headers: &axum::http::HeaderMap) -> String {
    let host = ["x-forwarded-host", "host"]
        .iter()
        .find_map(|h| headers.get(*h).and_then(|v| v.to_str().ok()))
        .filter(|h| h.bytes().all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b)))
        .unwrap_or("localhost");
    let scheme = headers.get("x-forwarded-proto").and_then(|v| v.to_str().ok()).filter(|p| *p == "https").unwrap_or("http");
    format!("{scheme}://{host}")
}

/// A 401 that tells an MCP client where to find how to get a token.
fn unauthorized(reason: String, headers: &axum::http::HeaderMap) -> Response {
    let mut response = ApiError(Error::Unauthorized { reason }).into_response();
    let challenge = format!("Bearer resource_metadata=\"{}{RESOURCE_METADATA}\"", origin(headers));
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// The header naming a request's session.
const SESSION: &str = "mcp-session-id";

async fn admit(auth: Authenticator, guard: Arc<Guard>, sessions: Sessions, mut req: Request, next: Next) -> Response {
    let header = req.headers().get(header::AUTHORIZATION).map(HeaderValue::as_bytes);
    let who = match auth.verify_header(header) {
        Ok(who) => who,
        Err(Error::Unauthorized { reason }) => return unauthorized(format!("MCP needs a bearer token: {reason}"), req.headers()),
        Err(e) => return ApiError(e).into_response(),
    };
    if req.method() == Method::POST
        && let Err(e) = guard.admit_write(who.principal())
    {
        return ApiError(e).into_response();
    }
    // A session is its opener's: another caller naming it finds nothing.
    let session = req.headers().get(SESSION).and_then(|v| v.to_str().ok()).map(str::to_owned);
    if let Some(id) = &session {
        match sessions.owned_by(id, who.principal()).await {
            Ok(Some(false)) => return (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response(),
            Ok(_) => {}
            Err(e) => return ApiError(e).into_response(),
        }
    }
    let principal = who.principal().clone();
    req.extensions_mut().insert(who);
    let response = next.run(req).await;
    if session.is_none()
        && let Some(id) = response.headers().get(SESSION).and_then(|v| v.to_str().ok())
        && let Err(e) = sessions.open(id, &principal).await
    {
        return ApiError(e).into_response();
    }
    response
}

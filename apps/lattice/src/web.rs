//! Serves the chat host's built files: hashed assets cached for good, the
//! page itself never, gzip copies to browsers that take them, and every
//! other path the page (its routes are the client's).

use std::path::Path;

use axum::Router;
use axum::http::{HeaderValue, header};
use tower_http::services::{ServeDir, ServeFile};
use tower_http::set_header::SetResponseHeaderLayer;

/// The portal's policy (SPEC E2): its own scripts and WebAssembly, frames
/// from the apps origin only, and never framed itself.
fn policy(apps_origin: &str) -> HeaderValue {
    let csp = format!(
        "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data:; \
         connect-src 'self'; frame-src {apps_origin}; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'"
    );
    HeaderValue::from_str(&csp).unwrap_or_else(|_| HeaderValue::from_static("default-src 'self'; frame-ancestors 'none'"))
}

/// `/assets/*` and, for any path `/v1` and the service routes do not take,
/// `index.html`.
pub fn routes(dir: &Path, apps_origin: &str) -> Router {
    if !dir.join("index.html").exists() {
        tracing::warn!(dir = %dir.display(), "the chat host is not built here: run `cargo xtask web` (or set LATTICE_WEB_DIR)");
    }
    let assets = ServeDir::new(dir.join("assets")).precompressed_gzip();
    let index = ServeFile::new(dir.join("index.html")).precompressed_gzip();
    Router::new()
        .nest_service(
            "/assets",
            tower::ServiceBuilder::new()
                .layer(SetResponseHeaderLayer::overriding(
                    header::CACHE_CONTROL,
                    HeaderValue::from_static("public, max-age=31536000, immutable"),
                ))
                .service(assets),
        )
        .fallback_service(
            tower::ServiceBuilder::new()
                .layer(SetResponseHeaderLayer::overriding(header::CACHE_CONTROL, HeaderValue::from_static("no-cache")))
                .layer(SetResponseHeaderLayer::overriding(header::CONTENT_SECURITY_POLICY, policy(apps_origin)))
                .service(index),
        )
        .layer(SetResponseHeaderLayer::overriding(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")))
        .layer(SetResponseHeaderLayer::overriding(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer")))
}

//! The portal host: the chat host's built files. Hashed assets are cached
//! for good, the page itself never; brotli copies go to browsers that take
//! them, gzip copies to the rest; every path that is not an asset, `/v1`
//! or a service route gets the page (its routes are the client's). `/config.json` tells the page where
//! the apps origin is and the policy for app-originated calls.

use std::path::Path;

use axum::Router;
use axum::http::{HeaderValue, header};
use tower_http::services::{ServeDir, ServeFile};
use tower_http::set_header::SetResponseHeaderLayer;

/// What the page needs to know of the deployment.
#[derive(Debug, Clone)]
pub struct PortalConfig {
    /// The apps origin as browsers reach it, e.g. `http://localhost:8081`.
    pub apps_origin: String,
    /// Whether the page takes `/#token=` sign-in links: the embedded and
    /// local profiles only.
    pub link_sign_in: bool,
}

/// The portal's policy (REQUIREMENTS.md E2): its own scripts and WebAssembly, its
/// own images and the thumbnails it fetched (as `blob:`), frames
/// from the apps origin only, and never framed itself.
fn policy(apps_origin: &str) -> HeaderValue {
    let csp = format!(
        "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data: blob:; \
         connect-src 'self'; frame-src {apps_origin}; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'"
    );
    HeaderValue::from_str(&csp).unwrap_or_else(|_| HeaderValue::from_static("default-src 'self'; frame-ancestors 'none'"))
}

/// `/assets/*`, `/config.json`, and the page for every other path.
pub fn portal_router(dir: &Path, config: PortalConfig) -> Router {
    if !dir.join("index.html").exists() {
        tracing::warn!(dir = %dir.display(), "the chat host is not built here: run `cargo xtask web` (or set LATTICE_WEB_DIR)");
    }
    let assets = ServeDir::new(dir.join("assets")).precompressed_br().precompressed_gzip();
    let index = ServeFile::new(dir.join("index.html")).precompressed_br().precompressed_gzip();
    // The vendored SDK's name and version, which apps see in hostInfo.
    let sdk = std::fs::read_to_string(dir.join("sdk/version.txt")).ok().map(|v| v.trim().to_owned());
    let page_config = serde_json::json!({
        "apps_origin": config.apps_origin,
        "sdk": sdk,
        "sandbox": format!("{}/sandbox", config.apps_origin),
        "link_sign_in": config.link_sign_in,
    });
    Router::new()
        .route(
            "/config.json",
            axum::routing::get(move || {
                let body = page_config.clone();
                async move { ([(header::CACHE_CONTROL, "no-cache")], axum::Json(body)) }
            }),
        )
        .nest_service(
            "/assets",
            tower::ServiceBuilder::new()
                .layer(SetResponseHeaderLayer::overriding(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=31536000, immutable")))
                .service(assets),
        )
        .fallback_service(
            tower::ServiceBuilder::new()
                .layer(SetResponseHeaderLayer::overriding(header::CACHE_CONTROL, HeaderValue::from_static("no-cache")))
                .layer(SetResponseHeaderLayer::overriding(header::CONTENT_SECURITY_POLICY, policy(&config.apps_origin)))
                .service(index),
        )
        // A method the files are not served with, or an asset that is not
        // there, refused through the one mapping every service uses.
        .method_not_allowed_fallback(lattice_http::error::method_not_allowed)
        .layer(axum::middleware::from_fn(lattice_http::error::typed_refusals))
        .layer(SetResponseHeaderLayer::overriding(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")))
        .layer(SetResponseHeaderLayer::overriding(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer")))
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::http::Request;
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    /// The page and its assets are served; an asset that is not there and
    /// a method the files are not served with are refused through the one
    /// mapping, as JSON.
    #[tokio::test]
    async fn what_the_files_are_not_is_refused_through_the_one_mapping() {
        let dir = std::env::temp_dir().join(format!("lattice-portal-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("assets")).unwrap();
        std::fs::write(dir.join("index.html"), "<!doctype html><title>lattice</title>").unwrap();
        std::fs::write(dir.join("assets/app.js"), "0").unwrap();
        let router = super::portal_router(&dir, super::PortalConfig { apps_origin: "http://127.0.0.1:8081".into(), link_sign_in: false });
        for (method, path, status, body) in [
            ("GET", "/t/th_1", 200, "<!doctype html><title>lattice</title>"),
            ("GET", "/assets/app.js", 200, "0"),
            ("GET", "/assets/gone.js", 404, r#"{"error":{"type":"NotFound","code":"not_found","link":"/docs/errors#not_found"}}"#),
            (
                "POST",
                "/assets/app.js",
                405,
                r#"{"error":{"type":"MethodNotAllowed","code":"method_not_allowed","link":"/docs/errors#method_not_allowed","method":"POST"}}"#,
            ),
            (
                "DELETE",
                "/t/th_1",
                405,
                r#"{"error":{"type":"MethodNotAllowed","code":"method_not_allowed","link":"/docs/errors#method_not_allowed","method":"DELETE"}}"#,
            ),
            (
                "PUT",
                "/config.json",
                405,
                r#"{"error":{"type":"MethodNotAllowed","code":"method_not_allowed","link":"/docs/errors#method_not_allowed","method":"PUT"}}"#,
            ),
        ] {
            let res = router.clone().oneshot(Request::builder().method(method).uri(path).body(Body::empty()).unwrap()).await.unwrap();
            assert_eq!(res.status(), status, "{method} {path}");
            let got = String::from_utf8(res.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap();
            assert_eq!(got, body, "{method} {path}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

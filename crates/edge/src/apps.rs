//! The apps origin (SPEC E1, E2, W4, W5b): `/sandbox`, the proxy document,
//! and `/sdk/<file>`, the vendored MCP Apps SDK. Nothing else; no cookie is
//! set, and a request's cookies are dropped before anything reads them.
//!
//! The proxy document's policy allows inline script: an inner `srcdoc`
//! document inherits its embedder's policy in Chromium, so a proxy limited
//! to its own script's hash would stop every app's inline script too (seen,
//! and kept as a test). What the inner document may reach is closed by the
//! policy the proxy puts first in it, which the app can only narrow.

use std::path::{Path, PathBuf};

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

pub use lattice_ui::app::INNER_POLICY;

/// What the apps origin serves.
#[derive(Debug, Clone)]
pub struct AppsOrigin {
    /// The portal's origin: the only parent the proxy talks to, and the only
    /// one that may frame it.
    pub portal_origin: String,
    /// The folder with the vendored SDK (`ext-apps.js`), when built.
    pub sdk_dir: Option<PathBuf>,
}

pub fn apps_router(origin: AppsOrigin) -> Router {
    let sdk_file = origin.sdk_dir.as_deref().map(|d| d.join("ext-apps.js")).filter(|p| p.exists());
    let sdk_path = sdk_file.as_ref().map(|_| "/sdk/ext-apps.js".to_owned());
    let script = include_str!("sandbox.js")
        .replace("__HOST__", &js_string(&origin.portal_origin))
        .replace("__SDK__", &sdk_path.as_deref().map_or("null".into(), js_string))
        .replace("__PRELUDE__", &js_string(&lattice_ui::app::prelude()).replace('/', "\\/"));
    let document = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>lattice sandbox</title></head><body><script>{script}</script></body></html>"
    );
    let policy = format!(
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; font-src data:; \
         connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors {}",
        origin.portal_origin
    );
    let sandbox = move || {
        let (document, policy) = (document.clone(), policy.clone());
        async move {
            (
                [
                    (header::CONTENT_TYPE, "text/html; charset=utf-8".to_owned()),
                    (header::CONTENT_SECURITY_POLICY, policy),
                    (header::CACHE_CONTROL, "no-cache".to_owned()),
                ],
                document,
            )
        }
    };
    let mut router = Router::new().route("/sandbox", axum::routing::get(sandbox));
    if let Some(file) = sdk_file {
        router = router.route_service("/sdk/ext-apps.js", tower_http::services::ServeFile::new(file));
    } else {
        tracing::warn!("the MCP Apps SDK is not built: apps that ask for it get nothing (run `cargo xtask web`)");
    }
    router
        .fallback(|| async { (StatusCode::NOT_FOUND, "the apps origin serves the sandbox only") })
        .layer(axum::middleware::from_fn(holds_nothing))
}

/// Drops the request's cookies; sets none; forbids sniffing and referrers.
async fn holds_nothing(mut req: Request, next: Next) -> Response {
    req.headers_mut().remove(header::COOKIE);
    let mut response = next.run(req).await.into_response();
    let headers = response.headers_mut();
    headers.remove(header::SET_COOKIE);
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

fn js_string(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

/// Where the vendored SDK is, beside the chat host's files.
pub fn sdk_dir_of(web_dir: &Path) -> PathBuf {
    web_dir.join("sdk")
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_proxy_script_can_be_inlined() {
        // An end tag inside would end the script element early.
        assert!(!include_str!("sandbox.js").to_ascii_lowercase().contains("</script"));
    }
}

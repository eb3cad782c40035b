//! The apps origin (REQUIREMENTS.md E1, E2, W4, W5b): `/sandbox`, the proxy document,
//! `/sandbox/frame`, the inner frame an app's document is written into, and
//! `/sdk/<file>`, the vendored MCP Apps SDK. Nothing else; no cookie is set,
//! and a request's cookies are dropped before anything reads them.
//!
//! The proxy runs its one script by hash under `default-src 'none'`. An
//! app's inline scripts run in the inner frame, which is a document of its
//! own (not a `srcdoc`, which would inherit the proxy's policy): served with
//! the app policy (no network at all), sandboxed to an opaque origin, it
//! writes the app's document, whose first element repeats that policy.
//!
//! A connected server's app may be granted more (docs/MCP.md, "The domains
//! an app declares"): `/sandbox/frame?server=<name>&resource=<origin>…`
//! asks for origins the server declared; the frame is served with what of
//! them the operator allowed for that server (`lattice_ui::app_domains`),
//! never more. An app's own script cannot widen its frame: a document it
//! navigates to is a fresh frame whose loader writes nothing it is not
//! handed by the proxy, once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{RawQuery, Request};
use axum::http::{HeaderValue, header};
use axum::response::Response;
use tower::Layer;

pub use lattice_ui::app::INNER_POLICY;
use lattice_ui::app_domains::{self, Domains};

/// What the apps origin serves.
#[derive(Debug, Clone)]
pub struct AppsOrigin {
    /// The portal's origin: the only parent the proxy talks to, and the only
    /// one that may frame it.
    pub portal_origin: String,
    /// The folder with the vendored SDK (`ext-apps.js`), when built.
    pub sdk_dir: Option<PathBuf>,
    /// What the operator allows each connected server's apps to reach
    /// (checked: `Domains::allowance`), by server name. A server not here
    /// gets no network.
    pub allowances: BTreeMap<String, Domains>,
}

/// The longest query of a frame's address read: past it, nothing is granted.
const FRAME_QUERY_MAX: usize = 8 * 1024;

pub fn apps_router(origin: AppsOrigin) -> Router {
    let sdk_file = origin.sdk_dir.as_deref().map(|d| d.join("ext-apps.js")).filter(|p| p.exists());
    let sdk_path = sdk_file.as_ref().map(|_| "/sdk/ext-apps.js".to_owned());
    let script = include_str!("sandbox.js")
        .replace("__HOST__", &js_string(&origin.portal_origin))
        .replace("__SDK__", &sdk_path.as_deref().map_or("null".into(), js_string));
    let document = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>lattice sandbox</title></head><body><script>{script}</script></body></html>"
    );
    // The proxy's own script, by its hash, and nothing else: frames of this
    // origin (the inner frame) and the SDK fetched from it.
    let policy = format!(
        "default-src 'none'; script-src '{}'; frame-src 'self'; connect-src 'self'; form-action 'none'; base-uri 'none'; \
         frame-ancestors {}",
        script_hash(&script),
        origin.portal_origin
    );
    let ancestors = format!("frame-ancestors 'self' {}", origin.portal_origin);
    let frame_policy = format!("{INNER_POLICY}; {ancestors}");
    // Made once: each request takes a reference to the same bytes rather
    // than a copy of the document and of its policy.
    let (document, policy, frame_policy) = (Bytes::from(document), header_value(policy), header_value(frame_policy));
    let sandbox = move || {
        let (document, policy) = (document.clone(), policy.clone());
        async move { (html_headers(policy), document) }
    };
    let plain_frame = Bytes::from(inner_frame(INNER_POLICY));
    let allowances = Arc::new(origin.allowances);
    let frame = move |RawQuery(query): RawQuery| {
        let granted = query.filter(|q| q.len() <= FRAME_QUERY_MAX).map(|q| granted(&allowances, &q)).unwrap_or_default();
        let (policy, document) = if granted.is_empty() {
            (frame_policy.clone(), plain_frame.clone())
        } else {
            let policy = app_domains::policy(&granted);
            (header_value(format!("{policy}; {ancestors}")), Bytes::from(inner_frame(&policy)))
        };
        async move { (html_headers(policy), document) }
    };
    let mut router = Router::new().route("/sandbox", axum::routing::get(sandbox)).route("/sandbox/frame", axum::routing::get(frame));
    if let Some(file) = sdk_file {
        // The file server's own refusals (a method it does not serve) go
        // through the one mapping; the rest of the origin writes none.
        let sdk = axum::middleware::from_fn(lattice_http::error::typed_refusals).layer(tower_http::services::ServeFile::new(file));
        router = router.route_service("/sdk/ext-apps.js", sdk);
    } else {
        tracing::warn!("the MCP Apps SDK is not built: apps that ask for it get nothing (run `cargo xtask web`)");
    }
    // Every other path is 404 `NotFound`, another method 405
    // `MethodNotAllowed`: the refusals every service writes, through the
    // one mapping. The cookies are dropped by plain functions, not an
    // async middleware: the proxy document is the one request an app's
    // every frame makes, and a middleware's boxed futures and clones of the
    // route cost it more than its own handler (`cargo xtask bench edge`).
    router.method_not_allowed_fallback(lattice_http::error::method_not_allowed).fallback(lattice_http::error::not_found).layer(
        tower::ServiceBuilder::new().map_request(drop_cookies as fn(Request) -> Request).map_response(holds_nothing as fn(Response) -> Response),
    )
}

/// No cookie reaches anything the origin serves.
fn drop_cookies(mut req: Request) -> Request {
    req.headers_mut().remove(header::COOKIE);
    req
}

/// Sets no cookie; forbids sniffing and referrers.
fn holds_nothing(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.remove(header::SET_COOKIE);
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

/// The inner frame: it asks its parent (the proxy) for the app's document,
/// once, and writes it in its own place, its prelude (`policy` again, and
/// WebRTC taken away) first, after a doctype.
fn inner_frame(policy: &str) -> String {
    let prelude = js_string(&lattice_ui::app::prelude_with(policy)).replace('/', "\\/");
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"></head><body><script>\
         (()=>{{const P={prelude};const take=(e)=>{{if(e.source!==window.parent||!e.data||e.data.lattice!=='document')return;\
         removeEventListener('message',take);const h=String(e.data.html),d=h.match(/^\\s*<!doctype[^>]*>/i);\
         document.open();document.write(d?d[0]+P+h.slice(d[0].length):P+h);document.close()}};\
         addEventListener('message',take);window.parent.postMessage({{lattice:'frame-ready'}},'*')}})()</script></body></html>"
    )
}

/// What a frame's query asks for, as far as its server's allowance goes:
/// `server=<name>` and the origins its app declared, by kind; no more
/// pairs are read than a declaration may hold.
fn granted(allowances: &BTreeMap<String, Domains>, query: &str) -> Domains {
    let pairs: Vec<(String, String)> =
        url::form_urlencoded::parse(query.as_bytes()).take(4 * app_domains::DOMAINS_MAX + 1).map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
    let Some(allowed) = pairs.iter().find(|(k, _)| k == "server").and_then(|(_, name)| allowances.get(name)) else {
        return Domains::default();
    };
    allowed.granted(&Domains::from_pairs(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str()))))
}

/// A script's CSP source: `sha256-` and its digest in base64.
fn script_hash(script: &str) -> String {
    use base64::Engine;
    use sha2::Digest;
    format!("sha256-{}", base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(script.as_bytes())))
}

/// An HTML document's headers under `policy`, never cached.
fn html_headers(policy: HeaderValue) -> [(header::HeaderName, HeaderValue); 3] {
    [
        (header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8")),
        (header::CONTENT_SECURITY_POLICY, policy),
        (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
    ]
}

/// A policy as a header's value; one a header cannot carry (a portal
/// origin with a control character in it) is refused for everything.
fn header_value(policy: String) -> HeaderValue {
    HeaderValue::try_from(policy).unwrap_or_else(|e| {
        tracing::error!(error = %e, "the apps origin's policy is not a header value: every document it serves is refused everything");
        HeaderValue::from_static("default-src 'none'; frame-ancestors 'none'")
    })
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

#[cfg(test)]
mod policy_tests {
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    use super::*;

    async fn get(router: &Router, path: &str) -> (String, String) {
        let res = router.clone().oneshot(axum::http::Request::get(path).body(axum::body::Body::empty()).unwrap()).await.unwrap();
        let policy = res.headers().get(header::CONTENT_SECURITY_POLICY).map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
        let body = String::from_utf8(res.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap();
        (policy, body)
    }

    /// The proxy runs its own script alone, by hash; the inner frame runs
    /// under the app policy, framed only by the proxy and the portal.
    #[tokio::test]
    async fn the_proxy_runs_its_script_by_hash_and_the_frame_reaches_nothing() {
        let router = apps_router(AppsOrigin { portal_origin: "http://127.0.0.1:8080".into(), sdk_dir: None, allowances: Default::default() });
        let (policy, document) = get(&router, "/sandbox").await;
        // The one script element: from its start tag to the last end tag (the
        // prelude it carries holds a start tag in a string).
        let start = document.find("<script>").unwrap() + "<script>".len();
        let script = &document[start..document.rfind("</script>").unwrap()];
        assert!(policy.starts_with("default-src 'none'; script-src 'sha256-"), "{policy}");
        assert!(policy.contains(&format!("'{}'", script_hash(script))), "the hash is the script's: {policy}");
        assert!(!policy.contains("unsafe-inline"), "{policy}");
        assert!(policy.ends_with("frame-ancestors http://127.0.0.1:8080"), "{policy}");
        let (policy, frame) = get(&router, "/sandbox/frame").await;
        assert!(policy.starts_with(INNER_POLICY), "{policy}");
        assert!(policy.contains("connect-src 'none'") && policy.ends_with("frame-ancestors 'self' http://127.0.0.1:8080"), "{policy}");
        assert!(frame.contains("frame-ready") && frame.contains("document.write"), "{frame}");
    }

    /// A server's app gets, in its frame's policy, what it asked for of
    /// its server's allowance, and nothing another server is allowed.
    #[tokio::test]
    async fn a_frame_is_granted_what_its_servers_allowance_holds_and_no_more() {
        let allowed = Domains { resource: vec!["https://cesium.com".into()], connect: vec!["https://api.example.com".into()], ..Domains::default() };
        let allowances = BTreeMap::from([("map".to_owned(), allowed)]);
        let router = apps_router(AppsOrigin { portal_origin: "http://127.0.0.1:8080".into(), sdk_dir: None, allowances });
        let asked = "resource=https%3A%2F%2Fcesium.com&resource=https%3A%2F%2Fevil.example&connect=https%3A%2F%2F*.example.com";
        let (policy, frame) = get(&router, &format!("/sandbox/frame?server=map&{asked}")).await;
        assert!(policy.contains("script-src 'unsafe-inline' https://cesium.com;"), "{policy}");
        assert!(policy.contains("connect-src https://api.example.com;"), "a declared wildcard covers the allowed name: {policy}");
        assert!(!policy.contains("evil"), "{policy}");
        assert!(policy.ends_with("frame-ancestors 'self' http://127.0.0.1:8080"), "{policy}");
        // The document the frame writes repeats the policy it is served with.
        assert!(frame.contains(r"script-src 'unsafe-inline' https:\/\/cesium.com;"), "{frame}");
        for query in
            [format!("server=other&{asked}"), "server=map".to_owned(), format!("{asked}&server=map&resource=https%3A%2F%2Fcesium.com%2Fpath")]
        {
            let (policy, _) = get(&router, &format!("/sandbox/frame?{query}")).await;
            let granted = !policy.starts_with(INNER_POLICY);
            assert_eq!(granted, query.ends_with("%2Fpath"), "{query}: {policy}");
        }
        // A query at its bound is read; one byte over, nothing is granted.
        let asks = "server=map&resource=https%3A%2F%2Fcesium.com&pad=";
        let at = format!("/sandbox/frame?{asks}{}", "x".repeat(FRAME_QUERY_MAX - asks.len()));
        assert!(!get(&router, &at).await.0.starts_with(INNER_POLICY), "a query at its bound is granted");
        let over = format!("{at}x");
        assert!(get(&router, &over).await.0.starts_with(INNER_POLICY), "a query past its bound is granted nothing");
    }

    /// Anything but the sandbox is refused as every service refuses: 404
    /// `NotFound`, 405 `MethodNotAllowed` with `Allow`, as JSON, still
    /// setting no cookie.
    #[tokio::test]
    async fn the_rest_is_refused_through_the_one_mapping() {
        let router = apps_router(AppsOrigin { portal_origin: "http://127.0.0.1:8080".into(), sdk_dir: None, allowances: Default::default() });
        for (method, path, status, body) in [
            ("GET", "/", 404, r#"{"error":{"type":"NotFound","code":"not_found","link":"/docs/errors#not_found"}}"#),
            ("GET", "/files/fil_1", 404, r#"{"error":{"type":"NotFound","code":"not_found","link":"/docs/errors#not_found"}}"#),
            (
                "POST",
                "/sandbox",
                405,
                r#"{"error":{"type":"MethodNotAllowed","code":"method_not_allowed","link":"/docs/errors#method_not_allowed","method":"POST"}}"#,
            ),
        ] {
            let req = axum::http::Request::builder().method(method).uri(path).body(axum::body::Body::empty()).unwrap();
            let res = router.clone().oneshot(req).await.unwrap();
            assert_eq!(res.status(), status, "{method} {path}");
            assert_eq!(res.headers()[header::CONTENT_TYPE], "application/json");
            assert!(!res.headers().contains_key(header::SET_COOKIE));
            assert_eq!(res.headers()[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
            if status == 405 {
                assert_eq!(res.headers()[header::ALLOW], "GET,HEAD");
            }
            let got = String::from_utf8(res.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap();
            assert_eq!(got, body, "{method} {path}");
        }
    }

    /// The vendored SDK is served as a file, its refusals typed as the
    /// rest, and no cookie reaches it or comes back from it.
    #[tokio::test]
    async fn the_sdk_is_served_and_its_refusals_are_typed() {
        let dir = std::env::temp_dir().join(format!("lattice-apps-sdk-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("ext-apps.js"), "export const sdk = 1;\n").unwrap();
        let router =
            apps_router(AppsOrigin { portal_origin: "http://127.0.0.1:8080".into(), sdk_dir: Some(dir.clone()), allowances: Default::default() });
        let req = axum::http::Request::get("/sdk/ext-apps.js").header(header::COOKIE, "a=b").body(axum::body::Body::empty()).unwrap();
        let res = router.clone().oneshot(req).await.unwrap();
        assert_eq!(res.status(), 200);
        assert_eq!(res.headers()[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        assert_eq!(res.headers()[header::REFERRER_POLICY], "no-referrer");
        assert!(!res.headers().contains_key(header::SET_COOKIE));
        assert_eq!(res.into_body().collect().await.unwrap().to_bytes(), "export const sdk = 1;\n");
        let req = axum::http::Request::delete("/sdk/ext-apps.js").body(axum::body::Body::empty()).unwrap();
        let res = router.oneshot(req).await.unwrap();
        assert_eq!(res.status(), 405);
        assert_eq!(res.headers()[header::CONTENT_TYPE], "application/json");
        assert_eq!(res.headers()[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        let got = res.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(
            got,
            r#"{"error":{"type":"MethodNotAllowed","code":"method_not_allowed","link":"/docs/errors#method_not_allowed","method":"DELETE"}}"#
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}

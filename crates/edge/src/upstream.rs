//! `/v1` and the live streams, passed to the log service, and `/mcp` to
//! the MCP exporter (`lattice serve edge`). Answers stream back without
//! being held, so Server-Sent Events flow as they are written; hop-by-hop
//! headers stay on their hop. Kept-alive connections driven by the
//! request that uses them (`connections.rs`) keep the extra hop cheap (`cargo
//! xtask bench edge`).
//!
//! Several replicas (`LATTICE_LOG_URL=http://a:8080,http://b:8080`) take
//! requests in turn. A request's body (small: the log takes 1 MiB) is held
//! until a replica has it, so a request that a dead replica never received
//! goes to the next one; a replica that refused a connection is passed
//! over for a few seconds. A file's upload is the exception: it streams
//! through to one replica, held by nobody.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, Uri, header};
use axum::response::{IntoResponse, Response};
use http_body_util::Full;
use lattice_core::Error;
use lattice_http::ApiError;

use crate::connections::{Connections, Failed};
use lattice_http::forwarded::{self, TrustedProxies, X_FORWARDED_HOST, X_FORWARDED_PROTO};

/// The most of a request's body the edge holds (the MCP exporter takes
/// 4 MiB, the log service 1 MiB): more is refused here.
const HELD_BODY: usize = 4 * 1024 * 1024;
/// How long a replica that refused a connection is passed over.
const PASSED_OVER: Duration = Duration::from_secs(3);

#[derive(Clone)]
struct Upstream {
    /// `http://host:port` each, no trailing slash.
    bases: Arc<[Replica]>,
    /// The replica the next request goes to first.
    next: Arc<AtomicUsize>,
    /// What answers there, for the error when it does not.
    name: &'static str,
    /// The proxies in front of the edge, whose word on the name and scheme
    /// a request came by is passed on.
    trusted: TrustedProxies,
}

struct Replica {
    base: String,
    /// Its authority as configured, the `Host` of what is sent to it.
    host: HeaderValue,
    /// The path its URL names (`http://log:8080/lattice`), before each
    /// request's; empty for none.
    prefix: String,
    connections: Connections,
    /// Until when it is passed over (ms since the edge started), 0 if not.
    down_until: AtomicU64,
}

impl Upstream {
    /// `bases`: one URL or several, comma-separated.
    fn new(bases: &str, name: &'static str, trusted: TrustedProxies) -> Self {
        let bases: Arc<[Replica]> = bases.split(',').map(str::trim).filter(|b| !b.is_empty()).map(|b| Replica::of(b, name)).collect();
        Self { bases, next: Arc::default(), name, trusted }
    }

    /// The replicas in the order this request tries them: in turn, the
    /// ones passed over last (but still tried, when all are).
    fn order(&self) -> Vec<&Replica> {
        if let [only] = &self.bases[..] {
            return vec![only];
        }
        let n = self.bases.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        let now = since_start();
        let (mut up, mut down): (Vec<&Replica>, Vec<&Replica>) = (Vec::with_capacity(n), Vec::new());
        for i in 0..n {
            let replica = &self.bases[(start + i) % n];
            if replica.down_until.load(Ordering::Relaxed) > now { down.push(replica) } else { up.push(replica) }
        }
        up.extend(down);
        up
    }
}

impl Replica {
    /// A replica from its URL: `http://host[:port][/prefix]`. One that is
    /// none is said at start and kept, answering 503 as a replica that
    /// refuses connections does, so that the others still serve.
    fn of(url: &str, name: &str) -> Self {
        let base = url.trim_end_matches('/').to_owned();
        let parsed = base.parse::<Uri>().ok().filter(|u| u.scheme_str() == Some("http") && u.query().is_none());
        let (address, host, prefix) = match parsed.as_ref().and_then(|u| Some((u, u.authority()?))) {
            Some((uri, authority)) => (
                format!("{}:{}", authority.host(), authority.port_u16().unwrap_or(80)),
                HeaderValue::from_str(authority.as_str()).unwrap_or(HeaderValue::from_static("")),
                uri.path().trim_end_matches('/').to_owned(),
            ),
            None => {
                tracing::error!(upstream = name, url = %base, "not an http:// URL of a replica; it will not be reached");
                (String::new(), HeaderValue::from_static(""), String::new())
            }
        };
        Self { connections: Connections::new(address), host, prefix, base, down_until: AtomicU64::new(0) }
    }

    /// What `path` is asked as on this replica, in origin form.
    fn uri(&self, path: &Uri) -> Uri {
        match path.path_and_query() {
            Some(asked) if self.prefix.is_empty() => Uri::from(asked.clone()),
            asked => format!("{}{}", self.prefix, asked.map_or("/", |p| p.as_str())).parse().unwrap_or_else(|_| Uri::from_static("/")),
        }
    }
}

fn since_start() -> u64 {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_millis() as u64
}

/// Forwards `/v1/*`, `/openapi.json`, `/docs/errors` and `/readyz` to `base` (the log
/// service, e.g. `http://127.0.0.1:8090`, or its replicas, comma-separated),
/// with nothing in front of the edge.
pub fn upstream_router(base: &str) -> Router {
    upstream_router_behind(base, TrustedProxies::none())
}

/// [`upstream_router`] behind `trusted` proxies (a TLS-terminating
/// ingress), whose forwarded name and scheme are passed on.
pub fn upstream_router_behind(base: &str, trusted: TrustedProxies) -> Router {
    Router::new()
        .route("/v1/{*rest}", axum::routing::any(forward))
        // A file's upload streams through, never held (docs/FILES.md).
        .route("/v1/threads/{th}/files", axum::routing::post(forward_streamed))
        .route("/v1/uploads/{id}", axum::routing::put(forward_streamed).get(forward))
        .route("/openapi.json", axum::routing::get(forward))
        // Where every error body's `link` points (lattice_http::ERRORS_PATH).
        .route(lattice_http::ERRORS_PATH, axum::routing::get(forward))
        .route("/readyz", axum::routing::get(forward))
        // A company's SCIM client provisions the tenant's directory there.
        .route("/scim/v2/{*rest}", axum::routing::any(forward))
        .method_not_allowed_fallback(lattice_http::error::method_not_allowed)
        .with_state(Upstream::new(base, "the log service", trusted))
}

/// For the apps origin: forwards `/files/{id}` (a file's download, by its
/// link) to `base`, the log service, which answers it: the apps origin
/// holds nothing of its own.
pub fn downloads_router_behind(base: &str, trusted: TrustedProxies) -> Router {
    Router::new().route("/files/{id}", axum::routing::get(forward)).with_state(Upstream::new(base, "the log service", trusted))
}

/// Forwards `/mcp` to `base` (`lattice serve mcp`), so MCP clients find it
/// beside the chat, as with `lattice up`.
pub fn mcp_router(base: &str) -> Router {
    mcp_router_behind(base, TrustedProxies::none())
}

/// [`mcp_router`] behind `trusted` proxies.
pub fn mcp_router_behind(base: &str, trusted: TrustedProxies) -> Router {
    Router::new()
        .route("/mcp", axum::routing::any(forward))
        .route("/.well-known/oauth-protected-resource/mcp", axum::routing::get(forward))
        .method_not_allowed_fallback(lattice_http::error::method_not_allowed)
        .with_state(Upstream::new(base, "the MCP exporter", trusted))
}

const TRACEPARENT: HeaderName = HeaderName::from_static("traceparent");

const HOP_BY_HOP: [HeaderName; 7] =
    [header::CONNECTION, header::HOST, header::TRANSFER_ENCODING, header::TE, header::TRAILER, header::UPGRADE, header::PROXY_AUTHORIZATION];

/// The edge's own refusals are typed errors, written by the one mapping
/// every service uses (`lattice_http::ApiError`): no answer is 503.
fn unavailable(name: &str) -> Response {
    ApiError(Error::unavailable(format!("{name} did not answer"))).into_response()
}

/// What a request carries on to the upstream: the client's name and
/// scheme as the edge saw them, no hop-by-hop header, the edge's trace.
fn carried(up: &Upstream, parts: &mut axum::http::request::Parts) {
    // The name and scheme the client used, for what the upstream writes
    // into URLs (`/mcp`'s protected-resource metadata): the edge's own
    // view, or its trusted proxy's; a client's own claim never passes.
    let origin = up.trusted.origin_of(&parts.headers, forwarded::peer_of(&parts.extensions));
    parts.headers.remove(&X_FORWARDED_HOST);
    parts.headers.remove(&X_FORWARDED_PROTO);
    if let Some(host) = origin.host.as_deref().and_then(|h| HeaderValue::from_str(h).ok()) {
        parts.headers.insert(X_FORWARDED_HOST, host);
    }
    parts.headers.insert(X_FORWARDED_PROTO, HeaderValue::from_static(origin.scheme()));
    for name in HOP_BY_HOP {
        parts.headers.remove(name);
    }
    // The upstream's span is a child of this request's.
    if let Some(traceparent) = lattice_telemetry::traceparent().and_then(|t| t.parse().ok()) {
        parts.headers.insert(TRACEPARENT, traceparent);
    }
}

/// An answer relayed as it comes, without its hop-by-hop headers.
fn relayed<B>(answer: axum::http::Response<B>) -> Response
where
    B: hyper::body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    let (mut parts, body) = answer.into_parts();
    for name in HOP_BY_HOP {
        parts.headers.remove(name);
    }
    Response::from_parts(parts, Body::new(body))
}

async fn forward(State(up): State<Upstream>, req: Request) -> Response {
    let (mut parts, body) = req.into_parts();
    // Over the limit: `TooLarge` with the limit held here and the body's
    // real size (as declared, or as much as had come).
    let body: Bytes = match lattice_http::error::read_within(body, lattice_http::error::declared_length(&parts.headers), HELD_BODY).await {
        Ok(body) => body,
        Err(e) => return ApiError(e).into_response(),
    };
    carried(&up, &mut parts);
    let replicas = up.order();
    let last = replicas.len() - 1;
    for (i, replica) in replicas.into_iter().enumerate() {
        let mut request = axum::http::Request::new(Full::new(body.clone()));
        *request.method_mut() = parts.method.clone();
        *request.uri_mut() = replica.uri(&parts.uri);
        // Only a request that may go on to another replica keeps a copy.
        *request.headers_mut() = if i == last { std::mem::take(&mut parts.headers) } else { parts.headers.clone() };
        request.headers_mut().insert(header::HOST, replica.host.clone());
        match replica.connections.send(request).await {
            Ok(answer) => return relayed(answer),
            // It never had the request: the next replica takes it.
            Err(e @ Failed::Connect(_)) => {
                tracing::warn!(error = %e, upstream = up.name, replica = %replica.base, "a replica refused the connection; passing it over");
                replica.down_until.store(since_start() + PASSED_OVER.as_millis() as u64, Ordering::Relaxed);
            }
            Err(e) => {
                tracing::warn!(error = %e, upstream = up.name, replica = %replica.base, "no answer");
                return unavailable(up.name);
            }
        }
    }
    unavailable(up.name)
}

/// Forwards an upload as it arrives: its body is sent once, to the first
/// replica that takes a connection, never held here (the log service
/// bounds it while it arrives).
async fn forward_streamed(State(up): State<Upstream>, req: Request) -> Response {
    let (mut parts, body) = req.into_parts();
    carried(&up, &mut parts);
    for replica in up.order() {
        match replica.connections.open_streamed().await {
            Ok(mut send) => {
                let mut request = axum::http::Request::new(body);
                *request.method_mut() = parts.method;
                *request.uri_mut() = replica.uri(&parts.uri);
                *request.headers_mut() = parts.headers;
                request.headers_mut().insert(header::HOST, replica.host.clone());
                return match send.send_request(request).await {
                    Ok(answer) => relayed(answer),
                    Err(e) => {
                        tracing::warn!(error = %e, upstream = up.name, replica = %replica.base, "no answer to an upload");
                        unavailable(up.name)
                    }
                };
            }
            Err(e) => {
                tracing::warn!(error = %e, upstream = up.name, replica = %replica.base, "a replica refused the connection; passing it over");
                replica.down_until.store(since_start() + PASSED_OVER.as_millis() as u64, Ordering::Relaxed);
            }
        }
    }
    unavailable(up.name)
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::http::Request;
    use tower::ServiceExt;

    /// A log replica that answers with the size of the body it got.
    async fn replica() -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let app = axum::Router::new()
            .route("/v1/{*rest}", axum::routing::any(|body: axum::body::Bytes| async move { body.len().to_string() }))
            .layer(axum::extract::DefaultBodyLimit::disable());
        tokio::spawn(async move { axum::serve(listener, app).await });
        base
    }

    async fn post(router: &axum::Router, size: usize) -> (u16, String) {
        let req = Request::post("/v1/threads/t/messages").body(Body::from(vec![b'x'; size])).unwrap();
        let res = router.clone().oneshot(req).await.unwrap();
        let status = res.status().as_u16();
        let body = axum::body::to_bytes(res.into_body(), usize::MAX).await.unwrap();
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    /// A replica's URL may name a path: requests go under it, with their
    /// query; the `Host` sent is the replica's own.
    #[tokio::test]
    async fn a_replica_url_with_a_path_takes_requests_under_it() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let app = axum::Router::new().fallback(|uri: axum::http::Uri, headers: axum::http::HeaderMap| async move {
            format!("{uri} {}", headers[axum::http::header::HOST].to_str().unwrap())
        });
        tokio::spawn(async move { axum::serve(listener, app).await });
        let authority = base.trim_start_matches("http://").to_owned();
        for (url, seen) in
            [(format!("{base}/lattice/"), format!("/lattice/v1/me?x=1 {authority}")), (base.clone(), format!("/v1/me?x=1 {authority}"))]
        {
            let router = super::upstream_router(&url);
            let req = Request::get("/v1/me?x=1").header("host", "chat.example").body(Body::empty()).unwrap();
            let res = router.oneshot(req).await.unwrap();
            let body = axum::body::to_bytes(res.into_body(), usize::MAX).await.unwrap();
            assert_eq!(String::from_utf8_lossy(&body), seen, "{url}");
        }
        // Not an http:// URL: 503 `Unavailable`, as for a replica that is down.
        let router = super::upstream_router("https://127.0.0.1:1");
        let res = router.oneshot(Request::get("/v1/me").body(Body::empty()).unwrap()).await.unwrap();
        assert_eq!(res.status(), 503);
        let body = axum::body::to_bytes(res.into_body(), usize::MAX).await.unwrap();
        assert!(String::from_utf8_lossy(&body).contains(r#""type":"Unavailable""#), "{body:?}");
    }

    /// What the edge says of the name and scheme a request came by is its
    /// own: a client's `X-Forwarded-Host`/`-Proto` are replaced by the Host
    /// it used and `http`; a trusted proxy's (a TLS-terminating ingress)
    /// are passed on.
    #[tokio::test]
    async fn the_edge_sets_the_forwarded_headers_itself() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let app = axum::Router::new().fallback(|headers: axum::http::HeaderMap| async move {
            let said = |name: &str| headers.get(name).map_or("-", |v| v.to_str().unwrap()).to_owned();
            format!("{} {}", said("x-forwarded-proto"), said("x-forwarded-host"))
        });
        tokio::spawn(async move { axum::serve(listener, app).await });
        let trusted = crate::TrustedProxies::parse("10.0.0.2").unwrap();
        let router = super::mcp_router_behind(&base, trusted);
        let ask = |peer: &str| {
            let mut req = Request::get("/mcp")
                .header("host", "chat.example")
                .header("x-forwarded-host", "evil.example")
                .header("x-forwarded-proto", "https")
                .body(Body::empty())
                .unwrap();
            let peer: std::net::SocketAddr = format!("{peer}:40000").parse().unwrap();
            req.extensions_mut().insert(axum::extract::ConnectInfo(peer));
            let router = router.clone();
            async move {
                let res = router.oneshot(req).await.unwrap();
                String::from_utf8(axum::body::to_bytes(res.into_body(), usize::MAX).await.unwrap().to_vec()).unwrap()
            }
        };
        assert_eq!(ask("203.0.113.9").await, "http chat.example", "a client's claims are replaced");
        assert_eq!(ask("10.0.0.2").await, "https evil.example", "the trusted proxy's are passed on");
        // Without connection information nobody is trusted.
        let res = super::mcp_router(&base)
            .oneshot(Request::get("/mcp").header("host", "chat.example").header("x-forwarded-proto", "https").body(Body::empty()).unwrap())
            .await
            .unwrap();
        let body = axum::body::to_bytes(res.into_body(), usize::MAX).await.unwrap();
        assert_eq!(String::from_utf8_lossy(&body), "http chat.example");
    }

    /// A replica that refuses connections is passed over, and the request
    /// reaches the next one whole; a body at the held limit passes, one
    /// byte more is refused at the edge, saying the limit and the size.
    #[tokio::test]
    async fn a_request_goes_to_a_live_replica_and_a_held_body_is_bounded() {
        let dead = format!("http://{}", std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap());
        let live = replica().await;
        let router = super::upstream_router(&format!("{dead},{live}"));
        for _ in 0..4 {
            assert_eq!(post(&router, 10).await, (200, "10".to_owned()));
        }
        assert_eq!(post(&router, super::HELD_BODY).await, (200, super::HELD_BODY.to_string()));
        let limit = super::HELD_BODY as u64;
        let (status, body) = post(&router, super::HELD_BODY + 1).await;
        assert_eq!((status, body), (413, too_large(limit, limit + 1)));
        // A body twice the limit says its size, not the limit's plus one.
        let (status, body) = post(&router, 2 * super::HELD_BODY).await;
        assert_eq!((status, body), (413, too_large(limit, 2 * limit)));
    }

    /// Without a declared length (a streamed body), the size is what had
    /// come when the limit was passed, and nothing further is read.
    #[tokio::test]
    async fn a_streamed_body_over_the_limit_says_what_had_come() {
        let router = super::upstream_router(&replica().await);
        let chunks = Chunks { left: 8, chunk: axum::body::Bytes::from(vec![b'x'; 1024 * 1024]) };
        let req = Request::post("/v1/threads/t/messages").body(Body::new(chunks)).unwrap();
        let res = router.oneshot(req).await.unwrap();
        assert_eq!(res.status(), 413);
        let body = axum::body::to_bytes(res.into_body(), usize::MAX).await.unwrap();
        let limit = super::HELD_BODY as u64;
        assert_eq!(String::from_utf8_lossy(&body), too_large(limit, limit + 1024 * 1024));
    }

    /// A body of `left` chunks, of no declared length.
    struct Chunks {
        left: usize,
        chunk: axum::body::Bytes,
    }

    impl axum::body::HttpBody for Chunks {
        type Data = axum::body::Bytes;
        type Error = std::convert::Infallible;

        fn poll_frame(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
            if self.left == 0 {
                return std::task::Poll::Ready(None);
            }
            self.left -= 1;
            std::task::Poll::Ready(Some(Ok(hyper::body::Frame::data(self.chunk.clone()))))
        }
    }

    fn too_large(limit: u64, size: u64) -> String {
        format!(r#"{{"error":{{"type":"TooLarge","code":"body_too_large","link":"/docs/errors#body_too_large","limit":{limit},"size":{size}}}}}"#)
    }

    /// A method a forwarded path is not served with is the edge's own
    /// 405 `MethodNotAllowed`, with `Allow`.
    #[tokio::test]
    async fn a_method_not_served_is_refused_by_the_mapping() {
        let router = super::upstream_router("http://127.0.0.1:1").merge(super::mcp_router("http://127.0.0.1:1"));
        for path in ["/readyz", "/openapi.json", "/.well-known/oauth-protected-resource/mcp"] {
            let res = router.clone().oneshot(Request::delete(path).body(Body::empty()).unwrap()).await.unwrap();
            assert_eq!(res.status(), 405, "{path}");
            assert_eq!(res.headers()["allow"], "GET,HEAD", "{path}");
            let body = axum::body::to_bytes(res.into_body(), usize::MAX).await.unwrap();
            assert_eq!(
                String::from_utf8_lossy(&body),
                r#"{"error":{"type":"MethodNotAllowed","code":"method_not_allowed","link":"/docs/errors#method_not_allowed","method":"DELETE"}}"#,
                "{path}"
            );
        }
    }
}

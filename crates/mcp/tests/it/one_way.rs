//! One way to fail: the `/v1` API, the MCP transport and the edge answer
//! the same error with the same status and body, each through its real
//! router, because each writes it through `lattice_http::ApiError`. rmcp's
//! own HTTP-level refusals at `/mcp` are typed too; its JSON-RPC errors
//! stay JSON-RPC. The write rate the surfaces share reads a clock the test
//! moves.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use lattice_core::ManualClock;
use lattice_edge::TrustedProxies;
use lattice_http::guard::{Guard, Limits};
use lattice_log::{Backend, LogService};
use serde_json::{Value, json};
use tower::ServiceExt;

/// The surfaces over one log: the API and `/mcp` sharing one guard (as
/// `lattice up` wires them), the edge's apps origin, and the edge's
/// forwarding routers in front of `/mcp` served on a socket.
struct Surfaces {
    api: Router,
    mcp: Router,
    apps: Router,
    /// `/v1` and `/readyz` to a log service that is not there (a body over
    /// the limit is refused before anything is sent).
    edge_to_log: Router,
    /// `/mcp` to [`Surfaces::mcp`], over TCP.
    edge_to_mcp: Router,
    token: String,
    _stop: tokio::sync::watch::Sender<bool>,
}

impl Surfaces {
    async fn new(log: LogService, guard: Arc<Guard>) -> Self {
        let apps = lattice_app_calls::AppCalls::new(log.clone(), lattice_ui::app_policy::AppToolPolicy::parse("get_state=allow").unwrap());
        let (stop, shutdown) = tokio::sync::watch::channel(false);
        let state = lattice_api::AppState {
            log: log.clone(),
            runner: lattice_agent::Runner::new(lattice_testkit::trusted(&log), lattice_agent::Models::scripted()),
            apps: apps.clone(),
            dev_sign_in: true,
            identity: None,
            portal_origin: "http://127.0.0.1:8080".into(),
            // The largest message `/mcp` and the edge take: the same limit
            // is the same refusal.
            max_body_bytes: lattice_mcp::http::MAX_MESSAGE_BYTES,
            guard: guard.clone(),
            readiness: None,
            switch_heartbeat: Duration::from_secs(5),
            shutdown,
        };
        let api = lattice_api::router(state);
        let mcp = lattice_mcp::http::router(lattice_mcp::Exporter::over_http(log.clone(), apps), guard, Vec::new(), TrustedProxies::none())
            .merge(lattice_mcp::http::protected_resource(Vec::new(), Vec::new(), TrustedProxies::none()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mcp_base = format!("http://{}", listener.local_addr().unwrap());
        let served = mcp.clone();
        tokio::spawn(async move { axum::serve(listener, served).await });
        let nobody = format!("http://{}", std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap());
        Self {
            api,
            mcp,
            apps: lattice_edge::apps_router(lattice_edge::AppsOrigin {
                portal_origin: "http://127.0.0.1:8080".into(),
                sdk_dir: None,
                allowances: Default::default(),
            }),
            edge_to_log: lattice_edge::upstream_router(&nobody),
            edge_to_mcp: lattice_edge::mcp_router(&mcp_base),
            token: lattice_testkit::token("t1", "ana", lattice_core::TenantRole::Member),
            _stop: stop,
        }
    }

    fn bearer(&self) -> String {
        format!("Bearer {}", self.token)
    }
}

/// A refusal as a client reads it.
#[derive(Debug, PartialEq)]
struct Refusal {
    status: StatusCode,
    body: Value,
}

async fn answer(router: &Router, req: Request<Body>) -> (Refusal, axum::http::HeaderMap) {
    let res = router.clone().oneshot(req).await.unwrap();
    let (status, headers) = (res.status(), res.headers().clone());
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    let body = serde_json::from_slice(&bytes).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    (Refusal { status, body }, headers)
}

/// Every answer is `expected`, each a typed error body with its JSON type.
fn all_are(expected: &Refusal, answers: &[(&str, (Refusal, axum::http::HeaderMap))]) {
    for (surface, (got, headers)) in answers {
        assert_eq!(got, expected, "{surface}");
        assert_eq!(headers[header::CONTENT_TYPE], "application/json", "{surface}");
    }
}

/// An MCP request to `/mcp` as a client sends it.
fn mcp_request(method: &str, bearer: &str) -> axum::http::request::Builder {
    mcp_request_as(method, bearer, "application/json, text/event-stream", "application/json")
}

/// An MCP request to `/mcp` with its `Accept` and `Content-Type`.
fn mcp_request_as(method: &str, bearer: &str, accept: &str, content_type: &str) -> axum::http::request::Builder {
    Request::builder()
        .method(method)
        .uri("/mcp")
        .header("host", "localhost")
        .header("authorization", bearer)
        .header("accept", accept)
        .header("content-type", content_type)
}

#[tokio::test]
async fn the_api_mcp_and_the_edge_fail_the_same_way() {
    let log = lattice_testkit::service(Backend::Sqlite).await;
    let s = Surfaces::new(log, Arc::new(Guard::new(Limits { writes_per_sec: 0, ..Limits::default() }))).await;
    let bearer = s.bearer();

    // 404: nothing there, a session that is not there.
    let not_found = Refusal {
        status: StatusCode::NOT_FOUND,
        body: json!({"error": {"type": "NotFound", "code": "not_found", "link": "/docs/errors#not_found"}}),
    };
    let unknown_session = |method: &str| {
        let accept = if method == "GET" { "text/event-stream" } else { "application/json, text/event-stream" };
        let req = mcp_request_as(method, &bearer, accept, "application/json")
            .header("mcp-session-id", "no-such-session")
            .header("mcp-protocol-version", "2025-06-18");
        if method == "GET" {
            req.body(Body::empty()).unwrap()
        } else {
            req.body(Body::from(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string())).unwrap()
        }
    };
    all_are(
        &not_found,
        &[
            ("API: a /v1 path it does not have", answer(&s.api, Request::get("/v1/nothing-here").body(Body::empty()).unwrap()).await),
            ("API: a path outside /v1", answer(&s.api, Request::get("/nothing-here").body(Body::empty()).unwrap()).await),
            ("MCP: an unknown session, posted to", answer(&s.mcp, unknown_session("POST")).await),
            ("MCP: an unknown session's event stream", answer(&s.mcp, unknown_session("GET")).await),
            ("edge: /mcp passed to the exporter", answer(&s.edge_to_mcp, unknown_session("POST")).await),
            ("edge: the apps origin", answer(&s.apps, Request::get("/nothing-here").body(Body::empty()).unwrap()).await),
        ],
    );

    // 405: a path served with other methods; `Allow` says which.
    let not_allowed = Refusal {
        status: StatusCode::METHOD_NOT_ALLOWED,
        body: json!({"error": {"type": "MethodNotAllowed", "code": "method_not_allowed", "link": "/docs/errors#method_not_allowed", "method": "PUT"}}),
    };
    let put = |path: &str| Request::put(path).header("authorization", &bearer).body(Body::empty()).unwrap();
    let answers = [
        ("API: a /v1 path", answer(&s.api, put("/v1/workspaces")).await),
        ("API: a path outside /v1", answer(&s.api, put("/healthz")).await),
        ("MCP: /mcp, refused by rmcp", answer(&s.mcp, mcp_request("PUT", &bearer).body(Body::empty()).unwrap()).await),
        ("MCP: its protected-resource metadata", answer(&s.mcp, put("/.well-known/oauth-protected-resource/mcp")).await),
        ("edge: /mcp passed to the exporter", answer(&s.edge_to_mcp, mcp_request("PUT", &bearer).body(Body::empty()).unwrap()).await),
        ("edge: /readyz, which it passes on for GET only", answer(&s.edge_to_log, put("/readyz")).await),
        ("edge: the apps origin's sandbox", answer(&s.apps, put("/sandbox")).await),
    ];
    for (surface, (_, headers)) in &answers {
        assert!(headers.contains_key(header::ALLOW), "{surface}: {headers:?}");
    }
    all_are(&not_allowed, &answers);

    // 413: a body over the limit, which is 4 MiB on each here; the size is
    // the body's own.
    let size = 5 * 1024 * 1024;
    let too_large = Refusal {
        status: StatusCode::PAYLOAD_TOO_LARGE,
        body: json!({"error": {"type": "TooLarge", "code": "body_too_large", "link": "/docs/errors#body_too_large", "limit": lattice_mcp::http::MAX_MESSAGE_BYTES, "size": size}}),
    };
    let big = |req: axum::http::request::Builder| {
        req.header(header::CONTENT_LENGTH, size).header("authorization", &bearer).body(Body::from(vec![b' '; size])).unwrap()
    };
    all_are(
        &too_large,
        &[
            ("API", answer(&s.api, big(Request::post("/v1/workspaces").header("content-type", "application/json"))).await),
            ("MCP", answer(&s.mcp, big(mcp_request("POST", &bearer))).await),
            ("edge: /v1", answer(&s.edge_to_log, big(Request::post("/v1/workspaces"))).await),
            ("edge: /mcp", answer(&s.edge_to_mcp, big(mcp_request("POST", &bearer))).await),
        ],
    );
}

/// rmcp's HTTP-level refusals are typed errors like every other; what it
/// says in JSON-RPC stays JSON-RPC.
#[tokio::test]
async fn rmcp_refuses_in_the_one_shape_and_answers_json_rpc_as_json_rpc() {
    let log = lattice_testkit::service(Backend::Sqlite).await;
    let s = Surfaces::new(log, Arc::new(Guard::new(Limits { writes_per_sec: 0, ..Limits::default() }))).await;
    let bearer = s.bearer();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "one-way", "version": "1"}}})
    .to_string();

    let (got, _) =
        answer(&s.mcp, mcp_request_as("POST", &bearer, "application/json", "application/json").body(Body::from(initialize.clone())).unwrap()).await;
    assert_eq!(got.status, StatusCode::NOT_ACCEPTABLE, "{:?}", got.body);
    assert_eq!(got.body["error"]["type"], "NotAcceptable", "{:?}", got.body);
    assert!(got.body["error"]["reason"].as_str().unwrap().starts_with("client must accept"), "{:?}", got.body);

    let req = mcp_request_as("POST", &bearer, "application/json, text/event-stream", "text/plain").body(Body::from(initialize.clone())).unwrap();
    let (got, _) = answer(&s.mcp, req).await;
    assert_eq!(got.status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{:?}", got.body);
    assert_eq!(got.body["error"]["type"], "UnsupportedMediaType", "{:?}", got.body);

    // A request without a session, other than initialize: 400 `Malformed`.
    let listing = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let (got, _) = answer(&s.mcp, mcp_request("POST", &bearer).header("mcp-protocol-version", "2025-06-18").body(Body::from(listing)).unwrap()).await;
    assert_eq!(got.status, StatusCode::BAD_REQUEST, "{:?}", got.body);
    assert_eq!(got.body["error"]["type"], "Malformed", "{:?}", got.body);

    // A JSON-RPC method nobody serves is JSON-RPC's own error, untouched.
    let res = s.mcp.clone().oneshot(mcp_request("POST", &bearer).body(Body::from(initialize)).unwrap()).await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let session = res.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let unknown = json!({"jsonrpc": "2.0", "id": 3, "method": "no/such-method"}).to_string();
    let req = mcp_request("POST", &bearer).header("mcp-session-id", &session).header("mcp-protocol-version", "2025-06-18").body(Body::from(unknown));
    let res = s.mcp.clone().oneshot(req.unwrap()).await.unwrap();
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.contains(r#""jsonrpc":"2.0""#) && text.contains("-32601") && !text.contains(r#""type":"#), "{text}");
}

/// The write rate the API and `/mcp` share reads the guard's clock: its
/// refusal is the same 429 on both, and moving the clock, not waiting,
/// earns the next write.
#[tokio::test]
async fn a_rate_limit_is_one_refusal_on_both_surfaces_and_the_clock_ends_it() {
    let log = lattice_testkit::service(Backend::Sqlite).await;
    let clock = ManualClock::new();
    let guard = Arc::new(Guard::with_clock(Limits { writes_per_sec: 1, write_burst: 1, ..Limits::default() }, clock.clone()));
    let s = Surfaces::new(log, guard).await;
    let bearer = s.bearer();
    let workspace = || {
        Request::post("/v1/workspaces")
            .header("authorization", &bearer)
            .header("content-type", "application/json")
            .body(Body::from(json!({"name": "W"}).to_string()))
            .unwrap()
    };
    let initialize = || {
        let message = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "one-way", "version": "1"}}});
        mcp_request("POST", &bearer).body(Body::from(message.to_string())).unwrap()
    };
    let (first, _) = answer(&s.api, workspace()).await;
    assert_eq!(first.status, StatusCode::OK, "{:?}", first.body);

    let limited = Refusal {
        status: StatusCode::TOO_MANY_REQUESTS,
        body: json!({"error": {"type": "RateLimited", "code": "rate_limited", "link": "/docs/errors#rate_limited", "retry_after_secs": 1}}),
    };
    let answers = [("API", answer(&s.api, workspace()).await), ("MCP", answer(&s.mcp, initialize()).await)];
    for (surface, (_, headers)) in &answers {
        assert_eq!(headers[header::RETRY_AFTER], "1", "{surface}");
    }
    all_are(&limited, &answers);

    // 999 ms are not a second; the second is.
    clock.advance(Duration::from_millis(999));
    assert_eq!(answer(&s.mcp, initialize()).await.0, limited);
    clock.advance(Duration::from_millis(1));
    let res = s.mcp.clone().oneshot(initialize()).await.unwrap();
    assert_eq!(res.status(), StatusCode::OK, "a write is earned back");
    assert_eq!(answer(&s.api, workspace()).await.0, limited, "and it was the only one");
}

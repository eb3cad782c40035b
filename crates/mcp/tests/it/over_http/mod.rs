//! The exporter over streamable HTTP in-process (`tower::ServiceExt::oneshot`
//! on `lattice_mcp::http::router`), spoken to as an MCP client speaks it:
//! JSON-RPC posted, answers and the session's event stream read as
//! Server-Sent Events.

mod flips;
mod forwarded;
mod sessions;
mod streams;

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, Response, StatusCode};
use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use http_body_util::BodyExt;
use lattice_core::TenantRole;
use lattice_edge::TrustedProxies;
use lattice_http::guard::{Guard, Limits};
use lattice_log::LogService;
use serde_json::{Value, json};
use tower::ServiceExt;

/// How long anything awaited here may take before the test fails.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// One replica of `/mcp` (its own rmcp session manager) over a log.
pub struct Replica {
    router: axum::Router,
}

impl Replica {
    /// A replica with the per-caller `limits`, believing `trusted`'s
    /// forwarded headers.
    pub fn new(log: &LogService, limits: Limits, trusted: TrustedProxies) -> Self {
        let apps = lattice_app_calls::AppCalls::new(log.clone(), lattice_ui::app_policy::AppToolPolicy::parse("get_state=allow").unwrap());
        let exporter = lattice_mcp::Exporter::over_http(log.clone(), apps);
        let guard = Arc::new(Guard::new(limits));
        let router = lattice_mcp::http::router(exporter, guard, Vec::new(), trusted.clone()).merge(lattice_mcp::http::protected_resource(
            Vec::new(),
            Vec::new(),
            trusted,
        ));
        Self { router }
    }

    /// No write rate (a suite opens many sessions at once), the default
    /// number of streams.
    pub fn unlimited(log: &LogService) -> Self {
        Self::new(log, Limits { writes_per_sec: 0, ..Limits::default() }, TrustedProxies::none())
    }

    pub fn router(&self) -> axum::Router {
        self.router.clone()
    }

    pub async fn send(&self, req: Request<Body>) -> Response<Body> {
        self.router.clone().oneshot(req).await.expect("the router answers")
    }

    /// Posts `message` as `token`'s holder, in `session` when given.
    pub async fn post(&self, token: &str, session: Option<&str>, message: Value) -> Response<Body> {
        let mut req = Request::post("/mcp")
            .header("host", "localhost")
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("authorization", format!("Bearer {token}"));
        if let Some(session) = session {
            req = req.header("mcp-session-id", session).header("mcp-protocol-version", "2025-06-18");
        }
        self.send(req.body(Body::from(message.to_string())).unwrap()).await
    }

    /// The session's event stream (GET), as `token`'s holder.
    pub async fn events(&self, token: &str, session: &str) -> Response<Body> {
        let req = Request::get("/mcp")
            .header("host", "localhost")
            .header("accept", "text/event-stream")
            .header("authorization", format!("Bearer {token}"))
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-06-18");
        self.send(req.body(Body::empty()).unwrap()).await
    }

    /// Opens a session as `token`'s holder (initialize, then initialized);
    /// answers its id.
    pub async fn open(&self, token: &str) -> String {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "suite", "version": "1"}}});
        let res = self.post(token, None, init).await;
        assert_eq!(res.status(), StatusCode::OK);
        let session = res.headers().get("mcp-session-id").expect("a session id").to_str().unwrap().to_owned();
        let answer = Sse::new(res).message().await.expect("the initialize result");
        assert!(answer["result"]["serverInfo"].is_object(), "{answer}");
        let done = self.post(token, Some(&session), json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        assert_eq!(done.status(), StatusCode::ACCEPTED);
        session
    }

    /// A request in `session` and its answer; the answer's HTTP status when
    /// there is none (404, 429).
    pub async fn request(&self, token: &str, session: &str, method: &str, params: Value) -> Result<Value, (StatusCode, String)> {
        let res = self.post(token, Some(session), json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params})).await;
        if res.status() != StatusCode::OK {
            return Err(refusal(res).await);
        }
        Ok(Sse::new(res).message().await.expect("an answer"))
    }
}

/// A refused answer's status and body.
pub async fn refusal(res: Response<Body>) -> (StatusCode, String) {
    let status = res.status();
    let body = res.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    (status, String::from_utf8_lossy(&body).into_owned())
}

/// Server-Sent Events read off an answer's body by `eventsource-stream`,
/// the one reader of lattice's Rust clients: frames split across reads,
/// multi-line data, comments and CRLF are read as the spec says.
pub struct Sse {
    events: BoxStream<'static, Result<Event, EventStreamError<axum::Error>>>,
}

impl Sse {
    pub fn new(res: Response<Body>) -> Self {
        Self { events: res.into_body().into_data_stream().eventsource().boxed() }
    }

    /// The next event's data that is a JSON-RPC message (priming events
    /// without data skipped), or `None` once the stream ended.
    pub async fn message(&mut self) -> Option<Value> {
        self.next_json().await.map(|(_, message)| message)
    }

    /// The next answer to a request (an id and no method: notifications and
    /// requests of the server skipped), as its `data` was sent and as JSON;
    /// `None` once the stream ended.
    pub async fn answer(&mut self) -> Option<(String, Value)> {
        loop {
            let (data, message) = self.next_json().await?;
            if message.get("id").is_some() && message.get("method").is_none() {
                return Some((data, message));
            }
        }
    }

    async fn next_json(&mut self) -> Option<(String, Value)> {
        loop {
            let event = tokio::time::timeout(PATIENCE, self.events.next()).await.expect("the stream says something or ends in time")?;
            let data = event.expect("the stream reads").data;
            if let Ok(message) = serde_json::from_str::<Value>(&data) {
                return Some((data, message));
            }
        }
    }

    /// Waits for the stream to end, skipping what it still says; fails the
    /// test if it has not ended within [`PATIENCE`].
    pub async fn ended(mut self) {
        let end = async { while self.message().await.is_some() {} };
        tokio::time::timeout(PATIENCE, end).await.expect("the stream ends");
    }
}

/// A token of `tenant`'s `user`.
pub fn token(tenant: &str, user: &str, role: TenantRole) -> String {
    lattice_testkit::token(tenant, user, role)
}

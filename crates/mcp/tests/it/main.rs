//! The MCP exporter in-process, on SQLite and PostgreSQL: an rmcp client
//! speaks to it over an in-memory stream, as a host of `lattice mcp
//! --stdio` does, beside the HTTP API the chat host uses, both over one
//! log service and one set of app calls (as `lattice up` wires them).

// The suites build deep futures (a test client over a whole service).
#![recursion_limit = "256"]

mod access_suite;
mod app_calls;
mod logging;
mod one_way;
mod over_http;
mod resources;
mod trace;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use lattice_api::AppState;
use lattice_log::{Backend, LogService};
use lattice_mcp::Exporter;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use serde_json::Value;
use tower::ServiceExt as _;

pub struct Stack {
    pub log: LogService,
    pub apps: lattice_app_calls::AppCalls,
    router: axum::Router,
    _stop: tokio::sync::watch::Sender<bool>,
}

pub struct Reply {
    pub status: StatusCode,
    pub body: Value,
}

impl Stack {
    /// `policy` is the deployment's app tool policy (`get_state=allow,…`).
    pub async fn new(backend: Backend, policy: &str) -> Self {
        Self::on_clock(backend, policy, lattice_core::clock::system()).await
    }

    /// The same, the log reading time from `clock` (a `ManualClock` a test
    /// moves instead of sleeping).
    pub async fn on_clock(backend: Backend, policy: &str, clock: lattice_core::clock::SharedClock) -> Self {
        let log = lattice_testkit::service_with_clock(backend, clock).await;
        let apps = lattice_app_calls::AppCalls::new(log.clone(), lattice_ui::app_policy::AppToolPolicy::parse(policy).unwrap());
        let (stop, shutdown) = tokio::sync::watch::channel(false);
        let runner = lattice_agent::Runner::new(lattice_testkit::trusted(&log), lattice_agent::Models::scripted());
        let state = AppState {
            log: log.clone(),
            runner,
            apps: apps.clone(),
            dev_sign_in: true,
            identity: None,
            portal_origin: "http://127.0.0.1:8080".into(),
            max_body_bytes: 1024 * 1024,
            guard: std::sync::Arc::new(lattice_http::guard::Guard::new(lattice_http::guard::Limits::default())),
            readiness: None,
            switch_heartbeat: std::time::Duration::from_secs(5),
            shutdown,
        };
        Self { router: lattice_api::router(state), log, apps, _stop: stop }
    }

    /// A request to the HTTP API, as the chat host makes it.
    pub async fn send(&self, method: &str, path: &str, token: &str, body: Option<Value>) -> Reply {
        let req = Request::builder().method(method).uri(path).header("authorization", format!("Bearer {token}"));
        let req = match body {
            Some(b) => req.header("content-type", "application/json").body(Body::from(b.to_string())),
            None => req.body(Body::empty()),
        }
        .unwrap();
        let res = self.router.clone().oneshot(req).await.unwrap();
        let status = res.status();
        let bytes = res.into_body().collect().await.unwrap().to_bytes();
        Reply { status, body: serde_json::from_slice(&bytes).unwrap_or(Value::Null) }
    }

    pub async fn ok(&self, method: &str, path: &str, token: &str, body: Option<Value>) -> Value {
        let reply = self.send(method, path, token, body).await;
        assert!(reply.status.is_success(), "{method} {path}: {} {}", reply.status, reply.body);
        reply.body
    }

    /// A workspace of the token's holder with one thread: their ids.
    pub async fn workspace_with_thread(&self, token: &str) -> (String, String) {
        let ws = self.ok("POST", "/v1/workspaces", token, Some(serde_json::json!({"name": "W"}))).await["id"].as_str().unwrap().to_owned();
        let th = self.ok("POST", &format!("/v1/workspaces/{ws}/threads"), token, Some(serde_json::json!({"title": "T"}))).await;
        (ws, th["id"].as_str().unwrap().to_owned())
    }

    /// An MCP session of the token's holder, through a host that cannot
    /// ask its person anything.
    pub async fn mcp(&self, token: &str) -> RunningService<RoleClient, CannotAsk> {
        self.mcp_with(token, CannotAsk).await
    }

    /// An MCP session of the token's holder, through `host`.
    pub async fn mcp_with<H: rmcp::ClientHandler>(&self, token: &str, host: H) -> RunningService<RoleClient, H> {
        let who = self.log.authenticator().verify(token).expect("a token of this deployment");
        let exporter = Exporter::over_http(self.log.clone(), self.apps.clone()).acting_as(who);
        let (server_io, client_io) = tokio::io::duplex(1 << 20);
        let (server, client) = tokio::join!(exporter.serve(server_io), host.serve(client_io));
        let server = server.expect("the exporter starts a session");
        tokio::spawn(async move {
            let _ = server.waiting().await;
        });
        client.expect("the client opens a session")
    }
}

/// A host without elicitation: whatever it is asked to put to its
/// person fails.
#[derive(Clone)]
pub struct CannotAsk;

impl rmcp::ClientHandler for CannotAsk {
    async fn create_elicitation(
        &self,
        _request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        Err(rmcp::ErrorData::internal_error("this host cannot ask its person", None))
    }
}

/// A token of this deployment.
pub fn token(tenant: &str, user: &str, agent: bool) -> String {
    lattice_testkit::authenticator().mint(&lattice_testkit::principal(tenant, user, lattice_core::TenantRole::Member, agent))
}

/// A `tools/call`'s result as its JSON (`isError`, `content`,
/// `structuredContent`, `_meta`).
pub async fn call(client: &RunningService<RoleClient, CannotAsk>, name: &str, arguments: Value) -> Value {
    let Value::Object(arguments) = arguments else { panic!("arguments are an object") };
    let result = client.call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(arguments)).await.expect("a tool result");
    serde_json::to_value(result).unwrap()
}

/// A result's text.
pub fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

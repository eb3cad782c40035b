//! The HTTP API in-process (`tower::ServiceExt::oneshot`), on SQLite and
//! PostgreSQL.

mod access_suite;
mod agent_runs;
mod agui_input;
mod agui_streams;
mod api_keys;
mod app_call_refusals;
mod app_callers;
mod app_calls;
mod authorization;
mod contract;
mod error_codes;
mod files;
mod form_deadline;
mod hostile;
mod identity;
mod input;
mod lockouts;
mod names;
mod prompt_limit;
mod receipts;
mod respondent_answers;
mod revocation;
mod server_apps;
mod server_sign_in;
mod snapshots;
mod stream;
mod ui_model;
mod unread;
mod waiting;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use lattice_api::AppState;
use lattice_core::TenantRole;
use lattice_log::{Backend, LogService};
use serde_json::Value;
use tower::ServiceExt;

/// The portal's origin as the tests' browsers reach it.
pub const PORTAL: &str = "http://127.0.0.1:8080";

pub struct App {
    pub router: Router,
    /// The apps origin's file downloads over the same state.
    pub downloads: Router,
    pub log: LogService,
    _stop: tokio::sync::watch::Sender<bool>,
}

pub struct Reply {
    pub status: StatusCode,
    pub body: Value,
    /// Where a redirect sends the browser.
    pub location: Option<String>,
}

impl App {
    pub async fn new(backend: Backend) -> Self {
        Self::with(backend, true).await
    }

    pub async fn with(backend: Backend, dev_sign_in: bool) -> Self {
        Self::guarded(backend, dev_sign_in, lattice_api::guard::Guard::new(lattice_api::guard::Limits::default())).await
    }

    /// The default limits, with the write rate read from `clock`: a test
    /// moves it instead of waiting.
    pub async fn on_clock(backend: Backend, clock: lattice_core::SharedClock) -> Self {
        Self::guarded(backend, true, lattice_api::guard::Guard::with_clock(lattice_api::guard::Limits::default(), clock)).await
    }

    /// The log service itself on `clock` (what expires by it: keys, tokens,
    /// sessions): a test moves it instead of waiting.
    pub async fn on_logged_clock(backend: Backend, clock: lattice_core::SharedClock) -> Self {
        let db = lattice_testkit::fresh_db(backend).await;
        let log = lattice_testkit::builder_on(db).clock(clock).start();
        Self::serving(log, true, lattice_api::guard::Guard::new(lattice_api::guard::Limits::default()), lattice_agent::Models::scripted())
    }

    /// The API with identity providers: the log takes their tokens and
    /// keeps the directory by their group rules, on `clock`.
    pub async fn with_identity(backend: Backend, providers: lattice_identity::Providers, clock: lattice_core::SharedClock) -> Self {
        let db = lattice_testkit::fresh_db(backend).await;
        let rules = providers.rules();
        let log = lattice_testkit::builder_on(db).clock(clock).identity(std::sync::Arc::new(providers.clone()), rules).start();
        let guard = lattice_api::guard::Guard::new(lattice_api::guard::Limits::default());
        Self::with_servers(log, true, guard, lattice_agent::Models::scripted(), lattice_connect::Connections::default(), Some(providers))
    }

    async fn guarded(backend: Backend, dev_sign_in: bool, guard: lattice_api::guard::Guard) -> Self {
        let log = lattice_testkit::service(backend).await;
        Self::serving(log, dev_sign_in, guard, lattice_agent::Models::scripted())
    }

    /// The API over `log` (one replica of many, when others serve the same
    /// database), its runs asking `models`.
    pub fn over(log: LogService, models: lattice_agent::Models) -> Self {
        Self::serving(log, true, lattice_api::guard::Guard::new(lattice_api::guard::Limits::default()), models)
    }

    /// The API over a fresh log with `connections`' servers connected, its
    /// runs asking `models` and calling the servers' tools.
    pub async fn connected(backend: Backend, connections: lattice_connect::Connections, models: lattice_agent::Models) -> Self {
        let db = lattice_testkit::fresh_db(backend).await;
        let log = lattice_testkit::builder_on(db).connected(connections.connected().clone()).start();
        Self::with_servers(log, true, lattice_api::guard::Guard::new(lattice_api::guard::Limits::default()), models, connections, None)
    }

    /// The API over a fresh log with `servers` connected, people signing in
    /// to those that ask for it (kept in this log, sealed), its runs asking
    /// `models`.
    pub async fn signing_in(
        backend: Backend,
        servers: &std::collections::BTreeMap<String, lattice_connect::ServerConfig>,
        models: lattice_agent::Models,
    ) -> Self {
        let keeper = lattice_agent::sign_ins::LogKeeper::default();
        let sign_ins = lattice_connect::SignIns {
            keeper: std::sync::Arc::new(keeper.clone()),
            redirect_uri: format!("{PORTAL}{}", lattice_api::routes::connections::CALLBACK_PATH),
            client_metadata_url: None,
        };
        let homes = std::env::temp_dir().join(format!("lattice-api-homes-{}", ulid::Ulid::generate()));
        let connections = lattice_connect::Connections::configure_with(servers, homes, Some(sign_ins)).unwrap();
        let db = lattice_testkit::fresh_db(backend).await;
        let log = lattice_testkit::builder_on(db).connected(connections.connected().clone()).start();
        keeper.attach(lattice_testkit::trusted(&log));
        Self::with_servers(log, true, lattice_api::guard::Guard::new(lattice_api::guard::Limits::default()), models, connections, None)
    }

    fn serving(log: LogService, dev_sign_in: bool, guard: lattice_api::guard::Guard, models: lattice_agent::Models) -> Self {
        Self::with_servers(log, dev_sign_in, guard, models, lattice_connect::Connections::default(), None)
    }

    fn with_servers(
        log: LogService,
        dev_sign_in: bool,
        guard: lattice_api::guard::Guard,
        models: lattice_agent::Models,
        connections: lattice_connect::Connections,
        identity: Option<lattice_identity::Providers>,
    ) -> Self {
        let (stop, shutdown) = tokio::sync::watch::channel(false);
        let runner = lattice_agent::Runner::new(lattice_testkit::trusted(&log), models).with_connections(connections.clone());
        let apps = lattice_app_calls::AppCalls::new(
            log.clone(),
            lattice_ui::app_policy::AppToolPolicy::parse("get_state=allow,set_state=allow,submit=ask").unwrap(),
        )
        .with_connections(connections);
        let state = AppState {
            log: log.clone(),
            runner,
            apps,
            dev_sign_in,
            identity,
            portal_origin: PORTAL.into(),
            max_body_bytes: 1024 * 1024,
            guard: std::sync::Arc::new(guard),
            readiness: None,
            switch_heartbeat: std::time::Duration::from_secs(5),
            shutdown,
        };
        let (router, downloads) = (lattice_api::router(state.clone()), lattice_api::downloads(state));
        Self { router, downloads, log, _stop: stop }
    }

    pub async fn send(&self, method: &str, path: &str, token: Option<&str>, body: Option<&str>) -> Reply {
        let mut req = Request::builder().method(method).uri(path);
        if let Some(token) = token {
            req = req.header("authorization", format!("Bearer {token}"));
        }
        let req = match body {
            Some(b) => req.header("content-type", "application/json").body(Body::from(b.to_owned())),
            None => req.body(Body::empty()),
        }
        .unwrap();
        self.reply(req).await
    }

    async fn reply(&self, req: Request<Body>) -> Reply {
        let res = self.router.clone().oneshot(req).await.unwrap();
        let status = res.status();
        let location = res.headers().get("location").and_then(|l| l.to_str().ok()).map(str::to_owned);
        let bytes = res.into_body().collect().await.unwrap().to_bytes();
        let body = serde_json::from_slice(&bytes).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()));
        Reply { status, body, location }
    }

    /// A SCIM request with a SCIM token, its body as SCIM clients send it.
    pub async fn send_scim(&self, method: &str, path: &str, token: &str, body: Option<Value>) -> Reply {
        let req = Request::builder().method(method).uri(path).header("authorization", format!("Bearer {token}"));
        let req = match body {
            Some(b) => req.header("content-type", "application/scim+json").body(Body::from(b.to_string())),
            None => req.body(Body::empty()),
        }
        .unwrap();
        self.reply(req).await
    }

    pub async fn get(&self, path: &str, token: &str) -> Reply {
        self.send("GET", path, Some(token), None).await
    }

    pub async fn send_put(&self, path: &str, token: &str, body: Value) -> Reply {
        self.send("PUT", path, Some(token), Some(&body.to_string())).await
    }

    pub async fn post(&self, path: &str, token: &str, body: Value) -> Reply {
        self.send("POST", path, Some(token), Some(&body.to_string())).await
    }

    /// Mints a token through `POST /v1/dev/token`, as a client would.
    pub async fn token(&self, tenant: &str, user: &str, role: TenantRole, agent: bool) -> String {
        let body = serde_json::json!({"tenant": tenant, "user": user, "role": role.as_str(), "agent": agent});
        let reply = self.send("POST", "/v1/dev/token", None, Some(&body.to_string())).await;
        assert_eq!(reply.status, StatusCode::OK, "{:?}", reply.body);
        reply.body["token"].as_str().unwrap().to_owned()
    }

    /// A workspace and a thread made by `token`'s holder.
    /// An app's audit rows as `token`'s holder reads them
    /// (`GET /v1/artifacts/{id}/calls`), oldest first: actor, tool, decision.
    pub async fn call_rows(&self, id: &str, token: &str) -> Vec<(String, String, String)> {
        let rows = self.get(&format!("/v1/artifacts/{id}/calls"), token).await;
        assert_eq!(rows.status, StatusCode::OK, "{:?}", rows.body);
        let mut rows: Vec<(String, String, String)> = rows
            .body
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["actor"].as_str().unwrap().into(), r["tool"].as_str().unwrap().into(), r["decision"].as_str().unwrap().into()))
            .collect();
        rows.reverse();
        rows
    }

    pub async fn workspace_with_thread(&self, token: &str) -> (String, String) {
        let ws = self.post("/v1/workspaces", token, serde_json::json!({"name": "W"})).await;
        assert_eq!(ws.status, StatusCode::OK, "{:?}", ws.body);
        let ws = ws.body["id"].as_str().unwrap().to_owned();
        let th = self.post(&format!("/v1/workspaces/{ws}/threads"), token, serde_json::json!({"title": "T"})).await;
        assert_eq!(th.status, StatusCode::OK, "{:?}", th.body);
        (ws, th.body["id"].as_str().unwrap().to_owned())
    }

    /// How many envelopes the workspace's log holds (to prove nothing was written).
    pub async fn event_count(&self, token: &str, ws: &str) -> usize {
        let page = self.get(&format!("/v1/workspaces/{ws}/events?format=json"), token).await;
        assert_eq!(page.status, StatusCode::OK, "{:?}", page.body);
        page.body["events"].as_array().unwrap().len()
    }
}

pub fn error_type(reply: &Reply) -> &str {
    reply.body["error"]["type"].as_str().unwrap_or("<no typed error>")
}

/// An open SSE stream, in-process: its events, as (name, data), as they come.
pub struct Sse {
    body: Body,
    text: String,
}

impl Sse {
    pub async fn open(app: &App, path: &str, token: &str) -> Self {
        let req =
            Request::get(path).header("authorization", format!("Bearer {token}")).header("accept", "text/event-stream").body(Body::empty()).unwrap();
        let res = app.router.clone().oneshot(req).await.unwrap();
        assert_eq!(res.status(), StatusCode::OK);
        assert_eq!(res.headers()["content-type"], "text/event-stream");
        Self { body: res.into_body(), text: String::new() }
    }

    /// The next event (comments skipped), within `within`; `None` when the stream ended.
    pub async fn next(&mut self, within: std::time::Duration) -> Option<(String, String)> {
        let until = std::time::Instant::now() + within;
        loop {
            if let Some(end) = self.text.find("\n\n") {
                let block: String = self.text.drain(..end + 2).collect();
                let event = block.lines().find_map(|l| l.strip_prefix("event: ")).map(str::to_owned);
                let data = block.lines().find_map(|l| l.strip_prefix("data: ")).map(str::to_owned);
                if let (Some(event), Some(data)) = (event, data) {
                    return Some((event, data));
                }
                continue;
            }
            let left = until.saturating_duration_since(std::time::Instant::now());
            let frame = tokio::time::timeout(left, self.body.frame()).await.expect("the stream went quiet");
            match frame {
                None => return None,
                Some(frame) => {
                    if let Ok(data) = frame.unwrap().into_data() {
                        self.text.push_str(&String::from_utf8_lossy(&data));
                    }
                }
            }
        }
    }
}

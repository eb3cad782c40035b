//! The acceptance harness: starts the real `lattice` binary as a process on
//! a loopback port and talks to it over HTTP, as a client would.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub mod browser;
pub mod demo;
pub mod https;
pub mod identity;
pub mod model;
pub mod otlp;
pub mod postgres;
pub mod sse;
pub use lattice_stack as stack;

pub use lattice_stack::{SECRET, binary, free_port};

/// One `lattice serve log` process.
pub struct LogProcess {
    child: Child,
    pub base: String,
    pub database_url: String,
    port: u16,
    data_dir: PathBuf,
    env: Vec<(String, String)>,
}

impl LogProcess {
    /// Starts on `database_url` and waits until `/readyz` answers.
    pub async fn start(database_url: &str) -> Self {
        Self::start_with(database_url, &[]).await
    }

    /// With extra environment (`LATTICE_…`).
    pub async fn start_with(database_url: &str, env: &[(&str, &str)]) -> Self {
        let data_dir = std::env::temp_dir().join(format!("lattice-e2e-{}", free_port()));
        std::fs::create_dir_all(&data_dir).unwrap();
        let env = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        lattice_stack::migrate(database_url).expect("the schema migrated");
        Self::spawn(database_url.to_owned(), free_port(), data_dir, env).await
    }

    /// The process's id (to read its memory from /proc).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        self.child.try_wait().is_ok_and(|status| status.is_none())
    }

    async fn spawn(database_url: String, port: u16, data_dir: PathBuf, env: Vec<(String, String)>) -> Self {
        let child = Command::new(binary())
            .args(["serve", "log"])
            .env("LATTICE_PROFILE", "local")
            .env("LATTICE_DATABASE_URL", &database_url)
            .env("LATTICE_HTTP_ADDR", format!("127.0.0.1:{port}"))
            .env("LATTICE_AUTH_SECRET", SECRET)
            .env("LATTICE_DATA_DIR", &data_dir)
            .env("LATTICE_LOG", "warn")
            // The test's own, over the defaults (another secret: a rotation).
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("starting lattice");
        let process = Self { child, base: format!("http://127.0.0.1:{port}"), database_url, port, data_dir, env };
        process.wait_ready().await;
        process
    }

    async fn wait_ready(&self) {
        wait_ready(&self.base).await;
    }

    /// SIGKILL: no chance to finish anything.
    pub fn kill(&mut self) {
        self.child.kill().expect("SIGKILL");
        self.child.wait().expect("reaping");
    }

    /// SIGTERM, then waits for the process to exit; returns its exit code.
    pub fn terminate(&mut self) -> Option<i32> {
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGTERM);
        }
        self.child.wait().ok().and_then(|s| s.code())
    }

    /// A new process on the same database and port.
    pub async fn restart(mut self) -> Self {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let (url, port, dir, env) = (self.database_url.clone(), self.port, self.data_dir.clone(), std::mem::take(&mut self.env));
        std::mem::forget(self);
        Self::spawn(url, port, dir, env).await
    }
}

impl Drop for LogProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.data_dir);
    }
}

/// An HTTP client for the suites: TLS by rustls with ring, as the binary's.
pub fn http() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

/// Waits until `{base}/readyz` answers 200, for 30 s at most.
pub async fn wait_ready(base: &str) {
    let http = http();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !http.get(format!("{base}/readyz")).send().await.is_ok_and(|r| r.status().is_success()) {
        assert!(Instant::now() < deadline, "lattice did not become ready at {base}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// One `lattice up` process: the embedded default (SQLite in a folder of
/// its own, the demo seeded, the chat host at `/`).
pub struct UpProcess {
    child: Child,
    pub base: String,
    /// The apps origin.
    pub apps: String,
    dir: PathBuf,
    ports: (u16, u16),
    env: Vec<(String, String)>,
}

impl UpProcess {
    pub async fn start() -> Self {
        Self::start_with(&[]).await
    }

    /// With extra environment (`LATTICE_…`).
    pub async fn start_with(env: &[(&str, &str)]) -> Self {
        Self::start_configured("", env).await
    }

    /// With `lattice.toml` in its folder holding `config` (what only the
    /// file says well: the connected MCP servers), and extra environment.
    pub async fn start_configured(config: &str, env: &[(&str, &str)]) -> Self {
        let port = free_port();
        let apps_port = free_port();
        let dir = std::env::temp_dir().join(format!("lattice-up-{port}"));
        std::fs::create_dir_all(&dir).unwrap();
        if !config.is_empty() {
            std::fs::write(dir.join("lattice.toml"), config).unwrap();
        }
        let env = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Self::spawn((port, apps_port), dir, env).await
    }

    async fn spawn((port, apps_port): (u16, u16), dir: PathBuf, env: Vec<(String, String)>) -> Self {
        let mut cmd = Command::new(binary());
        cmd.arg("up")
            .current_dir(&dir)
            .env("LATTICE_PROFILE", "local")
            .env("LATTICE_HTTP_ADDR", format!("127.0.0.1:{port}"))
            .env("LATTICE_APPS_ADDR", format!("127.0.0.1:{apps_port}"))
            .env("LATTICE_APPS_ORIGIN", format!("http://localhost:{apps_port}"))
            .env("LATTICE_PORTAL_ORIGIN", format!("http://127.0.0.1:{port}"))
            .env("LATTICE_AUTH_SECRET", SECRET)
            .env("LATTICE_LOG", "warn")
            .env_remove("LATTICE_DATABASE_URL")
            .env_remove("LATTICE_NATS_URL")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        for (k, v) in &env {
            cmd.env(k, v);
        }
        let child = cmd.spawn().expect("starting lattice up");
        // A listen address of the caller's own is reached on loopback.
        let listening =
            env.iter().find(|(k, _)| k == "LATTICE_HTTP_ADDR").and_then(|(_, addr)| addr.rsplit(':').next()?.parse().ok()).unwrap_or(port);
        let process = Self {
            child,
            base: format!("http://127.0.0.1:{listening}"),
            apps: format!("http://localhost:{apps_port}"),
            dir,
            ports: (port, apps_port),
            env,
        };
        wait_ready(&process.base).await;
        process
    }

    /// Killed (SIGKILL): its connections cut, its data kept.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Started again (after [`Self::kill`]) on the same addresses and data.
    pub async fn start_again(mut self) -> Self {
        self.kill();
        let (ports, dir, env) = (self.ports, self.dir.clone(), std::mem::take(&mut self.env));
        // Its folder is kept for the new process.
        std::mem::forget(self);
        Self::spawn(ports, dir, env).await
    }

    /// The process's id (to read its memory from /proc).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        self.child.try_wait().is_ok_and(|status| status.is_none())
    }

    /// Its database (SQLite), for another process to share.
    pub fn database_url(&self) -> String {
        format!("sqlite://{}/data/lattice.db", self.dir.display())
    }
}

impl Drop for UpProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A thin JSON client for `/v1`.
#[derive(Clone)]
pub struct Client {
    pub http: reqwest::Client,
    pub base: String,
    pub token: String,
}

impl Client {
    /// Signs in through `POST /v1/dev/token`.
    pub async fn sign_in(base: &str, tenant: &str, user: &str) -> Self {
        Self::sign_in_as(base, json!({"tenant": tenant, "user": user})).await
    }

    /// Signs in with a dev token request of one's own (a role, an agent).
    pub async fn sign_in_as(base: &str, request: Value) -> Self {
        let http = http();
        let reply: Value = http.post(format!("{base}/v1/dev/token")).json(&request).send().await.unwrap().json().await.unwrap();
        Self { http, base: base.to_owned(), token: reply["token"].as_str().expect("a token").to_owned() }
    }

    pub async fn post(&self, path: &str, body: Value) -> Result<(u16, Value), reqwest::Error> {
        let r = self.http.post(format!("{}{path}", self.base)).bearer_auth(&self.token).json(&body).send().await?;
        let status = r.status().as_u16();
        Ok((status, r.json().await.unwrap_or(Value::Null)))
    }

    /// A call that must succeed; returns its body.
    pub async fn ok(&self, method: &str, path: &str, body: Value) -> Value {
        let request = match method {
            "POST" => self.http.post(format!("{}{path}", self.base)).json(&body),
            "PUT" => self.http.put(format!("{}{path}", self.base)).json(&body),
            "PATCH" => self.http.patch(format!("{}{path}", self.base)).json(&body),
            _ => self.http.get(format!("{}{path}", self.base)),
        };
        let r = request.bearer_auth(&self.token).send().await.unwrap();
        let status = r.status();
        let body: Value = r.json().await.unwrap_or(Value::Null);
        assert!(status.is_success(), "{method} {path}: {status} {body}");
        body
    }

    pub async fn get(&self, path: &str) -> Result<(u16, Value), reqwest::Error> {
        let r = self.http.get(format!("{}{path}", self.base)).bearer_auth(&self.token).send().await?;
        let status = r.status().as_u16();
        Ok((status, r.json().await.unwrap_or(Value::Null)))
    }

    /// Every event of a thread, page by page.
    pub async fn all_events(&self, thread: &str) -> Vec<Value> {
        let mut out = Vec::new();
        let mut after = 0;
        loop {
            let (status, page) = self.get(&format!("/v1/threads/{thread}/events?format=json&after={after}")).await.unwrap();
            assert_eq!(status, 200, "{page}");
            let events = page["events"].as_array().unwrap().clone();
            if events.is_empty() {
                return out;
            }
            after = page["next_after"].as_i64().unwrap();
            out.extend(events);
        }
    }
}

/// One `lattice serve bridge` process.
pub struct BridgeProcess {
    child: Child,
    database_url: String,
    nats_url: String,
    probes: String,
}

impl BridgeProcess {
    pub fn start(database_url: &str, nats_url: &str) -> Self {
        lattice_stack::migrate(database_url).expect("the schema migrated");
        let port = free_port();
        let child = Command::new(binary())
            .args(["serve", "bridge"])
            .env("LATTICE_PROFILE", "local")
            .env("LATTICE_DATABASE_URL", database_url)
            .env("LATTICE_NATS_URL", nats_url)
            .env("LATTICE_AUTH_SECRET", SECRET)
            .env("LATTICE_LOG", "warn")
            // Its health and readiness listen here.
            .env("LATTICE_HTTP_ADDR", format!("127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("starting lattice serve bridge");
        Self { child, database_url: database_url.to_owned(), nats_url: nats_url.to_owned(), probes: format!("http://127.0.0.1:{port}") }
    }

    /// Where its `/healthz` and `/readyz` answer.
    pub fn probes(&self) -> String {
        self.probes.clone()
    }

    /// SIGKILL: no chance to finish or give its lead back.
    pub fn kill(&mut self) {
        self.child.kill().expect("SIGKILL");
        self.child.wait().expect("reaping");
    }

    /// SIGKILL, then a new bridge on the same database and NATS.
    pub fn kill_and_restart(&mut self) {
        self.child.kill().expect("SIGKILL");
        self.child.wait().expect("reaping");
        *self = Self::start(&self.database_url.clone(), &self.nats_url.clone());
    }
}

impl Drop for BridgeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `lattice serve edge` in the production profile in front of `log_url`
/// (one log service or several, comma-separated) and, when given,
/// `mcp_url` (likewise); dropping it stops it.
pub struct EdgeProcess {
    child: Child,
    /// The portal's origin.
    pub base: String,
}

impl EdgeProcess {
    pub async fn start(log_url: &str, mcp_url: Option<&str>) -> Self {
        let (port, apps_port) = (free_port(), free_port());
        let base = format!("http://127.0.0.1:{port}");
        let mut cmd = Command::new(binary());
        cmd.args(["serve", "edge"])
            .env("LATTICE_PROFILE", "production")
            .env_remove("LATTICE_AUTH_SECRET")
            .env_remove("LATTICE_DATABASE_URL")
            .env("LATTICE_LOG_URL", log_url)
            .env("LATTICE_HTTP_ADDR", format!("127.0.0.1:{port}"))
            .env("LATTICE_APPS_ADDR", format!("127.0.0.1:{apps_port}"))
            .env("LATTICE_APPS_ORIGIN", format!("http://localhost:{apps_port}"))
            .env("LATTICE_PORTAL_ORIGIN", &base)
            .env("LATTICE_LOG", "error")
            .stdout(Stdio::null());
        if let Some(mcp) = mcp_url {
            cmd.env("LATTICE_MCP_URL", mcp);
        }
        let child = cmd.spawn().expect("starting lattice serve edge");
        wait_ready(&base).await;
        Self { child, base }
    }
}

impl Drop for EdgeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What serves a suite: `lattice up` (one process), or the multi-process
/// stack (the acceptance suite's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum On {
    Up,
    Stack,
}

/// A running deployment of either shape; dropping it stops it.
pub enum Deployment {
    Up(UpProcess),
    Stack(Box<stack::Stack>),
}

impl Deployment {
    pub async fn start(on: On) -> Self {
        match on {
            On::Up => Self::Up(UpProcess::start().await),
            On::Stack => {
                let stack = tokio::task::spawn_blocking(stack::Stack::temporary).await.unwrap().unwrap_or_else(|e| panic!("the stack: {e}"));
                println!("acceptance: {}", stack.engine());
                Self::Stack(Box::new(stack))
            }
        }
    }

    /// The portal's origin.
    pub fn base(&self) -> &str {
        match self {
            Self::Up(up) => &up.base,
            Self::Stack(stack) => &stack.portal,
        }
    }

    /// The apps origin.
    pub fn apps(&self) -> &str {
        match self {
            Self::Up(up) => &up.apps,
            Self::Stack(stack) => &stack.apps,
        }
    }

    /// Its database, for a command run beside it (`lattice switch`).
    pub fn database_url(&self) -> String {
        match self {
            Self::Up(up) => up.database_url(),
            Self::Stack(stack) => stack.database_url.clone(),
        }
    }
}

/// Every message the `LATTICE` stream holds whose subject passes `keep`:
/// its subject, its `Nats-Msg-Id` and its payload, in stream order.
pub async fn stream_messages(js: &async_nats::jetstream::Context, keep: impl Fn(&str) -> bool) -> Vec<(String, String, Vec<u8>)> {
    let Ok(mut stream) = js.get_stream("LATTICE").await else { return Vec::new() };
    let Ok(info) = stream.info().await.cloned() else { return Vec::new() };
    let mut out = Vec::new();
    if info.state.messages == 0 {
        return out;
    }
    for seq in info.state.first_sequence..=info.state.last_sequence {
        let Ok(m) = stream.get_raw_message(seq).await else { continue };
        if keep(&m.subject) {
            let id = m.headers.get("Nats-Msg-Id").map(|v| v.as_str().to_owned()).unwrap_or_default();
            out.push((m.subject.to_string(), id, m.payload.to_vec()));
        }
    }
    out
}

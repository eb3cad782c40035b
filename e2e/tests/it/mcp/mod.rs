//! The MCP exporter (REQUIREMENTS.md M), driven by the official TypeScript SDK's client
//! (`@modelcontextprotocol/sdk` from npm, run with Node) and, for views, by
//! ext-apps' `AppBridge` in headless Chromium.

mod apps;
mod ask;
mod client_conformance;
mod conformance;
mod inspector;
mod origins;
mod replicas;
mod rounds;
mod sdk;
mod view;

use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

/// `client.mjs`'s fixed session against `BASE/mcp` as `token`.
pub fn session(base: &str, token: &str) -> Value {
    session_with(&[base, token], &[])
}

pub fn session_with(args: &[&str], env: &[(&str, String)]) -> Value {
    node("client.mjs", args, env)
}

/// One session that runs `plan` (`steps.mjs`): `{"elicit": …, "steps": […]}`.
pub async fn steps(base: &str, token: &str, plan: Value) -> Value {
    let (base, token) = (base.to_owned(), token.to_owned());
    tokio::task::spawn_blocking(move || node("steps.mjs", &[&base, &token, &plan.to_string()], &[])).await.unwrap()
}

fn node(script: &str, args: &[&str], env: &[(&str, String)]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp").join(script);
    let mut node = Command::new("node");
    node.arg(script).args(args);
    for (k, v) in env {
        node.env(k, v);
    }
    let out = node.output().expect("node runs the SDK client");
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.trim())
        .unwrap_or_else(|e| panic!("the client printed {text:?} ({e}); stderr: {}", String::from_utf8_lossy(&out.stderr)))
}

/// ana of acme's workspace "Ops" with a thread "Leave", bob its editor:
/// ana, bob, the workspace and the thread.
pub async fn leave_thread(base: &str) -> (lattice_e2e::Client, lattice_e2e::Client, String, String) {
    let ana = lattice_e2e::Client::sign_in(base, "acme", "ana").await;
    let ws = ana.ok("POST", "/v1/workspaces", serde_json::json!({"name": "Ops"})).await["id"].as_str().unwrap().to_owned();
    let th = ana.ok("POST", &format!("/v1/workspaces/{ws}/threads"), serde_json::json!({"title": "Leave"})).await["id"].as_str().unwrap().to_owned();
    ana.ok("POST", &format!("/v1/workspaces/{ws}/members"), serde_json::json!({"user": "bob", "role": "editor"})).await;
    let bob = lattice_e2e::Client::sign_in(base, "acme", "bob").await;
    (ana, bob, ws, th)
}

/// A tool result's text.
pub fn text(result: &Value) -> String {
    result["content"][0]["text"].as_str().unwrap_or_default().to_owned()
}

/// A token minted by `lattice token` with the suites' secret: ana of acme.
pub fn cli_token() -> String {
    let out = Command::new(lattice_e2e::binary())
        .args(["token", "--tenant", "acme", "--user", "ana"])
        .env("LATTICE_AUTH_SECRET", lattice_e2e::SECRET)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// `lattice serve mcp` on a database of its own or one it shares.
pub struct ServeMcp {
    child: Child,
    pub base: String,
}

impl ServeMcp {
    pub async fn start(database_url: &str, env: &[(&str, &str)]) -> Self {
        lattice_e2e::stack::migrate(database_url).expect("the schema migrated");
        let port = lattice_e2e::free_port();
        let mut cmd = Command::new(lattice_e2e::binary());
        cmd.args(["serve", "mcp"])
            .env("LATTICE_PROFILE", "local")
            .env("LATTICE_AUTH_SECRET", lattice_e2e::SECRET)
            .env("LATTICE_DATABASE_URL", database_url)
            .env("LATTICE_HTTP_ADDR", format!("127.0.0.1:{port}"))
            .env("LATTICE_LOG", "warn")
            .stdout(Stdio::null());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = cmd.spawn().unwrap();
        let base = format!("http://127.0.0.1:{port}");
        lattice_e2e::wait_ready(&base).await;
        Self { child, base }
    }

    /// SIGKILL: its sessions are left to the other replicas.
    pub fn kill(&mut self) {
        self.child.kill().expect("SIGKILL");
        self.child.wait().expect("reaping");
    }
}

impl Drop for ServeMcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

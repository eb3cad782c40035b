//! The official MCP conformance suite (`@modelcontextprotocol/conformance`
//! from npm, pinned in e2e/package-lock.json, run with Node ≥ 22, which
//! `cargo xtask test` installs) against `lattice serve mcp`, directly and
//! behind the edge, with a token. Every scenario passes but those
//! e2e/conformance/expected-failures.yaml lists with their reasons; the
//! suite itself fails the run for one listed that passes (stale) and for
//! one that fails unlisted.
//!
//! The suite sends no token: a proxy here adds the caller's, and passes
//! everything else as it came (the Host and Origin of its rebinding checks
//! among them).

use std::path::{Path, PathBuf};
use std::process::Command;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;

use super::ServeMcp;

/// Node ≥ 22: `LATTICE_CONFORMANCE_NODE` (what `cargo xtask test` installs),
/// else a `node` on the PATH that is new enough.
pub(super) fn node() -> PathBuf {
    if let Some(node) = std::env::var_os("LATTICE_CONFORMANCE_NODE") {
        return PathBuf::from(node);
    }
    let version = Command::new("node").arg("--version").output().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned()).unwrap_or_default();
    let major: u32 = version.trim_start_matches('v').split('.').next().and_then(|m| m.parse().ok()).unwrap_or(0);
    assert!(major >= 22, "the conformance suite needs Node 22 or newer (here: {version:?}); `cargo xtask test` installs one");
    PathBuf::from("node")
}

#[derive(Clone)]
struct Upstream {
    base: String,
    token: String,
    http: reqwest::Client,
}

/// Forwards a request to the upstream with the token, streaming the answer.
async fn forward(State(up): State<Upstream>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let body = axum::body::to_bytes(body, 16 << 20).await.unwrap_or_default();
    let url = format!("{}{}", up.base, parts.uri.path_and_query().map_or("/", |p| p.as_str()));
    let mut out = up.http.request(parts.method, url).body(body).bearer_auth(&up.token);
    for (name, value) in &parts.headers {
        if name != axum::http::header::AUTHORIZATION && name != axum::http::header::CONTENT_LENGTH {
            out = out.header(name, value);
        }
    }
    match out.send().await {
        Ok(answer) => {
            let mut response = Response::builder().status(answer.status());
            for (name, value) in answer.headers() {
                response = response.header(name, value);
            }
            response.body(Body::from_stream(answer.bytes_stream())).unwrap()
        }
        Err(e) => Response::builder().status(502).body(Body::from(e.to_string())).unwrap(),
    }
}

/// A proxy to `base` adding `token`: its address.
async fn with_token(base: &str, token: &str) -> String {
    let up = Upstream { base: base.to_owned(), token: token.to_owned(), http: reqwest::Client::builder().build().unwrap() };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = axum::Router::new().fallback(forward).with_state(up);
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://localhost:{}", addr.port())
}

/// Runs the whole active suite against `url`: its summary, and whether it
/// passed against the expected failures.
fn suite(url: &str) -> (String, bool) {
    let e2e = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out_dir = std::env::temp_dir().join(format!("lattice-conformance-{}", lattice_e2e::free_port()));
    let run = Command::new(node())
        .arg(e2e.join("node_modules/@modelcontextprotocol/conformance/dist/index.js"))
        .args(["server", "--url", url, "--expected-failures"])
        .arg(e2e.join("conformance/expected-failures.yaml"))
        .arg("-o")
        .arg(&out_dir)
        .output()
        .expect("the conformance suite runs");
    let said = String::from_utf8_lossy(&run.stdout).into_owned() + &String::from_utf8_lossy(&run.stderr);
    let mut summary = said.find("=== SUMMARY ===").map_or(said.clone(), |at| said[at..].to_owned());
    if !run.status.success() {
        // What each failed check said, for whoever reads the failure.
        for entry in std::fs::read_dir(&out_dir).into_iter().flatten().flatten() {
            let checks = std::fs::read_to_string(entry.path().join("checks.json")).unwrap_or_default();
            for check in serde_json::from_str::<Vec<serde_json::Value>>(&checks).unwrap_or_default() {
                if check["status"] == "FAILURE" {
                    summary.push_str(&format!("\n{}: {}", check["name"], check["errorMessage"]));
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&out_dir);
    (summary, run.status.success())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_conformance_suite_passes_but_for_the_reference_servers_fixtures() {
    let url = lattice_testkit::fresh_url(lattice_log::Backend::Postgres).await;
    let log = lattice_e2e::LogProcess::start_with(&url, &[]).await;
    // It believes the edge's word on the name a request came by, as a
    // deployment's does; and the suite, one caller posting some hundred
    // messages in a few seconds, is not held to a person's write rate
    // (it would be answered 429, as it should).
    let mcp = ServeMcp::start(&url, &[("LATTICE_TRUSTED_PROXIES", "127.0.0.1/32"), ("LATTICE_RATE_WRITES_PER_SEC", "0")]).await;
    let edge = lattice_e2e::EdgeProcess::start(&log.base, Some(&mcp.base)).await;
    let out = Command::new(lattice_e2e::binary())
        .args(["token", "--tenant", "acme", "--user", "ana"])
        .env("LATTICE_AUTH_SECRET", lattice_e2e::SECRET)
        .output()
        .expect("lattice token");
    let token = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    for (what, base) in [("lattice serve mcp", &mcp.base), ("the edge", &edge.base)] {
        let proxy = with_token(base, &token).await;
        let url = format!("{proxy}/mcp");
        let (summary, passed) = tokio::task::spawn_blocking(move || suite(&url)).await.unwrap();
        println!("the MCP conformance suite against {what}:\n{summary}");
        assert!(passed, "the conformance suite against {what} failed:\n{summary}");
    }
}

//! The MCP exporter (SPEC M1–M3), driven by the official TypeScript SDK's
//! client (`e2e/mcp/client.mjs`, run with Node) over streamable HTTP.

use lattice_e2e::{Client, UpProcess};
use serde_json::{Value, json};

fn session(base: &str, token: &str) -> Value {
    session_with(&[base, token], &[])
}

/// ana's token, minted by `lattice token` with the suites' secret.
fn cli_token() -> String {
    let out = std::process::Command::new(lattice_e2e::binary())
        .args(["token", "--tenant", "acme", "--user", "ana"])
        .env("LATTICE_AUTH_SECRET", lattice_e2e::SECRET)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

fn session_with(args: &[&str], env: &[(&str, String)]) -> Value {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp/client.mjs");
    let mut node = std::process::Command::new("node");
    node.arg(script).args(args);
    for (k, v) in env {
        node.env(k, v);
    }
    let out = node.output().expect("node runs the SDK client");
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("the client printed {text:?} ({e}); stderr: {}", String::from_utf8_lossy(&out.stderr)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_official_sdk_client_lists_calls_and_reads() {
    let up = UpProcess::start().await;
    let ana = Client::sign_in(&up.base, "acme", "ana").await;
    let base = up.base.clone();
    let token = ana.token.clone();
    let s = tokio::task::spawn_blocking(move || session(&base, &token)).await.unwrap();
    assert!(s.get("error").is_none(), "{s}");
    assert_eq!(s["capabilities"]["extensions"]["io.modelcontextprotocol/ui"], json!({"mimeTypes": ["text/html;profile=mcp-app"]}));
    let names: Vec<&str> = s["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"show_dashboard") && names.contains(&"ask_form"), "{names:?}");
    assert!(!names.contains(&"create_app"), "no create_app while ui:mini-apps is off: {names:?}");

    let call = &s["call"];
    assert_eq!(call["_meta"]["ui"]["resourceUri"], "ui://lattice/views/dashboard");
    assert_eq!(call["structuredContent"]["dashboard"]["title"], "Service health");
    let receipt = &call["structuredContent"]["receipt"];
    let text = call["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("## Service health") && text.contains("| 10:00 | 1350 |"), "{text}");
    assert!(text.contains(receipt["digest"].as_str().unwrap()), "the text names the receipt");
    // The dashboard is the caller's, in the log.
    let art = ana.ok("GET", &format!("/v1/artifacts/{}", receipt["id"].as_str().unwrap()), Value::Null).await;
    assert_eq!((art["author"].as_str(), art["kind"].as_str()), (Some("ana"), Some("dashboard")));

    let content = &s["resource"]["contents"][0];
    assert_eq!(content["mimeType"], "text/html;profile=mcp-app");
    let html = content["text"].as_str().unwrap();
    assert!(!html.contains("http:") && !html.contains("https:"), "the view names no external URL");
    assert!(html.contains("ui/initialize") && !html.contains("innerHTML"), "the view speaks MCP Apps and inserts text only");

    // Arguments the UI model refuses are a tool error the model can act on.
    assert_eq!(s["bad"]["isError"], true);
    assert!(s["bad"]["content"][0]["text"].as_str().unwrap().contains("unknown variant `pie`"), "{}", s["bad"]);

    // With mini apps on, create_app is listed; without a token, nothing.
    let root = Client::sign_in_as(&up.base, json!({"tenant": "ops", "user": "root", "role": "deployment_admin"})).await;
    root.ok("PUT", "/v1/integrations/deployment/ui:mini-apps", json!({"state": "on", "reason": "MCP suite"})).await;
    let (base, token) = (up.base.clone(), ana.token.clone());
    let s = tokio::task::spawn_blocking(move || session(&base, &token)).await.unwrap();
    assert!(s["tools"].as_array().unwrap().iter().any(|t| t["name"] == "create_app"), "{}", s["tools"]);
    let base = up.base.clone();
    let s = tokio::task::spawn_blocking(move || session(&base, "not-a-token")).await.unwrap();
    assert!(s["error"].as_str().unwrap().contains("Unauthorized"), "{s}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_over_stdio() {
    let dir = std::env::temp_dir().join(format!("lattice-mcp-stdio-{}", lattice_e2e::free_port()));
    std::fs::create_dir_all(&dir).unwrap();
    let token = cli_token();
    let env = [
        ("LATTICE_TOKEN", token),
        ("LATTICE_AUTH_SECRET", lattice_e2e::SECRET.to_owned()),
        ("LATTICE_DATABASE_URL", format!("sqlite://{}/mcp.db?mode=rwc", dir.display())),
        ("LATTICE_PROFILE", "local".to_owned()),
        ("LATTICE_LOG", "warn".to_owned()),
    ];
    let binary = lattice_e2e::binary().display().to_string();
    let s = tokio::task::spawn_blocking(move || session_with(&["stdio", &binary], &env)).await.unwrap();
    assert!(s.get("error").is_none(), "{s}");
    assert_eq!(s["capabilities"]["extensions"]["io.modelcontextprotocol/ui"], json!({"mimeTypes": ["text/html;profile=mcp-app"]}));
    assert_eq!(s["call"]["structuredContent"]["dashboard"]["title"], "Service health");
    assert_eq!(s["resource"]["contents"][0]["mimeType"], "text/html;profile=mcp-app");
    let _ = std::fs::remove_dir_all(dir);
}

/// `lattice serve mcp` on its own: ready, the same session, and a Host
/// header it was not told of refused (DNS rebinding).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lattice_serve_mcp_answers_and_guards_its_host() {
    let dir = std::env::temp_dir().join(format!("lattice-serve-mcp-{}", lattice_e2e::free_port()));
    std::fs::create_dir_all(&dir).unwrap();
    let port = lattice_e2e::free_port();
    let mut child = std::process::Command::new(lattice_e2e::binary())
        .args(["serve", "mcp"])
        .env("LATTICE_PROFILE", "local")
        .env("LATTICE_AUTH_SECRET", lattice_e2e::SECRET)
        .env("LATTICE_DATABASE_URL", format!("sqlite://{}/mcp.db?mode=rwc", dir.display()))
        .env("LATTICE_HTTP_ADDR", format!("127.0.0.1:{port}"))
        .env("LATTICE_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !http.get(format!("{base}/readyz")).send().await.is_ok_and(|r| r.status().is_success()) {
        assert!(std::time::Instant::now() < deadline, "lattice serve mcp did not become ready");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let token = cli_token();
    let (b, t) = (base.clone(), token.clone());
    let s = tokio::task::spawn_blocking(move || session(&b, &t)).await.unwrap();
    assert!(s.get("error").is_none(), "{s}");
    assert_eq!(s["call"]["structuredContent"]["dashboard"]["title"], "Service health");
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "rebinding", "version": "1"}}});
    let r = http
        .post(format!("{base}/mcp"))
        .header("host", "attacker.example")
        .header("accept", "application/json, text/event-stream")
        .bearer_auth(&token)
        .json(&init)
        .send()
        .await
        .unwrap();
    assert!(r.status().is_client_error(), "a foreign Host header: {}", r.status());
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(dir);
}

//! One SDK client session over each way in: `/mcp` of `lattice up`,
//! `lattice mcp --stdio`, and `lattice serve mcp` (`e2e/mcp/client.mjs`).

use lattice_agent::tools::{CREATE_APP, SHOW_DASHBOARD};
use lattice_e2e::{Client, UpProcess};
use lattice_ui::asks::ASK_FORM;
use serde_json::{Value, json};

use super::{ServeMcp, cli_token, session, session_with};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_official_sdk_client_lists_calls_and_reads() {
    // No demo: its deployment opts in to mini apps, and the default is what is tested here.
    let up = UpProcess::start_with(&[("LATTICE_SEED_DEMO", "false")]).await;
    let ana = Client::sign_in(&up.base, "acme", "ana").await;
    let base = up.base.clone();
    let token = ana.token.clone();
    let s = tokio::task::spawn_blocking(move || session(&base, &token)).await.unwrap();
    assert!(s.get("error").is_none(), "{s}");
    assert_eq!(s["capabilities"]["extensions"]["io.modelcontextprotocol/ui"], json!({"mimeTypes": ["text/html;profile=mcp-app"]}));
    let names: Vec<&str> = s["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(names.contains(&SHOW_DASHBOARD) && names.contains(&ASK_FORM), "{names:?}");
    assert!(!names.contains(&CREATE_APP), "no create_app while ui:mini-apps is off: {names:?}");

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
    assert!(s["tools"].as_array().unwrap().iter().any(|t| t["name"] == CREATE_APP), "{}", s["tools"]);
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
    let server = ServeMcp::start(&format!("sqlite://{}/mcp.db?mode=rwc", dir.display()), &[]).await;
    let (base, http) = (server.base.clone(), lattice_e2e::http());
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
    drop(server);
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_a_token_is_told_where_to_get_one() {
    let up = lattice_e2e::UpProcess::start_with(&[("LATTICE_MCP_AUTHORIZATION_SERVERS", "https://auth.example.com, https://sso.example.com")]).await;
    let http = reqwest::Client::new();
    let refused = http.post(format!("{}/mcp", up.base)).header("content-type", "application/json").body("{}").send().await.unwrap();
    assert_eq!(refused.status(), 401);
    let challenge = refused.headers().get("www-authenticate").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    let metadata_url = format!("{}/.well-known/oauth-protected-resource/mcp", up.base);
    assert_eq!(challenge, format!("Bearer resource_metadata=\"{metadata_url}\""), "RFC 9728's challenge");
    let metadata: serde_json::Value = http.get(&metadata_url).send().await.unwrap().json().await.unwrap();
    assert_eq!(metadata["resource"], format!("{}/mcp", up.base));
    assert_eq!(metadata["authorization_servers"], json!(["https://auth.example.com", "https://sso.example.com"]));
    assert_eq!(metadata["bearer_methods_supported"], json!(["header"]));
}

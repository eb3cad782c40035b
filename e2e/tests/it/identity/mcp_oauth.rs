//! An MCP client signs in to lattice's `/mcp` through the company's
//! provider: the official TypeScript SDK's OAuth client finds the provider
//! in lattice's protected-resource metadata (RFC 9728), registers itself
//! there, signs the person in (authorization code with PKCE, the
//! `resource` of RFC 8707), and calls tools with the access token the
//! provider issued for lattice's MCP resource.

use std::path::Path;
use std::process::Command;

use lattice_e2e::identity::WithProvider;
use serde_json::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_client_signs_in_with_the_company_account() {
    let lattice = WithProvider::start(&[]).await;
    let metadata: Value = reqwest::get(format!("{}/.well-known/oauth-protected-resource/mcp", lattice.portal)).await.unwrap().json().await.unwrap();
    assert_eq!(metadata["authorization_servers"][0], lattice.idp.issuer(), "{metadata}");
    assert_eq!(metadata["scopes_supported"], serde_json::json!(["mcp"]), "{metadata}");

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp/oauth-client.mjs");
    let mcp = format!("{}/mcp", lattice.portal);
    let run = |login: &str, password: &str| {
        Command::new("node").arg(&script).args(["--url", &mcp, "--login", login, "--password", password]).output().expect("node runs the client")
    };
    let out = run("ada", "ada-password");
    let said = String::from_utf8_lossy(&out.stdout);
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the SDK's client did not sign in: {said}");
    let result: Value = serde_json::from_str(said.lines().last().unwrap_or_default()).unwrap_or_else(|e| panic!("{e}: {said}"));
    assert_eq!((&result["ok"], &result["audience"]), (&Value::Bool(true), &Value::String(mcp.clone())), "{result}");
    let tools: Vec<&str> = result["tools"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(tools.contains(&"ask_form") && tools.contains(&"show_dashboard"), "lattice's tools, as the signed-in person: {tools:?}");

    // A wrong password gets no token, and so no tools.
    let refused = run("ada", "not-her-password");
    assert!(!refused.status.success(), "{}", String::from_utf8_lossy(&refused.stdout));
}

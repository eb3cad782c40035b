//! Who may call `/mcp` from a browser (DNS rebinding, MCP's transport
//! security): a page of the server's own origin may, as the official
//! conformance suite's `dns-rebinding-protection` asks; any other origin
//! not configured (`LATTICE_MCP_ALLOWED_ORIGINS`) is refused, the apps
//! origin among them, and a name the server does not answer to is
//! misdirected before any origin is looked at.

use lattice_e2e::{Client, UpProcess};
use serde_json::json;

async fn initialize(up: &UpProcess, token: &str, host: Option<&str>, origin: Option<&str>) -> (u16, String) {
    let mut req = lattice_e2e::http()
        .post(format!("{}/mcp", up.base))
        .bearer_auth(token)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "origins", "version": "1"}}})
            .to_string(),
        );
    if let Some(host) = host {
        req = req.header("host", host);
    }
    if let Some(origin) = origin {
        req = req.header("origin", origin);
    }
    let res = req.send().await.expect("an answer");
    (res.status().as_u16(), res.text().await.unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_servers_own_origin_may_call_and_no_other_unconfigured_one() {
    let up = UpProcess::start().await;
    let ana = Client::sign_in_as(&up.base, json!({"tenant": "t-origins", "user": "ana", "role": "tenant_admin"})).await;
    let own = up.base.clone();
    let port = own.rsplit(':').next().unwrap().to_owned();

    let (status, body) = initialize(&up, &ana.token, None, Some(&own)).await;
    assert_eq!(status, 200, "the server's own origin: {body}");
    assert!(body.contains("protocolVersion"), "{body}");
    let localhost = format!("localhost:{port}");
    let (status, body) = initialize(&up, &ana.token, Some(&localhost), Some(&format!("http://{localhost}"))).await;
    assert_eq!(status, 200, "localhost, as the suite asks it: {body}");
    let (status, _) = initialize(&up, &ana.token, None, None).await;
    assert_eq!(status, 200, "no Origin: not a browser");

    for origin in [format!("http://evil.example:{port}"), up.apps.clone(), format!("https://127.0.0.1:{port}")] {
        let (status, body) = initialize(&up, &ana.token, None, Some(&origin)).await;
        assert_eq!(status, 403, "{origin}: {body}");
        assert!(body.contains("Forbidden"), "a typed refusal: {body}");
    }
    // Rebound: the name is not the server's, whatever the Origin says.
    let evil = format!("evil.example:{port}");
    let (status, body) = initialize(&up, &ana.token, Some(&evil), Some(&format!("http://{evil}"))).await;
    assert_eq!(status, 421, "{body}");
}

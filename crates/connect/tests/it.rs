//! A connected server is reached only where the configuration says, the
//! way it says: no redirect followed, no internal address unless allowed,
//! its bearer token from the secret named, every answer bounded.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::IntoResponse;
use lattice_connect::{Behalf, CallError, Connections, ServerConfig};

#[path = "it/process.rs"]
mod process;

/// Whom the requests are made for.
const ANA: Behalf = Behalf { tenant: "t1", user: "ana" };
use serde_json::{Value, json};

/// A JSON-RPC server by hand: it answers the handshake and lists one tool,
/// keeping the `Authorization` header of every request.
async fn plain_server(seen: Arc<Mutex<Vec<Option<String>>>>) -> String {
    let answer = move |headers: HeaderMap, body: String| {
        let seen = seen.clone();
        async move {
            seen.lock().unwrap().push(headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).map(str::to_owned));
            let request: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            let id = request.get("id").cloned().unwrap_or(Value::Null);
            let result = match request.get("method").and_then(Value::as_str).unwrap_or_default() {
                "initialize" => {
                    json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "plain", "version": "1"}})
                }
                "tools/list" => json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}),
                _ if id.is_null() => return StatusCode::ACCEPTED.into_response(),
                _ => json!({}),
            };
            ([(header::CONTENT_TYPE, "application/json")], json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()).into_response()
        }
    };
    serve(axum::Router::new().route("/mcp", axum::routing::post(answer))).await
}

async fn serve(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    url
}

fn connect(config: Value) -> Connections {
    let config: ServerConfig = serde_json::from_value(config).unwrap();
    Connections::configure(&BTreeMap::from([("s".to_owned(), config)])).unwrap()
}

#[tokio::test]
async fn the_bearer_token_comes_from_the_secret_named() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let url = plain_server(seen.clone()).await;
    let secret = std::env::temp_dir().join(format!("lattice-connect-token-{}", std::process::id()));
    std::fs::write(&secret, "s3cret-token\n").unwrap();
    let connections = connect(json!({"url": url, "allow_internal": true, "bearer_token_file": secret}));
    let tools = connections.get("s").unwrap().tools(ANA).await.unwrap();
    assert_eq!(tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), vec!["echo"]);
    let seen = seen.lock().unwrap().clone();
    assert!(!seen.is_empty() && seen.iter().all(|h| h.as_deref() == Some("Bearer s3cret-token")), "{seen:?}");
    let _ = std::fs::remove_file(secret);
}

#[tokio::test]
async fn a_redirect_is_not_followed() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let elsewhere = plain_server(seen.clone()).await;
    let redirect = move || {
        let elsewhere = elsewhere.clone();
        async move { (StatusCode::TEMPORARY_REDIRECT, [(header::LOCATION, elsewhere)]).into_response() }
    };
    let url = serve(axum::Router::new().route("/mcp", axum::routing::post(redirect))).await;
    let connections = connect(json!({"url": url, "allow_internal": true, "timeout_secs": 2}));
    let refused = connections.get("s").unwrap().tools(ANA).await.unwrap_err();
    assert!(matches!(refused, CallError::Unreachable(_)), "{refused:?}");
    assert!(seen.lock().unwrap().is_empty(), "the address redirected to was never contacted");
}

#[tokio::test]
async fn an_internal_address_is_refused_unless_allowed() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let url = plain_server(seen.clone()).await;
    let by_address = connect(json!({"url": url, "timeout_secs": 2}));
    let refused = by_address.get("s").unwrap().tools(ANA).await.unwrap_err();
    assert!(refused.to_string().contains("internal address"), "{refused}");
    // A name that resolves inward is refused at the connection.
    let by_name = connect(json!({"url": url.replace("127.0.0.1", "localhost"), "timeout_secs": 2}));
    assert!(by_name.get("s").unwrap().tools(ANA).await.is_err());
    assert!(seen.lock().unwrap().is_empty(), "nothing reached the server");
    let allowed = connect(json!({"url": url, "allow_internal": true}));
    assert!(allowed.get("s").unwrap().tools(ANA).await.is_ok());
}

#[tokio::test]
async fn a_bad_configuration_says_which_server_and_key() {
    let config: ServerConfig = serde_json::from_value(json!({"url": "https://x.example/mcp", "timeout_secs": 0})).unwrap();
    let refused = Connections::configure(&BTreeMap::from([("budget".to_owned(), config)])).err().unwrap();
    assert_eq!(refused, "mcp server budget: timeout_secs must be 1 to 300");
    let config: ServerConfig = serde_json::from_value(json!({"url": "https://x.example/mcp"})).unwrap();
    let refused = Connections::configure(&BTreeMap::from([("Budget_1".to_owned(), config)])).err().unwrap();
    assert!(refused.contains("is not a server name"), "{refused}");
    let config: ServerConfig = serde_json::from_value(json!({"url": "https://x.example/mcp", "app_domains": {"resource": ["https://*"]}})).unwrap();
    let refused = Connections::configure(&BTreeMap::from([("map".to_owned(), config)])).err().unwrap();
    assert!(refused.starts_with("mcp server map: app_domains: resource: \"https://*\""), "{refused}");
    // What is kept is written as the apps origin reads it.
    let config: ServerConfig =
        serde_json::from_value(json!({"url": "https://x.example/mcp", "app_domains": {"resource": ["HTTPS://Cesium.com/"]}})).unwrap();
    let made = Connections::configure(&BTreeMap::from([("map".to_owned(), config)])).unwrap();
    assert_eq!(made.get("map").unwrap().config().app_domains.resource, ["https://cesium.com"]);
}

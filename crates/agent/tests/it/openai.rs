//! The OpenAI-compatible client against a local server speaking the
//! chat-completions wire format (no model is reachable from here).

use std::time::Duration;

use axum::Json;
use axum::http::StatusCode;
use axum::routing::post;
use lattice_agent::openai::{OpenAiModel, parse_reply};
use lattice_agent::{ChatMessage, Model, ModelError, ModelRequest, tools};
use serde_json::{Value, json};

async fn serve(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    format!("http://{addr}/v1")
}

fn request() -> ModelRequest {
    ModelRequest {
        messages: vec![ChatMessage::System { content: "sys".into() }, ChatMessage::User { content: "hello".into() }],
        tools: tools::all_tools(),
    }
}

#[tokio::test]
async fn tool_calls_round_trip_through_the_wire_format() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Value::Null));
    let seen_by_server = seen.clone();
    let router = axum::Router::new().route(
        "/v1/chat/completions",
        post(move |headers: axum::http::HeaderMap, Json(body): Json<Value>| {
            let seen = seen_by_server.clone();
            async move {
                *seen.lock().unwrap() = json!({"body": body, "auth": headers.get("authorization").map(|h| h.to_str().unwrap().to_owned())});
                Json(json!({"id": "x", "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                    "role": "assistant", "content": null,
                    "tool_calls": [{"id": "call_9", "type": "function",
                        "function": {"name": "ask_user", "arguments": "{\"question\":\"Which region?\"}"}}]}}]}))
            }
        }),
    );
    let base = serve(router).await;
    let model = OpenAiModel::new(&base, Some("sk-test".into()), "test-model", Duration::from_secs(5)).unwrap();
    let reply = model.reply(request()).await.unwrap();
    assert_eq!(reply.tool_calls.len(), 1);
    assert_eq!(reply.tool_calls[0].id, "call_9");
    assert_eq!(reply.tool_calls[0].arguments, json!({"question": "Which region?"}));
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen["auth"], "Bearer sk-test");
    assert_eq!(seen["body"]["model"], "test-model");
    assert_eq!(seen["body"]["messages"][1], json!({"role": "user", "content": "hello"}));
    let names: Vec<&str> = seen["body"]["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"ask_form"));
    assert_eq!(seen["body"]["tools"][0]["type"], "function");
}

#[tokio::test]
async fn errors_and_timeouts_are_typed() {
    let router = axum::Router::new()
        .route("/a/v1/chat/completions", post(|| async {
            (StatusCode::TOO_MANY_REQUESTS, Json(json!({"error": {"message": "slow down", "type": "rate_limit"}})))
        }))
        .route("/b/v1/chat/completions", post(|| async {
            tokio::time::sleep(Duration::from_secs(3)).await;
            Json(json!({}))
        }))
        .route("/c/v1/chat/completions", post(|| async { "not json" }));
    let base = serve(router).await;
    let root = base.trim_end_matches("/v1");
    let at = |p: &str, t: u64| OpenAiModel::new(&format!("{root}/{p}/v1"), None, "m", Duration::from_millis(t)).unwrap();
    assert_eq!(at("a", 2000).reply(request()).await.unwrap_err(), ModelError::Status { status: 429, message: "slow down".into() });
    assert_eq!(at("b", 300).reply(request()).await.unwrap_err(), ModelError::Timeout);
    assert!(matches!(at("c", 2000).reply(request()).await.unwrap_err(), ModelError::Malformed(_)));
    let closed = OpenAiModel::new("http://127.0.0.1:9/v1", None, "m", Duration::from_secs(2)).unwrap();
    assert!(matches!(closed.reply(request()).await.unwrap_err(), ModelError::Unreachable(_)));
}

#[test]
fn replies_with_text_or_broken_arguments() {
    let text = parse_reply(r#"{"choices":[{"message":{"role":"assistant","content":"Hello"}}]}"#).unwrap();
    assert_eq!((text.text.as_deref(), text.tool_calls.len()), (Some("Hello"), 0));
    let broken = parse_reply(r#"{"choices":[{"message":{"tool_calls":[{"id":"1","function":{"name":"x","arguments":"{nope"}}]}}]}"#);
    assert!(matches!(broken, Err(ModelError::Malformed(m)) if m.contains("arguments")));
    assert!(matches!(parse_reply(r#"{"choices":[]}"#), Err(ModelError::Malformed(_))));
}

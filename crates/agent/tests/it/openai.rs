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
    // No retries here: each error as it comes.
    let at = |p: &str, t: u64| OpenAiModel::new(&format!("{root}/{p}/v1"), None, "m", Duration::from_millis(t)).unwrap().with_retries(0, Duration::ZERO);
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

/// A server that answers `statuses` in turn (then 200 with a text reply),
/// counting the calls; a 429 carries `Retry-After: retry_after` when given.
async fn flaky(statuses: Vec<u16>, retry_after: Option<&'static str>) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = calls.clone();
    let router = axum::Router::new().route(
        "/v1/chat/completions",
        post(move || {
            let (calls, statuses) = (counted.clone(), statuses.clone());
            async move {
                let n = calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                match statuses.get(n) {
                    Some(&status) => {
                        let mut response = axum::response::IntoResponse::into_response((
                            StatusCode::from_u16(status).unwrap(),
                            Json(json!({"error": {"message": format!("status {status}")}})),
                        ));
                        if let (429, Some(after)) = (status, retry_after) {
                            response.headers_mut().insert("retry-after", after.parse().unwrap());
                        }
                        response
                    }
                    None => axum::response::IntoResponse::into_response(Json(
                        json!({"choices": [{"message": {"role": "assistant", "content": "At last."}}]}),
                    )),
                }
            }
        }),
    );
    (serve(router).await, calls)
}

#[tokio::test]
async fn a_busy_or_failing_service_is_asked_again_with_backoff() {
    let calls = |c: &std::sync::Arc<std::sync::atomic::AtomicUsize>| c.load(std::sync::atomic::Ordering::SeqCst);
    // A 429 with Retry-After: the client waits what it was told, then succeeds.
    let (base, count) = flaky(vec![429], Some("1")).await;
    let model = OpenAiModel::new(&base, None, "m", Duration::from_secs(5)).unwrap().with_retries(4, Duration::from_millis(10));
    let started = std::time::Instant::now();
    let reply = model.reply(request()).await.unwrap();
    assert_eq!((reply.text.as_deref(), calls(&count)), (Some("At last."), 2));
    assert!(started.elapsed() >= Duration::from_secs(1), "Retry-After: 1 was not honoured ({:?})", started.elapsed());

    // Three 5xx in a row, then an answer: four calls, backoff between them.
    let (base, count) = flaky(vec![503, 500, 502], None).await;
    let model = OpenAiModel::new(&base, None, "m", Duration::from_secs(5)).unwrap().with_retries(4, Duration::from_millis(10));
    assert_eq!(model.reply(request()).await.unwrap().text.as_deref(), Some("At last."));
    assert_eq!(calls(&count), 4);

    // Failing past the retries: the last error, after 1 + retries calls.
    let (base, count) = flaky(vec![500; 10], None).await;
    let model = OpenAiModel::new(&base, None, "m", Duration::from_secs(5)).unwrap().with_retries(2, Duration::from_millis(10));
    assert_eq!(model.reply(request()).await.unwrap_err(), ModelError::Status { status: 500, message: "status 500".into() });
    assert_eq!(calls(&count), 3);

    // A client error is not asked again; nor is a Retry-After past 30 s.
    let (base, count) = flaky(vec![400], None).await;
    let model = OpenAiModel::new(&base, None, "m", Duration::from_secs(5)).unwrap().with_retries(4, Duration::from_millis(10));
    assert!(matches!(model.reply(request()).await.unwrap_err(), ModelError::Status { status: 400, .. }));
    assert_eq!(calls(&count), 1);
    let (base, count) = flaky(vec![429], Some("120")).await;
    let model = OpenAiModel::new(&base, None, "m", Duration::from_secs(5)).unwrap().with_retries(4, Duration::from_millis(10));
    assert!(matches!(model.reply(request()).await.unwrap_err(), ModelError::Status { status: 429, .. }));
    assert_eq!(calls(&count), 1);
}

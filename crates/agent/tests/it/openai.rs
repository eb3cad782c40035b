//! The OpenAI-compatible client against a local server speaking the
//! chat-completions wire format (no model is reachable from here).

use std::time::Duration;

use axum::Json;
use axum::http::StatusCode;
use axum::routing::post;
use lattice_agent::openai::{OpenAiModel, parse_reply};
use lattice_agent::{ChatMessage, Delta, Model, ModelError, ModelRequest, tools};
use serde_json::{Value, json};

pub(crate) async fn serve(router: axum::Router) -> String {
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
                        "function": {"name": tools::ASK_USER, "arguments": "{\"question\":\"Which region?\"}"}}]}}]}))
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
    assert!(names.contains(&tools::ASK_FORM));
    assert_eq!(seen["body"]["tools"][0]["type"], "function");
}

#[tokio::test]
async fn errors_and_timeouts_are_typed() {
    let router = axum::Router::new()
        .route(
            "/a/v1/chat/completions",
            post(|| async { (StatusCode::TOO_MANY_REQUESTS, Json(json!({"error": {"message": "slow down", "type": "rate_limit"}}))) }),
        )
        .route(
            "/b/v1/chat/completions",
            post(|| async {
                // A stub slower than the client's timeout: the timeout runs on real time.
                tokio::time::sleep(Duration::from_secs(3)).await;
                Json(json!({}))
            }),
        )
        .route("/c/v1/chat/completions", post(|| async { "not json" }));
    let base = serve(router).await;
    let root = base.trim_end_matches("/v1");
    // No retries here: each error as it comes.
    let at =
        |p: &str, t: u64| OpenAiModel::new(&format!("{root}/{p}/v1"), None, "m", Duration::from_millis(t)).unwrap().with_retries(0, Duration::ZERO);
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

/// A chat-completions stream as services send it: each chunk a `data:`
/// line, `pause` between them, then `[DONE]`.
pub(crate) fn event_stream(chunks: Vec<Value>, pause: Duration, done: bool) -> axum::response::Response {
    let mut lines: Vec<String> = chunks.into_iter().map(|c| format!("data: {c}\n\n")).collect();
    if done {
        lines.push("data: [DONE]\n\n".into());
    }
    let body = futures_util::stream::unfold(lines.into_iter(), move |mut rest| async move {
        let line = rest.next()?;
        // A stub service's pace: chunks come apart, as over a network.
        tokio::time::sleep(pause).await;
        Some((Ok::<_, std::convert::Infallible>(line), rest))
    });
    axum::response::Response::builder().header("content-type", "text/event-stream").body(axum::body::Body::from_stream(body)).unwrap()
}

pub(crate) fn text_chunk(text: &str) -> Value {
    json!({"choices": [{"index": 0, "delta": {"content": text}}]})
}

fn args_chunk(first: bool, args: &str) -> Value {
    let call = if first {
        json!({"index": 0, "id": "call_7", "type": "function", "function": {"name": tools::ASK_FORM, "arguments": args}})
    } else {
        json!({"index": 0, "function": {"arguments": args}})
    };
    json!({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]})
}

fn collector() -> (std::sync::Arc<std::sync::Mutex<Vec<Delta>>>, impl Fn(Delta) + Send + Sync) {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    (seen, move |d| sink.lock().unwrap().push(d))
}

#[tokio::test]
async fn a_streamed_reply_is_told_as_it_arrives_and_adds_up_to_the_reply() {
    let asked = std::sync::Arc::new(std::sync::Mutex::new(Value::Null));
    let seen_by_server = asked.clone();
    let router = axum::Router::new().route(
        "/v1/chat/completions",
        post(move |Json(body): Json<Value>| {
            *seen_by_server.lock().unwrap() = body;
            async move {
                let args =
                    [r#"{"title": "Inci"#, r#"dent", "schema": {"type": "obj"#, r#"ect", "properties": {"sev"#, r#"erity": {"type": "string"}}}}"#];
                let mut chunks = vec![text_chunk("Let me "), text_chunk("ask you "), text_chunk("a form.")];
                chunks.extend(args.iter().enumerate().map(|(i, a)| args_chunk(i == 0, a)));
                chunks.push(json!({"choices": [], "usage": {"prompt_tokens": 30, "completion_tokens": 12, "total_tokens": 42}}));
                event_stream(chunks, Duration::from_millis(120), true)
            }
        }),
    );
    let model = OpenAiModel::new(&serve(router).await, None, "m", Duration::from_secs(5)).unwrap();
    let (seen, sink) = collector();
    let reply = model.stream(request(), &sink).await.unwrap();
    let body = asked.lock().unwrap().clone();
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);

    assert_eq!(reply.text.as_deref(), Some("Let me ask you a form."));
    assert_eq!(reply.tokens, Some(42));
    let finished = json!({"title": "Incident", "schema": {"type": "object", "properties": {"severity": {"type": "string"}}}});
    assert_eq!(reply.tool_calls.len(), 1);
    assert_eq!((reply.tool_calls[0].id.as_str(), reply.tool_calls[0].name.as_str()), ("call_7", tools::ASK_FORM));
    assert_eq!(reply.tool_calls[0].arguments, finished);

    let seen = seen.lock().unwrap().clone();
    let texts: Vec<&str> = seen.iter().filter_map(|d| if let Delta::Text(t) = d { Some(t.as_str()) } else { None }).collect();
    assert_eq!(texts, ["Let me ", "ask you ", "a form."], "each piece told as it came");
    let inputs: Vec<&Value> = seen.iter().filter_map(|d| if let Delta::ToolInput { arguments, .. } = d { Some(arguments) } else { None }).collect();
    assert_eq!(inputs.first(), Some(&&json!({"title": "Inci"})), "the title shows before the rest has come");
    assert!(inputs.contains(&&json!({"title": "Incident", "schema": {"type": "obj"}})), "{inputs:?}");
    assert_eq!(inputs.last(), Some(&&finished), "the last told is the finished arguments");
    assert!(inputs.len() >= 4, "{inputs:?}");
}

#[tokio::test]
async fn a_stream_is_bounded_and_not_asked_again_once_told() {
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = calls.clone();
    let router = axum::Router::new()
        // A reply past the size limit, in pieces.
        .route(
            "/long/v1/chat/completions",
            post(|| async {
                let piece = "x".repeat(64 * 1024);
                event_stream((0..20).map(|_| text_chunk(&piece)).collect(), Duration::ZERO, true)
            }),
        )
        // Text told, then the service fails mid-stream.
        .route(
            "/broken/v1/chat/completions",
            post(move || {
                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                async move { event_stream(vec![text_chunk("Half a "), json!({"error": {"message": "overloaded"}})], Duration::ZERO, false) }
            }),
        )
        // A stream that ends without [DONE] still ends the reply.
        .route("/short/v1/chat/completions", post(|| async { event_stream(vec![text_chunk("ok")], Duration::ZERO, false) }));
    let root = serve(router).await.trim_end_matches("/v1").to_owned();
    let at =
        |p: &str| OpenAiModel::new(&format!("{root}/{p}/v1"), None, "m", Duration::from_secs(5)).unwrap().with_retries(3, Duration::from_millis(10));

    let (seen, sink) = collector();
    let long = at("long").stream(request(), &sink).await.unwrap_err();
    assert!(matches!(&long, ModelError::Malformed(m) if m.contains("longer than")), "{long:?}");
    let told: usize = seen.lock().unwrap().iter().map(|d| if let Delta::Text(t) = d { t.len() } else { 0 }).sum();
    assert!(told <= lattice_agent::openai::MAX_REPLY_BYTES, "refused while it arrived: {told} bytes told");

    let (seen, sink) = collector();
    let broken = at("broken").stream(request(), &sink).await.unwrap_err();
    assert_eq!(broken, ModelError::Status { status: 502, message: "overloaded".into() });
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1, "what was told is not told twice");
    assert_eq!(seen.lock().unwrap().as_slice(), [Delta::Text("Half a ".into())]);

    let (_, sink) = collector();
    assert_eq!(at("short").stream(request(), &sink).await.unwrap().text.as_deref(), Some("ok"));
}

/// An event stream as `bytes` cut into pieces of `size` bytes, a pause
/// between them: frames, lines and characters split across pieces.
fn raw_stream(bytes: Vec<u8>, size: usize) -> axum::response::Response {
    let pieces: Vec<Vec<u8>> = bytes.chunks(size).map(<[u8]>::to_vec).collect();
    let body = futures_util::stream::unfold(pieces.into_iter(), |mut rest| async move {
        let piece = rest.next()?;
        // A stub service's pace: each piece is its own read.
        tokio::time::sleep(Duration::from_millis(1)).await;
        Some((Ok::<_, std::convert::Infallible>(piece), rest))
    });
    axum::response::Response::builder().header("content-type", "text/event-stream").body(axum::body::Body::from_stream(body)).unwrap()
}

#[tokio::test]
async fn the_event_stream_is_read_as_the_spec_frames_it() {
    // CRLF line ends, a comment (a keep-alive), an event of a named type,
    // one chunk's JSON over three `data:` lines (joined by line feeds, which
    // JSON reads as space), a field without a space after its colon, a
    // character of four bytes, an id and a retry; then `[DONE]`.
    let stream = concat!(
        ": keep-alive\r\n\r\n",
        "data: {\"choices\":[{\"index\":0,\r\n",
        "data: \"delta\":{\"content\":\"Hello \"}}\r\n",
        "data: ]}\r\n\r\n",
        "id: 7\r\nretry: 1000\r\nevent: message\r\n",
        "data:{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"w\u{1F30D}rld\"}}]}\r\n\r\n",
        ": the usage follows\r\n",
        "data: {\"choices\":[],\"usage\":{\"total_tokens\":9}}\r\n\r\n",
        "data: [DONE]\r\n\r\n",
    );
    for size in [1, 2, 3, 7, 64, stream.len()] {
        let router = axum::Router::new().route("/v1/chat/completions", post(move || async move { raw_stream(stream.as_bytes().to_vec(), size) }));
        let model = OpenAiModel::new(&serve(router).await, None, "m", Duration::from_secs(5)).unwrap();
        let (seen, sink) = collector();
        let reply = model.stream(request(), &sink).await.unwrap_or_else(|e| panic!("pieces of {size} bytes: {e}"));
        assert_eq!((reply.text.as_deref(), reply.tokens), (Some("Hello w\u{1F30D}rld"), Some(9)), "pieces of {size} bytes");
        assert_eq!(seen.lock().unwrap().as_slice(), [Delta::Text("Hello ".into()), Delta::Text("w\u{1F30D}rld".into())], "pieces of {size} bytes");
    }

    // A stream that is not UTF-8 is refused as malformed, not read lossily.
    let router = axum::Router::new().route("/v1/chat/completions", post(|| async { raw_stream(b"data: \xff\xfe\n\n".to_vec(), 64) }));
    let model = OpenAiModel::new(&serve(router).await, None, "m", Duration::from_secs(5)).unwrap().with_retries(0, Duration::ZERO);
    assert!(matches!(model.reply(request()).await.unwrap_err(), ModelError::Malformed(m) if m.contains("event stream")));
}

/// A streamed part of the tool call at `index`: its id and name with its
/// first part, then more of its arguments.
pub(crate) fn call_chunk(index: u64, first: Option<(&str, &str)>, args: &str) -> Value {
    let mut call = json!({"index": index, "function": {"arguments": args}});
    if let Some((id, name)) = first {
        call["id"] = json!(id);
        call["type"] = json!("function");
        call["function"]["name"] = json!(name);
    }
    json!({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]})
}

/// The chunk that ends a reply, saying why.
pub(crate) fn finish_chunk(reason: &str) -> Value {
    json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
}

/// A service that streams `replies` in turn (the last one again when they
/// run out), keeping the body of each request it was sent.
pub(crate) async fn replaying(replies: Vec<Vec<Value>>) -> (String, std::sync::Arc<std::sync::Mutex<Vec<Value>>>) {
    let bodies = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = bodies.clone();
    let router = axum::Router::new().route(
        "/v1/chat/completions",
        post(move |Json(body): Json<Value>| {
            let (kept, replies) = (kept.clone(), replies.clone());
            async move {
                let n = {
                    let mut kept = kept.lock().unwrap();
                    kept.push(body);
                    kept.len() - 1
                };
                event_stream(replies[n.min(replies.len() - 1)].clone(), Duration::ZERO, true)
            }
        }),
    );
    (serve(router).await, bodies)
}

#[tokio::test]
async fn a_reply_cut_at_the_token_limit_comes_back_as_cut_not_as_a_reply() {
    let cut_text = vec![text_chunk("The figures "), text_chunk("are"), finish_chunk("length"), json!({"choices": [], "usage": {"total_tokens": 17}})];
    let cut_args = vec![
        text_chunk("A form:"),
        call_chunk(0, Some(("call_1", tools::ASK_FORM)), r#"{"title": "Inci"#),
        call_chunk(0, None, r#"dent", "schema": {"type""#),
        finish_chunk("length"),
    ];
    let whole_call = vec![call_chunk(0, Some(("call_1", tools::ASK_USER)), r#"{"question": "Which?"}"#), finish_chunk("length")];
    let (base, bodies) = replaying(vec![cut_text, cut_args, whole_call]).await;
    let model = OpenAiModel::new(&base, None, "m", Duration::from_secs(5)).unwrap().with_retries(0, Duration::ZERO).with_max_tokens(64);

    let (seen, sink) = collector();
    let cut = model.stream(request(), &sink).await.unwrap_err();
    assert_eq!(
        cut,
        ModelError::Cut { reason: "the reply was cut at the model's token limit".into(), text: Some("The figures are".into()), tokens: Some(17) }
    );
    assert_eq!(seen.lock().unwrap().len(), 2, "what came was told as it came");
    assert_eq!(bodies.lock().unwrap()[0]["max_tokens"], 64, "the bound is asked for");

    // Cut in a tool call's arguments: said so, not "not JSON".
    let (_, sink) = collector();
    let cut = model.stream(request(), &sink).await.unwrap_err();
    let ModelError::Cut { reason, text, .. } = &cut else { panic!("{cut:?}") };
    assert_eq!(reason, "the reply was cut at the model's token limit while writing the arguments of ask_form (tool_calls[0])");
    assert_eq!(text.as_deref(), Some("A form:"));
    assert!(!cut.to_string().contains("not JSON"), "{cut}");
    // Whole calls of a cut reply are not acted on either: more may have been meant.
    let (_, sink) = collector();
    let cut = model.stream(request(), &sink).await.unwrap_err();
    assert!(matches!(&cut, ModelError::Cut { reason, .. } if reason.ends_with("after 1 tool call(s), which were not made")), "{cut:?}");
    assert_eq!(bodies.lock().unwrap().len(), 3, "a cut reply is not asked for again");

    // A whole body says it the same way.
    let body = |args: &str| {
        json!({"choices": [{"finish_reason": "length", "message": {"content": "Half", "tool_calls": [
            {"id": "c", "function": {"name": "x", "arguments": args}}]}}]})
        .to_string()
    };
    let cut = parse_reply(&body(r#"{"a": "#)).unwrap_err();
    assert!(
        matches!(&cut, ModelError::Cut { reason, text, .. } if reason.contains("while writing the arguments of x") && text.as_deref() == Some("Half")),
        "{cut:?}"
    );
    let text_only = parse_reply(r#"{"choices":[{"finish_reason":"length","message":{"content":"Half a sen"}}]}"#).unwrap_err();
    assert!(matches!(&text_only, ModelError::Cut { text, .. } if text.as_deref() == Some("Half a sen")), "{text_only:?}");
    // Arguments that are not JSON in a reply that was not cut are still that.
    let broken = body("{nope").replace("length", "tool_calls");
    assert!(matches!(parse_reply(&broken), Err(ModelError::Malformed(m)) if m.contains("not JSON")));
}

#[tokio::test]
async fn parallel_tool_calls_keep_the_order_the_model_made_them_in() {
    // call_b is the model's first call, call_a its second; their parts
    // interleave, and the second's first part comes before the first's.
    let chunks = vec![
        call_chunk(1, Some(("call_a", tools::ASK_USER)), r#"{"question": "#),
        call_chunk(0, Some(("call_b", tools::ASK_USER)), r#"{"question": "B?""#),
        call_chunk(1, None, r#""A?"}"#),
        call_chunk(0, None, "}"),
        finish_chunk("tool_calls"),
    ];
    let (base, _) = replaying(vec![chunks]).await;
    let model = OpenAiModel::new(&base, None, "m", Duration::from_secs(5)).unwrap().with_retries(0, Duration::ZERO);
    let (_, sink) = collector();
    let reply = model.stream(request(), &sink).await.unwrap();
    let ids: Vec<&str> = reply.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["call_b", "call_a"]);
    assert_eq!(reply.tool_calls[0].arguments, json!({"question": "B?"}));
    assert_eq!(reply.tool_calls[1].arguments, json!({"question": "A?"}));

    // A whole body: the order of its array.
    let whole = parse_reply(
        r#"{"choices":[{"finish_reason":"tool_calls","message":{"tool_calls":[
            {"id":"call_b","function":{"name":"x","arguments":"{}"}},{"id":"call_a","function":{"name":"y","arguments":"{}"}}]}}]}"#,
    )
    .unwrap();
    assert_eq!(whole.tool_calls.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["call_b", "call_a"]);

    // What the model is sent back keeps it too.
    let (base, bodies) = replaying(vec![vec![text_chunk("ok")]]).await;
    let model = OpenAiModel::new(&base, None, "m", Duration::from_secs(5)).unwrap();
    let mut asked = request();
    asked.messages.push(ChatMessage::Assistant { content: Some("Two questions.".into()), tool_calls: reply.tool_calls.clone() });
    asked.messages.push(ChatMessage::Tool { tool_call_id: "call_b".into(), content: "b".into() });
    asked.messages.push(ChatMessage::Tool { tool_call_id: "call_a".into(), content: "a".into() });
    model.reply(asked).await.unwrap();
    let sent = bodies.lock().unwrap()[0]["messages"].clone();
    assert_eq!(sent[2]["content"], "Two questions.");
    assert_eq!(sent[2]["tool_calls"].as_array().unwrap().iter().map(|c| c["id"].clone()).collect::<Vec<_>>(), [json!("call_b"), json!("call_a")]);
    assert_eq!((sent[3]["tool_call_id"].clone(), sent[4]["tool_call_id"].clone()), (json!("call_b"), json!("call_a")));
}

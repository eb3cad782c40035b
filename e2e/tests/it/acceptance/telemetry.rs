//! OpenTelemetry across the processes (REQUIREMENTS.md O4): with the standard
//! OTEL_EXPORTER_OTLP_ENDPOINT
//! set, one request through the edge is one trace: the edge's server span
//! (named by its route's template, `POST /v1/{*rest}`),
//! the log service's (its child, through the forwarded `traceparent`), the
//! commit, the bridge's publish (the commit's child, through the envelope),
//! and the NATS message's `traceparent` names the publish. A local OTLP
//! receiver (protobuf over HTTP) collects what each service exports, and
//! their metrics.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use lattice_e2e::Client;
use lattice_e2e::otlp::{Received, Span, receiver};
use lattice_e2e::stack::Stack;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_trace_from_the_request_to_the_nats_message() {
    let received = Arc::new(Mutex::new(Received::default()));
    let endpoint = receiver(received.clone()).await;
    let stack = tokio::task::spawn_blocking(move || {
        Stack::temporary_with(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
            ("OTEL_BSP_SCHEDULE_DELAY", "100"),
            ("OTEL_METRIC_EXPORT_INTERVAL", "500"),
        ])
    })
    .await
    .unwrap()
    .expect("the stack");
    let ana = Client::sign_in(&stack.portal, "acme", "ana").await;
    let ws = ana.ok("POST", "/v1/workspaces", json!({"name": "Traced"})).await["id"].as_str().unwrap().to_owned();
    let th = ana.ok("POST", &format!("/v1/workspaces/{ws}/threads"), json!({"title": "Traced"})).await["id"].as_str().unwrap().to_owned();
    let rules = async_nats::ConnectOptions::with_user_and_password("rules".into(), lattice_e2e::stack::NATS_USERS[1].1.into());
    let nats = rules.connect(&stack.nats_url).await.unwrap();
    let mut messages = nats.subscribe(format!("lattice.acme.{ws}.log.message_posted")).await.unwrap();

    // The caller's own span starts the trace.
    let (trace, caller) = ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7");
    let r = ana
        .http
        .post(format!("{}/v1/threads/{th}/messages", stack.portal))
        .bearer_auth(&ana.token)
        .header("traceparent", format!("00-{trace}-{caller}-01"))
        .json(&json!({"text": "traced"}))
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{}", r.status());
    let request_id = r.headers().get("x-request-id").expect("a request id on the answer").to_str().unwrap().to_owned();
    let message = tokio::time::timeout(Duration::from_secs(10), messages.next()).await.expect("the message on NATS").unwrap();
    let header = message.headers.as_ref().and_then(|h| h.get("traceparent")).map(|v| v.as_str().to_owned()).expect("a traceparent on the message");
    let parts: Vec<&str> = header.split('-').collect();
    assert_eq!(parts[1], trace, "the message is in the request's trace: {header}");

    // Every service's spans arrive; then the chain is checked link by link.
    let deadline = Instant::now() + Duration::from_secs(15);
    let spans = loop {
        let spans: Vec<Span> = received.lock().unwrap().spans.iter().filter(|s| s.trace == trace).cloned().collect();
        if spans.iter().any(|s| s.name == "bridge.publish") && spans.iter().filter(|s| s.name.starts_with("POST /v1/")).count() >= 2
            || Instant::now() > deadline
        {
            break spans;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let find = |service: &str, name: &str| {
        spans
            .iter()
            .find(|s| s.service == service && s.name == name)
            .unwrap_or_else(|| panic!("no {name} span from {service} in the trace: {spans:#?}"))
            .clone()
    };
    // A server span is named by its method and its route's template.
    let edge = find("lattice-edge", "POST /v1/{*rest}");
    let request = "POST /v1/threads/{th}/messages";
    let log = find("lattice-log", request);
    let execute = find("lattice-log", "log.execute");
    let commit = find("lattice-log", "log.commit");
    let publish = find("lattice-bridge", "bridge.publish");
    assert_eq!(edge.parent, caller, "the edge's span is the caller's child");
    assert_eq!(log.parent, edge.id, "the log service's span is the edge's child");
    assert_eq!(execute.parent, log.id, "the command is the request's child");
    assert_eq!(commit.parent, execute.id, "the database work is the command's child");
    assert_eq!(publish.parent, commit.id, "the publish is the commit's child, across processes");
    assert_eq!(parts[2], publish.id, "the NATS message names the publish");
    for span in [&edge, &log] {
        assert_eq!(span.attributes.get("request_id"), Some(&request_id), "{span:?}");
        assert_eq!(span.attributes.get("trace_id"), Some(&trace.to_owned()), "{span:?}");
        assert_eq!(span.attributes.get("http.response.status_code").map(String::as_str), Some("200"), "{span:?}");
    }
    assert_eq!(log.attributes.get("http.route").map(String::as_str), Some("/v1/threads/{th}/messages"));
    assert_eq!(commit.attributes.get("db.system.name").map(String::as_str), Some("postgresql"));
    println!(
        "one trace {trace}, request {request_id}: caller {caller} -> edge POST /v1/{{*rest}} {} -> log {request} {} -> log.execute {} -> log.commit {} -> bridge.publish {} -> NATS {}",
        edge.id, log.id, execute.id, commit.id, publish.id, message.subject
    );

    // Metrics from every service: requests served, commands, publishes.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let got = received.lock().unwrap().metrics.clone();
        let has = |service: &str, name: &str| got.get(service).is_some_and(|m| m.iter().any(|n| n == name));
        let http =
            ["lattice-edge", "lattice-log", "lattice-mcp"].iter().all(|s| has(s, "lattice.http.requests") && has(s, "http.server.request.duration"));
        let bridge = ["lattice.bridge.published", "lattice.bridge.lag", "lattice.bridge.lag.duration"].iter().all(|m| has("lattice-bridge", m));
        if http && has("lattice-log", "lattice.commands") && bridge {
            break;
        }
        assert!(Instant::now() < deadline, "metrics over OTLP: {got:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Every series lattice's Grafana dashboard asks Prometheus for is one
    // these services export, as the Collector names it, with the labels
    // the query groups or selects by.
    let dashboard: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../infra/grafana/dashboards/lattice.json")).unwrap())
            .unwrap();
    let queries: Vec<String> = dashboard["panels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["targets"].as_array().cloned().unwrap_or_default())
        .filter_map(|t| t["expr"].as_str().map(str::to_owned))
        .collect();
    assert!(queries.len() >= 8, "the dashboard's queries: {queries:?}");
    let exported = received.lock().unwrap().prometheus.clone();
    for query in &queries {
        let (series, labels) = promql_names(query);
        assert!(!series.is_empty(), "no series in {query}");
        for name in &series {
            let have = exported
                .get(name)
                .unwrap_or_else(|| panic!("the dashboard asks for {name} ({query}); exported: {:?}", exported.keys().collect::<Vec<_>>()));
            for label in &labels {
                assert!(have.contains(label), "{name} has no label {label} ({query}); it has {have:?}");
            }
        }
    }
    println!("the dashboard's {} queries ask for series the services export: {:?}", queries.len(), exported.keys().collect::<Vec<_>>());
    drop(stack);
}

/// The series a PromQL query reads and the labels it groups or selects by:
/// identifiers inside `by (…)` and before an operator in `{…}` are labels,
/// an identifier followed by `(` is a function, `[…]` is a range.
fn promql_names(query: &str) -> (Vec<String>, Vec<String>) {
    let (mut series, mut labels) = (Vec::new(), Vec::new());
    let chars: Vec<char> = query.chars().collect();
    let (mut i, mut in_braces, mut in_by, mut in_range, mut in_string) = (0, false, false, false, false);
    let mut last_word = String::new();
    while i < chars.len() {
        let c = chars[i];
        if in_string {
            in_string = c != '"';
            i += 1;
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' => in_braces = true,
            '}' => in_braces = false,
            '[' => in_range = true,
            ']' => in_range = false,
            '(' if last_word == "by" || last_word == "without" => in_by = true,
            ')' if in_by => in_by = false,
            c if (c.is_ascii_alphabetic() || c == '_') && !in_range => {
                let start = i;
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_' || chars[i] == ':') {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                let rest: String = chars[i..].iter().collect::<String>().trim_start().to_owned();
                // A function, or an aggregation followed by its grouping.
                let applied = rest.starts_with('(') || rest.starts_with("by") || rest.starts_with("without");
                if in_braces || in_by {
                    labels.push(word.clone());
                } else if !applied && !["by", "without", "on", "ignoring", "and", "or", "unless"].contains(&word.as_str()) {
                    series.push(word.clone());
                }
                last_word = word;
                continue;
            }
            _ => {}
        }
        if !c.is_whitespace() {
            last_word.clear();
        }
        i += 1;
    }
    (series, labels)
}

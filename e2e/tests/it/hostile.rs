//! Hostile input against the real binary, on both backends: generated
//! patches, schemas, submissions, app HTML and headers, each followed by
//! the invariants: the process is alive, nothing answered 5xx, every
//! refusal is small, every stored artifact and the thread still read, and
//! the process's memory stays bounded. Then the report's reproductions one
//! by one: the Host header, dev sign-in, and a burst of writes.

use std::time::Duration;

use lattice_e2e::{Client, LogProcess, UpProcess};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use serde_json::{Value, json};

/// Cases per kind of input and backend.
const CASES: usize = 60;
/// What refusing any one request may add to the process's peak memory.
const MEMORY_BOUND_MB: u64 = 200;

/// A process under attack: its address, its pid, and what it held at rest.
struct Target {
    base: String,
    pid: u32,
    idle_kb: u64,
}

/// A memory figure of a process (`VmRSS`, `VmHWM`), in kB.
fn memory_kb(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status.lines().find_map(|l| l.strip_prefix(field).and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())).unwrap_or(0)
}

fn nested(levels: usize) -> Value {
    (0..levels).fold(json!("x"), |v, _| json!([v]))
}

/// JSON values up to `depth` deep and up to `wide` wide, with long strings.
fn value(depth: u32, wide: usize) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        "[a-z<>/\"\\\\]{0,12}".prop_map(Value::from),
        (1usize..40_000).prop_map(|n| Value::from("w".repeat(n))),
    ];
    leaf.prop_recursive(depth, 256, wide as u32, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..wide).prop_map(Value::Array),
            prop::collection::btree_map("[a-z/~]{1,4}", inner, 0..wide).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn pointer() -> impl Strategy<Value = String> {
    prop::collection::vec(prop_oneof![Just("state"), Just("html"), Just("a"), Just("0"), Just("-"), Just("x~1y")], 0..6)
        .prop_map(|t| t.iter().map(|t| format!("/{t}")).collect())
}

/// JSON Patches that copy and move subtrees around, into themselves among
/// other places, and add deep and large values.
fn patch() -> impl Strategy<Value = Value> {
    let op = prop_oneof![
        (pointer(), value(4, 4)).prop_map(|(p, v)| json!({"op": "add", "path": p, "value": v})),
        (pointer(), (30usize..70)).prop_map(|(p, d)| json!({"op": "add", "path": p, "value": nested(d)})),
        (pointer(), pointer()).prop_map(|(f, p)| json!({"op": "copy", "from": f, "path": p})),
        (pointer(), pointer()).prop_map(|(f, p)| json!({"op": "move", "from": f, "path": p})),
        pointer().prop_map(|p| json!({"op": "remove", "path": p})),
        (pointer(), value(2, 3)).prop_map(|(p, v)| json!({"op": "test", "path": p, "value": v})),
        Just(json!({"op": "copy", "from": "/state", "path": "/state/a"})),
        Just(json!({"op": "copy", "from": "", "path": "/state/a"})),
    ];
    prop::collection::vec(op, 1..300).prop_map(Value::Array)
}

/// Form schemas: mostly near a valid one, with keywords of every kind.
fn schema() -> impl Strategy<Value = Value> {
    let property = prop_oneof![
        Just(json!({"type": "string", "maxLength": 10})),
        prop::collection::vec("[a-z]{1,300}", 0..80).prop_map(|c| json!({"type": "array", "uniqueItems": true, "items": {"enum": c}})),
        value(3, 4),
        (1usize..60).prop_map(|d| json!({"type": "object", "properties": {"x": nested(d)}})),
        Just(json!({"$ref": "#/properties/a"})),
        Just(json!({"type": "string", "pattern": "(a+)+$"})),
    ];
    prop::collection::btree_map("[a-z]{1,8}", property, 0..70).prop_map(|p| json!({"type": "object", "properties": p}))
}

/// Values for the target form, right and wrong, large and deep.
fn submission() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::collection::vec("[a-z]{1,3}|c[0-9]{2}", 0..15_000).prop_map(|tags| json!({"tags": tags})),
        value(5, 6),
        (1usize..100).prop_map(|d| json!({"note": nested(d)})),
        "[a-z ]{0,20000}".prop_map(|note| json!({"note": note})),
    ]
}

/// App HTML: markup, scripts and addresses of every spelling.
fn html() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("<script>fetch('https://x.example')</script>".to_owned()),
            Just("<img src=//evil.example/a.png>".to_owned()),
            Just("<a href=\"jav&Tab;ascript:alert(1)\">x</a>".to_owned()),
            Just("<style>@import url(https://x.example/a.css)</style>".to_owned()),
            Just("<iframe srcdoc=\"<script>1</script>\"></iframe>".to_owned()),
            "[<>a-z =\"'/:.&;#]{0,200}",
            (1usize..20_000).prop_map(|n| "<div>".repeat(n)),
        ],
        0..20,
    )
    .prop_map(|parts| parts.concat())
}

/// Headers of every sort, and some that are no sort at all.
fn headers() -> impl Strategy<Value = Vec<(String, String)>> {
    prop::collection::vec(
        prop_oneof![
            "[ -~]{0,300}".prop_map(|v| ("authorization".to_owned(), v)),
            "[ -~]{0,40}".prop_map(|v| ("last-event-id".to_owned(), v)),
            "[ -~]{0,80}".prop_map(|v| ("content-type".to_owned(), v)),
            "[ -~]{0,80}".prop_map(|v| ("traceparent".to_owned(), v)),
            (0usize..20_000).prop_map(|n| ("x-filler".to_owned(), "f".repeat(n))),
            "[ -~]{0,40}".prop_map(|v| ("host".to_owned(), v)),
        ],
        0..8,
    )
}

/// Samples `n` values of `strategy`, deterministically.
fn samples<S: Strategy>(strategy: S, n: usize) -> Vec<S::Value> {
    let mut runner = TestRunner::deterministic();
    (0..n).map(|_| strategy.new_tree(&mut runner).expect("a value").current()).collect()
}

/// What a deployment holds for the suite: a thread, a form and an app.
struct Scene {
    ana: Client,
    bot: Client,
    thread: String,
    form: String,
    app: String,
}

async fn scene(base: &str) -> Scene {
    let root = Client::sign_in_as(base, json!({"tenant": "ops", "user": "root", "role": "deployment_admin"})).await;
    root.ok("PUT", "/v1/integrations/deployment/ui:mini-apps", json!({"state": "on", "reason": "the hostile suite"})).await;
    let ana = Client::sign_in(base, "t1", "ana").await;
    let bot = Client::sign_in_as(base, json!({"tenant": "t1", "user": "bot", "agent": true})).await;
    let ws = ana.ok("POST", "/v1/workspaces", json!({"name": "Hostile"})).await["id"].as_str().unwrap().to_owned();
    ana.ok("POST", &format!("/v1/workspaces/{ws}/members"), json!({"user": "bot", "role": "editor"})).await;
    let thread = ana.ok("POST", &format!("/v1/workspaces/{ws}/threads"), json!({"title": "T"})).await["id"].as_str().unwrap().to_owned();
    let choices: Vec<String> = (0..64).map(|i| format!("c{i:02}{}", "-".repeat(300))).collect();
    let schema = json!({"type": "object", "properties": {
        "tags": {"type": "array", "uniqueItems": true, "items": {"enum": choices}},
        "note": {"type": "string", "maxLength": 500}}});
    let form = ana
        .ok(
            "POST",
            &format!("/v1/threads/{thread}/artifacts"),
            json!({"kind": "form", "data": {"title": "F", "schema": schema, "submissions": "many", "closed": false}}),
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let app = bot
        .ok(
            "POST",
            &format!("/v1/threads/{thread}/artifacts"),
            json!({"kind": "app", "data": {"title": "A", "summary": "s", "html": "<p>a</p>", "state": {"a": [1]}}}),
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    Scene { ana, bot, thread, form, app }
}

/// Sends one request and checks what it got: no 5xx, a small refusal.
async fn send(http: &reqwest::Client, method: reqwest::Method, url: &str, token: &str, body: Option<String>, headers: &[(String, String)]) -> u16 {
    let mut req = http.request(method, url).bearer_auth(token);
    for (name, value) in headers {
        if let (Ok(name), Ok(value)) = (reqwest::header::HeaderName::try_from(name.as_str()), reqwest::header::HeaderValue::try_from(value.as_str()))
        {
            req = req.header(name, value);
        }
    }
    if let Some(body) = body {
        req = req.header("content-type", "application/json").body(body);
    }
    let reply = req.send().await.expect("the server answers");
    let status = reply.status().as_u16();
    let bytes = reply.bytes().await.expect("a body");
    assert!(status < 500, "{url}: {status} {}", String::from_utf8_lossy(&bytes[..bytes.len().min(500)]));
    if status >= 400 {
        assert!(bytes.len() < 16 * 1024, "{url}: a refusal of {} bytes", bytes.len());
        let typed: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        assert!(typed["error"]["type"].is_string(), "{url}: {status} untyped: {}", String::from_utf8_lossy(&bytes[..bytes.len().min(300)]));
    }
    status
}

/// The invariants after a case: alive, and everything stored reads back.
async fn still_whole(target: &Target, scene: &Scene) {
    let alive = lattice_e2e::http().get(format!("{}/healthz", target.base)).send().await.is_ok_and(|r| r.status().is_success());
    assert!(alive, "the process must be alive");
    let (status, list) = scene.ana.get(&format!("/v1/threads/{}/artifacts", scene.thread)).await.unwrap();
    assert_eq!(status, 200, "the thread's artifacts read: {list}");
    for artifact in list.as_array().unwrap() {
        let id = artifact["id"].as_str().unwrap();
        let (status, one) = scene.ana.get(&format!("/v1/artifacts/{id}")).await.unwrap();
        assert_eq!(status, 200, "{id} reads back: {one}");
    }
    assert!(!scene.ana.all_events(&scene.thread).await.is_empty());
    let grown = memory_kb(target.pid, "VmHWM:").saturating_sub(target.idle_kb) / 1024;
    assert!(grown < MEMORY_BOUND_MB, "peak memory grew by {grown} MB");
}

async fn attack(target: Target) {
    let scene = scene(&target.base).await;
    let http = lattice_e2e::http();
    let base = &target.base;
    let (mut accepted, mut refused) = (0, 0);
    let mut tally = |status: u16| if status < 300 { accepted += 1 } else { refused += 1 };

    for ops in samples(patch(), CASES) {
        // The app's head version moves with every accepted patch.
        let (_, head) = scene.ana.get(&format!("/v1/artifacts/{}", scene.app)).await.unwrap();
        let version = head["version"].as_u64().unwrap();
        // A person edits the state only; the agent edits anything.
        for who in [&scene.ana, &scene.bot] {
            let body = json!({"expected_version": version, "patch": ops}).to_string();
            tally(send(&http, reqwest::Method::PATCH, &format!("{base}/v1/artifacts/{}", scene.app), &who.token, Some(body), &[]).await);
        }
        still_whole(&target, &scene).await;
    }
    for schema in samples(schema(), CASES) {
        let body = json!({"kind": "form", "data": {"title": "G", "schema": schema, "submissions": "many", "closed": false}}).to_string();
        tally(send(&http, reqwest::Method::POST, &format!("{base}/v1/threads/{}/artifacts", scene.thread), &scene.ana.token, Some(body), &[]).await);
        still_whole(&target, &scene).await;
    }
    for (i, values) in samples(submission(), CASES).into_iter().enumerate() {
        let data = json!({"form_id": scene.form, "form_version": 1, "values": values, "nonce": format!("n{i}")});
        let body = json!({"kind": "submission", "data": data}).to_string();
        tally(send(&http, reqwest::Method::POST, &format!("{base}/v1/threads/{}/artifacts", scene.thread), &scene.ana.token, Some(body), &[]).await);
        still_whole(&target, &scene).await;
    }
    for html in samples(html(), CASES) {
        let body = json!({"kind": "app", "data": {"title": "H", "summary": "s", "html": html}}).to_string();
        tally(send(&http, reqwest::Method::POST, &format!("{base}/v1/threads/{}/artifacts", scene.thread), &scene.bot.token, Some(body), &[]).await);
        still_whole(&target, &scene).await;
    }
    for headers in samples(headers(), CASES) {
        let body = json!({"text": "with headers"}).to_string();
        tally(
            send(&http, reqwest::Method::POST, &format!("{base}/v1/threads/{}/messages", scene.thread), &scene.ana.token, Some(body), &headers).await,
        );
        tally(
            send(&http, reqwest::Method::GET, &format!("{base}/v1/threads/{}/events?format=json", scene.thread), &scene.ana.token, None, &headers)
                .await,
        );
    }
    still_whole(&target, &scene).await;
    let peak = memory_kb(target.pid, "VmHWM:");
    println!("hostile input: {accepted} accepted, {refused} refused; peak memory {} MB over {} MB at rest", peak / 1024, target.idle_kb / 1024);
}

/// Writes as fast as a client can send them: the suites raise the limit
/// explicitly.
const NO_RATE_LIMIT: (&str, &str) = ("LATTICE_RATE_WRITES_PER_SEC", "0");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_input_leaves_the_embedded_default_whole() {
    let mut up = UpProcess::start_with(&[NO_RATE_LIMIT]).await;
    // The process's memory at rest, read after it settles: a measure, not a wait for an event.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let target = Target { base: up.base.clone(), pid: up.pid(), idle_kb: memory_kb(up.pid(), "VmRSS:") };
    attack(target).await;
    assert!(up.alive());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_input_leaves_the_log_service_on_postgres_whole() {
    let url = lattice_testkit::fresh_url(lattice_log::Backend::Postgres).await;
    let mut log = LogProcess::start_with(&url, &[NO_RATE_LIMIT]).await;
    // The process's memory at rest, read after it settles: a measure, not a wait for an event.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let target = Target { base: log.base.clone(), pid: log.pid(), idle_kb: memory_kb(log.pid(), "VmRSS:") };
    attack(target).await;
    assert!(log.alive());
}

/// The report's reproductions that are not about documents: a page on
/// another name that resolves to this machine, and a runaway client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebinding_page_and_a_runaway_client_are_turned_away() {
    let up = UpProcess::start().await;
    let http = lattice_e2e::http();
    let mint = |host: &'static str| {
        http.post(format!("{}/v1/dev/token", up.base))
            .header("host", host)
            .json(&json!({"tenant": "t1", "user": "mallory", "role": "deployment_admin"}))
            .send()
    };
    let rebound = mint("rebind.attacker.example").await.unwrap();
    assert_eq!(rebound.status().as_u16(), 421);
    let body: Value = rebound.json().await.unwrap();
    assert_eq!(body["error"]["type"], "MisdirectedRequest", "{body}");
    for path in ["/", "/mcp", "/v1/workspaces"] {
        let status = http.get(format!("{}{path}", up.base)).header("host", "rebind.attacker.example:8080").send().await.unwrap().status();
        assert_eq!(status.as_u16(), 421, "{path}");
    }
    assert_eq!(mint("localhost").await.unwrap().status().as_u16(), 200);
    // The probes answer whatever name they are called by.
    assert_eq!(http.get(format!("{}/healthz", up.base)).header("host", "10.0.0.7:8080").send().await.unwrap().status().as_u16(), 200);

    // 600 messages at once from one token: the burst passes, the rest is
    // refused with when to come back.
    let ana = Client::sign_in(&up.base, "t1", "ana").await;
    let ws = ana.ok("POST", "/v1/workspaces", json!({"name": "W"})).await["id"].as_str().unwrap().to_owned();
    let th = ana.ok("POST", &format!("/v1/workspaces/{ws}/threads"), json!({"title": "T"})).await["id"].as_str().unwrap().to_owned();
    let sends = (0..600).map(|i| {
        let ana = ana.clone();
        let th = th.clone();
        async move {
            let r = ana
                .http
                .post(format!("{}/v1/threads/{th}/messages", ana.base))
                .bearer_auth(&ana.token)
                .json(&json!({"text": format!("m{i}")}))
                .send()
                .await
                .unwrap();
            (r.status().as_u16(), r.headers().get("retry-after").and_then(|v| v.to_str().ok()).map(str::to_owned))
        }
    });
    let replies = futures_util::future::join_all(sends).await;
    let accepted = replies.iter().filter(|(s, _)| *s == 200).count();
    let limited: Vec<_> = replies.iter().filter(|(s, _)| *s == 429).collect();
    assert_eq!(accepted + limited.len(), 600, "every reply is 200 or 429");
    assert!((98..=140).contains(&accepted), "{accepted} accepted of 600 sent at once");
    assert!(limited.iter().all(|(_, after)| after.as_deref().is_some_and(|a| a.parse::<u64>().is_ok_and(|a| a >= 1))));
    println!("600 messages at once from one token: {accepted} accepted, {} refused with 429", limited.len());
}

/// Dev sign-in answers on loopback only, unless configured: a lattice up
/// listening on every address mints no token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dev_sign_in_answers_on_loopback_only() {
    let port = lattice_e2e::free_port();
    let addr = format!("0.0.0.0:{port}");
    let up = UpProcess::start_with(&[("LATTICE_HTTP_ADDR", &addr)]).await;
    let base = format!("http://127.0.0.1:{port}");
    let reply = lattice_e2e::http().post(format!("{base}/v1/dev/token")).json(&json!({"tenant": "t1", "user": "ana"})).send().await.unwrap();
    assert_eq!(reply.status().as_u16(), 404, "dev sign-in on a listener that is not loopback");
    drop(up);
    let port = lattice_e2e::free_port();
    let addr = format!("0.0.0.0:{port}");
    let _up = UpProcess::start_with(&[("LATTICE_HTTP_ADDR", &addr), ("LATTICE_DEV_SIGN_IN_REMOTE", "true")]).await;
    let reply =
        lattice_e2e::http().post(format!("http://127.0.0.1:{port}/v1/dev/token")).json(&json!({"tenant": "t1", "user": "ana"})).send().await.unwrap();
    assert_eq!(reply.status().as_u16(), 200, "configured to answer anywhere");
}

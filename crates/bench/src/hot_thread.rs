//! `fanout`'s second case, the hot thread: an incident thread the whole
//! company watches. 10,000 SSE streams are open on one server: 1,000
//! follow the hot thread, which takes 200 commits a second (200,000
//! deliveries a second), 8,000 follow a hundred other threads and 1,000
//! ten other workspaces' streams. Ten more readers of the hot thread read
//! nothing while the commits come: slow readers, which must not slow the
//! others nor grow the server's memory without bound.
//!
//! Each server runs in a process of its own (this binary, `serve-hot`), so
//! that its memory per open stream is its own, and the clients are the
//! same bare HTTP/1.1 readers for both: lattice's API on PostgreSQL, as
//! `lattice serve log` serves it, with commits posted over HTTP; and the
//! bare axum broadcaster, which broadcasts the same posts over SSE from
//! memory (a tokio broadcast channel per thread).

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::response::sse::{Event, Sse};
use futures_util::StreamExt;
use lattice_core::TenantRole;
use serde_json::{Value, json};
use sqlx::Connection;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::broadcast;

/// Streams open, and how they are spread.
const STREAMS: usize = 10_000;
const HOT_READERS: usize = 1_000;
const WORKSPACE_READERS: usize = 1_000;
const OTHER_WORKSPACES: usize = 10;
const THREADS_EACH: usize = 10;
/// Readers of the hot thread that read nothing while the commits come.
const SLOW_READERS: usize = 10;
const RATE: u64 = 200;
const SECONDS: u64 = 5;
/// Streams opened at once.
const OPENING: usize = 256;

/// The server this process is, when run as `serve-hot KIND [DATABASE_URL]`:
/// prints its address, then serves until its parent closes its input.
pub async fn serve(kind: &str, url: Option<&str>) {
    let router = match kind {
        "lattice" => lattice_router(url.expect("serve-hot lattice DATABASE_URL")).await,
        _ => bare_router(),
    };
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    println!("{}", listener.local_addr().unwrap());
    tokio::spawn(async {
        // The parent is gone or done: so is this server.
        let mut sink = Vec::new();
        let _ = tokio::io::stdin().read_to_end(&mut sink).await;
        std::process::exit(0);
    });
    crate::setup::serve_on(listener, router).await;
}

async fn lattice_router(url: &str) -> axum::Router {
    let db = lattice_log::Db::connect(url, 16).await.expect("connecting");
    db.migrate().await.expect("migrating");
    let log = lattice_testkit::service_on(db);
    let (_keep, shutdown) = tokio::sync::watch::channel(false);
    std::mem::forget(_keep);
    // One caller holds every stream and makes every commit here.
    let limits = lattice_api::guard::Limits { streams_per_caller: 2 * STREAMS, writes_per_sec: 0, ..lattice_api::guard::Limits::default() };
    lattice_api::router(crate::setup::api_state(&log, limits, shutdown))
}

/// The least a live stream can cost: each post broadcast from memory, as an
/// envelope of lattice's shape and size.
fn bare_router() -> axum::Router {
    let channels: Arc<Vec<broadcast::Sender<String>>> =
        Arc::new((0..THREADS_EACH * OTHER_WORKSPACES + 1).map(|_| broadcast::channel(1024).0).collect());
    let workspaces: Arc<Vec<broadcast::Sender<String>>> = Arc::new((0..OTHER_WORKSPACES + 1).map(|_| broadcast::channel(1024).0).collect());
    let stream = |rx: broadcast::Receiver<String>| {
        let events = tokio_stream::wrappers::BroadcastStream::new(rx)
            .filter_map(|m| async move { m.ok().map(|data| Ok::<_, std::convert::Infallible>(Event::default().event("message_posted").data(data))) });
        Sse::new(events)
    };
    let (threads, posted) = (channels.clone(), channels);
    axum::Router::new()
        .route(
            "/threads/{n}/events",
            axum::routing::get(move |axum::extract::Path(n): axum::extract::Path<usize>| {
                let rx = threads[n].subscribe();
                async move { stream(rx) }
            }),
        )
        .route(
            "/workspaces/{n}/events",
            axum::routing::get(move |axum::extract::Path(n): axum::extract::Path<usize>| {
                let rx = workspaces[n].subscribe();
                async move { stream(rx) }
            }),
        )
        .route(
            "/threads/{n}/messages",
            axum::routing::post(move |axum::extract::Path(n): axum::extract::Path<usize>, axum::Json(body): axum::Json<Value>| {
                let posted = posted.clone();
                async move {
                    let data = json!({"seq": 1, "id": ulid::Ulid::generate().to_string(), "tenant": "t1", "workspace": "ws_01m8pv3w6bf2yk0r8wq1ngdf9n",
                        "thread": "th_01m8pv3w6bf2yk0r8wq1ngdf9n", "actor": {"kind": "person", "name": "alice"}, "at": "2026-11-30T12:00:00.000Z",
                        "type": "message_posted", "payload": {"thread": "th_01m8pv3w6bf2yk0r8wq1ngdf9n", "text": body["text"]}});
                    let _ = posted[n].send(data.to_string());
                    axum::Json(json!({"seq": 1}))
                }
            }),
        )
}

/// A server in its own process.
struct Server {
    child: tokio::process::Child,
    addr: String,
}

impl Server {
    async fn start(kind: &str, url: Option<&str>) -> Self {
        let mut child = tokio::process::Command::new(std::env::current_exe().unwrap())
            .arg("serve-hot")
            .arg(kind)
            .args(url)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the server's process");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).await.unwrap();
        Self { child, addr: line.trim().to_owned() }
    }

    /// CPU time so far (user and system, every thread), seconds.
    fn cpu_seconds(&self) -> f64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id().unwrap())).unwrap_or_default();
        // After the command's `)`: utime is field 14 and stime 15.
        let fields: Vec<&str> = stat.rsplit_once(')').map_or("", |(_, rest)| rest).split_whitespace().collect();
        let ticks = |i: usize| fields.get(i - 3).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
        (ticks(14) + ticks(15)) / 100.0
    }

    /// Resident memory, KiB.
    fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id().unwrap())).unwrap_or_default();
        status.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok()).unwrap_or(0)
    }
}

/// What every reader shares: deliveries so far and when the last came.
#[derive(Default)]
struct Tally {
    delivered: AtomicU64,
    last_us: AtomicU64,
}

/// One SSE stream read as bytes: the request, its status line, then each
/// `t=` stamp's latency, until `stop`.
async fn open(addr: &str, path: &str, token: Option<&str>) -> TcpStream {
    open_with(addr, path, token, None).await
}

/// The same, with a receive buffer of `rcvbuf` bytes: a slow reader's,
/// whose kernel holds little of what it does not read.
async fn open_with(addr: &str, path: &str, token: Option<&str>, rcvbuf: Option<u32>) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    if let Some(size) = rcvbuf {
        socket.set_recv_buffer_size(size).unwrap();
    }
    let mut tcp = socket.connect(addr.parse().unwrap()).await.expect("connecting");
    let auth = token.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default();
    let request = format!("GET {path} HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n{auth}\r\n");
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        assert!(tcp.read(&mut byte).await.unwrap() == 1, "{path}: closed before its head");
        head.push(byte[0]);
    }
    assert!(head.starts_with(b"HTTP/1.1 200"), "{path}: {}", String::from_utf8_lossy(&head));
    tcp
}

/// The stamps in `bytes`: microseconds since the epoch at each post.
fn stamps(bytes: &[u8]) -> impl Iterator<Item = u64> + '_ {
    bytes.windows(2).enumerate().filter(|(_, w)| w == b"t=").filter_map(|(i, _)| {
        let digits = bytes[i + 2..].iter().take_while(|b| b.is_ascii_digit()).count();
        std::str::from_utf8(&bytes[i + 2..i + 2 + digits]).ok()?.parse().ok()
    })
}

/// Reads `tcp` until `stop`, tallying each delivery; answers the latencies.
async fn read(mut tcp: TcpStream, epoch: Instant, tally: Arc<Tally>, mut stop: tokio::sync::watch::Receiver<bool>) -> Vec<u32> {
    let mut latencies = Vec::new();
    let mut buf = vec![0u8; 16 * 1024];
    // A stamp cut by a read's end is read whole with the next.
    let mut carry = Vec::new();
    loop {
        let n = tokio::select! {
            n = tcp.read(&mut buf) => n.unwrap_or(0),
            _ = stop.changed() => return latencies,
        };
        if n == 0 {
            return latencies;
        }
        let now = epoch.elapsed().as_micros() as u64;
        carry.extend_from_slice(&buf[..n]);
        let whole = carry.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        let mut count = 0;
        for sent in stamps(&carry[..whole]) {
            latencies.push(now.saturating_sub(sent) as u32);
            count += 1;
        }
        carry.drain(..whole);
        if count > 0 {
            tally.delivered.fetch_add(count, Ordering::Relaxed);
            tally.last_us.fetch_max(now, Ordering::Relaxed);
        }
    }
}

/// Paths of one side: the hot thread's, the other threads', the workspaces'.
struct Paths {
    hot: String,
    threads: Vec<String>,
    workspaces: Vec<String>,
    post: String,
    token: Option<String>,
}

async fn lattice_paths(base: &str) -> Paths {
    let token = lattice_testkit::token("t1", "alice", TenantRole::TenantAdmin);
    let http = crate::setup::http().build().unwrap();
    let post = |path: String, body: Value| {
        let (http, token) = (http.clone(), token.clone());
        async move {
            let res = http.post(format!("{base}{path}")).bearer_auth(&token).json(&body).send().await.unwrap();
            assert!(res.status().is_success(), "{path}: {}", res.status());
            res.json::<Value>().await.unwrap()
        }
    };
    let id = |v: Value| v["id"].as_str().unwrap().to_owned();
    let hot_ws = id(post("/v1/workspaces".into(), json!({"name": "incident"})).await);
    let hot = id(post(format!("/v1/workspaces/{hot_ws}/threads"), json!({"title": "the incident"})).await);
    let (mut threads, mut workspaces) = (Vec::new(), Vec::new());
    for w in 0..OTHER_WORKSPACES {
        let ws = id(post("/v1/workspaces".into(), json!({"name": format!("team {w}")})).await);
        for t in 0..THREADS_EACH {
            threads.push(id(post(format!("/v1/workspaces/{ws}/threads"), json!({"title": format!("topic {t}")})).await));
        }
        workspaces.push(ws);
    }
    // Each stream starts at the log's end, as a chat that has read its thread.
    let end = post(format!("/v1/threads/{hot}/messages"), json!({"text": "opened"})).await["seq"].as_i64().unwrap();
    Paths {
        hot: format!("/v1/threads/{hot}/events?after={end}"),
        threads: threads.iter().map(|t| format!("/v1/threads/{t}/events?after={end}")).collect(),
        workspaces: workspaces.iter().map(|w| format!("/v1/workspaces/{w}/events?after={end}")).collect(),
        post: format!("/v1/threads/{hot}/messages"),
        token: Some(token),
    }
}

fn bare_paths() -> Paths {
    let others = OTHER_WORKSPACES * THREADS_EACH;
    Paths {
        hot: format!("/threads/{others}/events"),
        threads: (0..others).map(|n| format!("/threads/{n}/events")).collect(),
        workspaces: (0..OTHER_WORKSPACES).map(|n| format!("/workspaces/{n}/events")).collect(),
        post: format!("/threads/{others}/messages"),
        token: None,
    }
}

/// What one side came to.
struct Side {
    per_sec: f64,
    p50_ms: f64,
    p99_ms: f64,
    delivered: u64,
    due: u64,
    idle_kib_per_stream: f64,
    rss_idle_kib: u64,
    rss_peak_kib: u64,
    rss_after_kib: u64,
    slow_got: Vec<u64>,
    queries_per_commit: Option<f64>,
    cpu_us_per_delivery: f64,
    rss_before_kib: u64,
    post_p50_ms: f64,
    post_p99_ms: f64,
}

async fn side(server: &Server, paths: Paths, epoch: Instant, stats: Option<&str>) -> Side {
    let addr = server.addr.clone();
    let before = server.rss_kib();
    // The streams, opened a few hundred at a time.
    let mut plan: Vec<(String, bool)> = Vec::with_capacity(STREAMS + SLOW_READERS);
    plan.extend((0..HOT_READERS).map(|_| (paths.hot.clone(), true)));
    plan.extend((0..STREAMS - HOT_READERS - WORKSPACE_READERS).map(|i| (paths.threads[i % paths.threads.len()].clone(), false)));
    plan.extend((0..WORKSPACE_READERS).map(|i| (paths.workspaces[i % paths.workspaces.len()].clone(), false)));
    let token = paths.token.clone();
    let opened: Vec<(TcpStream, bool)> = futures_util::stream::iter(plan)
        .map(|(path, hot)| {
            let (addr, token) = (addr.clone(), token.clone());
            async move { (open(&addr, &path, token.as_deref()).await, hot) }
        })
        .buffer_unordered(OPENING)
        .collect()
        .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let idle = server.rss_kib();
    let idle_kib_per_stream = idle.saturating_sub(before) as f64 / STREAMS as f64;
    let mut slow = Vec::new();
    for _ in 0..SLOW_READERS {
        slow.push(open_with(&addr, &paths.hot, token.as_deref(), Some(4096)).await);
    }

    let tally = Arc::new(Tally::default());
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    let readers: Vec<_> = opened.into_iter().map(|(tcp, _)| tokio::spawn(read(tcp, epoch, tally.clone(), stop.clone()))).collect();

    let mut pg = match stats {
        Some(url) => {
            let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
            sqlx::query("SELECT pg_stat_statements_reset()").execute(&mut conn).await.unwrap();
            Some(conn)
        }
        None => None,
    };
    // The commits, at RATE a second, over a few kept-alive connections.
    let http = crate::setup::http().build().unwrap();
    let url = format!("http://{addr}{}", paths.post);
    let start_us = epoch.elapsed().as_micros() as u64;
    let cpu_before = server.cpu_seconds();
    let mut tick = tokio::time::interval(Duration::from_micros(1_000_000 / RATE));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut posts = Vec::new();
    let mut peak = idle;
    for i in 0..RATE * SECONDS {
        tick.tick().await;
        let (http, url, token) = (http.clone(), url.clone(), token.clone());
        posts.push(tokio::spawn(async move {
            let mut req = http.post(&url).json(&json!({"text": format!("t={}", epoch.elapsed().as_micros())}));
            if let Some(token) = &token {
                req = req.bearer_auth(token);
            }
            let sent = Instant::now();
            let res = req.send().await.expect("a post");
            assert!(res.status().is_success(), "post: {}", res.status());
            sent.elapsed().as_micros() as u32
        }));
        if i % RATE == 0 {
            peak = peak.max(server.rss_kib());
        }
    }
    let mut post_us = Vec::with_capacity(posts.len());
    for p in posts {
        post_us.push(p.await.unwrap());
    }
    post_us.sort_unstable();
    let post_at = |q: f64| post_us[((post_us.len() as f64 * q) as usize).min(post_us.len() - 1)] as f64 / 1000.0;
    let (post_p50_ms, post_p99_ms) = (post_at(0.50), post_at(0.99));
    let commits = RATE * SECONDS;
    let due = commits * HOT_READERS as u64;
    // Every delivery due, or two seconds with none.
    let mut seen = 0;
    let mut quiet = Instant::now();
    while tally.delivered.load(Ordering::Relaxed) < due && quiet.elapsed() < Duration::from_secs(2) {
        tokio::time::sleep(Duration::from_millis(50)).await;
        peak = peak.max(server.rss_kib());
        let now = tally.delivered.load(Ordering::Relaxed);
        if now != seen {
            (seen, quiet) = (now, Instant::now());
        }
    }
    let queries_per_commit = match pg.as_mut() {
        Some(conn) => {
            let queries: i64 = sqlx::query_scalar(
                "SELECT COALESCE(sum(calls), 0)::bigint FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) \
                 AND query NOT LIKE '%pg_stat_statements%'",
            )
            .fetch_one(conn)
            .await
            .unwrap();
            Some(queries as f64 / commits as f64)
        }
        None => None,
    };
    let delivered = tally.delivered.load(Ordering::Relaxed);
    let cpu_us_per_delivery = (server.cpu_seconds() - cpu_before) * 1e6 / delivered.max(1) as f64;
    let elapsed_us = tally.last_us.load(Ordering::Relaxed).saturating_sub(start_us).max(1);
    let _ = stop_tx.send(true);
    let mut latencies = Vec::with_capacity(delivered as usize);
    for r in readers {
        latencies.extend(r.await.unwrap());
    }
    latencies.sort_unstable();
    let at =
        |q: f64| latencies.get(((latencies.len() as f64 * q) as usize).min(latencies.len().saturating_sub(1))).copied().unwrap_or(0) as f64 / 1000.0;
    // The slow readers read now: what each gets of the commits.
    let slow_tally = Arc::new(Tally::default());
    let (slow_stop_tx, slow_stop) = tokio::sync::watch::channel(false);
    let slow_readers: Vec<_> = slow.into_iter().map(|tcp| tokio::spawn(read(tcp, epoch, slow_tally.clone(), slow_stop.clone()))).collect();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let _ = slow_stop_tx.send(true);
    let mut slow_got = Vec::new();
    for r in slow_readers {
        slow_got.push(r.await.unwrap().len() as u64);
    }
    let rss_after_kib = server.rss_kib();
    Side {
        per_sec: delivered as f64 / (elapsed_us as f64 / 1e6),
        p50_ms: at(0.50),
        p99_ms: at(0.99),
        delivered,
        due,
        idle_kib_per_stream,
        rss_idle_kib: idle,
        rss_peak_kib: peak,
        rss_after_kib,
        slow_got,
        queries_per_commit,
        cpu_us_per_delivery,
        rss_before_kib: before,
        post_p50_ms,
        post_p99_ms,
    }
}

fn raise_descriptor_limit() {
    // 10,000 streams here and as many at the server: past the usual 1,024.
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: plain system calls on a local struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

fn print(name: &str, s: &Side) {
    println!(
        "fanout hot thread {name}: {:.0} deliveries/s ({} of {} delivered), p50 {:.2} ms, p99 {:.2} ms",
        s.per_sec, s.delivered, s.due, s.p50_ms, s.p99_ms
    );
    println!("fanout hot thread {name}: the server's CPU {:.2} µs per delivery while the commits came", s.cpu_us_per_delivery);
    println!("fanout hot thread {name}: a commit's post answered in p50 {:.2} ms, p99 {:.2} ms", s.post_p50_ms, s.post_p99_ms);
    println!(
        "fanout hot thread {name}: memory {:.1} KiB per idle stream (RSS {} MiB before the streams, {} MiB with {STREAMS} open), {} MiB at the peak of the commits, {} MiB after",
        s.idle_kib_per_stream,
        s.rss_before_kib / 1024,
        s.rss_idle_kib / 1024,
        s.rss_peak_kib / 1024,
        s.rss_after_kib / 1024
    );
    println!(
        "fanout hot thread {name}: {SLOW_READERS} slow readers, reading only after the commits, got {:?} of {} events each",
        s.slow_got,
        RATE * SECONDS
    );
}

pub async fn run(epoch: Instant) {
    raise_descriptor_limit();
    let url = lattice_testkit::fresh_url(lattice_log::Backend::Postgres).await;
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
    sqlx::query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        .execute(&mut conn)
        .await
        .expect("pg_stat_statements (cargo xtask bench starts PostgreSQL with it preloaded)");
    let bare = Server::start("bare", None).await;
    let base = side(&bare, bare_paths(), epoch, None).await;
    drop(bare);
    let ours = Server::start("lattice", Some(&url)).await;
    let paths = lattice_paths(&format!("http://{}", ours.addr)).await;
    let lattice = side(&ours, paths, epoch, Some(&url)).await;
    drop(ours);
    println!(
        "fanout hot thread: {STREAMS} SSE streams on one server ({HOT_READERS} on the hot thread, {} over {} other threads, {WORKSPACE_READERS} over {OTHER_WORKSPACES} workspaces' streams), {} commits to the hot thread at {RATE}/s",
        STREAMS - HOT_READERS - WORKSPACE_READERS,
        OTHER_WORKSPACES * THREADS_EACH,
        RATE * SECONDS
    );
    print("bare-axum-broadcast", &base);
    print("lattice", &lattice);
    if let Some(q) = lattice.queries_per_commit {
        println!("fanout hot thread lattice database queries per commit: {q:.2} (every query of the server's, the commit's own included)");
    }
    println!("size_kib {:.1} fanout hot thread memory per idle stream (lattice)", lattice.idle_kib_per_stream);
    println!("size_kib {:.1} fanout hot thread memory per idle stream (bare axum broadcast)", base.idle_kib_per_stream);
    println!("p99_ms {:.2} fanout hot thread commit-to-delivery (lattice)", lattice.p99_ms);
    println!("p99_ms {:.2} fanout hot thread commit-to-delivery (bare axum broadcast)", base.p99_ms);
    println!("ratio {:.3} fanout hot thread deliveries per second, lattice vs a bare axum broadcast", lattice.per_sec / base.per_sec);
}

//! `fanout`: the live stream under many readers (and, in `hot_thread`,
//! one thread under ten thousand). 1,000 SSE clients follow
//! 100 threads (ten each) of one log service on PostgreSQL (the API's own
//! router, as `lattice serve log` serves it) while one thread takes 200
//! commits a second. Measured: each delivery's time from the commit's
//! request to the client, the deliveries per second, and the database
//! queries per commit (pg_stat_statements, every query of the server's).
//!
//! The baseline, in the same run with the same clients: a bare axum server
//! that broadcasts the same events over SSE from memory (a tokio broadcast
//! channel per thread), the least a live stream can cost.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::response::sse::{Event, Sse};
use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use lattice_core::{Command, TenantRole, ThreadId, WorkspaceId};
use sqlx::Connection;
use tokio::sync::broadcast;

const CLIENTS: usize = 1000;
const THREADS: usize = 100;
const RATE: u64 = 200;
const SECONDS: u64 = 5;

/// What the clients saw: a latency per delivery, in microseconds.
#[derive(Default)]
struct Seen {
    latencies: Mutex<Vec<u64>>,
}

/// The send instant is in each message's text, as microseconds since
/// `epoch`; a client's latency is its receipt minus that.
fn stamp(epoch: Instant) -> String {
    format!("t={}", epoch.elapsed().as_micros())
}

fn latency_of(data: &str, epoch: Instant) -> Option<u64> {
    let at = data.find("t=")?;
    let digits: String = data[at + 2..].chars().take_while(char::is_ascii_digit).collect();
    let sent: u64 = digits.parse().ok()?;
    Some((epoch.elapsed().as_micros() as u64).saturating_sub(sent))
}

/// Opens the clients (client i follows `urls[i % urls.len()]`), and waits
/// until each has its stream open.
async fn clients(
    count: usize,
    urls: Vec<(String, Option<String>)>,
    epoch: Instant,
    seen: Arc<Seen>,
    stop: tokio::sync::watch::Receiver<bool>,
) -> Vec<tokio::task::JoinHandle<()>> {
    let http = crate::setup::http().pool_max_idle_per_host(0).build().unwrap();
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::channel(count);
    let mut tasks = Vec::new();
    for i in 0..count {
        let (url, token) = urls[i % urls.len()].clone();
        let (http, seen, ready, mut stop) = (http.clone(), seen.clone(), ready_tx.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            let mut req = http.get(&url).header("accept", "text/event-stream");
            if let Some(token) = &token {
                req = req.bearer_auth(token);
            }
            let res = req.send().await.expect("a stream");
            assert!(res.status().is_success(), "{url}: {}", res.status());
            let _ = ready.send(()).await;
            let mut events = std::pin::pin!(res.bytes_stream().eventsource());
            loop {
                let event = tokio::select! {
                    e = events.next() => e,
                    _ = stop.changed() => return,
                };
                let Some(Ok(event)) = event else { return };
                if let Some(l) = latency_of(&event.data, epoch) {
                    seen.latencies.lock().unwrap().push(l);
                }
            }
        }));
    }
    for _ in 0..count {
        ready_rx.recv().await.expect("every client opens its stream");
    }
    tasks
}

struct Figures {
    per_sec: f64,
    p50_ms: f64,
    p99_ms: f64,
    delivered: usize,
}

fn figures(seen: &Seen, elapsed: Duration) -> Figures {
    let mut l = seen.latencies.lock().unwrap().clone();
    l.sort_unstable();
    let at = |q: f64| l.get(((l.len() as f64 * q) as usize).min(l.len().saturating_sub(1))).copied().unwrap_or(0) as f64 / 1000.0;
    Figures { per_sec: l.len() as f64 / elapsed.as_secs_f64(), p50_ms: at(0.50), p99_ms: at(0.99), delivered: l.len() }
}

/// Commits to one thread at RATE a second for SECONDS; answers how long it
/// took and how many commits were made.
async fn commit_at_rate(mut commit: impl FnMut(u64) -> futures_util::future::BoxFuture<'static, ()>) -> (Duration, u64) {
    let start = Instant::now();
    let total = RATE * SECONDS;
    let mut tick = tokio::time::interval(Duration::from_micros(1_000_000 / RATE));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut pending = Vec::new();
    for i in 0..total {
        tick.tick().await;
        pending.push(tokio::spawn(commit(i)));
    }
    for p in pending {
        p.await.unwrap();
    }
    // The last deliveries' time to arrive.
    tokio::time::sleep(Duration::from_millis(300)).await;
    (start.elapsed(), total)
}

/// Lattice with `count` clients: what they saw, the queries per commit,
/// and the commits made.
async fn lattice_side(count: usize, epoch: Instant) -> (Figures, f64, u64) {
    let url = &lattice_testkit::fresh_url(lattice_log::Backend::Postgres).await;
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    sqlx::query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        .execute(&mut conn)
        .await
        .expect("pg_stat_statements (cargo xtask bench starts PostgreSQL with it preloaded)");
    let db = lattice_log::Db::connect(url, 16).await.expect("connecting");
    db.migrate().await.expect("migrating");
    let log = lattice_testkit::service_on(db);
    let alice = lattice_testkit::who("t1", "alice", TenantRole::TenantAdmin);
    let ws = log.execute(&alice, Command::CreateWorkspace { name: "fanout".into() }).await.unwrap().id.unwrap();
    let mut threads = Vec::new();
    let mut last = 0;
    for i in 0..THREADS {
        let command = Command::CreateThread { workspace: WorkspaceId::parse("ws", &ws).unwrap(), title: format!("t{i}"), restricted: false };
        let made = log.execute(&alice, command).await.unwrap();
        last = made.seq;
        threads.push(ThreadId::parse("th", &made.id.unwrap()).unwrap());
    }
    let (stop_server, shutdown) = tokio::sync::watch::channel(false);
    let limits = lattice_api::guard::Limits { streams_per_caller: count, ..lattice_api::guard::Limits::default() };
    let state = crate::setup::api_state(&log, limits, shutdown);
    let base = crate::setup::serve(lattice_api::router(state)).await;
    let token = lattice_testkit::token("t1", "alice", TenantRole::TenantAdmin);
    // Each stream starts at the log's end, as a chat that has read its thread.
    let urls = threads.iter().map(|t| (format!("{base}/v1/threads/{t}/events?after={last}"), Some(token.clone()))).collect();
    let seen = Arc::new(Seen::default());
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    let tasks = clients(count, urls, epoch, seen.clone(), stop).await;

    let mut stats = sqlx::PgConnection::connect(url).await.unwrap();
    sqlx::query("SELECT pg_stat_statements_reset()").execute(&mut stats).await.unwrap();
    let busy = threads[0].clone();
    let (elapsed, commits) = commit_at_rate(|_| {
        let (log, alice, busy) = (log.clone(), alice.clone(), busy.clone());
        Box::pin(async move {
            log.execute(&alice, Command::PostMessage { thread: busy, text: stamp(epoch) }).await.unwrap();
        })
    })
    .await;
    let queries: i64 = sqlx::query_scalar(
        "SELECT COALESCE(sum(calls), 0)::bigint FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) \
         AND query NOT LIKE '%pg_stat_statements%'",
    )
    .fetch_one(&mut stats)
    .await
    .unwrap();
    let _ = stop_tx.send(true);
    let _ = stop_server.send(true);
    for t in tasks {
        let _ = t.await;
    }
    (figures(&seen, elapsed), queries as f64 / commits as f64, commits)
}

async fn baseline_side(epoch: Instant) -> Figures {
    let channels: Arc<HashMap<usize, broadcast::Sender<String>>> = Arc::new((0..THREADS).map(|i| (i, broadcast::channel(4096).0)).collect());
    let served = channels.clone();
    let router = axum::Router::new().route(
        "/threads/{n}/events",
        axum::routing::get(move |axum::extract::Path(n): axum::extract::Path<usize>| {
            let rx = served[&n].subscribe();
            async move {
                let events = tokio_stream::wrappers::BroadcastStream::new(rx).filter_map(|m| async move {
                    m.ok().map(|data| Ok::<_, std::convert::Infallible>(Event::default().event("message_posted").data(data)))
                });
                Sse::new(events)
            }
        }),
    );
    let base = crate::setup::serve(router).await;
    let urls = (0..THREADS).map(|i| (format!("{base}/threads/{i}/events"), None)).collect();
    let seen = Arc::new(Seen::default());
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    let tasks = clients(CLIENTS, urls, epoch, seen.clone(), stop).await;
    let busy = channels[&0].clone();
    let (elapsed, _) = commit_at_rate(|seq| {
        let busy = busy.clone();
        Box::pin(async move {
            // An envelope of the same shape and size as lattice's.
            let data = serde_json::json!({"seq": seq, "id": ulid::Ulid::generate().to_string(), "tenant": "t1", "workspace": "ws_01m8pv3w6bf2yk0r8wq1ngdf9n",
                "thread": "th_01m8pv3w6bf2yk0r8wq1ngdf9n", "actor": {"kind": "person", "name": "alice"}, "at": "2026-11-30T12:00:00.000Z",
                "type": "message_posted", "payload": {"thread": "th_01m8pv3w6bf2yk0r8wq1ngdf9n", "text": stamp(epoch)}});
            let _ = busy.send(data.to_string());
        })
    })
    .await;
    let _ = stop_tx.send(true);
    for t in tasks {
        let _ = t.await;
    }
    figures(&seen, elapsed)
}

pub async fn run() {
    crate::setup::postgres_from_xtask();
    let epoch = Instant::now();
    let base = baseline_side(epoch).await;
    let (ours, queries, commits) = lattice_side(CLIENTS, epoch).await;
    // The same with a tenth of the streams: the queries a commit costs do
    // not grow with them.
    let (_, queries_few, _) = lattice_side(THREADS, epoch).await;
    let expected = commits as usize * (CLIENTS / THREADS);
    println!("fanout: {CLIENTS} SSE clients over {THREADS} threads, {commits} commits to one thread at {RATE}/s ({expected} deliveries due)");
    println!(
        "fanout bare-axum-broadcast {:.0} deliveries/s ({} delivered), p50 {:.2} ms, p99 {:.2} ms",
        base.per_sec, base.delivered, base.p50_ms, base.p99_ms
    );
    println!("fanout lattice {:.0} deliveries/s ({} delivered), p50 {:.2} ms, p99 {:.2} ms", ours.per_sec, ours.delivered, ours.p50_ms, ours.p99_ms);
    println!(
        "fanout lattice database queries per commit: {queries:.2} with {CLIENTS} streams, {queries_few:.2} with {THREADS} (every query of the server's, the commit's own included)"
    );
    println!("p99_ms {:.2} fanout commit-to-delivery (lattice)", ours.p99_ms);
    println!("p99_ms {:.2} fanout commit-to-delivery (bare axum broadcast)", base.p99_ms);
    println!("ratio {:.3} fanout deliveries per second, lattice vs a bare axum broadcast", ours.per_sec / base.per_sec);
    crate::hot_thread::run(epoch).await;
}

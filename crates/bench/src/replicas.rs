//! Two log service replicas on one PostgreSQL database: how soon a message
//! committed on one reaches a live stream on the other, at 20 messages a
//! second. Baseline: a live stream on the committing replica itself, in
//! the same run.

use std::time::{Duration, Instant};

use lattice_core::{Command, TenantRole, ThreadId};
use lattice_log::{Backend, Db, Follow, LogService};

const RATE: u32 = 20;
const MESSAGES: usize = 400;

pub async fn run() {
    crate::setup::postgres_from_xtask();
    let url = lattice_testkit::fresh_url(Backend::Postgres).await;
    let a = replica(&url).await;
    let b = replica(&url).await;
    let alice = lattice_testkit::who("t1", "alice", TenantRole::Member);
    let thread = crate::setup::thread_of(&a, &alice).await;

    let (local, remote, per_second) = measure(&a, &b, &alice, &thread).await;
    println!("replicas: {MESSAGES} messages at {RATE}/s committed on replica A, followed on A and on B");
    for (name, lat) in [("on the committing replica", &local), ("on another replica", &remote)] {
        println!("replicas {name}: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms", pct(lat, 0.50), pct(lat, 0.99), pct(lat, 1.0));
    }
    println!("p50_ms {:.2} commit on one replica to a live stream on another at {RATE} messages/s", pct(&remote, 0.50));
    println!("p99_ms {:.2} commit on one replica to a live stream on another at {RATE} messages/s (goal < 50)", pct(&remote, 0.99));
    println!("p99_ms {:.2} commit to a live stream on the same replica at {RATE} messages/s", pct(&local, 0.99));
    println!("ratio {:.3} deliveries per second on another replica vs on the committing one", per_second.1 / per_second.0);
}

async fn replica(url: &str) -> LogService {
    let db = Db::connect(url, 8).await.expect("connecting");
    db.migrate().await.expect("migrating");
    lattice_testkit::service_on(db)
}

/// Latencies (ms) from each commit's acknowledgement to its arrival on a
/// stream of A and a stream of B, and each stream's deliveries per second.
async fn measure(a: &LogService, b: &LogService, who: &lattice_log::Authenticated, thread: &ThreadId) -> (Vec<f64>, Vec<f64>, (f64, f64)) {
    let after = a.horizon().caught_up().await;
    // Both replicas have seen everything so far before the clock starts.
    b.horizon().wait_for(after, Duration::from_secs(10)).await;
    let follow = |log: &LogService| {
        let (log, who, thread) = (log.clone(), who.clone(), thread.clone());
        tokio::spawn(async move {
            let mut live = log.follow(&who, Follow::Thread(thread), after).await.expect("following");
            let mut arrivals = Vec::with_capacity(MESSAGES);
            while arrivals.len() < MESSAGES {
                let d = tokio::time::timeout(Duration::from_secs(10), live.next_committed())
                    .await
                    .expect("a delivery within 10 s")
                    .expect("a live envelope");
                arrivals.push((d.seq, Instant::now()));
            }
            arrivals
        })
    };
    let (on_a, on_b) = (follow(a), follow(b));
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut ticks = tokio::time::interval(Duration::from_secs(1) / RATE);
    let mut committed = Vec::with_capacity(MESSAGES);
    let start = Instant::now();
    for i in 0..MESSAGES {
        ticks.tick().await;
        let done = a.execute(who, Command::PostMessage { thread: thread.clone(), text: format!("replicated {i}") }).await.expect("committed");
        committed.push((done.seq, Instant::now()));
    }
    let (on_a, on_b) = (on_a.await.expect("stream A"), on_b.await.expect("stream B"));
    let latencies = |arrivals: &[(i64, Instant)]| -> Vec<f64> {
        let mut out: Vec<f64> = committed
            .iter()
            .map(|(seq, at)| {
                let arrived = arrivals.iter().find(|(s, _)| s == seq).expect("every commit arrives").1;
                // Arriving before the acknowledgement reached the writer counts as 0.
                arrived.saturating_duration_since(*at).as_secs_f64() * 1000.0
            })
            .collect();
        out.sort_by(f64::total_cmp);
        out
    };
    let rate = |arrivals: &[(i64, Instant)]| MESSAGES as f64 / arrivals.last().expect("arrivals").1.duration_since(start).as_secs_f64();
    (latencies(&on_a), latencies(&on_b), (rate(&on_a), rate(&on_b)))
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

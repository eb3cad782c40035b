//! The write path against a raw INSERT of the same rows, on the same
//! PostgreSQL (fsync on), at concurrency 1 and 32.
//!
//! Ours: `PostMessage` through `LogService::execute` (authorize: from the
//! standing the writer's last message read; commit: one statement taking
//! the writers' lock, checking that standing and appending the envelope),
//! with the sealer sealing the log behind it (docs/SEAL.md), as every
//! deployment runs; its lag from commit to seal is printed.
//! Baseline: one autocommitted `INSERT` per envelope row, with the same
//! columns and payload, into an identical table in another database of the
//! same server, over sqlx's native PostgreSQL pool.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use lattice_core::clock::{Clock, SystemClock};
use lattice_core::{Command, TenantRole};
use lattice_log::Backend;
use sqlx::postgres::PgPoolOptions;

const RUN: Duration = Duration::from_secs(4);
const WARMUP: Duration = Duration::from_millis(500);

pub async fn run() {
    crate::setup::postgres_from_xtask();
    let mut ratios = Vec::new();
    for concurrency in [1usize, 32] {
        let ours = ours(concurrency).await;
        let raw = raw_insert(concurrency).await;
        println!("write-path concurrency={concurrency} ours {ours:.0} commands/s");
        println!("write-path concurrency={concurrency} raw-insert {raw:.0} rows/s");
        let ratio = ours / raw;
        println!("ratio {ratio:.3} write-path vs raw INSERT at concurrency {concurrency}");
        ratios.push(ratio);
    }
    let worst = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    println!("ratio {worst:.3} write-path vs raw INSERT (the lower of concurrency 1 and 32)");
}

/// Ours, with the log sealed behind it as a deployment seals it
/// (docs/SEAL.md): the sealer runs beside the writes, and its lag (commit
/// to seal) is reported.
async fn ours(concurrency: usize) -> f64 {
    let (log, thread) = crate::setup::service(concurrency as u32 + 4).await;
    let sealer = lattice_log::Sealer::new(lattice_log::LogReader::of(&log), log.authenticator().seal_key().clone());
    let status = sealer.status();
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let sealing = tokio::spawn(sealer.run(stopped));
    let alice = lattice_testkit::who("t1", "alice", TenantRole::Member);
    let writer = log.clone();
    let rate = measure(concurrency, move |i| {
        let (log, alice, thread) = (writer.clone(), alice.clone(), thread.clone());
        async move {
            log.execute(&alice, Command::PostMessage { thread, text: message(i) }).await.expect("a committed message");
        }
    })
    .await;
    let _ = stop.send(true);
    let _ = sealing.await;
    let pct = |p: f64| status.lag_percentile(p).map_or_else(|| "none".to_owned(), |ms| format!("{ms} ms"));
    println!(
        "write-path concurrency={concurrency} seal lag p50 {} p99 {} max {} ms over {} envelopes sealed",
        pct(50.0),
        pct(99.0),
        status.max_lag_ms(),
        status.sealed()
    );
    rate
}

async fn raw_insert(concurrency: usize) -> f64 {
    let url = lattice_testkit::fresh_url(Backend::Postgres).await;
    let pool = PgPoolOptions::new().max_connections(concurrency as u32 + 4).connect(&url).await.expect("connecting");
    sqlx::raw_sql(
        "CREATE TABLE envelopes (seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, id TEXT NOT NULL UNIQUE, \
         tenant TEXT NOT NULL, workspace TEXT, thread TEXT, actor TEXT NOT NULL, at BIGINT NOT NULL, type TEXT NOT NULL, \
         payload TEXT NOT NULL, traceparent TEXT); \
         CREATE INDEX envelopes_by_thread ON envelopes (thread, seq); \
         CREATE INDEX envelopes_by_workspace ON envelopes (workspace, seq); \
         CREATE INDEX envelopes_by_type ON envelopes (type, seq);",
    )
    .execute(&pool)
    .await
    .expect("the baseline table");
    let actor = r#"{"kind":"person","tenant":"t1","user":"alice"}"#;
    measure(concurrency, move |i| {
        let pool = pool.clone();
        async move {
            let payload = serde_json::json!({"thread": "th_bench", "text": message(i)}).to_string();
            sqlx::query(
                "INSERT INTO envelopes (id, tenant, workspace, thread, actor, at, type, payload, traceparent) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            )
            .bind(ulid::Ulid::generate().to_string())
            .bind("t1")
            .bind("ws_bench")
            .bind("th_bench")
            .bind(actor)
            .bind(SystemClock.now_ms())
            .bind("message_posted")
            .bind(payload)
            .bind(None::<String>)
            .execute(&pool)
            .await
            .expect("an inserted row");
        }
    })
    .await
}

fn message(i: u64) -> String {
    format!("benchmark message number {i}, long enough to look like a person's line")
}

/// Runs `op` from `concurrency` tasks for WARMUP + RUN; returns ops/s over RUN.
async fn measure<F, Fut>(concurrency: usize, op: F) -> f64
where
    F: Fn(u64) -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let counted = Arc::new(AtomicU64::new(0));
    let counting = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for t in 0..concurrency {
        let (op, counted, counting) = (op.clone(), counted.clone(), counting.clone());
        tasks.push(tokio::spawn(async move {
            let mut i = t as u64 * 1_000_000_000;
            while start.elapsed() < WARMUP + RUN {
                op(i).await;
                i += 1;
                if counting.load(Ordering::Relaxed) {
                    counted.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    tokio::time::sleep(WARMUP).await;
    counting.store(true, Ordering::Relaxed);
    let measured_from = Instant::now();
    for t in tasks {
        t.await.expect("a benchmark task");
    }
    counted.load(Ordering::Relaxed) as f64 / measured_from.elapsed().as_secs_f64()
}

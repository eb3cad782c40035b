//! `data`: what the reads cost as the log grows. On PostgreSQL and on
//! SQLite, a log of about a million envelopes (100 tenants, 1,000
//! workspaces, 10,000 threads, with forms, submissions, apps and agent
//! runs in the shares use leaves them) is seeded in bulk beside a log of
//! about a thousand (its probe workspace alone: the same workspace,
//! envelope for envelope). The reads people and agents make are then
//! timed on both through the API's router, in turn: a thread's first page
//! and a later one, a large workspace's thread list, a workspace stream's
//! catch-up from an old cursor, a form's submissions, a switch
//! resolution, and the write path (posting a message).
//!
//! Each read's p99 on the small log over its p99 on the large one is its
//! `ratio` (1.0: the log's size costs nothing; at least 0.8: within
//! 1.25×). What keeps each flat (crates/log/migrations, crates/log/src/store):
//!
//! - a thread's pages: `envelopes_by_thread` (thread, seq);
//! - a workspace's catch-up: `envelopes_by_workspace` (workspace, seq),
//!   its restricted threads by `threads_by_workspace` and
//!   `thread_members_by_user`;
//! - a workspace's thread list: `threads_by_workspace`, which holds what
//!   the list shows in the order it shows it and what says whether a
//!   thread is unread (migrations 0016, 0018: folded in beside the write
//!   path, crates/log/src/unread.rs), and per thread the reader's mark by
//!   the key of `read_marks`, (user_id, thread): a reader's marks side by
//!   side (migration 0017). It probed each thread's envelopes before, a
//!   descent of a million-row index a thread;
//! - a form's submissions: the (tenant, parent) prefix of
//!   `artifacts_by_parent_author`, once the statement names only the
//!   filters given (store/artifacts.rs: with `($3 = '' OR a.kind = $3)`
//!   SQLite read the tenant's every artifact, PostgreSQL its every entry
//!   in `artifacts_by_parent`);
//! - a switch resolution: the `switches` key (level, key);
//! - the write path: the `threads`, `workspaces` and `members` keys (who
//!   may post), `runs_by_thread` (the thread's paused runs);
//! - who may read, for every read: the same keys.
//!
//! On SQLite a commit empties every other connection's page cache, so a
//! read after a write reads again every page it touches, and the large
//! log's rows of one thread lie each on a page of its own. Mapping the file
//! made that a page fault each (the map is dropped on every commit), worse
//! than a read(); each connection keeps a cache of 16 MiB instead. And no
//! commit pays for a checkpoint: a task copies the WAL into the file
//! beside the writes (store/db.rs), where one commit in about a hundred
//! did, which was the write path's p99.
//!
//! The seeding (data/plan.rs, render.rs, sink.rs) writes the rows the
//! product's writers would have written, envelopes and read models both,
//! into databases its own migrations made; data/check.rs reads them back
//! through the product before anything is timed.

mod check;
mod plan;
mod reads;
mod render;
mod side;
mod sink;

use std::collections::BTreeMap;
use std::time::Instant;

use lattice_log::Backend;

use plan::Plan;
use reads::{Read, TRIES, quantile};
use side::{Probe, Side};
use sink::{Sink, Table};

/// A seeded database: its URL, its rows, how long it took.
struct Seeded {
    scratch: Scratch,
    counts: BTreeMap<Table, u64>,
    seconds: f64,
}

async fn seed(backend: Backend, plan: &Plan) -> Seeded {
    let start = Instant::now();
    let url = lattice_testkit::fresh_url(backend).await;
    let scratch = Scratch { backend, url: url.clone() };
    // The product's schema, by its own migrations.
    let db = lattice_log::Db::connect(&url, 2).await.expect("connecting");
    db.migrate().await.expect("migrating");
    db.close().await;
    let mut sink = Sink::open(&url).await;
    render::seed(plan, &mut sink).await;
    let counts = sink.finish().await;
    if backend == Backend::Postgres {
        // What autovacuum would do soon after a load this size, done now
        // rather than while the reads are timed.
        let mut conn = <sqlx::PgConnection as sqlx::Connection>::connect(&url).await.unwrap();
        sqlx::raw_sql("VACUUM (ANALYZE)").execute(&mut conn).await.unwrap();
    }
    Seeded { scratch, counts, seconds: start.elapsed().as_secs_f64() }
}

/// Set, the seeded databases are kept (and named), to look at a read's
/// plan on them (EXPLAIN, EXPLAIN QUERY PLAN).
const KEEP: &str = "LATTICE_BENCH_KEEP";

/// A seeded database, dropped with this (the disk is not the benchmark's
/// to keep), also when a check fails.
struct Scratch {
    backend: Backend,
    url: String,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::env::var_os(KEEP).is_some() {
            println!("data: kept {}", self.url);
            return;
        }
        let (backend, url) = (self.backend, self.url.clone());
        // On a runtime of its own: this may run while the benchmark's
        // unwinds.
        let dropping = std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(drop_database(backend, &url))
        });
        let _ = dropping.join();
    }
}

async fn drop_database(backend: Backend, url: &str) {
    match backend {
        Backend::Postgres => {
            let name = url.rsplit('/').next().unwrap_or_default().split('?').next().unwrap_or_default().to_owned();
            let Ok(mut conn) = <sqlx::PgConnection as sqlx::Connection>::connect(&lattice_testkit::postgres_url()).await else { return };
            let _ = sqlx::raw_sql(sqlx::AssertSqlSafe(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))).execute(&mut conn).await;
        }
        Backend::Sqlite => {
            let path = url.trim_start_matches("sqlite://");
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{path}{suffix}"));
            }
        }
    }
}

/// Set, each read's twenty slowest tries on each log are printed, with
/// when each began.
const TAILS: &str = "LATTICE_BENCH_DATA_TAILS";

/// Set to `postgres` or `sqlite`, only that backend is measured (to look
/// at its plans with [`KEEP`]).
const ONLY: &str = "LATTICE_BENCH_DATA_ONLY";

fn backends() -> Vec<Backend> {
    let only = std::env::var(ONLY).unwrap_or_default();
    [Backend::Postgres, Backend::Sqlite].into_iter().filter(|b| only.is_empty() || name(*b) == only).collect()
}

fn name(backend: Backend) -> &'static str {
    match backend {
        Backend::Postgres => "postgres",
        Backend::Sqlite => "sqlite",
    }
}

const SIZES: [&str; 2] = ["1M envelopes", "1k envelopes"];

pub async fn run() {
    crate::setup::postgres_from_xtask();
    let started = Instant::now();
    let plans = [Plan::new(true), Plan::new(false)];
    println!(
        "data: planned {} envelopes over {} tenants, {} workspaces, {} threads (large); {} envelopes over {} workspace, {} threads (small) in {:.1} s",
        plans[0].order.len(),
        plans[0].tenants.len(),
        plans[0].workspaces.len(),
        plans[0].threads.len(),
        plans[1].order.len(),
        plans[1].workspaces.len(),
        plans[1].threads.len(),
        started.elapsed().as_secs_f64()
    );
    let mut lines = Vec::new();
    for backend in backends() {
        let b = name(backend);
        let mut sides = Vec::new();
        let mut scratches = Vec::new();
        for (plan, size) in plans.iter().zip(SIZES) {
            let seeded = seed(backend, plan).await;
            let rows: Vec<String> = seeded.counts.iter().map(|(t, n)| format!("{} {n}", t.name())).collect();
            println!("data: seeded {b} ({size}) in {:.1} s: {}", seeded.seconds, rows.join(", "));
            sides.push(Side::serve(&seeded.scratch.url, Probe::of(plan)).await);
            scratches.push(seeded.scratch);
        }
        for side in &sides {
            check::reads(side).await;
        }
        check::same_lists(&sides[0], &sides[1]).await;
        let p = &sides[0].probe;
        println!(
            "data: {b}: read back through the API on both logs: the thread's pages ({} envelopes), {} threads listed, {} workspace envelopes after the cursor, {} submissions, the switches, a paused run, an app's head",
            p.thread_length, p.visible_threads, p.ws_later, p.submissions
        );
        println!(
            "data: {b}: each read on each log after {} to warm up, a page {} times, the rest {} times; a sample is the fastest of {TRIES} tries, the logs' tries taking turns",
            reads::WARM_UP,
            Read::ThreadFirstPage.samples(),
            Read::ThreadList.samples()
        );
        let pair = [&sides[0], &sides[1]];
        for read in Read::ALL {
            let timed = reads::measure(read, &pair).await;
            let p99 = [quantile(&timed[0].best, 0.99), quantile(&timed[1].best, 0.99)];
            for (t, size) in timed.iter().zip(SIZES) {
                println!(
                    "data {} ({b}, {size}): best of {TRIES}: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms over {} samples; every try: p50 {:.2} ms, p99 {:.2} ms",
                    read.name(),
                    quantile(&t.best, 0.5),
                    quantile(&t.best, 0.99),
                    quantile(&t.best, 1.0),
                    t.best.len(),
                    quantile(&t.every, 0.5),
                    quantile(&t.every, 0.99),
                );
            }
            if std::env::var_os(TAILS).is_some() {
                for (t, size) in timed.iter().zip(SIZES) {
                    let mut slow = t.when.clone();
                    slow.sort_by(|a, b| b.1.total_cmp(&a.1));
                    let slow: Vec<String> = slow.iter().take(20).map(|(at, ms)| format!("{at:.2}s {ms:.2}")).collect();
                    println!("data {} ({b}, {size}): the slowest tries: {}", read.name(), slow.join(", "));
                    let mut seconds: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
                    for (at, ms) in &t.when {
                        seconds.entry(*at as u64).or_default().push(*ms);
                    }
                    let medians: Vec<String> = seconds
                        .into_iter()
                        .map(|(s, mut v)| {
                            v.sort_by(f64::total_cmp);
                            format!("{s}s {:.2}", quantile(&v, 0.5))
                        })
                        .collect();
                    println!("data {} ({b}, {size}): each second's p50: {}", read.name(), medians.join(", "));
                }
            }
            let raw = quantile(&timed[1].every, 0.99) / quantile(&timed[0].every, 0.99);
            println!("data {} ({b}): every try's p99, 1k over 1M: {raw:.3}", read.name());
            lines.push(format!("p99_ms {:.2} data {} ({b}, {})", p99[0], read.name(), SIZES[0]));
            lines.push(format!("p99_ms {:.2} data {} ({b}, {})", p99[1], read.name(), SIZES[1]));
            lines.push(format!("ratio {:.3} data {} on {b}", p99[1] / p99[0], read.name()));
        }
        check::run_goes_on(&sides[0]).await;
        println!("data: {b}: the seeded paused run finished once answered through the API");
        for side in sides {
            side.close().await;
        }
        drop(scratches);
    }
    println!("data: finished in {:.1} s", started.elapsed().as_secs_f64());
    for line in lines {
        println!("{line}");
    }
}

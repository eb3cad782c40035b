//! Readers never pass a sequence number whose transaction is still open.

use std::time::Duration;

use lattice_core::{Command, TenantRole};
use lattice_log::{Backend, Follow};
use lattice_testkit::{both_backends, fresh_url, service_on, who};
use sqlx::{Connection, Row};

use crate::workspace_with_thread;

both_backends! {
    async fn the_horizon_follows_commits(backend: Backend) {
        let log = lattice_testkit::service(backend).await;
        let alice = who("t1", "alice", TenantRole::Member);
        let (_, th) = workspace_with_thread(&log, &alice).await;
        let mut last = 0;
        for i in 0..20 {
            last = log.execute(&alice, Command::PostMessage { thread: th.clone(), text: format!("m{i}") }).await.unwrap().seq;
        }
        assert!(log.horizon().wait_for(last, Duration::from_secs(5)).await >= last);
        let events = log.events(&alice, &Follow::Thread(th), 0, 100).await.unwrap();
        assert_eq!(events.len(), 21);
    }
}

/// A transaction takes a sequence number and stays open while a later one
/// commits: the horizon stops below it until it commits, then both are read
/// in order. A rolled-back number is skipped once its transaction has ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_writer_holds_the_horizon_back_on_postgres() {
    let url = fresh_url(Backend::Postgres).await;
    let db = lattice_log::Db::connect(&url, 8).await.unwrap();
    db.migrate().await.unwrap();
    let log = service_on(db);
    let alice = who("t1", "alice", TenantRole::Member);
    let (ws, th) = workspace_with_thread(&log, &alice).await;

    let mut slow = sqlx::PgConnection::connect(&url).await.unwrap();
    let mut tx = slow.begin().await.unwrap();
    // As lattice's writers do: the writers' lock, then a number.
    writer_lock(&mut tx).await;
    let slow_seq: i64 = sqlx::query(
        "INSERT INTO envelopes (id, tenant, workspace, thread, actor, at, type, payload) \
         VALUES ('slow', 't1', $1, $2, '{\"kind\":\"system\",\"name\":\"test\"}', 0, 'message_posted', $3) RETURNING seq",
    )
    .bind(ws.as_str())
    .bind(th.as_str())
    .bind(serde_json::json!({"thread": th, "text": "slow"}).to_string())
    .fetch_one(&mut *tx)
    .await
    .unwrap()
    .get(0);

    let fast = log.execute(&alice, Command::PostMessage { thread: th.clone(), text: "fast".into() }).await.unwrap();
    assert!(fast.seq > slow_seq);
    let horizon = log.horizon().wait_for(fast.seq, Duration::from_millis(500)).await;
    assert_eq!(horizon, slow_seq - 1, "the horizon must stop below the open transaction");
    let visible = log.events(&alice, &Follow::Thread(th.clone()), 0, 100).await.unwrap();
    assert!(visible.iter().all(|e| e.seq < slow_seq));

    tx.commit().await.unwrap();
    assert!(log.horizon().wait_for(fast.seq, Duration::from_secs(5)).await >= fast.seq);
    let texts: Vec<String> = log
        .events(&alice, &Follow::Thread(th.clone()), slow_seq - 1, 100)
        .await
        .unwrap()
        .iter()
        .map(|e| e.event.payload()["text"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(texts, ["slow", "fast"]);

    // A rolled-back number leaves a gap that is skipped once it is settled.
    let mut tx = slow.begin().await.unwrap();
    writer_lock(&mut tx).await;
    sqlx::query(
        "INSERT INTO envelopes (id, tenant, workspace, thread, actor, at, type, payload) \
         VALUES ('gone', 't1', $1, $2, '{\"kind\":\"system\",\"name\":\"test\"}', 0, 'message_posted', '{}')",
    )
    .bind(ws.as_str())
    .bind(th.as_str())
    .execute(&mut *tx)
    .await
    .unwrap();
    let after = log.execute(&alice, Command::PostMessage { thread: th.clone(), text: "after".into() }).await.unwrap();
    tx.rollback().await.unwrap();
    assert!(log.horizon().wait_for(after.seq, Duration::from_secs(5)).await >= after.seq);
}

async fn writer_lock(conn: &mut sqlx::PgConnection) {
    sqlx::query("SELECT pg_advisory_xact_lock_shared($1)").bind(lattice_log::WRITER_LOCK).execute(conn).await.unwrap();
}

/// A transaction that is not a lattice writer (a psql session, say) holds
/// nothing back: with one open and a gap in the numbers, a new message
/// reaches a live stream at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unrelated_transaction_holds_nothing_back_on_postgres() {
    let url = fresh_url(Backend::Postgres).await;
    let db = lattice_log::Db::connect(&url, 8).await.unwrap();
    db.migrate().await.unwrap();
    let log = service_on(db);
    let alice = who("t1", "alice", TenantRole::Member);
    let (_, th) = workspace_with_thread(&log, &alice).await;
    let mut live = log.follow(&alice, Follow::Thread(th.clone()), 0).await.unwrap();
    while live.next_committed().await.is_some_and(|d| d.event_type != "thread_created") {}

    // psql: BEGIN; SELECT pg_current_xact_id(); and left open.
    let mut idle = sqlx::PgConnection::connect(&url).await.unwrap();
    let mut open = idle.begin().await.unwrap();
    sqlx::query("SELECT pg_current_xact_id()").execute(&mut *open).await.unwrap();
    // A number taken and never committed, as a rolled-back write leaves.
    let mut other = sqlx::PgConnection::connect(&url).await.unwrap();
    let mut gap = other.begin().await.unwrap();
    sqlx::query("SELECT nextval(pg_get_serial_sequence('envelopes', 'seq'))").execute(&mut *gap).await.unwrap();
    gap.rollback().await.unwrap();

    let started = std::time::Instant::now();
    let sent = log.execute(&alice, Command::PostMessage { thread: th.clone(), text: "now".into() }).await.unwrap();
    let got = tokio::time::timeout(Duration::from_secs(1), live.next_committed()).await.expect("the message within a second").unwrap();
    assert_eq!(got.seq, sent.seq);
    assert!(got.json.contains("\"now\""), "{}", got.json);
    eprintln!("delivered past an open unrelated transaction and a gap in {:?}", started.elapsed());
    open.rollback().await.unwrap();
}

both_backends! {
    /// The bridge follows the horizon through `LogReader::of`: while it
    /// does, a commit moves the horizon at once, not at the tracker's idle
    /// poll (an hour here), though no stream of the fan-out is open.
    async fn a_follower_of_the_horizon_sees_a_commit_before_the_idle_poll(backend: Backend) {
        let db = lattice_testkit::fresh_db(backend).await;
        let log = lattice_log::LogService::builder(db, lattice_testkit::authenticator()).idle_poll(Duration::from_secs(3600)).start();
        let alice = who("t1", "alice", TenantRole::Member);
        let (_, th) = workspace_with_thread(&log, &alice).await;
        let reader = lattice_log::LogReader::of(&log);
        let mut horizon = reader.horizon();
        let start = horizon.borrow_and_update().to_owned();
        let sent = log.execute(&alice, Command::PostMessage { thread: th.clone(), text: "now".into() }).await.unwrap();
        assert!(sent.seq > start);
        let seen = tokio::time::timeout(Duration::from_secs(10), horizon.wait_for(|h| *h >= sent.seq)).await.is_ok();
        assert!(seen, "the follower waited for the idle poll: the horizon stayed at {}", *horizon.borrow());
        assert_eq!(reader.read(start, 10).await.unwrap().last().map(|e| e.seq), Some(sent.seq));
    }
}

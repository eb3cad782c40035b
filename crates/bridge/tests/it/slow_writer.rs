//! A transaction holding an earlier sequence number commits after a later
//! one: the bridge still publishes both, in log order (the stream's order
//! is the proof: a fast message published early would stand first).

use async_nats::jetstream;
use lattice_core::{Command, ThreadId};
use sqlx::{Connection, Row};

use crate::stream_messages;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_writer_is_published_before_the_later_fast_one() {
    let crate::OnPostgres { nats, url, log, alice, workspace: ws, thread: th } = crate::OnPostgres::start().await;
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    let bridge = crate::spawn_bridge(&log, &nats.url, stop);

    let mut slow = sqlx::PgConnection::connect(&url).await.unwrap();
    let mut tx = slow.begin().await.unwrap();
    // As lattice's writers do: the writers' lock before a number.
    sqlx::query("SELECT pg_advisory_xact_lock_shared($1)").bind(lattice_log::WRITER_LOCK).execute(&mut *tx).await.unwrap();
    let slow_seq: i64 = sqlx::query(
        "INSERT INTO envelopes (id, tenant, workspace, thread, actor, at, type, payload) \
         VALUES ('01SLOWSLOWSLOWSLOWSLOWSLOW', 't1', $1, $2, '{\"kind\":\"system\",\"name\":\"test\"}', 0, 'message_posted', '{\"text\":\"slow\"}') RETURNING seq",
    )
    .bind(&ws)
    .bind(&th)
    .fetch_one(&mut *tx)
    .await
    .unwrap()
    .get(0);
    let fast = log.execute(&alice, Command::PostMessage { thread: ThreadId::parse("t", &th).unwrap(), text: "fast".into() }).await.unwrap();
    assert!(fast.seq > slow_seq);

    let js = jetstream::new(async_nats::connect(&nats.url).await.unwrap());
    // The bridge has published what the log held before the slow writer
    // took its number: it is running, and the fast message is its next.
    lattice_testkit::until("the bridge to publish what was committed before the slow writer", async || {
        stream_messages(&js).await.iter().any(|(s, _, _)| s.ends_with("log.thread_created"))
    })
    .await;
    // The log's horizon, which the bridge reads up to, stays below the
    // open transaction's number: the fast message cannot be read past it.
    assert!(log.horizon().current() < slow_seq, "the horizon passed a transaction still open");
    tx.commit().await.unwrap();

    let texts = lattice_testkit::eventually("both messages on NATS", async || {
        let texts: Vec<String> = stream_messages(&js)
            .await
            .into_iter()
            .filter(|(s, _, _)| s.ends_with("log.message_posted"))
            .map(|(_, _, p)| p["payload"]["text"].as_str().unwrap_or_default().to_owned())
            .collect();
        (texts.len() == 2).then_some(texts)
    })
    .await;
    assert_eq!(texts, ["slow", "fast"], "the fast message went out before the slow one committed");
    let _ = stop_tx.send(true);
    bridge.await.unwrap().unwrap();
}

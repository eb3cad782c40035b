//! The checkpoint's write and the lead's renewal run beside the
//! publishing: while the database holds them up, committed envelopes still
//! reach NATS, and the checkpoint catches up once the database lets go.

use std::time::Duration;

use async_nats::jetstream;
use lattice_core::{Command, ThreadId};
use lattice_log::LogReader;
use sqlx::Connection;

use crate::stream_messages;

/// How long a message may take to reach NATS while the row is held. The
/// bridge writes its checkpoint 50 ms after the log rests: before, that
/// write held publishing for as long as the row stayed locked.
const PROMPT: Duration = Duration::from_secs(1);

/// Until `envelope` is on NATS; the test fails, saying `what`, when it is
/// not within `within`.
async fn on_nats(js: &jetstream::Context, envelope: &str, within: Duration, what: &str) {
    lattice_testkit::eventually_within(within, what, async || stream_messages(js).await.iter().any(|(_, id, _)| id == envelope).then_some(())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_checkpoint_write_held_up_by_the_database_does_not_hold_back_publishing() {
    let crate::OnPostgres { nats, url, log, alice, thread: th, .. } = crate::OnPostgres::start().await;
    let thread = ThreadId::parse("t", &th).unwrap();
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    let bridge = crate::spawn_bridge(&log, &nats.url, stop);
    let js = jetstream::new(async_nats::connect(&nats.url).await.unwrap());
    let post = |text: &str| log.execute(&alice, Command::PostMessage { thread: thread.clone(), text: text.into() });
    let first = post("first").await.unwrap();
    on_nats(&js, &first.envelope_id, Duration::from_secs(10), "the bridge to publish").await;

    // Another session holds the bridge's row: its checkpoint's write and
    // its lead's renewal wait on it.
    let mut holder = sqlx::PgConnection::connect(&url).await.unwrap();
    let mut tx = holder.begin().await.unwrap();
    sqlx::query("SELECT seq FROM follower_checkpoints WHERE name = 'bridge' FOR UPDATE").execute(&mut *tx).await.unwrap();
    let mut last = first;
    for i in 0..6 {
        // Each after the log rested, so a checkpoint's write is due: the
        // bridge's rest timer runs on real time and tells nothing it fired.
        tokio::time::sleep(Duration::from_millis(250)).await;
        last = post(&format!("m{i}")).await.unwrap();
        on_nats(&js, &last.envelope_id, PROMPT, &format!("message {i} on NATS while the checkpoint's row was held")).await;
    }
    tx.rollback().await.unwrap();

    let reader = LogReader::of(&log);
    lattice_testkit::until("the checkpoint to catch up with what was published", async || reader.checkpoint("bridge").await.unwrap() >= last.seq)
        .await;
    let _ = stop_tx.send(true);
    bridge.await.unwrap().unwrap();
}

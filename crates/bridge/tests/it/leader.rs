//! Two bridges of one name over one database: one publishes, the other
//! stands by, hot; when the leader stops the other takes over from the
//! checkpoint, and every envelope reaches NATS exactly once.

use std::collections::BTreeMap;
use std::time::Duration;

use async_nats::jetstream;
use lattice_core::{Command, TenantRole, ThreadId};
use lattice_log::{Db, LogReader, LogService};
use lattice_testkit::nats::NatsServer;
use lattice_testkit::{fresh_url, service_on, who};

use crate::stream_messages;

async fn post(log: &LogService, thread: &ThreadId, from: usize, count: usize) {
    let alice = who("t1", "alice", TenantRole::Member);
    for i in from..from + count {
        log.execute(&alice, Command::PostMessage { thread: thread.clone(), text: format!("m{i}") }).await.unwrap();
    }
}

/// Posts a marker after what was posted, waits until the stream holds it,
/// and answers the posted messages before it by id, each with how often
/// the stream holds it. The bridge publishes in log order, so a message
/// published twice would be there before the marker.
async fn posted_on_nats(log: &LogService, thread: &ThreadId, js: &jetstream::Context) -> BTreeMap<String, usize> {
    let alice = who("t1", "alice", TenantRole::Member);
    let marker = log.execute(&alice, Command::PostMessage { thread: thread.clone(), text: "marker".into() }).await.unwrap().envelope_id;
    let held = lattice_testkit::eventually("the marker on NATS", async || {
        Some(stream_messages(js).await).filter(|h| h.iter().any(|(_, id, _)| *id == marker))
    })
    .await;
    let mut ids = BTreeMap::new();
    for (subject, id, payload) in held {
        if subject.ends_with("log.message_posted") && payload["payload"]["text"] != "marker" {
            *ids.entry(id).or_insert(0) += 1;
        }
    }
    ids
}

/// Waits until `status` says what `holds` looks for (10 s at most).
async fn until_status(status: &lattice_bridge::BridgeStatus, holds: impl Fn(Result<(), String>) -> bool, what: &str) {
    lattice_testkit::until(what, async || holds(status.ready())).await;
}

lattice_testkit::both_backends! {
    async fn one_bridge_publishes_and_the_other_takes_over_when_it_stops(backend: Backend) {
        let nats = NatsServer::start();
        let url = fresh_url(backend).await;
        let db = Db::connect(&url, 8).await.unwrap();
        db.migrate().await.unwrap();
        let log = service_on(db.clone());
        let alice = who("t1", "alice", TenantRole::Member);
        let (_, thread) = crate::a_thread(&log, &alice, false).await;

        let bridge = |reader: LogReader| {
            let config = lattice_bridge::BridgeConfig { nats_url: nats.url.clone(), user: None, password: None, name: "bridge".into(), ca_file: None, stream_replicas: 1 };
            lattice_bridge::Bridge::new(reader, config)
        };
        let first = bridge(LogReader::of(&log));
        // The second follows the log as another process would.
        let second = bridge(LogReader::open(db.clone(), Duration::from_millis(50)));
        let (first_status, second_status) = (first.status(), second.status());
        let (stop_first, first_stop) = tokio::sync::watch::channel(false);
        let (_stop_second, second_stop) = tokio::sync::watch::channel(false);
        let first = tokio::spawn(first.run(first_stop));
        until_status(&first_status, |r| r.is_ok(), "the first bridge leads").await;
        let second = tokio::spawn(second.run(second_stop));
        until_status(&second_status, |r| r.is_err_and(|why| why.contains("standing by")), "the second bridge stands by").await;

        post(&log, &thread, 0, 100).await;
        let js = jetstream::new(async_nats::connect(&nats.url).await.unwrap());
        assert_eq!(posted_on_nats(&log, &thread, &js).await.len(), 100);
        assert!(first_status.ready().is_ok(), "the first bridge leads");
        let standby = second_status.ready().unwrap_err();
        assert!(standby.contains("standing by"), "{standby}");

        // The leader stops cleanly: the standby takes over at its next look.
        stop_first.send(true).unwrap();
        first.await.unwrap().unwrap();
        post(&log, &thread, 100, 100).await;
        let ids = posted_on_nats(&log, &thread, &js).await;
        assert_eq!(ids.len(), 200, "every message reached NATS");
        assert!(ids.values().all(|n| *n == 1), "a message was published twice");
        assert!(second_status.ready().is_ok(), "the second bridge leads now: {:?}", second_status.ready());
        second.abort();
    }
}

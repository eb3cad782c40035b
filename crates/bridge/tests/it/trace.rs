//! The W3C trace context of the request that committed an envelope rides
//! to NATS in the `traceparent` header (REQUIREMENTS.md O4).

use async_nats::jetstream;
use lattice_bridge::STREAM;
use lattice_core::{Command, TenantRole};
use lattice_log::{Backend, with_traceparent};
use lattice_testkit::nats::NatsServer;
use lattice_testkit::who;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_trace_context_reaches_the_nats_message() {
    let nats = NatsServer::start();
    let log = lattice_testkit::service(Backend::Sqlite).await;
    let alice = who("t1", "alice", TenantRole::Member);
    let (_, th) = crate::a_thread(&log, &alice, false).await;
    let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let posted = with_traceparent(Some(traceparent.into()), async {
        log.execute(&alice, Command::PostMessage { thread: th.clone(), text: "traced".into() }).await
    })
    .await
    .unwrap();
    // A malformed context is dropped, not stored.
    let untraced = with_traceparent(Some("00-nonsense".into()), async {
        log.execute(&alice, Command::PostMessage { thread: th.clone(), text: "not".into() }).await
    })
    .await
    .unwrap();

    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    let bridge = crate::spawn_bridge(&log, &nats.url, stop);
    let js = jetstream::new(async_nats::connect(&nats.url).await.unwrap());
    let found = lattice_testkit::eventually("both messages on NATS", async || {
        let mut found = (None, None);
        if let Ok(mut stream) = js.get_stream(STREAM).await {
            let last = stream.info().await.unwrap().state.last_sequence;
            for seq in 1..=last {
                let m = stream.get_raw_message(seq).await.unwrap();
                let id = m.headers.get("Nats-Msg-Id").map(|v| v.as_str().to_owned());
                let tp = m.headers.get("traceparent").map(|v| v.as_str().to_owned());
                if id.as_deref() == Some(posted.envelope_id.as_str()) {
                    found.0 = Some(tp);
                } else if id.as_deref() == Some(untraced.envelope_id.as_str()) {
                    found.1 = Some(tp);
                }
            }
        }
        (found.0.is_some() && found.1.is_some()).then_some(found)
    })
    .await;
    assert_eq!(found.0, Some(Some(traceparent.to_owned())));
    assert_eq!(found.1, Some(None));
    let _ = stop_tx.send(true);
    bridge.await.unwrap().unwrap();
}

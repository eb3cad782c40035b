//! NATS over TLS: the bridge trusts the CA it is given (LATTICE_NATS_CA_FILE)
//! and publishes; without it the server's certificate is refused and the
//! bridge says so in its readiness.

use async_nats::jetstream;
use lattice_core::TenantRole;
use lattice_log::{Backend, LogReader};
use lattice_testkit::nats::NatsServer;
use lattice_testkit::tls::Certs;
use lattice_testkit::{service, who};

use crate::stream_messages;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bridge_publishes_over_tls_to_a_server_its_ca_signed() {
    let certs = Certs::make();
    let config = certs.dir.join("nats-tls.conf");
    std::fs::write(&config, format!("tls {{\n  cert_file: {:?}\n  key_file: {:?}\n}}\n", certs.cert, certs.key)).unwrap();
    let nats = NatsServer::start_with(Some(&config), Vec::new());
    let url = format!("tls://127.0.0.1:{}", nats.port);

    let log = service(Backend::Sqlite).await;
    let alice = who("t1", "alice", TenantRole::Member);
    crate::a_thread(&log, &alice, false).await;

    let bridge = |ca_file| {
        let config =
            lattice_bridge::BridgeConfig { nats_url: url.clone(), user: None, password: None, name: "bridge".into(), ca_file, stream_replicas: 1 };
        lattice_bridge::Bridge::new(LogReader::of(&log), config)
    };

    // Without the CA: the system's roots do not know it.
    let untrusting = bridge(None);
    let status = untrusting.status();
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    let running = tokio::spawn(untrusting.run(stop));
    let why =
        lattice_testkit::eventually("the bridge to give up on NATS", async || status.ready().err().filter(|e| !e.contains("not connected yet")))
            .await;
    assert!(why.contains("cannot reach NATS"), "{why}");
    stop_tx.send(true).unwrap();
    running.await.unwrap().unwrap();

    // With it: published.
    let trusting = bridge(Some(certs.ca.clone()));
    let status = trusting.status();
    let (_stop_tx, stop) = tokio::sync::watch::channel(false);
    let running = tokio::spawn(trusting.run(stop));
    let client = async_nats::ConnectOptions::new().add_root_certificates(certs.ca.clone()).require_tls(true).connect(&url).await.unwrap();
    let js = jetstream::new(client);
    let published = lattice_testkit::eventually("thread_created on NATS", async || {
        Some(stream_messages(&js).await).filter(|p| p.iter().any(|(s, _, _)| s.ends_with("log.thread_created")))
    })
    .await;
    assert!(published.iter().any(|(s, _, _)| s.ends_with("log.thread_created")), "{published:?}");
    assert!(status.ready().is_ok(), "{:?}", status.ready());
    running.abort();
}

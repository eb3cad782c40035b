//! The bridge (log → JetStream) against raw async JetStream publishes of
//! the same payloads by the same client, in one run; and commit-to-delivery
//! latency at 1,000 events/s.
//!
//! Throughput: N messages are committed first (not timed); the bridge then
//! starts from checkpoint 0 and the time until the stream holds them all
//! counts. The baseline publishes the same envelopes (serialized), pipelined
//! in batches of 256 with every acknowledgement awaited, as the bridge does.
//! Latency: one message per millisecond for 3 s through the write path
//! while the bridge runs in-process, a plain NATS subscriber noting when
//! each arrives; once with a task per commit (commits overlap) and once
//! with one writer committing one after another. Each after half a second
//! of the same traffic, not counted: the pool's first connections and the
//! bridge's first reads are not what a commit costs once running.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_nats::jetstream;
use futures_util::StreamExt;
use lattice_bridge::{Bridge, BridgeConfig, ensure_stream};
use lattice_core::{Command, TenantRole, ThreadId};
use lattice_log::{LogReader, LogService};
use lattice_testkit::nats::NatsServer;

const N: usize = 20_000;
/// Commits made, at the same pace, before the measured ones.
const WARM_UP: usize = 500;
/// Commits measured.
const MEASURED: usize = 3000;

async fn fill(log: &LogService, thread: &ThreadId) {
    let alice = lattice_testkit::who("t1", "alice", TenantRole::Member);
    let mut tasks = Vec::new();
    for w in 0..32 {
        let (log, alice, thread) = (log.clone(), alice.clone(), thread.clone());
        tasks.push(tokio::spawn(async move {
            for i in (w..N).step_by(32) {
                log.execute(&alice, Command::PostMessage { thread: thread.clone(), text: format!("message {i}") }).await.unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
}

pub async fn run() {
    crate::setup::postgres_from_xtask();
    let nats = NatsServer::start();
    let (ours, raw) = throughput(&nats).await;
    println!("bridge {N} events: ours {ours:.0} events/s");
    println!("bridge {N} events: raw JetStream publish {raw:.0} events/s");
    println!("ratio {:.3} bridge log-to-JetStream vs raw async JetStream publish", ours / raw);
    submissions().await;
    durable().await;

    latency(&nats, Writers::Overlapping).await;
    latency(&nats, Writers::One).await;
}

/// What durable acknowledgements cost: the same throughput against a
/// nats-server (2.10 or later, `LATTICE_NATS_SERVER_DURABLE`) that syncs
/// every write to disk before it acknowledges (`sync_interval: always`, as
/// `infra/nats/nats-durable.conf` ships), and against the same server with
/// its default (a sync every two minutes).
async fn durable() {
    let Some(binary) = std::env::var_os("LATTICE_NATS_SERVER_DURABLE") else {
        println!("bridge durable: skipped (LATTICE_NATS_SERVER_DURABLE names no nats-server 2.10+; cargo xtask bench bridge installs one)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("lattice-bench-nats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let durable_conf = dir.join("durable.conf");
    std::fs::write(&durable_conf, "jetstream {\n  sync_interval: always\n}\n").unwrap();
    let default = NatsServer::start_binary(binary.clone().into(), None, Vec::new());
    let (default_ours, default_raw) = throughput(&default).await;
    drop(default);
    let synced = NatsServer::start_binary(binary.into(), Some(&durable_conf), Vec::new());
    let (durable_ours, durable_raw) = throughput(&synced).await;
    drop(synced);
    let _ = std::fs::remove_dir_all(&dir);
    println!("bridge durable: default sync ours {default_ours:.0} events/s, raw {default_raw:.0} events/s");
    println!("bridge durable: sync_interval always ours {durable_ours:.0} events/s, raw {durable_raw:.0} events/s");
    println!("ratio {:.3} bridge with durable acknowledgements vs raw publish to the same durable server", durable_ours / durable_raw);
    println!(
        "ratio {:.3} bridge with durable acknowledgements vs the bridge with the default sync (the durability's cost)",
        durable_ours / default_ours
    );
}

/// The bridge's events per second catching up on N committed messages,
/// and a raw publisher's of the same payloads, against `nats`.
async fn throughput(nats: &NatsServer) -> (f64, f64) {
    let js = jetstream::new(async_nats::connect(&nats.url).await.unwrap());
    ensure_stream(&js).await.unwrap();

    // Ours: the bridge catching up on N committed messages.
    let (log, thread) = crate::setup::service(40).await;
    fill(&log, &thread).await;
    let reader = LogReader::of(&log);
    let bridged = reader.read(0, i64::MAX).await.unwrap().len() as u64;
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    let config = BridgeConfig { nats_url: nats.url.clone(), user: None, password: None, name: "bench".into(), ca_file: None, stream_replicas: 1 };
    let started = Instant::now();
    let bridge = Bridge::new(reader.clone(), config);
    let status = bridge.status();
    let bridge = tokio::spawn(bridge.run(stop));
    // Done when the stream holds every envelope (the stream is empty before).
    let mut stream = js.get_stream(lattice_bridge::STREAM).await.unwrap();
    while stream.info().await.unwrap().state.messages < bridged {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let ours = N as f64 / started.elapsed().as_secs_f64();
    let _ = stop_tx.send(true);
    bridge.await.unwrap().unwrap();
    let (published, reads) = status.reads();
    println!("reads_per_envelope {:.4} bridge, messages catching up ({reads} reads for {published} envelopes)", reads as f64 / published as f64);

    // Baseline: the same envelopes, published raw.
    let envelopes = reader.read(0, i64::MAX).await.unwrap();
    let payloads: Vec<(String, Vec<u8>)> = envelopes
        .iter()
        .filter(|e| e.event_type() == lattice_core::event::MessagePosted::NAME)
        .map(|e| (format!("raw-{}", e.id), serde_json::to_vec(e).unwrap()))
        .collect();
    let started = Instant::now();
    for chunk in payloads.chunks(256) {
        let mut acks = Vec::with_capacity(chunk.len());
        for (id, payload) in chunk {
            let mut headers = async_nats::HeaderMap::new();
            headers.insert("Nats-Msg-Id", id.as_str());
            acks.push(js.publish_with_headers("lattice.bench.raw.log.message_posted", headers, payload.clone().into()).await.unwrap());
        }
        for ack in acks {
            ack.await.unwrap();
        }
    }
    let raw = payloads.len() as f64 / started.elapsed().as_secs_f64();
    (ours, raw)
}

/// Form submissions committed first (not timed), then bridged from checkpoint 0.
const SUBMISSIONS: usize = 5_000;

/// The bridge catching up on SUBMISSIONS form submissions, each published
/// as `ui.form_submitted` with its form's title and chain: what the bridge
/// reads beside the envelopes shows here (docs/BRIDGE.md, "Reads").
async fn submissions() {
    let nats = NatsServer::start();
    let js = jetstream::new(async_nats::connect(&nats.url).await.unwrap());
    let (log, thread) = crate::setup::service(40).await;
    let alice = lattice_testkit::who("t1", "alice", TenantRole::Member);
    let poll = serde_json::json!({"title": "Poll", "submissions": "many",
        "schema": {"type": "object", "properties": {"choice": {"enum": ["a", "b"]}}, "required": ["choice"]}});
    let form =
        log.execute(&alice, Command::CreateArtifact { thread: thread.clone(), id: None, kind: "form".into(), data: poll }).await.unwrap().id.unwrap();
    let mut tasks = Vec::new();
    for w in 0..32 {
        let (log, alice, thread, form) = (log.clone(), alice.clone(), thread.clone(), form.clone());
        tasks.push(tokio::spawn(async move {
            for i in (w..SUBMISSIONS).step_by(32) {
                let nonce = format!("nonce-{i:08}");
                let id = lattice_ui::submission::submission_id(&form, lattice_ui::form::Submissions::Many, "alice", Some(&nonce));
                let data = serde_json::json!({"form_id": form, "form_version": 1, "values": {"choice": "a"}, "nonce": nonce});
                let id = Some(lattice_core::ArtifactId::parse("id", &id).unwrap());
                log.execute(&alice, Command::CreateArtifact { thread: thread.clone(), id, kind: "submission".into(), data }).await.unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let reader = LogReader::of(&log);
    let bridged = reader.read(0, i64::MAX).await.unwrap().len() as u64;
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    let config = BridgeConfig { nats_url: nats.url.clone(), user: None, password: None, name: "bench".into(), ca_file: None, stream_replicas: 1 };
    let started = Instant::now();
    let bridge = Bridge::new(reader, config);
    let status = bridge.status();
    let bridge = tokio::spawn(bridge.run(stop));
    let mut stream = loop {
        match js.get_stream(lattice_bridge::STREAM).await {
            Ok(stream) => break stream,
            Err(_) => tokio::time::sleep(Duration::from_millis(2)).await,
        }
    };
    while stream.info().await.unwrap().state.messages < bridged {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let rate = SUBMISSIONS as f64 / started.elapsed().as_secs_f64();
    let _ = stop_tx.send(true);
    bridge.await.unwrap().unwrap();
    println!("bridge {SUBMISSIONS} form submissions: ours {rate:.0} events/s");
    let (published, reads) = status.reads();
    println!(
        "reads_per_envelope {:.4} bridge, form submissions catching up ({reads} reads for {published} envelopes)",
        reads as f64 / published as f64
    );
}

/// How the 1,000 commits a second are made.
#[derive(Clone, Copy, PartialEq)]
enum Writers {
    /// A task per commit: commits overlap, and delivery in log order waits
    /// for an earlier one still committing.
    Overlapping,
    /// One writer, one commit after another, paced to a millisecond: what
    /// the bridge itself adds to a commit.
    One,
}

async fn latency(nats: &NatsServer, writers: Writers) {
    let (log, thread) = crate::setup::service(40).await;
    let client = async_nats::connect(&nats.url).await.unwrap();
    let mut sub = client.subscribe("lattice.t1.*.log.message_posted").await.unwrap();
    let arrived: Arc<Mutex<HashMap<String, Instant>>> = Arc::default();
    let arrivals = arrived.clone();
    let listener = tokio::spawn(async move {
        while let Some(m) = sub.next().await {
            let id = m.headers.as_ref().and_then(|h| h.get("Nats-Msg-Id")).map(|v| v.as_str().to_owned()).unwrap_or_default();
            arrivals.lock().unwrap().insert(id, Instant::now());
        }
    });
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    let config = BridgeConfig { nats_url: nats.url.clone(), user: None, password: None, name: "latency".into(), ca_file: None, stream_replicas: 1 };
    let bridge = tokio::spawn(Bridge::new(LogReader::of(&log), config).run(stop));
    tokio::time::sleep(Duration::from_millis(300)).await;

    let alice = lattice_testkit::who("t1", "alice", TenantRole::Member);
    let committed: Arc<Mutex<Vec<(String, Instant)>>> = Arc::default();
    let commit_ms: Arc<Mutex<Vec<f64>>> = Arc::default();
    let mut ticker = tokio::time::interval(Duration::from_millis(1));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut tasks = Vec::new();
    for i in 0..WARM_UP + MEASURED {
        ticker.tick().await;
        let (log, alice, thread, committed, commit_ms) = (log.clone(), alice.clone(), thread.clone(), committed.clone(), commit_ms.clone());
        let commit = async move {
            let started = Instant::now();
            let done = log.execute(&alice, Command::PostMessage { thread, text: format!("m{i}") }).await.unwrap();
            if i >= WARM_UP {
                commit_ms.lock().unwrap().push(started.elapsed().as_secs_f64() * 1000.0);
                committed.lock().unwrap().push((done.envelope_id, Instant::now()));
            }
        };
        match writers {
            Writers::Overlapping => tasks.push(tokio::spawn(commit)),
            Writers::One => commit.await,
        }
    }
    for t in tasks {
        t.await.unwrap();
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let arrived = arrived.lock().unwrap().clone();
    let mut ms: Vec<f64> = committed
        .lock()
        .unwrap()
        .iter()
        .filter_map(|(id, at)| arrived.get(id).map(|got| got.saturating_duration_since(*at).as_secs_f64() * 1000.0))
        .collect();
    ms.sort_by(f64::total_cmp);
    let pct = |p: f64| ms[((ms.len() as f64 - 1.0) * p).round() as usize];
    let mut commits = commit_ms.lock().unwrap().clone();
    commits.sort_by(f64::total_cmp);
    let commit_pct = |p: f64| commits[((commits.len() as f64 - 1.0) * p).round() as usize];
    let label = match writers {
        Writers::Overlapping => "overlapping writers",
        Writers::One => "one writer",
    };
    println!(
        "bridge latency, {label}: {} of {MEASURED} delivered; the commits themselves took p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        ms.len(),
        commit_pct(0.5),
        commit_pct(0.99),
        commits.last().copied().unwrap_or_default()
    );
    println!("p50_ms {:.2} bridge commit-to-delivery at 1000 events/s, {label}", pct(0.5));
    println!("p99_ms {:.2} bridge commit-to-delivery at 1000 events/s, {label}", pct(0.99));
    let _ = stop_tx.send(true);
    bridge.await.unwrap().unwrap();
    listener.abort();
}

//! Two log service replicas on one PostgreSQL database behind one edge
//! (`LATTICE_LOG_URL=a,b`), and two bridges into one NATS. Under a stream
//! of writes and agent runs one log replica and the leading bridge are
//! killed (SIGKILL): every acknowledged message is in the log, writes go
//! on through the other replica, the live streams that the dead replica
//! served resume on the other from where they were and miss nothing, the
//! standby bridge takes the lead and every message is on NATS exactly
//! once, and every run finishes once.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_nats::jetstream;
use futures_util::StreamExt;
use lattice_e2e::{BridgeProcess, Client, EdgeProcess, LogProcess};
use serde_json::{Value, json};

/// Follows a thread through the edge from `after`, reconnecting (from the
/// last sequence number it saw) whenever the stream ends; collects the
/// messages' texts with their sequence numbers.
fn follow(
    portal: String,
    token: String,
    th: String,
    seen: Arc<Mutex<Vec<(i64, String)>>>,
    reconnects: Arc<Mutex<usize>>,
    opened: Arc<std::sync::atomic::AtomicUsize>,
) {
    tokio::spawn(async move {
        let http = lattice_e2e::http();
        let mut after = 0;
        loop {
            let Ok(r) = http
                .get(format!("{portal}/v1/threads/{th}/events?after={after}"))
                .bearer_auth(&token)
                .header("accept", "text/event-stream")
                .send()
                .await
            else {
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            };
            if !r.status().is_success() {
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
            opened.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let mut events = lattice_e2e::sse::events(r);
            while let Some(Ok(event)) = events.next().await {
                let Ok(envelope) = serde_json::from_str::<Value>(&event.data) else { continue };
                let Some(seq) = envelope["seq"].as_i64() else { continue };
                after = after.max(seq);
                if envelope["type"] == "message_posted" {
                    seen.lock().unwrap().push((seq, envelope["payload"]["text"].as_str().unwrap_or_default().to_owned()));
                }
            }
            *reconnects.lock().unwrap() += 1;
        }
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_log_replica_and_leading_bridge_lose_nothing_and_streams_runs_and_nats_stay_whole() {
    let url = lattice_testkit::fresh_url(lattice_log::Backend::Postgres).await;
    let env = [("LATTICE_RATE_WRITES_PER_SEC", "0")];
    let mut a = LogProcess::start_with(&url, &env).await;
    let b = LogProcess::start_with(&url, &env).await;
    let nats = lattice_testkit::nats::NatsServer::start();
    let mut bridges = [BridgeProcess::start(&url, &nats.url), BridgeProcess::start(&url, &nats.url)];
    let edge = EdgeProcess::start(&format!("{},{}", a.base, b.base), None).await;
    let portal = edge.base.clone();
    let ana = Client::sign_in(&portal, "acme", "ana").await;
    let ws = ana.ok("POST", "/v1/workspaces", json!({"name": "Replicas"})).await["id"].as_str().unwrap().to_owned();
    let th = ana.ok("POST", &format!("/v1/workspaces/{ws}/threads"), json!({"title": "t"})).await["id"].as_str().unwrap().to_owned();

    let stop_runs = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // Four streams: the edge gives the replicas two each, in turn.
    let (seen, reconnects): (Vec<_>, Vec<_>) = (0..4).map(|_| (Arc::new(Mutex::new(Vec::new())), Arc::new(Mutex::new(0)))).unzip();
    let opened = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    for (seen, reconnects) in seen.iter().zip(&reconnects) {
        follow(portal.clone(), ana.token.clone(), th.clone(), seen.clone(), reconnects.clone(), opened.clone());
    }
    // Open before any other request: the edge's turns then give each
    // replica two of them, whatever else asks later.
    let deadline = Instant::now() + Duration::from_secs(10);
    while opened.load(std::sync::atomic::Ordering::Relaxed) < 4 {
        assert!(Instant::now() < deadline, "the four streams did not open");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // Agent runs beside the writes, on whichever replica the edge picks.
    let runs: Arc<Mutex<Vec<String>>> = Arc::default();
    let runner = {
        let (ana, th, runs, stop) = (ana.clone(), th.clone(), runs.clone(), stop_runs.clone());
        tokio::spawn(async move {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                if let Ok((200, body)) =
                    ana.post(&format!("/v1/threads/{th}/runs"), json!({"prompt": "Figures.", "model": "scripted:dashboard"})).await
                {
                    runs.lock().unwrap().push(body["run_id"].as_str().unwrap_or_default().to_owned());
                }
                // The load's pace: a run every 40 ms while the replicas roll.
                tokio::time::sleep(Duration::from_millis(40)).await;
            }
        })
    };

    // Four writers; a refusal (the dead replica's 503 `Unavailable`) is tried again.
    let acked: Arc<Mutex<Vec<(i64, String)>>> = Arc::default();
    let refused = Arc::new(Mutex::new(0usize));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut writers = Vec::new();
    for w in 0..4 {
        let (ana, th, acked, refused, stop) = (ana.clone(), th.clone(), acked.clone(), refused.clone(), stop.clone());
        writers.push(tokio::spawn(async move {
            let mut i = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let text = format!("w{w}-{i}");
                match ana.post(&format!("/v1/threads/{th}/messages"), json!({"text": text})).await {
                    Ok((200, body)) => {
                        acked.lock().unwrap().push((body["seq"].as_i64().unwrap(), text));
                        i += 1;
                    }
                    _ => *refused.lock().unwrap() += 1,
                }
            }
        }));
    }
    while acked.lock().unwrap().len() < 200 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    a.kill();
    // The bridge that leads is the one that says it is ready.
    let leader = {
        let http = lattice_e2e::http();
        let mut leader = None;
        for (i, bridge) in bridges.iter().enumerate() {
            if http.get(format!("{}/readyz", bridge.probes())).send().await.is_ok_and(|r| r.status().is_success()) {
                leader = Some(i);
            }
        }
        leader.expect("one bridge leads")
    };
    bridges[leader].kill();
    let at_kill = acked.lock().unwrap().len();
    while acked.lock().unwrap().len() < at_kill + 200 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    stop_runs.store(true, std::sync::atomic::Ordering::Relaxed);
    for w in writers {
        w.await.unwrap();
    }
    runner.await.unwrap();
    let acked = acked.lock().unwrap().clone();

    // Every run finishes, once, whichever replica drove it.
    let runs = runs.lock().unwrap().clone();
    assert!(!runs.is_empty());
    let deadline = Instant::now() + Duration::from_secs(60);
    let finished = loop {
        let events = ana.all_events(&th).await;
        let finished: Vec<String> =
            events.iter().filter(|e| e["type"] == "run_finished").map(|e| e["payload"]["run_id"].as_str().unwrap_or_default().to_owned()).collect();
        if runs.iter().all(|r| finished.contains(r)) || Instant::now() > deadline {
            break finished;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    for run in &runs {
        assert_eq!(finished.iter().filter(|f| *f == run).count(), 1, "run {run} finished {} times", finished.iter().filter(|f| *f == run).count());
    }

    // Every acknowledged message is in the log, once.
    let events = ana.all_events(&th).await;
    let logged: BTreeSet<(i64, String)> = events
        .iter()
        .filter(|e| e["type"] == "message_posted")
        .map(|e| (e["seq"].as_i64().unwrap(), e["payload"]["text"].as_str().unwrap().to_owned()))
        .collect();
    let lost: Vec<_> = acked.iter().filter(|m| !logged.contains(*m)).collect();
    assert!(lost.is_empty(), "{} of {} acknowledged messages are missing: {:?}", lost.len(), acked.len(), &lost[..lost.len().min(5)]);

    // A marker after everything: each stream, and NATS, hands on in log
    // order, so what they hold once the marker is there is all they will
    // hold of what came before it, repeats included.
    let marker = ana.ok("POST", &format!("/v1/threads/{th}/messages"), json!({"text": "marker"})).await["seq"].as_i64().unwrap();

    // Every stream ends with every message, each once, in log order.
    let deadline = Instant::now() + Duration::from_secs(15);
    for (i, seen) in seen.iter().enumerate() {
        loop {
            let got = seen.lock().unwrap().clone();
            if got.iter().any(|(seq, _)| *seq == marker) {
                let got: Vec<(i64, String)> = got.into_iter().filter(|(seq, _)| *seq != marker).collect();
                assert!(got.windows(2).all(|w| w[0].0 < w[1].0), "stream {i} out of order or repeated");
                let got: BTreeSet<(i64, String)> = got.into_iter().collect();
                assert_eq!(got, logged, "stream {i} misses messages");
                break;
            }
            assert!(Instant::now() < deadline, "stream {i} did not hand on the marker in 15 s");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    let resumed: usize = reconnects.iter().map(|r| *r.lock().unwrap()).sum();
    assert!(resumed >= 1, "the stream the dead replica served never had to resume");

    // The standby bridge took the lead: every message is on NATS, once.
    let js = jetstream::new(async_nats::connect(&nats.url).await.unwrap());
    let deadline = Instant::now() + Duration::from_secs(60);
    let on_nats = loop {
        let held = bridged_messages(&js, &ws).await;
        if let Some(at) = held.iter().position(|(_, seq)| *seq == marker) {
            break held[..at].iter().map(|(id, _)| id.clone()).collect::<Vec<_>>();
        }
        assert!(Instant::now() < deadline, "the marker did not reach NATS in 60 s");
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let unique: BTreeSet<&String> = on_nats.iter().collect();
    assert_eq!(
        (on_nats.len(), unique.len()),
        (logged.len(), logged.len()),
        "message_posted on NATS: {} in all, {} distinct, {} in the log",
        on_nats.len(),
        unique.len(),
        logged.len()
    );
    println!(
        "replicas: {} acknowledged ({} before the SIGKILL of a log replica and the leading bridge), {} refused and tried again, {} in the log, {} stream reconnections, all four streams whole; {} runs each finished once; {} messages on NATS, each once",
        acked.len(),
        at_kill,
        refused.lock().unwrap(),
        logged.len(),
        resumed,
        runs.len(),
        on_nats.len()
    );
    drop(b);
}

/// The `Nats-Msg-Id` and log sequence number of every `message_posted` the
/// stream holds for `ws`, in the stream's order.
async fn bridged_messages(js: &jetstream::Context, ws: &str) -> Vec<(String, i64)> {
    let held = lattice_e2e::stream_messages(js, |subject| subject.contains(&format!(".{ws}.")) && subject.ends_with(".message_posted")).await;
    held.into_iter()
        .map(|(_, id, payload)| (id, serde_json::from_slice::<Value>(&payload).ok().and_then(|p| p["seq"].as_i64()).unwrap_or(0)))
        .collect()
}

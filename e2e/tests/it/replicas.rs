//! Two log service replicas on one PostgreSQL database behind one edge
//! (`LATTICE_LOG_URL=a,b`). Under a stream of writes one replica is killed
//! (SIGKILL): every acknowledged message is in the log, writes go on
//! through the other replica, and the live streams that the dead replica
//! served resume on the other from where they were and miss nothing.

use std::collections::BTreeSet;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use lattice_e2e::{Client, LogProcess, binary, free_port};
use serde_json::{Value, json};

struct Edge(std::process::Child);

impl Drop for Edge {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Follows a thread through the edge from `after`, reconnecting (from the
/// last sequence number it saw) whenever the stream ends; collects the
/// messages' texts with their sequence numbers.
fn follow(portal: String, token: String, th: String, seen: Arc<Mutex<Vec<(i64, String)>>>, reconnects: Arc<Mutex<usize>>) {
    tokio::spawn(async move {
        let http = lattice_e2e::http();
        let mut after = 0;
        loop {
            let Ok(r) = http.get(format!("{portal}/v1/threads/{th}/events?after={after}")).bearer_auth(&token).header("accept", "text/event-stream").send().await else {
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            };
            if !r.status().is_success() {
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
            let mut body = r.bytes_stream();
            let mut buffer = String::new();
            while let Some(Ok(chunk)) = body.next().await {
                buffer.push_str(&String::from_utf8_lossy(&chunk));
                while let Some(end) = buffer.find("\n\n") {
                    let event: String = buffer.drain(..end + 2).collect();
                    let Some(data) = event.lines().find_map(|l| l.strip_prefix("data:")) else { continue };
                    let Ok(envelope) = serde_json::from_str::<Value>(data.trim()) else { continue };
                    let Some(seq) = envelope["seq"].as_i64() else { continue };
                    after = after.max(seq);
                    if envelope["type"] == "message_posted" {
                        seen.lock().unwrap().push((seq, envelope["payload"]["text"].as_str().unwrap_or_default().to_owned()));
                    }
                }
            }
            *reconnects.lock().unwrap() += 1;
        }
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_log_replica_loses_nothing_and_its_streams_resume_on_the_other() {
    let url = lattice_testkit::fresh_url(lattice_log::Backend::Postgres).await;
    let env = [("LATTICE_RATE_WRITES_PER_SEC", "0")];
    let mut a = LogProcess::start_with(&url, &env).await;
    let b = LogProcess::start_with(&url, &env).await;
    let (port, apps_port) = (free_port(), free_port());
    let portal = format!("http://127.0.0.1:{port}");
    let _edge = Edge(
        Command::new(binary())
            .args(["serve", "edge"])
            .env("LATTICE_PROFILE", "production")
            .env_remove("LATTICE_AUTH_SECRET")
            .env_remove("LATTICE_DATABASE_URL")
            .env("LATTICE_LOG_URL", format!("{},{}", a.base, b.base))
            .env("LATTICE_HTTP_ADDR", format!("127.0.0.1:{port}"))
            .env("LATTICE_APPS_ADDR", format!("127.0.0.1:{apps_port}"))
            .env("LATTICE_APPS_ORIGIN", format!("http://localhost:{apps_port}"))
            .env("LATTICE_PORTAL_ORIGIN", &portal)
            .env("LATTICE_LOG", "error")
            .stdout(Stdio::null())
            .spawn()
            .expect("starting lattice serve edge"),
    );
    lattice_e2e::wait_ready(&portal).await;
    let ana = Client::sign_in(&portal, "acme", "ana").await;
    let ws = ana.ok("POST", "/v1/workspaces", json!({"name": "Replicas"})).await["id"].as_str().unwrap().to_owned();
    let th = ana.ok("POST", &format!("/v1/workspaces/{ws}/threads"), json!({"title": "t"})).await["id"].as_str().unwrap().to_owned();

    // Four streams: the edge gives the replicas two each, in turn.
    let (seen, reconnects): (Vec<_>, Vec<_>) = (0..4).map(|_| (Arc::new(Mutex::new(Vec::new())), Arc::new(Mutex::new(0)))).unzip();
    for (seen, reconnects) in seen.iter().zip(&reconnects) {
        follow(portal.clone(), ana.token.clone(), th.clone(), seen.clone(), reconnects.clone());
    }

    // Four writers; a refusal (the dead replica's 502) is tried again.
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
    let at_kill = acked.lock().unwrap().len();
    while acked.lock().unwrap().len() < at_kill + 200 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for w in writers {
        w.await.unwrap();
    }
    let acked = acked.lock().unwrap().clone();

    // Every acknowledged message is in the log, once.
    let events = ana.all_events(&th).await;
    let logged: BTreeSet<(i64, String)> = events
        .iter()
        .filter(|e| e["type"] == "message_posted")
        .map(|e| (e["seq"].as_i64().unwrap(), e["payload"]["text"].as_str().unwrap().to_owned()))
        .collect();
    let lost: Vec<_> = acked.iter().filter(|m| !logged.contains(*m)).collect();
    assert!(lost.is_empty(), "{} of {} acknowledged messages are missing: {:?}", lost.len(), acked.len(), &lost[..lost.len().min(5)]);

    // Every stream ends with every message, each once, in log order.
    let deadline = Instant::now() + Duration::from_secs(15);
    for (i, seen) in seen.iter().enumerate() {
        loop {
            let got = seen.lock().unwrap().clone();
            if got.len() >= logged.len() || Instant::now() > deadline {
                assert!(got.windows(2).all(|w| w[0].0 < w[1].0), "stream {i} out of order or repeated");
                let got: BTreeSet<(i64, String)> = got.into_iter().collect();
                assert_eq!(got, logged, "stream {i} misses messages");
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    let resumed: usize = reconnects.iter().map(|r| *r.lock().unwrap()).sum();
    assert!(resumed >= 1, "the stream the dead replica served never had to resume");
    println!(
        "replicas: {} acknowledged ({} before the SIGKILL), {} refused and tried again, {} in the log, {} stream reconnections, all four streams whole",
        acked.len(),
        at_kill,
        refused.lock().unwrap(),
        logged.len(),
        resumed
    );
    drop(b);
}

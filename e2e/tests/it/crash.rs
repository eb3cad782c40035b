//! Crash safety (O5, L2): kill -9 in the middle of a burst of commands; after
//! a restart every acknowledged command is in the log, in order, and no
//! envelope is partial.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use lattice_e2e::{Client, LogProcess};
use serde_json::json;

lattice_testkit::both_backends! {
    async fn acknowledged_commands_survive_sigkill(backend: Backend) {
        let url = lattice_testkit::fresh_url(backend).await;
        // The burst writes as fast as it can: the rate limit is raised.
        let mut process = LogProcess::start_with(&url, &[("LATTICE_RATE_WRITES_PER_SEC", "0")]).await;
        let alice = Client::sign_in(&process.base, "t1", "alice").await;
        let (_, ws) = alice.post("/v1/workspaces", json!({"name": "crash"})).await.unwrap();
        let ws = ws["id"].as_str().unwrap().to_owned();
        let (_, th) = alice.post(&format!("/v1/workspaces/{ws}/threads"), json!({"title": "burst"})).await.unwrap();
        let th = th["id"].as_str().unwrap().to_owned();

        let acked: Arc<Mutex<Vec<(i64, String)>>> = Arc::default();
        let mut writers = Vec::new();
        for w in 0..8 {
            let (client, th, acked) = (alice.clone(), th.clone(), acked.clone());
            writers.push(tokio::spawn(async move {
                for i in 0.. {
                    let text = format!("w{w}-{i}");
                    match client.post(&format!("/v1/threads/{th}/messages"), json!({"text": text})).await {
                        Ok((200, body)) => acked.lock().unwrap().push((body["seq"].as_i64().unwrap(), text)),
                        Ok((status, body)) => panic!("a refused message: {status} {body}"),
                        Err(_) => return, // the process is gone
                    }
                }
            }));
        }
        // Kill once the burst is well under way.
        while acked.lock().unwrap().len() < 200 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        process.kill();
        for w in writers {
            w.await.unwrap();
        }
        let acked = acked.lock().unwrap().clone();

        let process = process.restart().await;
        let alice = Client { base: process.base.clone(), ..alice };
        let events = alice.all_events(&th).await;
        let seqs: Vec<i64> = events.iter().map(|e| e["seq"].as_i64().unwrap()).collect();
        assert!(seqs.windows(2).all(|w| w[0] < w[1]), "the log is out of order");
        let logged: std::collections::HashMap<i64, &str> = events
            .iter()
            .filter(|e| e["type"] == "message_posted")
            .map(|e| (e["seq"].as_i64().unwrap(), e["payload"]["text"].as_str().expect("a whole payload")))
            .collect();
        for e in &events {
            assert!(e["id"].as_str().is_some_and(|id| id.len() == 26), "partial envelope {e}");
            assert!(e["actor"]["user"] == "alice" && e["at"].as_str().is_some(), "partial envelope {e}");
        }
        let lost: Vec<&(i64, String)> = acked.iter().filter(|(seq, text)| logged.get(seq) != Some(&text.as_str())).collect();
        assert!(lost.is_empty(), "{} of {} acknowledged commands are missing: {:?}", lost.len(), acked.len(), &lost[..lost.len().min(5)]);
        eprintln!("{backend:?}: {} acknowledged before SIGKILL, {} messages in the log after restart", acked.len(), logged.len());
    }
}

lattice_testkit::both_backends! {
    async fn sigterm_finishes_in_flight_requests_and_exits_cleanly(backend: Backend) {
        let url = lattice_testkit::fresh_url(backend).await;
        let mut process = LogProcess::start(&url).await;
        let alice = Client::sign_in(&process.base, "t1", "alice").await;
        let (status, _) = alice.post("/v1/workspaces", json!({"name": "w"})).await.unwrap();
        assert_eq!(status, 200);
        // An open live stream must not hold the shutdown up.
        let (_, ws) = alice.get("/v1/workspaces").await.unwrap();
        let ws = ws[0]["id"].as_str().unwrap().to_owned();
        let stream = alice.http.get(format!("{}/v1/workspaces/{ws}/events", alice.base)).bearer_auth(&alice.token).send().await.unwrap();
        assert_eq!(stream.status(), 200);
        let started = std::time::Instant::now();
        assert_eq!(process.terminate(), Some(0));
        assert!(started.elapsed() < Duration::from_secs(10), "shutdown waited {:?}", started.elapsed());
        drop(stream);
    }
}

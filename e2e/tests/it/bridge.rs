//! REQUIREMENTS.md B1 against the real processes: 1,000 submissions while the bridge
//! is killed (SIGKILL) and restarted twice and NATS restarted once: exactly
//! 1,000 `ui.form_submitted` in the stream, each id once, in log order.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use async_nats::jetstream;
use lattice_e2e::{BridgeProcess, Client, LogProcess};
use lattice_testkit::nats::NatsServer;
use lattice_ui::form::Submissions;
use lattice_ui::submission::submission_id;
use serde_json::{Value, json};

const SUBMISSIONS: usize = 1000;
/// The suite writes as fast as it can: it raises the limit explicitly.
const NO_RATE_LIMIT: (&str, &str) = ("LATTICE_RATE_WRITES_PER_SEC", "0");

/// The stream's `ui.form_submitted` messages once a marker posted after
/// them to `th` is on NATS (90 s at most): the bridge publishes in log
/// order, so every submission, and any repeat of one, is there by then.
async fn all_form_submitted(url: &str, who: &Client, th: &str) -> Vec<(String, Value)> {
    who.ok("POST", &format!("/v1/threads/{th}/messages"), json!({"text": "marker"})).await;
    let js = jetstream::new(async_nats::connect(url).await.unwrap());
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let held = lattice_e2e::stream_messages(&js, |subject| subject.ends_with(".log.message_posted")).await;
        if held.iter().any(|(_, _, payload)| serde_json::from_slice::<Value>(payload).is_ok_and(|p| p["payload"]["text"] == "marker")) {
            return form_submitted(&js).await;
        }
        assert!(Instant::now() < deadline, "the marker did not reach NATS in 90 s");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

async fn form_submitted(js: &jetstream::Context) -> Vec<(String, Value)> {
    let held = lattice_e2e::stream_messages(js, |subject| subject.ends_with(".ui.form_submitted")).await;
    held.into_iter().map(|(_, id, payload)| (id, serde_json::from_slice(&payload).unwrap())).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_submissions_through_bridge_and_nats_restarts_arrive_exactly_once_in_order() {
    let url = lattice_testkit::fresh_url(lattice_log::Backend::Postgres).await;
    let mut nats = NatsServer::start();
    let log = LogProcess::start_with(&url, &[NO_RATE_LIMIT]).await;
    let mut bridge = BridgeProcess::start(&url, &nats.url);
    let alice = Client::sign_in(&log.base, "t1", "alice").await;
    let (_, ws) = alice.post("/v1/workspaces", json!({"name": "bridge"})).await.unwrap();
    let ws = ws["id"].as_str().unwrap().to_owned();
    let (_, th) = alice.post(&format!("/v1/workspaces/{ws}/threads"), json!({"title": "poll"})).await.unwrap();
    let th = th["id"].as_str().unwrap().to_owned();
    let form = json!({"title": "Poll", "submissions": "many",
        "schema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}});
    let (status, created) = alice.post(&format!("/v1/threads/{th}/artifacts"), json!({"kind": "form", "data": form})).await.unwrap();
    assert_eq!(status, 200, "{created}");
    let form_id = created["id"].as_str().unwrap().to_owned();

    let acked = Arc::new(AtomicUsize::new(0));
    let mut writers = Vec::new();
    for w in 0..8 {
        let (client, th, form_id, acked) = (alice.clone(), th.clone(), form_id.clone(), acked.clone());
        writers.push(tokio::spawn(async move {
            for i in (w..SUBMISSIONS).step_by(8) {
                let nonce = format!("nonce-{i:06}");
                let id = submission_id(&form_id, Submissions::Many, "alice", Some(&nonce));
                let body = json!({"id": id, "kind": "submission",
                    "data": {"form_id": form_id, "form_version": 1, "values": {"n": i}, "nonce": nonce}});
                let (status, reply) = client.post(&format!("/v1/threads/{th}/artifacts"), body).await.unwrap();
                assert_eq!(status, 200, "{reply}");
                acked.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    let wait_acked = |n: usize| {
        let acked = acked.clone();
        async move {
            while acked.load(Ordering::Relaxed) < n {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
    };
    wait_acked(250).await;
    bridge.kill_and_restart();
    wait_acked(500).await;
    nats.restart();
    wait_acked(700).await;
    bridge.kill_and_restart();
    for w in writers {
        w.await.unwrap();
    }

    let messages = all_form_submitted(&nats.url, &alice, &th).await;
    assert_eq!(messages.len(), SUBMISSIONS, "exactly one ui.form_submitted per submission");
    let mut ids: Vec<&String> = messages.iter().map(|(id, _)| id).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), SUBMISSIONS, "an envelope id appears twice");
    let seqs: Vec<i64> = messages.iter().map(|(_, p)| p["seq"].as_i64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "out of log order");
    let mut values: Vec<i64> = messages.iter().map(|(_, p)| p["values"]["n"].as_i64().unwrap()).collect();
    values.sort();
    assert_eq!(values, (0..SUBMISSIONS as i64).collect::<Vec<_>>());
    drop(bridge);
}

/// PostgreSQL's postmaster is killed (SIGKILL) and started again in the
/// middle of 1,000 submissions. A submission refused while it is down is
/// sent again until the log has it; every submission the log holds reaches
/// NATS exactly once, and the bridge says in `/readyz` that it stopped
/// publishing, then that it goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_restart_in_the_middle_of_a_burst_loses_nothing() {
    let pg = lattice_e2e::postgres::OwnPostgres::start();
    let url = pg.database("burst").await;
    let nats = NatsServer::start();
    let log = LogProcess::start_with(&url, &[NO_RATE_LIMIT]).await;
    let bridge = BridgeProcess::start(&url, &nats.url);
    let alice = Client::sign_in(&log.base, "t1", "alice").await;
    let ws = alice.ok("POST", "/v1/workspaces", json!({"name": "burst"})).await["id"].as_str().unwrap().to_owned();
    let th = alice.ok("POST", &format!("/v1/workspaces/{ws}/threads"), json!({"title": "poll"})).await["id"].as_str().unwrap().to_owned();
    let form = json!({"title": "Poll", "submissions": "many",
        "schema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}});
    let form_id =
        alice.ok("POST", &format!("/v1/threads/{th}/artifacts"), json!({"kind": "form", "data": form})).await["id"].as_str().unwrap().to_owned();
    let bridge_ready = format!("{}/readyz", bridge.probes());
    lattice_e2e::wait_ready(&bridge.probes()).await;

    let acked = Arc::new(AtomicUsize::new(0));
    let refused = Arc::new(AtomicUsize::new(0));
    let mut writers = Vec::new();
    for w in 0..8 {
        let (client, th, form_id, acked, refused) = (alice.clone(), th.clone(), form_id.clone(), acked.clone(), refused.clone());
        writers.push(tokio::spawn(async move {
            for i in (w..SUBMISSIONS).step_by(8) {
                let nonce = format!("nonce-{i:06}");
                let id = submission_id(&form_id, Submissions::Many, "alice", Some(&nonce));
                let body = json!({"id": id, "kind": "submission",
                    "data": {"form_id": form_id, "form_version": 1, "values": {"n": i}, "nonce": nonce}});
                // Sent until the log has it: 200, or 409 when an earlier try
                // committed though its answer was lost.
                loop {
                    match client.post(&format!("/v1/threads/{th}/artifacts"), body.clone()).await {
                        Ok((200, _)) | Ok((409, _)) => break,
                        Ok((status, reply)) => {
                            assert!(status == 503, "only the database's absence may refuse a submission: {status} {reply}");
                            refused.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(_) => {
                            refused.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    // A client's retry pace while the database is away.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                acked.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    while acked.load(Ordering::Relaxed) < 300 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    pg.kill_postmaster();
    let down_at = Instant::now();
    let http = lattice_e2e::http();
    let mut said_not_ready = false;
    while down_at.elapsed() < Duration::from_secs(3) {
        let status = http.get(&bridge_ready).send().await.map(|r| r.status().as_u16()).unwrap_or(0);
        said_not_ready |= status == 503;
        // Watched over the outage's 3 s window: what the bridge says during it is the claim.
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    pg.restart();
    for w in writers {
        w.await.unwrap();
    }
    assert!(said_not_ready, "the bridge's /readyz says it is not publishing while the database is down");
    assert!(refused.load(Ordering::Relaxed) > 0, "the outage refused something");

    let messages = all_form_submitted(&nats.url, &alice, &th).await;
    assert_eq!(messages.len(), SUBMISSIONS, "exactly one ui.form_submitted per submission");
    let mut values: Vec<i64> = messages.iter().map(|(_, p)| p["values"]["n"].as_i64().unwrap()).collect();
    values.sort();
    assert_eq!(values, (0..SUBMISSIONS as i64).collect::<Vec<_>>());
    let seqs: Vec<i64> = messages.iter().map(|(_, p)| p["seq"].as_i64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "out of log order");
    assert_eq!(http.get(&bridge_ready).send().await.unwrap().status().as_u16(), 200, "publishing again");
    println!("postgres restart mid-burst: {} tries refused while it was down; {SUBMISSIONS} on NATS, each once", refused.load(Ordering::Relaxed));
}

//! The tamper-evident log (docs/SEAL.md), as an operator uses it, on both
//! backends: `lattice serve log` seals what people and agents do,
//! `lattice export` writes a workspace's log, and `lattice verify`, given
//! only the public key `lattice seal-key` prints, says "intact", then
//! catches each attack on the stored log and names it: a byte of a
//! payload altered, a run's answer rewritten, two envelopes swapped, a
//! checkpoint's signature replaced, an envelope deleted. A file's erasure
//! leaves it intact.

use std::process::Command;
use std::time::Duration;

use lattice_e2e::{Client, LogProcess, SECRET, binary};
use lattice_log::Backend;
use serde_json::{Value, json};
use sqlx::Row;

/// `lattice` run with the deployment's configuration.
fn lattice(url: &str, args: &[&str]) -> std::process::Output {
    Command::new(binary())
        .args(args)
        .env("LATTICE_PROFILE", "local")
        .env("LATTICE_DATABASE_URL", url)
        .env("LATTICE_AUTH_SECRET", SECRET)
        .env("LATTICE_LOG", "warn")
        .output()
        .unwrap()
}

/// `lattice export` then `lattice verify --key`: whether intact, and what it said.
fn export_and_verify(url: &str, tenant: &str, ws: &str, key: &str) -> (bool, String) {
    export_and_verify_receipt(url, tenant, ws, key, None)
}

/// The same, with a receipt to check against the export.
fn export_and_verify_receipt(url: &str, tenant: &str, ws: &str, key: &str, receipt: Option<&std::path::Path>) -> (bool, String) {
    let file = std::env::temp_dir().join(format!("lattice-export-{}.jsonl", lattice_e2e::free_port()));
    let exported = lattice(url, &["export", "--tenant", tenant, "--workspace", ws, "--out", file.to_str().unwrap()]);
    assert!(exported.status.success(), "{}", String::from_utf8_lossy(&exported.stderr));
    // Verifying needs no deployment: no database, no secret.
    let mut verify = Command::new(binary());
    verify.args(["verify", file.to_str().unwrap(), "--key", key]).env_clear();
    if let Some(receipt) = receipt {
        verify.arg("--receipt").arg(receipt);
    }
    let verified = verify.output().unwrap();
    let said = String::from_utf8_lossy(&verified.stdout).into_owned();
    let _ = std::fs::remove_file(&file);
    (verified.status.success(), said)
}

async fn seq_of_type(pool: &sqlx::AnyPool, ws: &str, kind: &str) -> i64 {
    sqlx::query("SELECT seq FROM envelopes WHERE workspace = $1 AND type = $2 ORDER BY seq LIMIT 1")
        .bind(ws.to_owned())
        .bind(kind.to_owned())
        .fetch_one(pool)
        .await
        .unwrap()
        .try_get::<i64, _>(0)
        .unwrap()
}

async fn attacks_are_caught_on(backend: Backend) {
    let url = lattice_testkit::fresh_url(backend).await;
    let log = LogProcess::start_with(&url, &[("LATTICE_RATE_WRITES_PER_SEC", "0")]).await;
    let ana = Client::sign_in(&log.base, "acme", "ana").await;
    let ws = ana.ok("POST", "/v1/workspaces", json!({"name": "Sealed"})).await["id"].as_str().unwrap().to_owned();
    let th = ana.ok("POST", &format!("/v1/workspaces/{ws}/threads"), json!({"title": "Approvals"})).await["id"].as_str().unwrap().to_owned();
    for n in 0..5 {
        ana.ok("POST", &format!("/v1/threads/{th}/messages"), json!({"text": format!("message number {n}")})).await;
    }
    // A run's answer: the scripted agent asks a form, ana answers it.
    let run = ana.ok("POST", &format!("/v1/threads/{th}/runs"), json!({"prompt": "Report", "model": "scripted:ask_form"})).await["run_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut call = None;
    for _ in 0..100 {
        let view = ana.ok("GET", &format!("/v1/runs/{run}"), Value::Null).await;
        if let Some(id) = view["requests"][0]["tool_call_id"].as_str() {
            call = Some(id.to_owned());
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let answer = json!({"date": "2026-12-05", "severity": "low", "affected": ["API"], "note": "approved by ana"});
    ana.ok("POST", &format!("/v1/runs/{run}/answers"), json!({"tool_call_id": call.expect("the run asks"), "answer": answer})).await;
    // A file, erased: the log stays whole.
    let file: Value = ana
        .http
        .post(format!("{}/v1/threads/{th}/files?name=note.txt", log.base))
        .bearer_auth(&ana.token)
        .body("a note")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    ana.ok("POST", &format!("/v1/files/{}/erase", file["id"].as_str().unwrap()), json!({"reason": "asked"})).await;

    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(&url).await.unwrap();
    // Sealed behind the commits: every envelope, soon.
    let count = |sql: &'static str| {
        let pool = pool.clone();
        async move { sqlx::query(sql).fetch_one(&pool).await.unwrap().try_get::<i64, _>(0).unwrap() }
    };
    for _ in 0..100 {
        if count("SELECT COUNT(*) FROM seals").await >= count("SELECT COUNT(*) FROM envelopes").await {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let printed = lattice(&url, &["seal-key"]);
    let key = String::from_utf8_lossy(&printed.stdout).split_whitespace().next().unwrap().to_owned();
    // The API gives the same key, and the workspace's checkpoints.
    let served = ana.ok("GET", "/v1/seal/key", Value::Null).await;
    assert_eq!(served["public_key"], key.as_str());
    let listed = ana.ok("GET", &format!("/v1/workspaces/{ws}/checkpoints"), Value::Null).await;
    let listed = listed.as_array().unwrap();
    assert!(!listed.is_empty() && listed.iter().all(|c| c["key_id"] == served["key_id"]), "{listed:?}");
    let (intact, said) = export_and_verify(&url, "acme", &ws, &key);
    assert!(intact && said.starts_with("intact:"), "{said}");
    println!("lattice verify on an intact log ({backend:?}): {said}");
    // The receipt of ana's answer, handed to her: it holds against the
    // export with nothing but the public key.
    let answered = seq_of_type(&pool, &ws, "deferred_answered").await;
    let receipt = ana.ok("GET", &format!("/v1/receipts/{answered}"), Value::Null).await;
    assert_eq!(receipt["envelope"]["payload"]["answer"]["note"], "approved by ana", "{receipt}");
    let receipt_file = std::env::temp_dir().join(format!("lattice-receipt-{}.json", lattice_e2e::free_port()));
    std::fs::write(&receipt_file, receipt.to_string()).unwrap();
    let (holds, said) = export_and_verify_receipt(&url, "acme", &ws, &key, Some(&receipt_file));
    assert!(holds && said.contains("the receipt holds: envelope"), "{said}");
    println!("lattice verify --receipt: {said}");
    // Someone of another tenant gets no receipt of it.
    let eve = Client::sign_in(&log.base, "globex", "eve").await;
    let refused = eve.http.get(format!("{}/v1/receipts/{answered}", log.base)).bearer_auth(&eve.token).send().await.unwrap();
    assert_eq!(refused.status(), 404);
    // Another key is not trusted.
    let (intact, said) = export_and_verify(&url, "acme", &ws, &"11".repeat(32));
    assert!(!intact && said.contains("not signed by a trusted key"), "{said}");

    let seq_of = |kind: &'static str, nth: i64| {
        let (pool, ws) = (pool.clone(), ws.clone());
        async move {
            sqlx::query("SELECT seq FROM envelopes WHERE workspace = $1 AND type = $2 ORDER BY seq LIMIT 1 OFFSET $3")
                .bind(ws)
                .bind(kind)
                .bind(nth)
                .fetch_one(&pool)
                .await
                .unwrap()
                .try_get::<i64, _>(0)
                .unwrap()
        }
    };
    let exec = |sql: String| {
        let pool = pool.clone();
        async move { sqlx::query(sqlx::AssertSqlSafe(sql)).execute(&pool).await.unwrap() }
    };
    let verify_says = |expected: String| {
        let (url, ws, key) = (url.clone(), ws.clone(), key.clone());
        move || {
            let (intact, said) = export_and_verify(&url, "acme", &ws, &key);
            assert!(!intact && said.contains(&expected), "expected {expected:?}: {said}");
            println!("lattice verify: {said}");
        }
    };

    // One byte of a payload.
    let third = seq_of("message_posted", 2).await;
    exec(format!("UPDATE envelopes SET payload = REPLACE(payload, 'number 2', 'number 3') WHERE seq = {third}")).await;
    verify_says(format!("envelope {third} ("))();
    verify_says("was altered".into())();
    exec(format!("UPDATE envelopes SET payload = REPLACE(payload, 'number 3', 'number 2') WHERE seq = {third}")).await;
    assert!(export_and_verify(&url, "acme", &ws, &key).0, "put back, it verifies again");

    // A run's answer rewritten: the log says so, and the receipt proves nothing.
    exec(format!("UPDATE envelopes SET payload = REPLACE(payload, 'approved by ana', 'approved by bob') WHERE seq = {answered}")).await;
    verify_says(format!("envelope {answered} ("))();
    let (holds, said) = export_and_verify_receipt(&url, "acme", &ws, &key, Some(&receipt_file));
    assert!(!holds && said.contains("the receipt does not hold"), "{said}");
    exec(format!("UPDATE envelopes SET payload = REPLACE(payload, 'approved by bob', 'approved by ana') WHERE seq = {answered}")).await;

    // Two envelopes swapped: each one's content in the other's place.
    let (a, b) = (seq_of("message_posted", 0).await, seq_of("message_posted", 1).await);
    let swap = |a: i64, b: i64| {
        let pool = pool.clone();
        async move {
            let row = |seq: i64| {
                let pool = pool.clone();
                async move {
                    let r = sqlx::query("SELECT id, payload FROM envelopes WHERE seq = $1").bind(seq).fetch_one(&pool).await.unwrap();
                    (r.try_get::<String, _>(0).unwrap(), r.try_get::<String, _>(1).unwrap())
                }
            };
            let ((id_a, payload_a), (id_b, payload_b)) = (row(a).await, row(b).await);
            let set = |seq: i64, id: String, payload: String| {
                let pool = pool.clone();
                async move {
                    sqlx::query("UPDATE envelopes SET id = $1, payload = $2 WHERE seq = $3")
                        .bind(id)
                        .bind(payload)
                        .bind(seq)
                        .execute(&pool)
                        .await
                        .unwrap();
                }
            };
            set(a, format!("{id_a}-moving"), payload_a.clone()).await;
            set(b, id_a, payload_a).await;
            set(a, id_b, payload_b).await;
        }
    };
    swap(a, b).await;
    verify_says("was reordered".into())();
    swap(a, b).await;
    assert!(export_and_verify(&url, "acme", &ws, &key).0, "swapped back, it verifies again");

    // A checkpoint's signature replaced.
    let signature: String = sqlx::query("SELECT signature FROM seal_checkpoints WHERE workspace = $1 ORDER BY n LIMIT 1")
        .bind(&ws)
        .fetch_one(&pool)
        .await
        .unwrap()
        .try_get(0)
        .unwrap();
    let forged: String = signature.chars().rev().collect();
    exec(format!("UPDATE seal_checkpoints SET signature = '{forged}' WHERE signature = '{signature}'")).await;
    verify_says("is not signed by a trusted key".into())();
    exec(format!("UPDATE seal_checkpoints SET signature = '{signature}' WHERE signature = '{forged}'")).await;

    // An envelope deleted.
    let gone = seq_of("message_posted", 3).await;
    exec(format!("DELETE FROM envelopes WHERE seq = {gone}")).await;
    verify_says("an envelope was removed".into())();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lattice_verify_catches_every_attack_on_sqlite() {
    attacks_are_caught_on(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lattice_verify_catches_every_attack_on_postgres() {
    attacks_are_caught_on(Backend::Postgres).await;
}

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

/// `lattice export --workspace WS` (its log on standard output, as
/// CONTRACT has it) then `lattice verify --key`: whether intact, and what it said.
fn export_and_verify(url: &str, ws: &str, keys: &[&str]) -> (bool, String) {
    export_and_verify_receipt(url, ws, keys, None)
}

/// The same, with a receipt to check against the export.
fn export_and_verify_receipt(url: &str, ws: &str, keys: &[&str], receipt: Option<&std::path::Path>) -> (bool, String) {
    let file = std::env::temp_dir().join(format!("lattice-export-{}.jsonl", lattice_e2e::free_port()));
    let exported = lattice(url, &["export", "--workspace", ws]);
    assert!(exported.status.success(), "{}", String::from_utf8_lossy(&exported.stderr));
    std::fs::write(&file, &exported.stdout).unwrap();
    // Verifying needs no deployment: no database, no secret.
    let mut verify = Command::new(binary());
    verify.args(["verify", file.to_str().unwrap()]).env_clear();
    for key in keys {
        verify.args(["--key", key]);
    }
    if let Some(receipt) = receipt {
        verify.arg("--receipt").arg(receipt);
    }
    let verified = verify.output().unwrap();
    let said = String::from_utf8_lossy(&verified.stdout).into_owned();
    let _ = std::fs::remove_file(&file);
    (verified.status.success(), said)
}

/// A receipt as a file, as a person is handed it.
fn receipt_file(receipt: &Value) -> std::path::PathBuf {
    let file = std::env::temp_dir().join(format!("lattice-receipt-{}.json", lattice_e2e::free_port()));
    std::fs::write(&file, receipt.to_string()).unwrap();
    file
}

/// Waits until every envelope of the database is sealed.
async fn all_sealed(pool: &sqlx::AnyPool) {
    let count = |sql: &'static str| async move { sqlx::query(sql).fetch_one(pool).await.unwrap().try_get::<i64, _>(0).unwrap() };
    for _ in 0..100 {
        if count("SELECT COUNT(*) FROM seals").await >= count("SELECT COUNT(*) FROM envelopes").await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the log was not sealed within 10 s");
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
    let answered = ana.ok("POST", &format!("/v1/runs/{run}/answers"), json!({"tool_call_id": call.expect("the run asks"), "answer": answer})).await;
    // The answer names its envelope: what its receipt is asked by.
    let answered = answered["seq"].as_i64().expect("the answer's seq");
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
    all_sealed(&pool).await;
    let printed = lattice(&url, &["seal-key"]);
    let key = String::from_utf8_lossy(&printed.stdout).split_whitespace().next().unwrap().to_owned();
    // The API gives the same key, and the workspace's checkpoints.
    let served = ana.ok("GET", "/v1/checkpoint-key", Value::Null).await;
    assert_eq!(served["public_key"], key.as_str());
    let listed = ana.ok("GET", &format!("/v1/workspaces/{ws}/checkpoints"), Value::Null).await;
    let listed = listed.as_array().unwrap();
    assert!(!listed.is_empty() && listed.iter().all(|c| c["key_id"] == served["key_id"]), "{listed:?}");
    let latest = ana.ok("GET", &format!("/v1/workspaces/{ws}/checkpoints/latest"), Value::Null).await;
    assert_eq!(&latest, listed.last().unwrap(), "the newest is the last listed");
    let (intact, said) = export_and_verify(&url, &ws, &[&key]);
    assert!(intact && said.starts_with("intact:"), "{said}");
    println!("lattice verify on an intact log ({backend:?}): {said}");
    // The receipt of ana's answer, handed to her: it holds against the
    // export with nothing but the public key.
    let receipt = ana.ok("GET", &format!("/v1/receipts/{answered}"), Value::Null).await;
    assert_eq!(receipt["envelope"]["payload"]["answer"]["note"], "approved by ana", "{receipt}");
    assert_eq!(receipt["envelope"]["type"], "deferred_answered");
    let receipt_file = receipt_file(&receipt);
    let (holds, said) = export_and_verify_receipt(&url, &ws, &[&key], Some(&receipt_file));
    assert!(holds && said.contains("the receipt holds: envelope"), "{said}");
    println!("lattice verify --receipt: {said}");
    // Someone of another tenant gets no receipt of it.
    let eve = Client::sign_in(&log.base, "globex", "eve").await;
    let refused = eve.http.get(format!("{}/v1/receipts/{answered}", log.base)).bearer_auth(&eve.token).send().await.unwrap();
    assert_eq!(refused.status(), 404);
    // Another key is not trusted.
    let (intact, said) = export_and_verify(&url, &ws, &[&"11".repeat(32)]);
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
            let (intact, said) = export_and_verify(&url, &ws, &[&key]);
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
    assert!(export_and_verify(&url, &ws, &[&key]).0, "put back, it verifies again");

    // A run's answer rewritten: the log says so, and the receipt proves nothing.
    exec(format!("UPDATE envelopes SET payload = REPLACE(payload, 'approved by ana', 'approved by bob') WHERE seq = {answered}")).await;
    verify_says(format!("envelope {answered} ("))();
    let (holds, said) = export_and_verify_receipt(&url, &ws, &[&key], Some(&receipt_file));
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
    assert!(export_and_verify(&url, &ws, &[&key]).0, "swapped back, it verifies again");

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

/// A receipt handed over by the surfaces an agent's client speaks: AG-UI's
/// resumed run opens with the answer's receipt (`CUSTOM`
/// `lattice.receipt`), and an MCP client's elicited answer carries its
/// own; each holds against an export with nothing but the public key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn receipts_reach_ag_ui_and_mcp_clients_and_verify_offline() {
    let up = lattice_e2e::UpProcess::start().await;
    let url = up.database_url();
    let alice = Client::sign_in(&up.base, "acme", "alice").await;
    let ws = alice.ok("POST", "/v1/workspaces", json!({"name": "Receipts"})).await["id"].as_str().unwrap().to_owned();
    let th = alice.ok("POST", &format!("/v1/workspaces/{ws}/threads"), json!({"title": "Approvals"})).await["id"].as_str().unwrap().to_owned();
    let key = alice.ok("GET", "/v1/checkpoint-key", Value::Null).await["public_key"].as_str().unwrap().to_owned();

    // AG-UI: the resumed run's first event after RUN_STARTED.
    let session = crate::agui::session(&up.base, &alice.token, &th, None);
    assert_eq!(session["invalid"], json!([]), "every event passes @ag-ui/core's schemas");
    let resumed = &session["runs"][2];
    let custom = resumed.as_array().unwrap().iter().find(|e| e["type"] == "CUSTOM").unwrap_or_else(|| panic!("{resumed}"));
    assert_eq!(custom["name"], "lattice.receipt");
    assert_eq!(custom["value"]["interruptId"], session["interrupt"]["id"]);
    let proof = &custom["value"]["proof"];
    assert_eq!(proof["envelope"]["seq"], custom["value"]["seq"], "{custom}");
    assert_eq!(proof["envelope"]["type"], "deferred_answered");
    assert_eq!(proof["envelope"]["payload"]["answer"]["severity"], "high", "the answer that resumed the run");
    let ag_ui = receipt_file(proof);
    let (holds, said) = export_and_verify_receipt(&url, &ws, &[&key], Some(&ag_ui));
    assert!(holds && said.contains("the receipt holds: envelope") && said.contains("deferred_answered"), "{said}");
    println!("an AG-UI answer's receipt: {said}");

    // MCP: a form asked and answered in the client, in one call.
    let schema = json!({"type": "object", "required": ["days"], "properties": {"days": {"title": "Days", "type": "integer", "minimum": 1}}});
    let plan = json!({"elicit": "accept", "content": {"days": 3}, "steps": [
        {"call": lattice_ui::asks::ASK_FORM, "arguments": {"title": "How many days?", "schema": schema, "thread": th}},
    ]});
    let s = crate::mcp::steps(&up.base, &alice.token, plan).await;
    let answered = &s["steps"][0]["structuredContent"];
    assert_eq!(answered["status"], "answered", "{s}");
    let submission = &answered["submission"];
    assert_eq!(submission["proof"]["envelope"]["seq"], submission["seq"], "{submission}");
    assert_eq!(submission["proof"]["envelope"]["payload"]["data"]["values"], json!({"days": 3}), "{submission}");
    let mcp = receipt_file(&submission["proof"]);
    let (holds, said) = export_and_verify_receipt(&url, &ws, &[&key], Some(&mcp));
    assert!(holds && said.contains("the receipt holds: envelope"), "{said}");
    println!("an MCP answer's receipt: {said}");

    // A receipt of another workspace's export holds nothing.
    let other = alice.ok("POST", "/v1/workspaces", json!({"name": "Elsewhere"})).await["id"].as_str().unwrap().to_owned();
    let (holds, said) = export_and_verify_receipt(&url, &other, &[&key], Some(&mcp));
    assert!(!holds && said.contains("the receipt does not hold"), "{said}");
    for file in [ag_ui, mcp] {
        let _ = std::fs::remove_file(file);
    }
}

/// Rotation: a deployment restarted on a new secret signs with a new key;
/// the chain goes on, the export verifies with both keys, a verifier who
/// trusts only the new one is told which checkpoints it cannot trust, and
/// a receipt given before the rotation still holds with the old key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_secret_signs_with_a_new_key_and_old_receipts_still_hold() {
    let url = lattice_testkit::fresh_url(Backend::Sqlite).await;
    let log = LogProcess::start(&url).await;
    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(&url).await.unwrap();
    let ana = Client::sign_in(&log.base, "acme", "ana").await;
    let ws = ana.ok("POST", "/v1/workspaces", json!({"name": "Rotated"})).await["id"].as_str().unwrap().to_owned();
    let th = ana.ok("POST", &format!("/v1/workspaces/{ws}/threads"), json!({"title": "Before"})).await["id"].as_str().unwrap().to_owned();
    let before = ana.ok("POST", &format!("/v1/threads/{th}/messages"), json!({"text": "said before the rotation"})).await["seq"].as_i64().unwrap();
    all_sealed(&pool).await;
    let old = ana.ok("GET", "/v1/checkpoint-key", Value::Null).await;
    let old_receipt = receipt_file(&ana.ok("GET", &format!("/v1/receipts/{before}"), Value::Null).await);
    // Stopped as an operator restarts it (SIGTERM): its sealer steps down,
    // and the next process leads at once rather than after the lead runs out.
    let mut log = log;
    assert_eq!(log.terminate(), Some(0), "lattice serve log stops cleanly");
    drop(log);

    let log = LogProcess::start_with(&url, &[("LATTICE_AUTH_SECRET", "another secret of at least thirty-two bytes, rotated")]).await;
    let ana = Client::sign_in(&log.base, "acme", "ana").await;
    let new = ana.ok("GET", "/v1/checkpoint-key", Value::Null).await;
    assert_ne!(new["key_id"], old["key_id"], "a new secret is a new key");
    let after = ana.ok("POST", &format!("/v1/threads/{th}/messages"), json!({"text": "said after it"})).await["seq"].as_i64().unwrap();
    let waited = std::time::Instant::now();
    all_sealed(&pool).await;
    // The stopped sealer stepped down: not the 7 to 10 s its lead had left.
    assert!(waited.elapsed() < Duration::from_secs(5), "sealed after {:?}", waited.elapsed());
    let latest = ana.ok("GET", &format!("/v1/workspaces/{ws}/checkpoints/latest"), Value::Null).await;
    assert_eq!(latest["key_id"], new["key_id"], "signed with the new key from the restart on");

    let (old_key, new_key) = (old["public_key"].as_str().unwrap(), new["public_key"].as_str().unwrap());
    let (intact, said) = export_and_verify(&url, &ws, &[old_key, new_key]);
    assert!(intact && said.starts_with("intact:"), "both keys trusted: {said}");
    println!("lattice verify across a rotation: {said}");
    let (intact, said) = export_and_verify(&url, &ws, &[new_key]);
    let named = format!("not signed by a trusted key (it names key {})", old["key_id"].as_str().unwrap());
    assert!(!intact && said.contains(&named), "the new key alone: {said}");
    let (holds, said) = export_and_verify_receipt(&url, &ws, &[old_key, new_key], Some(&old_receipt));
    assert!(holds && said.contains(&format!("signed by key {}", old["key_id"].as_str().unwrap())), "{said}");
    let new_receipt = receipt_file(&ana.ok("GET", &format!("/v1/receipts/{after}"), Value::Null).await);
    let (holds, said) = export_and_verify_receipt(&url, &ws, &[old_key, new_key], Some(&new_receipt));
    assert!(holds && said.contains(&format!("signed by key {}", new["key_id"].as_str().unwrap())), "{said}");
    for file in [old_receipt, new_receipt] {
        let _ = std::fs::remove_file(file);
    }
}

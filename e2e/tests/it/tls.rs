//! TLS to the database and to the model, with certificates the tests make:
//! a PostgreSQL database that refuses connections without TLS (`cargo xtask
//! test` sets it up on its throwaway server) and an OpenAI-compatible model
//! behind https.

use std::path::Path;
use std::time::Duration;

use lattice_e2e::https::serve_tls;
use lattice_e2e::{Client, LogProcess, UpProcess};
use lattice_testkit::tls::Certs;
use serde_json::{Value, json};

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set: run the tests with `cargo xtask test`, which sets up a TLS-only database"))
}

/// `lattice migrate` against `url`: its success, and what it printed.
fn migrate(url: &str) -> (bool, String) {
    let out = std::process::Command::new(lattice_e2e::binary())
        .arg("migrate")
        .env("LATTICE_DATABASE_URL", url)
        .env("LATTICE_PROFILE", "local")
        .env("LATTICE_AUTH_SECRET", lattice_e2e::SECRET)
        .output()
        .unwrap();
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

#[tokio::test]
async fn the_services_reach_a_tls_only_postgresql_and_verify_its_certificate() {
    let (base, ca) = (env("LATTICE_TEST_POSTGRES_TLS_URL"), env("LATTICE_TEST_POSTGRES_TLS_CA"));
    let plain = format!("{base}?sslmode=disable");
    let (ok, said) = migrate(&plain);
    assert!(!ok && said.contains("no encryption"), "the database took a connection without TLS: {said}");

    let stranger = Certs::make();
    let (ok, said) = migrate(&format!("{base}?sslmode=verify-full&sslrootcert={}", stranger.ca.display()));
    assert!(!ok, "a certificate signed by another CA was trusted: {said}");

    let verified = format!("{base}?sslmode=verify-full&sslrootcert={ca}");
    let (ok, said) = migrate(&verified);
    assert!(ok, "{said}");
    let log = LogProcess::start(&verified).await;
    let alice = Client::sign_in(&log.base, "t1", "alice").await;
    let (status, body) = alice.post("/v1/workspaces", json!({"name": "over TLS"})).await.unwrap();
    assert_eq!(status, 200, "{body}");
}

async fn run_status(alice: &Client, run: &str) -> String {
    for _ in 0..200 {
        let (_, body) = alice.get(&format!("/v1/runs/{run}")).await.unwrap();
        let status = body["status"].as_str().unwrap_or_default().to_owned();
        if status == "finished" || status == "failed" {
            return status;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("run {run} never ended");
}

#[tokio::test]
async fn a_model_behind_https_is_reached_with_the_ca_in_ssl_cert_file() {
    let certs = Certs::make();
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(|| async { axum::Json(json!({"choices": [{"message": {"role": "assistant", "content": "hello over TLS"}}]})) }),
    );
    let port = serve_tls(&certs, app).await;
    let model_url = format!("https://127.0.0.1:{port}/v1");

    for (trusted, expected) in [(false, "failed"), (true, "finished")] {
        let mut env = vec![("LATTICE_MODEL_BASE_URL", model_url.as_str()), ("LATTICE_MODEL_NAME", "fake-tls")];
        let ca = certs.ca.display().to_string();
        if trusted {
            env.push(("SSL_CERT_FILE", ca.as_str()));
        }
        let up = UpProcess::start_with(&env).await;
        let alice = Client::sign_in(&up.base, "t1", "alice").await;
        let (_, ws) = alice.post("/v1/workspaces", json!({"name": "tls"})).await.unwrap();
        let (_, th) = alice.post(&format!("/v1/workspaces/{}/threads", ws["id"].as_str().unwrap()), json!({"title": "t"})).await.unwrap();
        let th = th["id"].as_str().unwrap();
        let (status, started) = alice.post(&format!("/v1/threads/{th}/runs"), json!({"prompt": "hi", "model": "fake-tls"})).await.unwrap();
        assert_eq!(status, 200, "{started}");
        let run = started["run_id"].as_str().unwrap();
        assert_eq!(run_status(&alice, run).await, expected, "trusting the CA: {trusted}");
        if trusted {
            let events = alice.all_events(th).await;
            let said: Vec<&Value> = events.iter().filter(|e| e["type"] == "message_posted").collect();
            assert!(said.iter().any(|e| e["payload"]["text"] == "hello over TLS"), "{said:?}");
        }
    }
    assert!(Path::new(&certs.ca).exists());
}

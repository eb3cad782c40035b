//! Only `lattice migrate` changes a PostgreSQL schema: `lattice serve log`
//! on an empty database creates nothing, answers `/healthz` but not
//! `/readyz` (saying what to run), and starts once the schema is migrated.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use lattice_e2e::{SECRET, binary, free_port, wait_ready};
use sqlx::Connection;

#[tokio::test]
async fn a_service_waits_for_lattice_migrate_and_changes_no_schema() {
    let url = lattice_testkit::fresh_url(lattice_log::Backend::Postgres).await;
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let mut child = Command::new(binary())
        .args(["serve", "log"])
        .env("LATTICE_PROFILE", "local")
        .env("LATTICE_DATABASE_URL", &url)
        .env("LATTICE_HTTP_ADDR", format!("127.0.0.1:{port}"))
        .env("LATTICE_AUTH_SECRET", SECRET)
        .env("LATTICE_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let http = lattice_e2e::http();
    let deadline = Instant::now() + Duration::from_secs(30);
    let readyz = loop {
        if let Ok(r) = http.get(format!("{base}/readyz")).send().await {
            break r;
        }
        assert!(Instant::now() < deadline, "serve log never answered");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(readyz.status(), 503);
    let why = readyz.text().await.unwrap();
    assert!(why.contains("run `lattice migrate`") && why.contains("0 of"), "{why}");
    assert_eq!(http.get(format!("{base}/healthz")).send().await.unwrap().status(), 200);

    let mut db = sqlx::PgConnection::connect(&url).await.unwrap();
    let tables: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM pg_tables WHERE schemaname = current_schema()").fetch_one(&mut db).await.unwrap();
    assert_eq!(tables, 0, "a service created tables");

    lattice_e2e::stack::migrate(&url).unwrap();
    wait_ready(&base).await;
    let alice = lattice_e2e::Client::sign_in(&base, "t1", "alice").await;
    let (status, body) = alice.post("/v1/workspaces", serde_json::json!({"name": "after migrate"})).await.unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(body["id"].as_str().is_some_and(|id| id.starts_with("ws_")), "{body}");
    child.kill().unwrap();
    child.wait().unwrap();
}

//! `lattice up`, the embedded default (O1): one process on SQLite under its
//! data folder, dev sign-in, and a seeded demo whose thread has the scripted
//! agent waiting on a form.

use std::process::{Command, Stdio};
use std::time::Duration;

use lattice_e2e::{Client, binary, free_port};
use serde_json::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lattice_up_serves_the_seeded_demo() {
    let dir = std::env::temp_dir().join(format!("lattice-up-{}", free_port()));
    std::fs::create_dir_all(&dir).unwrap();
    let port = free_port();
    let mut child = Command::new(binary())
        .arg("up")
        .current_dir(&dir)
        .env("LATTICE_HTTP_ADDR", format!("127.0.0.1:{port}"))
        .env("LATTICE_APPS_ADDR", format!("127.0.0.1:{}", free_port()))
        .env("LATTICE_LOG", "warn")
        .env_remove("LATTICE_DATABASE_URL")
        .env_remove("LATTICE_PROFILE")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let base = format!("http://127.0.0.1:{port}");
    lattice_e2e::wait_ready(&base).await;
    assert!(dir.join("data/lattice.db").exists(), "the embedded database lives under ./data");

    let demo = Client::sign_in(&base, "demo", "demo").await;
    let (_, workspaces) = demo.get("/v1/workspaces").await.unwrap();
    let ws = workspaces[0]["id"].as_str().expect("the demo workspace").to_owned();
    let (_, threads) = demo.get(&format!("/v1/workspaces/{ws}/threads")).await.unwrap();
    let th = threads[0]["id"].as_str().unwrap().to_owned();
    let mut paused: Option<Value> = None;
    for _ in 0..200 {
        let events = demo.all_events(&th).await;
        if let Some(e) = events.iter().find(|e| e["type"] == "run_paused") {
            paused = Some(e.clone());
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let paused = paused.expect("the demo's run waits on a form");
    assert_eq!(paused["payload"]["requests"][0]["tool_name"], "ask_form");
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
}

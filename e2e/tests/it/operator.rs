//! The operator's command line: `lattice switch` flips a kind of UI from a
//! terminal, through the write path, and every open chat follows within a
//! second; the audit names the system actor. `lattice doctor` names what
//! is wrong with a deployment and how to fix it.

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use lattice_e2e::browser::Chrome;
use lattice_e2e::{Client, SECRET, binary};
use serde_json::{Value, json};

use crate::apps::{Apps, On, by_hand, until_logged};

/// `lattice ARGS` against `database_url`, as an operator at a terminal.
fn lattice(database_url: &str, args: &[&str]) -> Output {
    let data = std::env::temp_dir().join(format!("lattice-operator-{}", lattice_e2e::free_port()));
    let out = Command::new(binary())
        .args(args)
        .env("LATTICE_PROFILE", "local")
        .env("LATTICE_DATABASE_URL", database_url)
        .env("LATTICE_AUTH_SECRET", SECRET)
        .env("LATTICE_DATA_DIR", &data)
        .env("LATTICE_LOG", "warn")
        .env("USER", "oncall")
        .output()
        .expect("running lattice");
    let _ = std::fs::remove_dir_all(&data);
    out
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

async fn switch_from_a_terminal(on: On) {
    let apps = Apps::start_on(on).await;
    let db = apps.deployment.database_url();
    apps.app("Runner", &by_hand("(async () => { await handshake(); log('running'); })();")).await;
    let chrome = Chrome::launch().await;
    let chat = apps.window(&chrome).await;
    until_logged(&chat, "running").await;

    // A change without a reason is refused, and changes nothing.
    let refused = lattice(&db, &["switch", "set", "deployment", "ui:mini-apps", "off"]);
    assert!(!refused.status.success() && text(&refused).contains("--reason"), "{}", text(&refused));
    let blank = lattice(&db, &["switch", "set", "deployment", "ui:mini-apps", "off", "--reason", " "]);
    assert!(!blank.status.success() && text(&blank).contains("needs a reason"), "{}", text(&blank));
    let unknown = lattice(&db, &["switch", "set", "deployment", "ui:charts", "off", "--reason", "x"]);
    assert!(!unknown.status.success() && text(&unknown).contains("ui:forms, ui:dashboards, ui:mini-apps"), "{}", text(&unknown));
    assert!(chat.eval::<bool>("() => !!document.querySelector('.app-frame')").await, "a refused change took the app away");

    let started = Instant::now();
    let set = lattice(&db, &["switch", "set", "deployment", "ui:mini-apps", "off", "--reason", "incident"]);
    let ran = started.elapsed();
    assert!(set.status.success(), "{}", text(&set));
    let said = text(&set);
    assert!(said.contains("deployment ui:mini-apps off") && said.contains("by cli:oncall: incident"), "{said}");
    chat.until_within("() => !document.querySelector('.app-frame')", "the app's frame removed", Duration::from_secs(1)).await;
    println!(
        "lattice switch set deployment ui:mini-apps off ({on:?}): the command took {} ms, the chat's frame was gone {} ms after it started",
        ran.as_millis(),
        started.elapsed().as_millis()
    );
    let card: String = chat.eval("() => document.querySelector('.app-card').textContent").await;
    assert!(card.contains("ui:mini-apps is off for the deployment"), "{card}");

    // The audit names the system actor, as the console shows it.
    let root = Client::sign_in_as(&apps.base, json!({"tenant": "ops", "user": "root", "role": "deployment_admin"})).await;
    let audit = root.ok("GET", "/v1/integrations/audit", Value::Null).await;
    let last = audit.as_array().and_then(|rows| rows.last()).cloned().unwrap_or_default();
    assert_eq!(
        (last["actor"].as_str(), last["level"].as_str(), last["key"].as_str(), last["new"].as_str(), last["reason"].as_str()),
        (Some("cli:oncall"), Some("deployment"), Some("ui:mini-apps"), Some("off"), Some("incident")),
        "{audit}"
    );

    // A workspace's level, read back by the command and over HTTP.
    let ws = format!("workspace:{}", apps.ws);
    let forms = lattice(&db, &["switch", "set", &ws, "ui:forms", "off", "--reason", "a noisy form"]);
    assert!(forms.status.success(), "{}", text(&forms));
    let listed = text(&lattice(&db, &["switch", "list", &ws]));
    let row = listed.lines().find(|l| l.starts_with(&ws) && l.contains("ui:forms")).unwrap_or_default().to_owned();
    assert_eq!(row.split_whitespace().take(4).collect::<Vec<_>>(), [ws.as_str(), "ui:forms", "off", "off"], "{listed}");
    let effective = apps.ana.ok("GET", &format!("/v1/integrations/effective?workspace={}", apps.ws), Value::Null).await;
    assert_eq!(effective["ui:forms"]["enabled"], false, "{effective}");
    let everything = text(&lattice(&db, &["switch", "list"]));
    assert!(everything.lines().any(|l| l.starts_with("deployment") && l.contains("ui:mini-apps") && l.contains(" off ")), "{everything}");
    assert!(everything.contains(&ws), "the levels holding a state are listed: {everything}");
    // The reason's limit, at its edge: 500 bytes pass, 501 are refused and change nothing.
    let at_limit = "r".repeat(500);
    let set = lattice(&db, &["switch", "set", &ws, "ui:dashboards", "off", "--reason", &at_limit]);
    assert!(set.status.success(), "{}", text(&set));
    let over = lattice(&db, &["switch", "set", &ws, "ui:dashboards", "on", "--reason", &"r".repeat(501)]);
    assert!(!over.status.success() && text(&over).contains("501 bytes exceeds the limit 500"), "{}", text(&over));
    let listed = text(&lattice(&db, &["switch", "list", &ws]));
    assert!(listed.lines().any(|l| l.starts_with(&ws) && l.contains("ui:dashboards") && l.split_whitespace().nth(2) == Some("off")), "{listed}");
    let nowhere = lattice(&db, &["switch", "list", "workspace:ws_nowhere"]);
    assert!(!nowhere.status.success() && text(&nowhere).contains("no such workspace"), "{}", text(&nowhere));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_switch_set_from_a_terminal_reaches_the_open_chat_within_a_second() {
    switch_from_a_terminal(On::Up).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_switch_set_from_a_terminal_reaches_the_open_chat_within_a_second_on_the_stack() {
    switch_from_a_terminal(On::Stack).await;
}

/// `lattice doctor` with `env`: its exit status and what it printed.
fn doctor(env: &[(&str, &str)]) -> (bool, String) {
    let dir = std::env::temp_dir().join(format!("lattice-doctor-{}", lattice_e2e::free_port()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut cmd = Command::new(binary());
    cmd.arg("doctor").current_dir(&dir).env("LATTICE_DATA_DIR", dir.join("data"));
    for var in ["LATTICE_DATABASE_URL", "LATTICE_NATS_URL", "LATTICE_AUTH_SECRET", "LATTICE_PROFILE", "LATTICE_APPS_ORIGIN", "LATTICE_PORTAL_ORIGIN"]
    {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("running lattice doctor");
    let _ = std::fs::remove_dir_all(&dir);
    (out.status.success(), text(&out))
}

/// The finding on `topic`: its line and the fix under it.
fn finding(said: &str, topic: &str) -> String {
    let lines: Vec<&str> = said.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.split_whitespace().nth(1) == Some(topic.split(' ').next().unwrap()))
        .unwrap_or_else(|| panic!("no {topic} finding: {said}"));
    let fix = lines.get(at + 1).filter(|l| l.contains('→')).copied().unwrap_or_default();
    format!("{}\n{fix}", lines[at])
}

#[tokio::test]
async fn doctor_names_each_problem_with_its_fix() {
    // An unmigrated PostgreSQL, a NATS nobody listens on, production with
    // a placeholder secret and apps on the portal's site.
    let url = lattice_testkit::fresh_url(lattice_log::Backend::Postgres).await;
    let dead_nats = format!("nats://127.0.0.1:{}", lattice_e2e::free_port());
    let (ok, said) = doctor(&[
        ("LATTICE_PROFILE", "production"),
        ("LATTICE_DATABASE_URL", &url),
        ("LATTICE_NATS_URL", &dead_nats),
        ("LATTICE_AUTH_SECRET", "change-me-change-me-change-me-change-me"),
        ("LATTICE_PORTAL_ORIGIN", "https://chat.example.com"),
        ("LATTICE_APPS_ORIGIN", "https://apps.example.com"),
        ("LATTICE_WEB_DIR", "/nonexistent/web"),
    ]);
    assert!(!ok, "doctor passed a broken deployment: {said}");
    for (topic, line, fix) in [
        ("settings", "placeholder", "lattice config"),
        ("secret", "placeholder", "openssl rand -hex 32"),
        ("database", "0 of this binary's", "lattice migrate"),
        ("nats", "cannot reach NATS", "nats-server"),
        ("apps origin", "the same site", "registrable domain"),
        ("chat host", "not built", "cargo xtask web"),
    ] {
        let f = finding(&said, topic);
        assert!(f.starts_with("  FIX") && f.contains(line) && f.contains(fix), "{topic}: {f}\n\n{said}");
    }
    assert!(said.contains("0 fine, 0 to note, 6 to fix"), "{said}");

    // The same database migrated, a real NATS, a real secret, apps on a
    // site of their own, the chat host built: nothing to fix.
    lattice_e2e::stack::migrate(&url).unwrap();
    let nats = lattice_testkit::nats::NatsServer::start();
    let web = std::env::temp_dir().join(format!("lattice-doctor-web-{}", lattice_e2e::free_port()));
    std::fs::create_dir_all(&web).unwrap();
    std::fs::write(web.join("index.html"), "<!doctype html>").unwrap();
    std::fs::create_dir_all(web.join("assets")).unwrap();
    std::fs::write(web.join("assets/web-0123.wasm"), b"\0asm").unwrap();
    let (ok, said) = doctor(&[
        ("LATTICE_PROFILE", "production"),
        ("LATTICE_DATABASE_URL", &url),
        ("LATTICE_NATS_URL", &nats.url),
        ("LATTICE_AUTH_SECRET", SECRET),
        ("LATTICE_PORTAL_ORIGIN", "https://chat.example.com"),
        ("LATTICE_APPS_ORIGIN", "https://apps.example-usercontent.com"),
        ("LATTICE_WEB_DIR", web.to_str().unwrap()),
    ]);
    let _ = std::fs::remove_dir_all(&web);
    assert!(ok, "{said}");
    assert!(said.contains("6 fine, 0 to note, 0 to fix"), "{said}");
    assert!(finding(&said, "nats").contains("JetStream answers"), "{said}");
    assert!(finding(&said, "database").contains("its schema is this binary's"), "{said}");

    // The local default on a laptop: apps on another port of the same
    // host is a note, not a fix.
    let (ok, said) =
        doctor(&[("LATTICE_PROFILE", "local"), ("LATTICE_APPS_ORIGIN", "http://127.0.0.1:8081"), ("LATTICE_WEB_DIR", "/nonexistent/web")]);
    assert!(!ok, "{said}");
    assert!(finding(&said, "apps origin").starts_with("  note"), "{said}");
    assert!(finding(&said, "database").contains("not there yet"), "{said}");
}

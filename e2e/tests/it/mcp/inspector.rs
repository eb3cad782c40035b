//! The MCP Inspector's own check of what lattice publishes
//! (`@modelcontextprotocol/inspector` from npm, pinned in
//! e2e/package-lock.json, run with Node ≥ 22): `tools/list --strict` lints
//! every tool's schemas for what clients cannot read (a bare `true` where
//! a schema goes, among others) and exits non-zero on any error.

use std::path::Path;
use std::process::Command;

use lattice_e2e::{Client, UpProcess};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_inspectors_strict_check_passes_every_tool_lattice_lists() {
    // The demo's deployment opts in to mini apps: every tool is listed.
    let up = UpProcess::start().await;
    let ana = Client::sign_in(&up.base, "acme", "ana").await;
    let e2e = Path::new(env!("CARGO_MANIFEST_DIR"));
    let url = format!("{}/mcp", up.base);
    let token = ana.token.clone();
    let run = tokio::task::spawn_blocking(move || {
        Command::new(super::conformance::node())
            .arg(e2e.join("node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"))
            .args(["--cli", &url, "--transport", "http", "--method", "tools/list", "--strict"])
            .arg("--header")
            .arg(format!("Authorization: Bearer {token}"))
            .output()
            .expect("the Inspector runs")
    })
    .await
    .unwrap();
    let (out, err) = (String::from_utf8_lossy(&run.stdout), String::from_utf8_lossy(&run.stderr));
    assert!(run.status.success(), "the Inspector's strict check failed ({}):\n{err}\n{out}", run.status);
    let listed: serde_json::Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    let names: Vec<&str> = listed["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    for tool in ["ask_form", "create_form", "show_dashboard", "update_dashboard", "create_app", "update_app"] {
        assert!(names.contains(&tool), "{tool} is among what was checked: {names:?}");
    }
}

//! `scim2-tester` (PyPI), which checks a SCIM 2.0 server against RFC 7643
//! and RFC 7644, against lattice's `/scim/v2`: every check passes but those
//! `e2e/scim/expected-failures.json` lists with a reason (none now).

use std::path::Path;
use std::process::Command;

use lattice_e2e::{Client, UpProcess};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scim2_tester_finds_the_scim_server_conformant() {
    let tester = std::env::var_os("LATTICE_SCIM_TESTER")
        .expect("LATTICE_SCIM_TESTER: the folder scim2-tester is installed in (`cargo xtask test` installs it from e2e/scim/requirements.txt)");
    let up = UpProcess::start().await;
    // A tenant of its own: the checker finds what it made on a list's first page.
    let admin = Client::sign_in_as(&up.base, json!({"tenant": "scim-suite", "user": "root", "role": "tenant_admin"})).await;
    let token = admin.ok("POST", "/v1/scim-tokens", Value::Null).await["token"].as_str().unwrap().to_owned();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scim/check.py");
    let out = Command::new("python3")
        .arg(&script)
        .args(["--url", &format!("{}/scim/v2", up.base), "--token", &token])
        .env("PYTHONPATH", &tester)
        .output()
        .expect("python3 runs the checker");
    let said = String::from_utf8_lossy(&out.stdout);
    println!("{said}{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "scim2-tester found checks failing that expected-failures.json does not list (above)");
    let summary = said.lines().rev().find(|l| l.starts_with("scim2-tester:")).expect("the checker's summary line");
    assert!(summary.contains(" 0 failed"), "{summary}");
}

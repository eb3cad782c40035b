//! A stdio server learns nothing of lattice's and shares nothing across
//! tenants (R7): the probe server (`e2e/mcp/probe-server.mjs`, on the
//! official MCP SDK) reports what its process sees.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use lattice_connect::{Behalf, CallError, Connections, ServerConfig};
use serde_json::{Value, json};

fn probe() -> Vec<String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    let script = root.join("e2e/mcp/probe-server.mjs");
    assert!(root.join("e2e/node_modules/@modelcontextprotocol/sdk").exists(), "the MCP SDK: run `npm ci` in e2e/ (`cargo xtask test` does)");
    let node = ["/usr/bin/node", "/usr/local/bin/node"].into_iter().find(|p| std::path::Path::new(p).exists()).expect("node");
    vec![node.to_owned(), script.display().to_string()]
}

fn homes() -> PathBuf {
    std::env::temp_dir().join(format!("lattice-connect-homes-{}", ulid()))
}

/// A name no other test's folder has: a random number (RandomState's keys
/// are random per process and move on each call).
fn ulid() -> String {
    use std::hash::BuildHasher;
    format!("{:016x}", std::collections::hash_map::RandomState::new().hash_one(std::process::id()))
}

fn connect(extra: Value, homes: PathBuf) -> Connections {
    let mut config = json!({"command": probe()});
    config.as_object_mut().unwrap().extend(extra.as_object().cloned().unwrap_or_default());
    let config: ServerConfig = serde_json::from_value(config).unwrap();
    Connections::configure_in(&BTreeMap::from([("probe".to_owned(), config)]), homes).unwrap()
}

/// A tool's answer: its structured `value`.
async fn ask(connections: &Connections, who: Behalf<'_>, tool: &str, arguments: Value) -> Result<Value, CallError> {
    let answer = connections.get("probe").unwrap().call(who, tool, arguments).await?;
    Ok(answer["structuredContent"]["value"].clone())
}

const ANA: Behalf = Behalf { tenant: "t1", user: "ana" };
const BOB: Behalf = Behalf { tenant: "t1", user: "bob" };
const MAL: Behalf = Behalf { tenant: "t2", user: "mal" };

#[tokio::test]
async fn a_stdio_server_sees_only_the_environment_its_configuration_names() {
    let secret = std::env::temp_dir().join(format!("lattice-probe-secret-{}", ulid()));
    std::fs::write(&secret, "from-a-file\n").unwrap();
    // What lattice's own process holds: a server must see none of it.
    // SAFETY: set before any server starts; no other test reads them.
    unsafe {
        std::env::set_var("LATTICE_AUTH_SECRET", "the deployment's secret");
        std::env::set_var("LATTICE_DATABASE_URL", "postgres://lattice:password@db/lattice");
        std::env::set_var("PROBE_SHARED", "named on purpose");
    }
    let connections = connect(json!({"env": {"GREETING": "hello", "TOKEN": {"file": secret}, "SHARED": {"env": "PROBE_SHARED"}}}), homes());
    let env = ask(&connections, ANA, "env", json!({})).await.unwrap();
    let names: BTreeSet<&str> = env.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(names, BTreeSet::from(["GREETING", "HOME", "LANG", "PATH", "SHARED", "TMPDIR", "TOKEN"]), "{env}");
    assert_eq!((&env["GREETING"], &env["TOKEN"], &env["SHARED"]), (&json!("hello"), &json!("from-a-file"), &json!("named on purpose")));
    let text = env.to_string();
    assert!(!text.contains("the deployment's secret") && !text.contains("postgres://"), "{text}");
    let _ = std::fs::remove_file(secret);
}

#[tokio::test]
async fn a_stdio_server_holds_no_descriptor_of_lattices_and_runs_in_its_own_folder_within_its_limits() {
    // Descriptors lattice holds: a listener, a file.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let held = std::fs::File::create(std::env::temp_dir().join(format!("lattice-held-{}", ulid()))).unwrap();
    let ours: BTreeSet<String> = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .map(|l| l.display().to_string())
        .filter(|l| l.starts_with("socket:") || l.starts_with('/'))
        .collect();
    let homes = homes();
    let limits = json!({"memory_mb": 3000, "processes": 200, "open_files": 300, "cpu_secs": 900, "disk_mb": 1});
    let connections = connect(json!({"limits": limits}), homes.clone());
    let fds = ask(&connections, ANA, "fds", json!({})).await.unwrap();
    let theirs: BTreeSet<String> = fds.as_object().unwrap().values().filter_map(Value::as_str).map(str::to_owned).collect();
    let shared: Vec<&String> = theirs.intersection(&ours).filter(|l| !l.starts_with("/dev/")).collect();
    assert!(shared.is_empty(), "the server holds descriptors of lattice's: {shared:?} (it holds {fds})");
    drop((listener, held));

    let place = ask(&connections, ANA, "cwd", json!({})).await.unwrap();
    let folder = homes.join("probe").join("t_t1").canonicalize().unwrap();
    assert_eq!(place["cwd"], json!(folder.display().to_string()), "{place}");
    assert_eq!(place["home"], place["cwd"]);

    let limits = ask(&connections, ANA, "limits", json!({})).await.unwrap();
    let limits = limits.as_str().unwrap();
    let limit =
        |name: &str| limits.lines().find(|l| l.starts_with(name)).and_then(|l| l[25..].split_whitespace().next()).unwrap_or_default().to_owned();
    assert_eq!(limit("Max data size"), (3000u64 * 1024 * 1024).to_string(), "{limits}");
    assert_eq!(limit("Max processes"), "200", "{limits}");
    assert_eq!(limit("Max open files"), "300", "{limits}");
    assert_eq!(limit("Max cpu time"), "900", "{limits}");
    assert_eq!(limit("Max file size"), (1024 * 1024).to_string(), "{limits}");

    // A file past its bound is not written; the server is stopped or
    // refused, and the next call starts it again.
    let filled = ask(&connections, ANA, "write", json!({"bytes": 2 * 1024 * 1024})).await;
    assert!(filled.as_ref().map_or(true, |v| v.as_str().is_some_and(|s| s.starts_with("refused"))), "{filled:?}");
    assert!(std::fs::metadata(folder.join("filler.bin")).map_or(0, |m| m.len()) <= 1024 * 1024);
    assert!(ask(&connections, ANA, "count", json!({})).await.is_ok(), "a new session after the last one ended");
    let _ = std::fs::remove_dir_all(homes);
}

#[tokio::test]
async fn a_server_that_writes_more_memory_than_its_limit_is_stopped_and_started_again() {
    let connections = connect(json!({"limits": {"memory_mb": 512}}), homes());
    // Within the limit, and Node's fetch (whose WebAssembly reserves GiBs
    // of address space) works: the limit is on memory written.
    assert_eq!(ask(&connections, ANA, "fetch", json!({})).await.unwrap(), json!("fetched"));
    assert_eq!(ask(&connections, ANA, "hog", json!({"mb": 64})).await.unwrap(), json!("held 64 MiB"));
    // Past it: the process dies, the call fails, lattice goes on.
    let over = ask(&connections, ANA, "hog", json!({"mb": 2048})).await;
    assert!(over.is_err(), "{over:?}");
    assert_eq!(ask(&connections, ANA, "count", json!({})).await.unwrap(), json!(1), "a new process after the last one died");
}

#[tokio::test]
async fn a_server_that_runs_more_processes_than_its_bound_is_stopped_with_all_of_them() {
    // Under root RLIMIT_NPROC binds nothing: the count of its group does.
    let connections = connect(json!({"limits": {"processes": 20}}), homes());
    let pids = ask(&connections, ANA, "spawn", json!({"n": 40})).await.unwrap();
    let pids: Vec<i64> = pids.as_array().unwrap().iter().filter_map(Value::as_i64).collect();
    assert!(!pids.is_empty());
    let alive = |pid: i64| std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "));
    let deadline = Instant::now() + Duration::from_secs(8);
    while pids.iter().any(|p| alive(*p)) {
        assert!(
            Instant::now() < deadline,
            "{} of the server's {} processes outlived its bound",
            pids.iter().filter(|p| alive(**p)).count(),
            pids.len()
        );
        // Real processes: their end is seen in /proc, which tells no one.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The session found closed under the next call (if the watch ended it
    // between calls), or its transport failing under it (if the group was
    // ended while the call was on its way): the one after starts a new
    // process.
    let next = match ask(&connections, ANA, "count", json!({})).await {
        Err(CallError::Closed { .. } | CallError::Unreachable(_)) => ask(&connections, ANA, "count", json!({})).await,
        other => other,
    };
    assert_eq!(next.unwrap(), json!(1), "a new process after the group was ended");
}

#[tokio::test]
async fn two_tenants_never_share_a_session_or_a_process() {
    let connections = connect(json!({}), homes());
    // Each tenant's session counts its own calls.
    assert_eq!(ask(&connections, ANA, "count", json!({})).await.unwrap(), json!(1));
    assert_eq!(ask(&connections, BOB, "count", json!({})).await.unwrap(), json!(2), "one tenant's people share its session");
    assert_eq!(ask(&connections, MAL, "count", json!({})).await.unwrap(), json!(1), "another tenant has a session of its own");
    assert_eq!(ask(&connections, ANA, "count", json!({})).await.unwrap(), json!(3));
    assert_eq!(connections.get("probe").unwrap().sessions().await, 2);

    // By person: each person's own, within the bound per tenant.
    let by_person = connect(json!({"isolation": "person", "max_sessions_per_tenant": 1}), homes());
    assert_eq!(ask(&by_person, ANA, "count", json!({})).await.unwrap(), json!(1));
    let busy = ask(&by_person, BOB, "count", json!({})).await.unwrap_err();
    assert!(matches!(busy, CallError::Busy(_)) && busy.to_string().contains("max_sessions_per_tenant"), "{busy}");
    assert_eq!(ask(&by_person, MAL, "count", json!({})).await.unwrap(), json!(1), "another tenant's bound is its own");
}

#[tokio::test]
async fn a_session_that_ends_takes_every_process_it_started_with_it() {
    let connections = connect(json!({}), homes());
    let pids = ask(&connections, ANA, "spawn", json!({"n": 3})).await.unwrap();
    let pids: Vec<i64> = pids.as_array().unwrap().iter().filter_map(Value::as_i64).collect();
    assert_eq!(pids.len(), 3);
    let alive = |pid: i64| std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "));
    assert!(pids.iter().all(|p| alive(*p)));
    connections.get("probe").unwrap().end_sessions().await;
    let deadline = Instant::now() + Duration::from_secs(5);
    while pids.iter().any(|p| alive(*p)) {
        assert!(Instant::now() < deadline, "the server's children outlived its session");
        // Real processes: their end is seen in /proc, which tells no one.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The official `@modelcontextprotocol/server-everything` (npm) over stdio:
/// its `get-env` tool returns its whole environment, which holds nothing
/// of lattice's but what the configuration names.
#[tokio::test]
async fn the_everything_servers_get_env_sees_none_of_lattices_variables() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    let everything = root.join("e2e/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(everything.exists(), "server-everything: run `npm ci` in e2e/ (`cargo xtask test` does)");
    // SAFETY: set before any server starts; no other test reads them.
    unsafe {
        std::env::set_var("LATTICE_MODEL_API_KEY", "sk-the-models-key");
        std::env::set_var("LATTICE_AUTH_SECRET", "the deployment's secret");
    }
    let node = probe()[0].clone();
    let config: ServerConfig = serde_json::from_value(json!({"command": [node, everything, "stdio"], "env": {"EVERYTHING_REGION": "eu"}})).unwrap();
    let connections = Connections::configure_in(&BTreeMap::from([("everything".to_owned(), config)]), homes()).unwrap();
    let answer = connections.get("everything").unwrap().call(ANA, "get-env", json!({})).await.unwrap();
    let text = answer["content"][0]["text"].as_str().unwrap();
    let env: BTreeMap<String, String> = serde_json::from_str(text).unwrap();
    let names: BTreeSet<&str> = env.keys().map(String::as_str).collect();
    assert_eq!(names, BTreeSet::from(["EVERYTHING_REGION", "HOME", "LANG", "PATH", "TMPDIR"]), "{text}");
    assert!(!text.contains("sk-the-models-key") && !text.contains("deployment's secret") && !text.contains("LATTICE_"), "{text}");
}

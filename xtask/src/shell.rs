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

/// Runs `cargo test`, passing its output through, and adds up the counts
/// of every "test result:" line. Fails when cargo fails.
pub fn cargo_test(args: &[&str], env: &[(&str, &str)]) -> Result<(u64, u64)> {
    use std::io::BufRead;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(args).current_dir(workspace_root()).stdout(std::process::Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().map_err(|e| format!("cannot run cargo test: {e}"))?;
    let (mut passed, mut failed) = (0, 0);
    let stdout = child.stdout.take().expect("piped");
    for line in std::io::BufReader::new(stdout).lines() {
        let line = line.map_err(|e| e.to_string())?;
        println!("{line}");
        if let Some(rest) = line.strip_prefix("test result: ") {
            passed += count(rest, " passed");
            failed += count(rest, " failed");
        }
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    if status.success() || failed > 0 { Ok((passed, failed)) } else { Err(format!("cargo test failed: {status}")) }
}

/// The number before `label` in "ok. 12 passed; 0 failed; …".
fn count(line: &str, label: &str) -> u64 {
    line.find(label).and_then(|end| line[..end].rsplit([' ', '.']).next()).and_then(|n| n.parse().ok()).unwrap_or(0)
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

/// The clone `cargo xtask` runs in: cargo says so at run time. The path
/// compiled in is only a fallback, since one target folder serves several
/// clones and cargo reuses a binary built in another.
pub fn workspace_root() -> std::path::PathBuf {
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR").map_or_else(|| env!("CARGO_MANIFEST_DIR").into(), std::path::PathBuf::from);
    manifest_dir.parent().expect("xtask lives in the workspace").to_path_buf()
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
    run(Command::new("apt-get").args(["install", "-y", "-qq", "--no-install-recommends"]).args(packages).env("DEBIAN_FRONTEND", "noninteractive"))
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

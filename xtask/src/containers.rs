//! A container engine for the acceptance harness (REQUIREMENTS.md X1): Docker's
//! daemon started by the project (Debian's docker.io, data under the target
//! folder, no iptables, no bridge: containers use the host's network), and
//! the images it runs built here `FROM scratch`, since no registry is
//! reachable. The harness then starts NATS with testcontainers; when any of
//! this is not possible it says why and the harness runs natively.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::shell::{apt_install, is_root};

/// The image of nats-server the harness starts (`apps/stack/src/lib.rs`).
pub const NATS_IMAGE: &str = crate::images::NATS;

pub struct Engine {
    /// `unix://…`, for DOCKER_HOST.
    pub host: String,
    daemon: Option<Child>,
    /// The daemon's socket and run folder, removed when it stops.
    run_dir: Option<PathBuf>,
}

impl Drop for Engine {
    fn drop(&mut self) {
        if let Some(daemon) = &mut self.daemon {
            unsafe {
                libc::kill(daemon.id() as i32, libc::SIGTERM);
            }
            let _ = daemon.wait();
        }
        if let Some(dir) = &self.run_dir {
            // dockerd leaves its network namespace mounted under its run folder.
            let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
            for point in mounts.lines().filter_map(|l| l.split_whitespace().nth(1)).filter(|p| p.starts_with(&*dir.to_string_lossy())) {
                let _ = Command::new("umount").arg(point).status();
            }
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// An engine that answers, with the NATS image built; or why not.
pub fn start() -> std::result::Result<Engine, String> {
    let engine = match std::env::var("DOCKER_HOST").ok().filter(|h| answers(h)) {
        Some(host) => Engine { host, daemon: None, run_dir: None },
        None => daemon()?,
    };
    crate::images::nats(&engine.host)?;
    Ok(engine)
}

/// Whether the engine at `host` (`unix://path`) answers `/_ping`.
fn answers(host: &str) -> bool {
    use std::io::{Read, Write};
    let Some(path) = host.strip_prefix("unix://") else { return false };
    let Ok(mut stream) = std::os::unix::net::UnixStream::connect(path) else { return false };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let mut head = [0u8; 12];
    stream.write_all(b"GET /_ping HTTP/1.0\r\n\r\n").is_ok() && stream.read_exact(&mut head).is_ok() && head.ends_with(b" 200")
}

fn daemon() -> std::result::Result<Engine, String> {
    if !is_root() {
        return Err("starting dockerd needs root".into());
    }
    if !Path::new("/usr/sbin/dockerd").exists() {
        apt_install(&["docker.io"])?;
    }
    let dir = crate::web::target_dir().join("dockerd");
    // Short paths: a unix socket's path has a length limit.
    let run_dir = PathBuf::from(format!("/tmp/lattice-dockerd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(&run_dir).map_err(|e| e.to_string())?;
    let socket = run_dir.join("docker.sock");
    let log = std::fs::File::create(dir.join("dockerd.log")).map_err(|e| e.to_string())?;
    let daemon = Command::new("/usr/sbin/dockerd")
        .arg("--data-root")
        .arg(dir.join("data"))
        .arg("--exec-root")
        .arg(run_dir.join("exec"))
        .arg("--pidfile")
        .arg(run_dir.join("docker.pid"))
        .arg("-H")
        .arg(format!("unix://{}", socket.display()))
        .args(["--iptables=false", "--bridge=none"])
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .map_err(|e| format!("starting dockerd: {e}"))?;
    let engine = Engine { host: format!("unix://{}", socket.display()), daemon: Some(daemon), run_dir: Some(run_dir) };
    let deadline = Instant::now() + Duration::from_secs(30);
    while !answers(&engine.host) {
        if Instant::now() > deadline {
            return Err(format!("dockerd did not answer; its log: {}", dir.join("dockerd.log").display()));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(engine)
}

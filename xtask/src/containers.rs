//! A container engine for the acceptance harness (REQUIREMENTS.md X1): Docker's
//! daemon started by the project (Debian's docker.io, data under the target
//! folder, no iptables, no bridge: containers use the host's network), and
//! the images it runs built here `FROM scratch`, since no registry is
//! reachable. The harness then starts NATS with testcontainers; when any of
//! this is not possible it says why and the harness runs natively.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::Result;
use crate::shell::{apt_install, is_root, output, run};

/// The image of nats-server the harness starts (`apps/stack/src/lib.rs`).
pub const NATS_IMAGE: &str = "lattice-nats:local";

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
    nats_image(&engine.host)?;
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

/// `lattice-nats:local`: Debian's nats-server and the libraries it links,
/// on nothing else.
fn nats_image(host: &str) -> Result {
    let server = ["/usr/sbin/nats-server", "/usr/bin/nats-server"].iter().map(PathBuf::from).find(|p| p.exists()).ok_or("no nats-server to put in an image")?;
    let context = crate::web::target_dir().join("dockerd").join("nats-image");
    let _ = std::fs::remove_dir_all(&context);
    let root = context.join("root");
    std::fs::create_dir_all(&root).map_err(|e| e.to_string())?;
    std::fs::copy(&server, root.join("nats-server")).map_err(|e| e.to_string())?;
    for lib in output(Command::new("ldd").arg(&server)).unwrap_or_default().split_whitespace().filter(|w| w.starts_with('/')) {
        let target = root.join(lib.trim_start_matches('/'));
        std::fs::create_dir_all(target.parent().unwrap_or(&root)).map_err(|e| e.to_string())?;
        std::fs::copy(lib, &target).map_err(|e| format!("copying {lib}: {e}"))?;
    }
    std::fs::write(context.join("Dockerfile"), "FROM scratch\nCOPY root/ /\nENTRYPOINT [\"/nats-server\"]\n").map_err(|e| e.to_string())?;
    run(Command::new(docker()).env("DOCKER_HOST", host).args(["build", "--quiet", "-t", NATS_IMAGE]).arg(&context).stdout(Stdio::null()))
}

fn docker() -> &'static str {
    if Path::new("/usr/bin/docker").exists() { "/usr/bin/docker" } else { "docker" }
}

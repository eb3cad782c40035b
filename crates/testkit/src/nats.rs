//! A real nats-server with JetStream on a free loopback port, for tests.
//! `cargo xtask test` installs nats-server (Debian's package) when missing.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct NatsServer {
    child: Option<Child>,
    binary: PathBuf,
    pub port: u16,
    pub url: String,
    store: PathBuf,
    config: Option<PathBuf>,
    env: Vec<(String, String)>,
}

fn binary() -> PathBuf {
    if let Some(path) = std::env::var_os("LATTICE_NATS_SERVER") {
        return path.into();
    }
    for candidate in ["/usr/sbin/nats-server", "/usr/bin/nats-server", "/usr/local/bin/nats-server"] {
        if Path::new(candidate).exists() {
            return candidate.into();
        }
    }
    panic!("nats-server is not installed: run the tests with `cargo xtask test` (it installs Debian's nats-server), or set LATTICE_NATS_SERVER")
}

/// A port no listener has, from 26000 to 31999: below the kernel's range
/// for outgoing connections, above the stack's ports (`lattice_stack::
/// free_port`, 20000 to 25999), and handed out once per process, so two
/// servers started side by side never share one.
fn free_port() -> u16 {
    use std::collections::HashSet;
    use std::hash::{BuildHasher, Hasher};
    use std::sync::{Mutex, OnceLock};
    static GIVEN: OnceLock<Mutex<HashSet<u16>>> = OnceLock::new();
    let mut given = GIVEN.get_or_init(Mutex::default).lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    loop {
        // RandomState's keys are random per process and move on each call,
        // so an empty hash is a random number: no clock, no dependency.
        let h = std::collections::hash_map::RandomState::new().build_hasher();
        let port = 26_000 + (h.finish() % 6_000) as u16;
        if !given.contains(&port) && std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            given.insert(port);
            return port;
        }
    }
}

impl NatsServer {
    /// JetStream, no authorization.
    pub fn start() -> Self {
        Self::start_with(None, Vec::new())
    }

    /// With a configuration file (and the environment it reads).
    pub fn start_with(config: Option<&Path>, env: Vec<(String, String)>) -> Self {
        Self::start_binary(binary(), config, env)
    }

    /// A given nats-server binary (another version than the machine's).
    pub fn start_binary(binary: PathBuf, config: Option<&Path>, env: Vec<(String, String)>) -> Self {
        let port = free_port();
        let store = std::env::temp_dir().join(format!("lattice-nats-{port}"));
        let _ = std::fs::remove_dir_all(&store);
        std::fs::create_dir_all(&store).unwrap();
        let mut server =
            Self { child: None, binary, port, url: format!("nats://127.0.0.1:{port}"), store, config: config.map(Path::to_path_buf), env };
        server.spawn();
        server
    }

    fn spawn(&mut self) {
        let mut cmd = Command::new(&self.binary);
        cmd.args(["-a", "127.0.0.1", "-p", &self.port.to_string(), "-js", "-sd"]).arg(&self.store);
        if let Some(config) = &self.config {
            cmd.arg("-c").arg(config);
        }
        cmd.envs(self.env.iter().cloned()).stdout(Stdio::null()).stderr(Stdio::null());
        self.child = Some(cmd.spawn().expect("starting nats-server"));
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "nats-server did not start on port {}", self.port);
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stops (SIGKILL) and starts again on the same port and store.
    pub fn restart(&mut self) {
        self.stop();
        self.spawn();
    }

    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.store);
    }
}

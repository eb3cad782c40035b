//! The local stack (REQUIREMENTS.md O2, X1): real PostgreSQL and NATS started natively,
//! migrations run, and each lattice service as its own process (`serve log`,
//! `serve bridge`, `serve mcp`, `serve edge`), on loopback ports. `just up`
//! runs one in the foreground under `./data/stack` until Ctrl-C, and `just
//! down` stops exactly what it started (the pid files under `run/`); the
//! acceptance suite starts one on free ports. Dropped, a stack stops.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The token secret of every stack and harness process: local only.
pub const SECRET: &str = "lattice-e2e-secret-lattice-e2e-secret-0123";

/// The `lattice` binary of this build (`cargo xtask test` builds it first).
pub fn binary() -> PathBuf {
    if let Some(path) = std::env::var_os("LATTICE_BIN") {
        return path.into();
    }
    // Test executables live in target/<profile>/deps, the harness's own
    // binaries in target/<profile>; `lattice` is in target/<profile>.
    let exe = std::env::current_exe().expect("the test's own path");
    let dir = exe.parent().expect("the executable's folder");
    let profile_dir = if dir.ends_with("deps") { dir.parent().expect("target/<profile>") } else { dir };
    let bin = profile_dir.join("lattice");
    assert!(bin.exists(), "{} is missing: build it with `cargo build -p lattice` (cargo xtask test does), or set LATTICE_BIN", bin.display());
    bin
}

/// `lattice migrate` against `database_url`, as an operator runs it before
/// the services: they never change the schema themselves.
pub fn migrate(database_url: &str) -> Result<(), String> {
    let out = std::process::Command::new(binary())
        .arg("migrate")
        .env("LATTICE_DATABASE_URL", database_url)
        .env("LATTICE_PROFILE", "local")
        .env("LATTICE_AUTH_SECRET", SECRET)
        .env("LATTICE_LOG", "warn")
        .output()
        .map_err(|e| format!("lattice migrate: {e}"))?;
    if out.status.success() { Ok(()) } else { Err(format!("lattice migrate failed: {}", String::from_utf8_lossy(&out.stderr))) }
}

/// A port no listener has, from below the kernel's range for outgoing
/// connections (32768 and up): a port taken from that range can be given
/// to some process's outgoing connection between being chosen here and
/// being bound by the server it is for. A port is handed out once per
/// process: two servers started side by side (parallel tests) would
/// otherwise be given the same port before either binds it, and the one
/// that loses the race would be answered for by the other. The test kit's
/// NATS servers take theirs from 26000 up, so the two never meet.
pub fn free_port() -> u16 {
    use std::collections::HashSet;
    use std::hash::{BuildHasher, Hasher};
    use std::sync::{Mutex, OnceLock};
    static GIVEN: OnceLock<Mutex<HashSet<u16>>> = OnceLock::new();
    let mut given = GIVEN.get_or_init(Mutex::default).lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    loop {
        // RandomState's keys are random per process and move on each call,
        // so an empty hash is a random number: no clock, no dependency.
        let h = std::collections::hash_map::RandomState::new().build_hasher();
        let port = 20_000 + (h.finish() % 6_000) as u16;
        if !given.contains(&port) && std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            given.insert(port);
            return port;
        }
    }
}

/// Where each part listens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ports {
    pub portal: u16,
    pub apps: u16,
    pub log: u16,
    pub mcp: u16,
    /// The bridge's health and readiness.
    pub bridge: u16,
    pub postgres: u16,
    pub nats: u16,
    /// The OpenID provider people sign in with (`just up` only).
    pub idp: u16,
}

impl Ports {
    /// `just up`'s: the portal and apps origin where `cargo up` has them.
    pub const STANDARD: Ports = Ports { portal: 8080, apps: 8081, log: 8090, mcp: 8091, bridge: 8092, postgres: 5433, nats: 4223, idp: 8094 };

    pub fn free() -> Self {
        Self {
            portal: free_port(),
            apps: free_port(),
            log: free_port(),
            mcp: free_port(),
            bridge: free_port(),
            postgres: free_port(),
            nats: free_port(),
            idp: free_port(),
        }
    }

    /// `portal,apps,log,mcp,bridge,postgres,nats[,idp]`, as LATTICE_STACK_PORTS gives them.
    pub fn parse(text: &str) -> Result<Self, String> {
        let n: Vec<u16> =
            text.split(',').map(|p| p.trim().parse::<u16>()).collect::<Result<_, _>>().map_err(|e| format!("LATTICE_STACK_PORTS: {e}"))?;
        match n[..] {
            [portal, apps, log, mcp, bridge, postgres, nats] => Ok(Self { portal, apps, log, mcp, bridge, postgres, nats, idp: Self::STANDARD.idp }),
            [portal, apps, log, mcp, bridge, postgres, nats, idp] => Ok(Self { portal, apps, log, mcp, bridge, postgres, nats, idp }),
            _ => Err("LATTICE_STACK_PORTS: seven or eight ports: portal,apps,log,mcp,bridge,postgres,nats[,idp]".into()),
        }
    }

    /// Every port with its name, as a list LATTICE_STACK_PORTS takes.
    pub fn list(&self) -> String {
        self.all().iter().map(|(_, p)| p.to_string()).collect::<Vec<_>>().join(",")
    }

    fn all(&self) -> [(&'static str, u16); 8] {
        [
            ("portal", self.portal),
            ("apps", self.apps),
            ("log", self.log),
            ("mcp", self.mcp),
            ("bridge", self.bridge),
            ("postgres", self.postgres),
            ("nats", self.nats),
            ("idp", self.idp),
        ]
    }
}

/// Whose stack: the suite's (NATS under testcontainers when an engine
/// answers) or `just up`'s (all native).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Suite,
    Local,
}

/// A running stack.
pub struct Stack {
    pub dir: PathBuf,
    pub ports: Ports,
    /// The portal (the chat, `/v1`, `/mcp`), as browsers reach it.
    pub portal: String,
    /// The apps origin.
    pub apps: String,
    /// The log service directly.
    pub log: String,
    pub database_url: String,
    pub nats_url: String,
    /// The processes it started, reaped when it stops (their pids are also
    /// in `run/`, for `just down` from another terminal).
    children: Vec<(String, Child)>,
    /// A temporary folder, removed once everything in it has stopped.
    remove_dir: bool,
    /// More environment for every lattice process (a test's OTLP endpoint).
    env: Vec<(String, String)>,
    /// NATS, when it runs under testcontainers; dropped, it stops.
    nats_container: Option<testcontainers::Container<testcontainers::GenericImage>>,
    /// How NATS runs: natively or under testcontainers, and why.
    pub nats_engine: String,
    /// The ports of the log replicas after the first (`log-2`, `log-3`, …),
    /// which the edge takes requests to in turn with the first.
    more_logs: Vec<u16>,
}

/// The local stack's NATS users (infra/nats/nats.conf) and passwords: a
/// loopback-only development stack, so fixed ones.
pub const NATS_USERS: [(&str, &str); 3] = [("bridge", "local-bridge"), ("rules", "local-rules"), ("service", "local-service")];

/// The local provider's client secret for lattice (a loopback-only
/// development stack: a fixed one).
const IDP_SECRET: &str = "the local stack's provider secret, loopback only";

/// Who signs in with the local provider (their password is their name),
/// and their groups: `lattice-admins` gives the tenant admin role.
const IDP_PEOPLE: [(&str, &[&str]); 2] = [("demo", &["lattice-admins"]), ("ana", &["staff"])];

/// The lattice services, in the order they start.
const SERVICES: [&str; 4] = ["log", "bridge", "mcp", "edge"];

impl Stack {
    /// Starts everything under `dir`.
    pub fn start(dir: &Path, ports: Ports, mode: Mode) -> Result<Self, String> {
        Self::start_with(dir, ports, mode, &[])
    }

    /// With more environment for every lattice process.
    pub fn start_with(dir: &Path, ports: Ports, mode: Mode, env: &[(&str, &str)]) -> Result<Self, String> {
        Self::start_replicated(dir, ports, mode, env, &[])
    }

    /// With log replicas beyond the first on `more_logs` (`log-2` on the
    /// first of them, and so on), all behind the edge: what a deployment
    /// that restarts one replica at a time runs (`cargo xtask bench soak`).
    pub fn start_replicated(dir: &Path, ports: Ports, mode: Mode, env: &[(&str, &str)], more_logs: &[u16]) -> Result<Self, String> {
        let named = more_logs.iter().enumerate().map(|(i, port)| (format!("log-{}", i + 2), *port));
        for (name, port) in ports.all().into_iter().map(|(n, p)| (n.to_owned(), p)).chain(named) {
            if TcpListener::bind(("127.0.0.1", port)).is_err() {
                return Err(format!("port {port} ({name}) is taken: is a stack already up? (`just down` stops it)"));
            }
        }
        for sub in ["logs", "run", "nats"] {
            std::fs::create_dir_all(dir.join(sub)).map_err(|e| format!("creating {}: {e}", dir.join(sub).display()))?;
        }
        let dir = dir.canonicalize().map_err(|e| e.to_string())?;
        let database_url = format!("postgres://postgres@127.0.0.1:{}/postgres", ports.postgres);
        let nats_url = format!("nats://127.0.0.1:{}", ports.nats);
        let mut stack = Stack {
            portal: format!("http://127.0.0.1:{}", ports.portal),
            // Another site than the portal's (127.0.0.1).
            apps: format!("http://localhost:{}", ports.apps),
            log: format!("http://127.0.0.1:{}", ports.log),
            dir,
            ports,
            database_url,
            nats_url,
            children: Vec::new(),
            remove_dir: false,
            env: env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
            nats_container: None,
            nats_engine: String::new(),
            more_logs: more_logs.to_vec(),
        };
        let started = stack.start_all(mode);
        if let Err(e) = started {
            let _ = stop(&stack.dir);
            stack.children.clear();
            return Err(e);
        }
        Ok(stack)
    }

    /// A stack on free ports in a temporary folder, for one test: stopped
    /// and removed when dropped.
    pub fn temporary() -> Result<Self, String> {
        Self::temporary_with(&[])
    }

    /// The same, with more environment for every lattice process.
    /// Free ports are chosen before the processes bind them, and another
    /// test's process may take one in between: a start that fails is tried
    /// again on new ports, three times in all.
    pub fn temporary_with(env: &[(&str, &str)]) -> Result<Self, String> {
        let mut failures = Vec::new();
        for _ in 0..3 {
            let dir = std::env::temp_dir().join(format!("lattice-stack-{}", free_port()));
            match Self::start_with(&dir, Ports::free(), Mode::Suite, env) {
                Ok(mut stack) => {
                    stack.remove_dir = true;
                    return Ok(stack);
                }
                Err(e) => {
                    let _ = std::fs::remove_dir_all(&dir);
                    eprintln!("the stack did not start ({e}); again on other ports");
                    failures.push(e);
                }
            }
        }
        Err(failures.join("\n"))
    }

    fn start_all(&mut self, mode: Mode) -> Result<(), String> {
        postgres_start(&self.dir, self.ports.postgres)?;
        // The shipped configuration: users whose permissions reserve the ui
        // namespace to the bridge, with the local stack's passwords. Under
        // testcontainers when an engine answers (and the stack is the
        // suite's), else a native process.
        let conf = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../infra/nats/nats.conf").canonicalize().map_err(|e| e.to_string())?;
        let engine = match mode {
            Mode::Local => Err("the local stack (just up) runs natively".to_owned()),
            Mode::Suite => container_engine(),
        };
        match engine.and_then(|host| self.nats_in_container(&conf).map(|c| (c, host))) {
            Ok((container, host)) => {
                self.nats_engine = format!("testcontainers ({NATS_IMAGE} at {host}, container {})", &container.id()[..12]);
                self.nats_container = Some(container);
            }
            Err(why) => {
                let mut nats = Command::new(nats_server()?);
                nats.arg("-c").arg(&conf).args(["-a", "127.0.0.1", "-p", &self.ports.nats.to_string(), "-sd"]).arg(self.dir.join("nats"));
                for (user, password) in NATS_USERS {
                    nats.env(format!("LATTICE_NATS_{}_PASSWORD", user.to_uppercase()), password);
                }
                self.spawn("nats", nats, false)?;
                self.nats_engine = format!("a native process ({why})");
            }
        }
        if mode == Mode::Local {
            self.start_idp()?;
        }
        let migrate = self.lattice(&["migrate"]).output().map_err(|e| format!("lattice migrate: {e}"))?;
        if !migrate.status.success() {
            return Err(format!("lattice migrate failed: {}", String::from_utf8_lossy(&migrate.stderr)));
        }
        for service in SERVICES {
            let more: Vec<String> = if service == "log" { (2..self.more_logs.len() + 2).map(|n| format!("log-{n}")).collect() } else { Vec::new() };
            for name in std::iter::once(service.to_owned()).chain(more) {
                let cmd = self.service(&name)?;
                self.spawn(&name, cmd, false)?;
                let url = self.ready_url(&name)?;
                self.wait_ready(&url, &name)?;
            }
        }
        Ok(())
    }

    /// The local stack's OpenID provider (oidc-provider, `e2e/idp/`): the
    /// demo's people sign in with it, and lattice's services take it as
    /// provider `local`, bound to tenant `demo`.
    fn start_idp(&mut self) -> Result<(), String> {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../e2e/idp/provider.mjs").canonicalize().map_err(|e| e.to_string())?;
        let portal = &self.portal;
        let config = serde_json::json!({
            "port": self.ports.idp,
            "clients": [{
                "client_id": "lattice", "client_secret": IDP_SECRET,
                "redirect_uris": [format!("{portal}/v1/auth/oidc/local/callback")],
                "post_logout_redirect_uris": [format!("{portal}/")],
                "backchannel_logout_uri": format!("{portal}/v1/auth/oidc/local/backchannel-logout"),
                "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
                "token_endpoint_auth_method": "client_secret_basic"
            }],
            "accounts": IDP_PEOPLE.iter().map(|(id, groups)| serde_json::json!({
                "id": id, "password": id,
                "claims": {"preferred_username": id, "name": id, "email": format!("{id}@demo.example"), "email_verified": true, "groups": groups}
            })).collect::<Vec<_>>(),
            "resources": [{"indicator": format!("{portal}/mcp"), "scopes": ["mcp"]}]
        });
        let path = self.dir.join("idp.json");
        std::fs::write(&path, config.to_string()).map_err(|e| format!("writing {}: {e}", path.display()))?;
        std::fs::write(self.dir.join("idp-secret"), IDP_SECRET).map_err(|e| e.to_string())?;
        let mut node = Command::new("node");
        node.arg(&script).arg(&path);
        self.spawn_with_stdin("idp", node)?;
        let discovery = format!("{}/.well-known/openid-configuration", self.idp_url());
        self.wait_ready(&discovery, "idp")
    }

    fn idp_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.ports.idp)
    }

    /// The command that starts the service `name` (`log`, `log-2`, …,
    /// `bridge`, `mcp`, `edge`).
    fn service(&self, name: &str) -> Result<Command, String> {
        match self.replica_port(name) {
            Some(port) => {
                let mut cmd = self.lattice(&["serve", "log"]);
                cmd.env("LATTICE_HTTP_ADDR", format!("127.0.0.1:{port}"));
                Ok(cmd)
            }
            None if SERVICES.contains(&name) => Ok(self.lattice(&["serve", name])),
            None => Err(format!("the stack has no service {name:?}")),
        }
    }

    /// The port of the log replica `log-N` (N from 2), if the stack has it.
    fn replica_port(&self, name: &str) -> Option<u16> {
        let n: usize = name.strip_prefix("log-")?.parse().ok()?;
        self.more_logs.get(n.checked_sub(2)?).copied()
    }

    /// Where `name` says it is ready.
    fn ready_url(&self, name: &str) -> Result<String, String> {
        let port = match name {
            "log" => self.ports.log,
            "mcp" => self.ports.mcp,
            "bridge" => self.ports.bridge,
            "edge" => self.ports.portal,
            other => self.replica_port(other).ok_or_else(|| format!("the stack has no service {other:?}"))?,
        };
        Ok(format!("http://127.0.0.1:{port}/readyz"))
    }

    /// Every log replica's URL, comma-separated: what the edge takes
    /// requests to in turn.
    fn log_urls(&self) -> String {
        std::iter::once(self.log.clone()).chain(self.more_logs.iter().map(|p| format!("http://127.0.0.1:{p}"))).collect::<Vec<_>>().join(",")
    }

    /// Kills the service `name` (SIGKILL: no chance to finish what it was
    /// doing, as a crashed process or a lost machine) and starts it again
    /// on its port; returns once it is ready. Its log goes on in the same
    /// file.
    pub fn restart(&mut self, name: &str) -> Result<(), String> {
        let at = self.children.iter().position(|(n, _)| n == name).ok_or_else(|| format!("the stack did not start {name:?}"))?;
        let (_, mut child) = self.children.remove(at);
        let _ = child.kill();
        let _ = child.wait();
        let cmd = self.service(name)?;
        self.spawn(name, cmd, true)?;
        let url = self.ready_url(name)?;
        self.wait_ready(&url, name)
    }

    /// Each process the stack runs, by name, with its pid: the lattice
    /// services, NATS when it runs natively, and PostgreSQL's postmaster
    /// as `postgres` (its backends are its children).
    pub fn processes(&self) -> Vec<(String, u32)> {
        let mut out: Vec<(String, u32)> = self.children.iter().map(|(name, child)| (name.clone(), child.id())).collect();
        let postmaster = std::fs::read_to_string(self.dir.join("pg").join("postmaster.pid")).unwrap_or_default();
        if let Some(pid) = postmaster.lines().next().and_then(|l| l.trim().parse().ok()) {
            out.push(("postgres".into(), pid));
        }
        out
    }

    /// `lattice ARGS` with the stack's configuration for every service.
    fn lattice(&self, args: &[&str]) -> Command {
        let p = self.ports;
        let http = match args {
            [_, "mcp"] => p.mcp,
            [_, "edge"] => p.portal,
            [_, "bridge"] => p.bridge,
            _ => p.log,
        };
        let mut cmd = Command::new(binary());
        cmd.args(args)
            .current_dir(&self.dir)
            .env("LATTICE_PROFILE", "local")
            .env("LATTICE_DATABASE_URL", &self.database_url)
            .env("LATTICE_DATA_DIR", &self.dir)
            .env("LATTICE_AUTH_SECRET", SECRET)
            .env("LATTICE_HTTP_ADDR", format!("127.0.0.1:{http}"))
            .env("LATTICE_APPS_ADDR", format!("127.0.0.1:{}", p.apps))
            .env("LATTICE_APPS_ORIGIN", &self.apps)
            .env("LATTICE_PORTAL_ORIGIN", &self.portal)
            .env("LATTICE_LOG_URL", &self.log)
            .env("LATTICE_MCP_URL", format!("http://127.0.0.1:{}", p.mcp))
            .env("LATTICE_LOG", std::env::var("LATTICE_STACK_LOG").unwrap_or_else(|_| "info".into()));
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        // The edge on this machine fronts the log service and the exporter:
        // its word on the name a request came by is believed, no one else's.
        if matches!(args, [_, "log" | "mcp"]) {
            cmd.env("LATTICE_TRUSTED_PROXIES", "127.0.0.1,::1");
        }
        if args == ["serve", "edge"] {
            cmd.env("LATTICE_LOG_URL", self.log_urls());
        }
        if self.dir.join("idp.json").exists() {
            let secret = self.dir.join("idp-secret");
            let provider = format!(
                "{{local = {{issuer = \"{}\", client_id = \"lattice\", client_secret_file = \"{}\", title = \"the local provider\", tenant = \"demo\", scopes = [\"openid\", \"profile\", \"email\", \"groups\"], roles = {{lattice-admins = \"tenant_admin\"}}}}}}",
                self.idp_url(),
                secret.display()
            );
            cmd.env("LATTICE_OIDC_PROVIDERS", provider).env("LATTICE_MCP_SCOPES", "mcp");
        }
        if args == ["serve", "bridge"] {
            cmd.env("LATTICE_NATS_URL", &self.nats_url).env("LATTICE_NATS_USER", "bridge").env("LATTICE_NATS_PASSWORD", NATS_USERS[0].1);
        } else {
            cmd.env_remove("LATTICE_NATS_URL");
        }
        cmd
    }

    /// [`Stack::spawn`], its stdin kept open while the stack runs (the
    /// provider ends when its stdin closes, so it never outlives the stack).
    fn spawn_with_stdin(&mut self, name: &str, mut cmd: Command) -> Result<(), String> {
        let path = self.dir.join("logs").join(format!("{name}.log"));
        let log = std::fs::File::create(&path).map_err(|e| e.to_string())?;
        let err = log.try_clone().map_err(|e| e.to_string())?;
        cmd.stdin(Stdio::piped()).stdout(log).stderr(err);
        let child = cmd.spawn().map_err(|e| format!("starting {name}: {e}"))?;
        std::fs::write(self.dir.join("run").join(format!("{name}.pid")), child.id().to_string()).map_err(|e| e.to_string())?;
        self.children.push((name.to_owned(), child));
        Ok(())
    }

    /// Starts `cmd` as `name`: output to `logs/NAME.log` (after what it
    /// holds when `append`), pid to `run/NAME.pid`.
    fn spawn(&mut self, name: &str, mut cmd: Command, append: bool) -> Result<(), String> {
        let path = self.dir.join("logs").join(format!("{name}.log"));
        let log = std::fs::OpenOptions::new().create(true).write(true).append(append).truncate(!append).open(&path).map_err(|e| e.to_string())?;
        let err = log.try_clone().map_err(|e| e.to_string())?;
        cmd.stdin(Stdio::null()).stdout(log).stderr(err);
        let child = cmd.spawn().map_err(|e| format!("starting {name}: {e}"))?;
        std::fs::write(self.dir.join("run").join(format!("{name}.pid")), child.id().to_string()).map_err(|e| e.to_string())?;
        self.children.push((name.to_owned(), child));
        Ok(())
    }

    /// Waits until `service` answers at `url`; an early exit (a port taken
    /// since it was chosen, say) is an error at once, with its log's end.
    fn wait_ready(&mut self, url: &str, service: &str) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let exited = self.exited().is_some_and(|name| name == service);
            // An answer while the service has exited is some other
            // process's, on a port it took first.
            if answers_200(url) && !exited {
                return Ok(());
            }
            if exited || Instant::now() > deadline {
                let log = std::fs::read_to_string(self.dir.join("logs").join(format!("{service}.log"))).unwrap_or_default();
                let tail: Vec<&str> = log.lines().rev().take(5).collect::<Vec<_>>().into_iter().rev().collect();
                let how = if exited { "exited" } else { "did not become ready" };
                return Err(format!("{service} {how} at {url}; its log ends:\n{}", tail.join("\n")));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The first of its processes that has exited, if one has.
    pub fn exited(&mut self) -> Option<String> {
        self.children.iter_mut().find_map(|(name, child)| child.try_wait().ok().flatten().map(|_| name.clone()))
    }

    /// NATS in a container of the image the test command builds, on the
    /// host's network (the project's engine has no bridge).
    /// The runner finds the engine where `container_engine` did: DOCKER_HOST.
    fn nats_in_container(&self, conf: &Path) -> Result<testcontainers::Container<testcontainers::GenericImage>, String> {
        use testcontainers::core::{Mount, WaitFor};
        use testcontainers::runners::SyncRunner;
        use testcontainers::{GenericImage, ImageExt};
        let (name, tag) = NATS_IMAGE.split_once(':').unwrap_or((NATS_IMAGE, "latest"));
        let mut request = GenericImage::new(name, tag)
            .with_wait_for(WaitFor::message_on_stderr("Server is ready"))
            .with_network("host")
            .with_mount(Mount::bind_mount(conf.display().to_string(), "/etc/nats/nats.conf"))
            .with_cmd(["-c", "/etc/nats/nats.conf", "-a", "127.0.0.1", "-p", &self.ports.nats.to_string(), "-sd", "/data"]);
        for (user, password) in NATS_USERS {
            request = request.with_env_var(format!("LATTICE_NATS_{}_PASSWORD", user.to_uppercase()), password);
        }
        request.start().map_err(|e| format!("testcontainers could not start {NATS_IMAGE}: {e}"))
    }

    /// What to print when it is up.
    pub fn urls(&self) -> String {
        let idp = if self.dir.join("idp.json").exists() {
            format!("\nsign-in    {} (\"Sign in with the local provider\": demo/demo is a tenant admin, ana/ana a member)", self.idp_url())
        } else {
            String::new()
        };
        format!(
            "the chat   {portal}/\nadmin      {portal}/admin\nMCP        {portal}/mcp\napps       {apps}\nlog API    {log}/v1\nPostgreSQL {db}\nNATS       {nats} (user rules, password {rules}, to consume)\nlogs       {dir}/logs{idp}",
            portal = self.portal,
            apps = self.apps,
            log = self.log,
            db = self.database_url,
            nats = self.nats_url,
            rules = NATS_USERS[1].1,
            dir = self.dir.display()
        )
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        let _ = stop(&self.dir);
        for (_, child) in &mut self.children {
            let _ = child.wait();
        }
        // NATS' container stops before its folder goes; on a thread of its
        // own, since the blocking runner may not run inside a test's runtime.
        if let Some(container) = self.nats_container.take() {
            let _ = std::thread::spawn(move || drop(container)).join();
        }
        if self.remove_dir {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Stops what a stack under `dir` started: each pid of `run/`, asked to stop
/// (SIGTERM) and killed after 20 s, then PostgreSQL. Returns what it stopped.
pub fn stop(dir: &Path) -> Result<Vec<String>, String> {
    let run = dir.join("run");
    let mut stopped = Vec::new();
    for name in in_stopping_order(dir) {
        let file = run.join(format!("{name}.pid"));
        let Ok(text) = std::fs::read_to_string(&file) else { continue };
        if let Ok(pid) = text.trim().parse::<i32>()
            && terminate(pid)
        {
            stopped.push(format!("{name} (pid {pid})"));
        }
        let _ = std::fs::remove_file(file);
    }
    if dir.join("pg").join("postmaster.pid").exists() {
        postgres_stop(dir)?;
        stopped.push("postgres".into());
    }
    Ok(stopped)
}

/// What a stack under `dir` has running, by name and pid.
pub fn started(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for name in in_stopping_order(dir) {
        if let Some(pid) = std::fs::read_to_string(dir.join("run").join(format!("{name}.pid"))).ok().and_then(|t| t.trim().parse::<i32>().ok())
            && alive(pid)
        {
            out.push(format!("{name} (pid {pid})"));
        }
    }
    if dir.join("pg").join("postmaster.pid").exists() {
        out.push("postgres".into());
    }
    out
}

/// The names a stack under `dir` may have pid files for, in the order
/// they stop: the services, each log replica after the first (`log-2`, …)
/// before the first, then NATS.
fn in_stopping_order(dir: &Path) -> Vec<String> {
    let mut replicas: Vec<(usize, String)> = std::fs::read_dir(dir.join("run"))
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?.strip_suffix(".pid")?.to_owned();
            Some((name.strip_prefix("log-")?.parse().ok()?, name))
        })
        .collect();
    replicas.sort();
    let mut names: Vec<String> = Vec::new();
    for service in SERVICES.iter().rev() {
        if *service == "log" {
            names.extend(replicas.iter().rev().map(|(_, n)| n.clone()));
        }
        names.push((*service).to_owned());
    }
    names.push("nats".into());
    names
}

/// SIGTERM, a wait for the exit, SIGKILL after 20 s; false when it was gone.
fn terminate(pid: i32) -> bool {
    // A pid whose process is gone may have been reused: only our binaries are stopped.
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap_or_default();
    let name = exe.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_owned();
    if !(name.starts_with("lattice") || name.starts_with("nats-server")) {
        return false;
    }
    unsafe {
        libc::kill(pid, libc::SIGTERM);
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while alive(pid) {
        if Instant::now() > deadline {
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    true
}

/// Whether `pid` runs (a zombie, exited but not reaped, does not).
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// One plain HTTP/1.0 GET of `http://host:port/path`: whether it answered 200.
fn answers_200(url: &str) -> bool {
    use std::io::{Read, Write};
    let Some(rest) = url.strip_prefix("http://") else { return false };
    let (host, path) = rest.split_once('/').map_or((rest, "/".to_owned()), |(h, p)| (h, format!("/{p}")));
    let Ok(mut stream) = std::net::TcpStream::connect(host) else { return false };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    if stream.write_all(format!("GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n").as_bytes()).is_err() {
        return false;
    }
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).is_ok() && head.ends_with(b" 200")
}

fn nats_server() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("LATTICE_NATS_SERVER") {
        return Ok(path.into());
    }
    ["/usr/sbin/nats-server", "/usr/bin/nats-server", "/usr/local/bin/nats-server"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .ok_or_else(|| "nats-server is not installed: `cargo xtask stack up` installs it (Debian's nats-server)".into())
}

fn postgres_bin() -> Result<PathBuf, String> {
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map_err(|_| "PostgreSQL is not installed: `cargo xtask stack up` installs it (Debian's postgresql)".to_owned())?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|p| p.join("pg_ctl").exists())
        .collect();
    versions.sort();
    versions.pop().ok_or_else(|| "no PostgreSQL under /usr/lib/postgresql".into())
}

fn is_root() -> bool {
    unsafe { libc::geteuid() == 0 }
}

/// A PostgreSQL tool, as the `postgres` user when we are root (the server
/// refuses to run as root).
fn pg_tool(tool: &str) -> Result<Command, String> {
    let bin = postgres_bin()?.join(tool);
    Ok(if is_root() {
        let mut cmd = Command::new("runuser");
        cmd.args(["-u", "postgres", "--"]).arg(bin);
        cmd
    } else {
        Command::new(bin)
    })
}

fn checked(cmd: &mut Command, what: &str) -> Result<(), String> {
    let out = cmd.output().map_err(|e| format!("{what}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("{what} failed: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
    }
}

pub fn postgres_start(dir: &Path, port: u16) -> Result<(), String> {
    let data = dir.join("pg");
    if is_root() && Command::new("id").arg("postgres").output().map(|o| !o.status.success()).unwrap_or(true) {
        checked(Command::new("useradd").args(["--system", "--no-create-home", "postgres"]), "useradd postgres")?;
    }
    if !data.join("PG_VERSION").exists() {
        std::fs::create_dir_all(&data).map_err(|e| e.to_string())?;
        if is_root() {
            checked(Command::new("chown").args(["-R", "postgres"]).arg(&data), "chown")?;
        }
        let mut init = pg_tool("initdb")?;
        init.arg("-D").arg(&data).args(["-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"]);
        checked(&mut init, "initdb")?;
    }
    let log = dir.join("logs").join("postgres.log");
    if is_root() {
        std::fs::write(&log, "").map_err(|e| e.to_string())?;
        checked(Command::new("chown").arg("postgres").arg(&log), "chown")?;
    }
    let options = format!("-c listen_addresses=127.0.0.1 -p {port} -k {} -c max_connections=200", data.display());
    let mut start = pg_tool("pg_ctl")?;
    start.arg("-D").arg(&data).arg("-l").arg(&log).args(["-w", "-t", "60", "-o", &options, "start"]);
    checked(&mut start, "starting PostgreSQL").map_err(|e| format!("{e}\n{}", std::fs::read_to_string(&log).unwrap_or_default()))
}

pub fn postgres_stop(dir: &Path) -> Result<(), String> {
    let mut stop = pg_tool("pg_ctl")?;
    stop.arg("-D").arg(dir.join("pg")).args(["-m", "fast", "-w", "-t", "60", "stop"]);
    checked(&mut stop, "stopping PostgreSQL")
}

/// The ports of `ports` that something still listens on.
pub fn taken(ports: &Ports) -> Vec<(&'static str, u16)> {
    ports.all().into_iter().filter(|(_, port)| TcpListener::bind(("127.0.0.1", *port)).is_err()).collect()
}

/// The image the test command builds for the harness (`xtask/src/containers.rs`).
pub const NATS_IMAGE: &str = "lattice-nats:local";

/// A container engine that answers `/_ping` at DOCKER_HOST (a unix
/// socket), or why there is none.
pub fn container_engine() -> Result<String, String> {
    use std::io::{Read, Write};
    let host = std::env::var("DOCKER_HOST").map_err(|_| "no container engine: DOCKER_HOST is not set".to_owned())?;
    let path = host.strip_prefix("unix://").ok_or_else(|| format!("DOCKER_HOST {host} is not a unix socket"))?;
    let mut stream = std::os::unix::net::UnixStream::connect(path).map_err(|e| format!("no container engine at {host}: {e}"))?;
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let mut head = [0u8; 12];
    stream.write_all(b"GET /_ping HTTP/1.0\r\n\r\n").map_err(|e| e.to_string())?;
    stream.read_exact(&mut head).map_err(|e| e.to_string())?;
    if head.ends_with(b" 200") { Ok(host) } else { Err(format!("the engine at {host} does not answer /_ping")) }
}

impl Stack {
    /// How the harness runs the parts, for the suites' reports.
    pub fn engine(&self) -> String {
        format!("PostgreSQL and lattice serve log, bridge, mcp, edge as native processes on loopback ports; NATS as {}", self.nats_engine)
    }
}

//! `edge`: requests per second through the edge against the same requests
//! without it, in this run, on this machine.
//!
//! - An authenticated read (`GET /v1/workspaces` with a bearer token): to
//!   the log service directly, through the edge's `/v1` pass-through, and
//!   through the edge's peer, Debian's nginx, configured as the best-practice
//!   reverse proxy for the same hop (kept-alive upstream connections, the
//!   answer streamed and the request held as the edge does; `cargo xtask
//!   bench edge` installs it): throughput as a ratio, and each one's p99.
//! - The sandbox proxy document: from the apps origin (its cookie-dropping
//!   layer, its headers), and the same bytes from a bare axum handler.
//!
//! 32 clients with keep-alive on each side. This machine's speed drifts
//! by a fifth and more within seconds (the same side read 7,505 and
//! 10,480/s in windows 15 s apart), so the sides take turns in short windows:
//! each is warmed once (1 s: its connections opened), then twelve rounds
//! of every side in turn (A B C D E A B C D E ...), each side 0.2 s to let
//! what the one before left settle and 0.5 s counted. A drift then falls
//! on every side alike, and each figure is the sum of its twelve windows.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use lattice_core::TenantRole;

const CLIENTS: usize = 32;
/// A side's first warm-up: its connections opened, its caches filled.
const FIRST_WARM: Duration = Duration::from_secs(1);
/// Before each of a side's windows, uncounted.
const SETTLE: Duration = Duration::from_millis(200);
/// A side's counted window, in each round.
const WINDOW: Duration = Duration::from_millis(500);
const ROUNDS: usize = 12;

/// This process's CPU time so far (user and system, all threads), in
/// seconds: the clients, the edge and the log service, not PostgreSQL.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // After the command's `)`: state is field 3, utime 14 and stime 15.
    let fields: Vec<&str> = stat.rsplit_once(')').map_or("", |(_, rest)| rest).split_whitespace().collect();
    let ticks = |i: usize| fields.get(i - 3).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(14) + ticks(15)) / 100.0
}

/// One side: `GET url` by `CLIENTS` clients whose connections outlive
/// its windows.
struct Side {
    name: &'static str,
    client: reqwest::Client,
    url: String,
    token: Option<String>,
    /// Requests counted, this process's CPU seconds while they were, and
    /// their latencies, over the windows so far.
    count: u64,
    cpu: f64,
    took: Vec<Duration>,
}

impl Side {
    fn new(name: &'static str, url: String, token: Option<&str>) -> Self {
        let client = crate::setup::http().pool_max_idle_per_host(CLIENTS).build().unwrap();
        Self { name, client, url, token: token.map(str::to_owned), count: 0, cpu: 0.0, took: Vec::new() }
    }

    /// Requests for `warm`, then for `WINDOW` counted; `counted` false
    /// counts nothing (the first warm-up).
    async fn window(&mut self, warm: Duration, counted: bool) {
        let start = Instant::now();
        let measuring_from = start + warm;
        let end = measuring_from + if counted { WINDOW } else { Duration::ZERO };
        let cpu = tokio::spawn(async move {
            tokio::time::sleep_until(measuring_from.into()).await;
            let from = cpu_seconds();
            tokio::time::sleep_until(end.into()).await;
            cpu_seconds() - from
        });
        let count = Arc::new(AtomicU64::new(0));
        let mut tasks = Vec::new();
        for _ in 0..CLIENTS {
            let (client, count, url, token) = (self.client.clone(), count.clone(), self.url.clone(), self.token.clone());
            tasks.push(tokio::spawn(async move {
                let mut took = Vec::new();
                while Instant::now() < end {
                    let sent = Instant::now();
                    let mut req = client.get(&url);
                    if let Some(t) = &token {
                        req = req.bearer_auth(t);
                    }
                    let r = req.send().await.expect("a response");
                    assert!(r.status().is_success(), "{url}: {}", r.status());
                    let _ = r.bytes().await.expect("a body");
                    // Answered within the window.
                    let answered = Instant::now();
                    if (measuring_from..=end).contains(&answered) {
                        count.fetch_add(1, Ordering::Relaxed);
                        took.push(answered - sent);
                    }
                }
                took
            }));
        }
        for t in tasks {
            let took = t.await.unwrap();
            if counted {
                self.took.extend(took);
            }
        }
        let cpu = cpu.await.unwrap();
        if counted {
            self.count += count.load(Ordering::Relaxed);
            self.cpu += cpu;
        }
    }

    /// Requests per second, CPU seconds per request and p99 (seconds)
    /// over every window.
    fn figures(&mut self) -> (f64, f64, f64) {
        self.took.sort_unstable();
        let p99 = self.took.get(self.took.len() * 99 / 100).map_or(0.0, Duration::as_secs_f64);
        let count = self.count as f64;
        (count / (WINDOW.as_secs_f64() * ROUNDS as f64), self.cpu / count.max(1.0), p99)
    }
}

/// Debian's nginx as the reverse proxy of `upstream` (`http://host:port`),
/// running until dropped.
struct Nginx {
    child: std::process::Child,
    url: String,
    _dir: std::path::PathBuf,
}

impl Nginx {
    fn start(upstream: &str) -> Self {
        let binary = std::env::var("LATTICE_NGINX").unwrap_or_else(|_| "/usr/sbin/nginx".into());
        let dir = std::env::temp_dir().join(format!("lattice-bench-nginx-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let upstream = upstream.trim_start_matches("http://");
        let d = dir.display();
        // What a reverse proxy for this hop is configured as: connections to
        // the upstream kept alive (HTTP/1.1, no `Connection: close`), the
        // answer streamed as it comes (the edge holds none: SSE passes), the
        // request's body held (as the edge holds it, to 4 MiB), no access
        // log (the edge writes none), a worker per core.
        let conf = format!(
            "worker_processes auto;\ndaemon off;\npid {d}/nginx.pid;\nerror_log {d}/error.log warn;\n\
             events {{ worker_connections 4096; }}\n\
             http {{\n  access_log off;\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n\
             fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n\
             tcp_nodelay on;\n  keepalive_requests 100000;\n\
             upstream log {{ server {upstream}; keepalive 64; keepalive_requests 100000; }}\n\
             server {{\n    listen 127.0.0.1:{port} reuseport;\n    location / {{\n      proxy_pass http://log;\n\
             proxy_http_version 1.1;\n      proxy_set_header Connection \"\";\n\
             proxy_set_header X-Forwarded-Host $host;\n      proxy_set_header X-Forwarded-Proto $scheme;\n\
             proxy_buffering off;\n      proxy_request_buffering on;\n      client_max_body_size 4m;\n    }}\n  }}\n}}\n"
        );
        let path = dir.join("nginx.conf");
        std::fs::write(&path, conf).unwrap();
        let child = std::process::Command::new(&binary)
            .arg("-c")
            .arg(&path)
            .arg("-p")
            .arg(&dir)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{binary} does not start ({e}): `cargo xtask bench edge` installs Debian's nginx"));
        let url = format!("http://127.0.0.1:{port}");
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(started.elapsed() < Duration::from_secs(10), "nginx did not listen on {port}: {}", dir.join("error.log").display());
            std::thread::sleep(Duration::from_millis(20));
        }
        Self { child, url, _dir: dir }
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // TERM, which the master passes to its workers (a KILL would leave
        // them running).
        let _ = std::process::Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self._dir);
    }
}

pub async fn run() {
    crate::setup::postgres_from_xtask();
    let (log, _thread) = crate::setup::service(16).await;
    let (_stop, shutdown) = tokio::sync::watch::channel(false);
    let state = crate::setup::api_state(&log, lattice_api::guard::Limits::default(), shutdown);
    let direct = crate::setup::serve(lattice_api::router(state)).await;
    let edge = crate::setup::serve(lattice_edge::upstream_router(&direct)).await;
    let portal = "http://127.0.0.1:1".to_owned();
    let apps = crate::setup::serve_without_peers(lattice_edge::apps_router(lattice_edge::AppsOrigin {
        portal_origin: portal,
        sdk_dir: None,
        allowances: Default::default(),
    }))
    .await;
    let document = crate::setup::http().build().unwrap().get(format!("{apps}/sandbox")).send().await.unwrap().bytes().await.unwrap();
    let bare = crate::setup::serve_without_peers(axum::Router::new().route(
        "/sandbox",
        axum::routing::get(move || {
            let body = document.clone();
            async move { ([(axum::http::header::CONTENT_TYPE, "text/html; charset=utf-8")], body) }
        }),
    ))
    .await;
    let token = lattice_testkit::token("t1", "alice", TenantRole::Member);
    let nginx = Nginx::start(&direct);

    let mut sides = [
        Side::new("authenticated-read direct", format!("{direct}/v1/workspaces"), Some(&token)),
        Side::new("authenticated-read through-edge", format!("{edge}/v1/workspaces"), Some(&token)),
        Side::new("authenticated-read through-nginx", format!("{}/v1/workspaces", nginx.url), Some(&token)),
        Side::new("proxy-document bare-axum", format!("{bare}/sandbox"), None),
        Side::new("proxy-document apps-origin", format!("{apps}/sandbox"), None),
    ];
    for side in &mut sides {
        side.window(FIRST_WARM, false).await;
    }
    for _ in 0..ROUNDS {
        for side in &mut sides {
            side.window(SETTLE, true).await;
        }
    }
    drop(nginx);
    let measured = sides.each_mut().map(Side::figures);
    for (side, (rps, cpu, _)) in sides.iter().zip(measured) {
        println!("edge {} {rps:.0} requests/s, {:.0} µs of this process's CPU a request", side.name, cpu * 1e6);
    }
    let [(read_direct, cpu_direct, _), (read_edge, cpu_edge, p99_edge), (read_nginx, _, p99_nginx), (doc_bare, ..), (doc_apps, ..)] = measured;
    println!("p99_ms {:.2} an authenticated read through the edge", p99_edge * 1e3);
    println!("p99_ms {:.2} an authenticated read through nginx", p99_nginx * 1e3);
    println!("edge hop: {:.0} µs more of this process's CPU a read through the edge (PostgreSQL's not counted)", (cpu_edge - cpu_direct) * 1e6);
    let read = read_edge / read_direct;
    let doc = doc_apps / doc_bare;
    println!("ratio {read:.3} an authenticated read through the edge vs directly to the log service");
    println!("ratio {doc:.3} the proxy document from the apps origin vs a bare axum handler");
    println!("ratio {:.3} edge (the lower of the two)", read.min(doc));
    println!("ratio {:.3} edge vs nginx, an authenticated read through each to the log service", read_edge / read_nginx);
}

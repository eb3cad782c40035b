//! `edge`: requests per second through the edge against the same requests
//! without it, in this run, on this machine.
//!
//! - An authenticated read (`GET /v1/workspaces` with a bearer token): to
//!   the log service directly, and through the edge's `/v1` pass-through.
//! - The sandbox proxy document: from the apps origin (its cookie-dropping
//!   layer, its headers), and the same bytes from a bare axum handler.
//!
//! 32 clients with keep-alive, 1 s of warm-up, then 2 s measured, each
//! side three times in turn (A B A B A B), so a drift in the machine's speed
//! falls on both sides alike.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use lattice_core::TenantRole;
use tokio::net::TcpListener;

const CLIENTS: usize = 32;
const WARM: Duration = Duration::from_secs(1);
const MEASURE: Duration = Duration::from_secs(2);
const ROUNDS: usize = 3;

async fn serve(router: axum::Router) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        let _ = tcp.set_nodelay(true);
    });
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    format!("http://{addr}")
}

/// This process's CPU time so far (user and system, all threads), in
/// seconds: the clients, the edge and the log service, not PostgreSQL.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // After the command's `)`: state is field 3, utime 14 and stime 15.
    let fields: Vec<&str> = stat.rsplit_once(')').map_or("", |(_, rest)| rest).split_whitespace().collect();
    let ticks = |i: usize| fields.get(i - 3).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(14) + ticks(15)) / 100.0
}

/// Requests per second of `GET url` by `CLIENTS` clients, and the
/// process's CPU seconds per request while they were counted.
async fn rate(url: &str, token: Option<&str>) -> (f64, f64) {
    let client = crate::setup::http().pool_max_idle_per_host(CLIENTS).build().unwrap();
    let count = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let measuring_from = start + WARM;
    let end = measuring_from + MEASURE;
    let cpu = tokio::spawn(async move {
        tokio::time::sleep_until(measuring_from.into()).await;
        let from = cpu_seconds();
        tokio::time::sleep_until(end.into()).await;
        cpu_seconds() - from
    });
    let mut tasks = Vec::new();
    for _ in 0..CLIENTS {
        let (client, count, url, token) = (client.clone(), count.clone(), url.to_owned(), token.map(str::to_owned));
        tasks.push(tokio::spawn(async move {
            while Instant::now() < end {
                let mut req = client.get(&url);
                if let Some(t) = &token {
                    req = req.bearer_auth(t);
                }
                let r = req.send().await.expect("a response");
                assert!(r.status().is_success(), "{url}: {}", r.status());
                let _ = r.bytes().await.expect("a body");
                if Instant::now() >= measuring_from {
                    count.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let count = count.load(Ordering::Relaxed) as f64;
    (count / MEASURE.as_secs_f64(), cpu.await.unwrap() / count.max(1.0))
}

pub async fn run() {
    crate::setup::postgres_from_xtask();
    let (log, _thread) = crate::setup::service(16).await;
    let runner = lattice_agent::Runner::new(lattice_testkit::trusted(&log), lattice_agent::Models::scripted());
    let (_stop, shutdown) = tokio::sync::watch::channel(false);
    let apps = lattice_app_calls::AppCalls::new(log.clone(), Default::default());
    let state = lattice_api::AppState {
        log,
        runner,
        apps,
        dev_sign_in: false,
        max_body_bytes: 1 << 20,
        guard: std::sync::Arc::new(lattice_api::guard::Guard::new(lattice_api::guard::Limits::default())),
        readiness: None,
        switch_heartbeat: std::time::Duration::from_secs(5),
        shutdown,
    };
    let direct = serve(lattice_api::router(state)).await;
    let edge = serve(lattice_edge::upstream_router(&direct)).await;
    let portal = "http://127.0.0.1:1".to_owned();
    let apps = serve(lattice_edge::apps_router(lattice_edge::AppsOrigin { portal_origin: portal, sdk_dir: None })).await;
    let document = crate::setup::http().build().unwrap().get(format!("{apps}/sandbox")).send().await.unwrap().bytes().await.unwrap();
    let bare = serve(axum::Router::new().route(
        "/sandbox",
        axum::routing::get(move || {
            let body = document.clone();
            async move { ([(axum::http::header::CONTENT_TYPE, "text/html; charset=utf-8")], body) }
        }),
    ))
    .await;
    let token = lattice_testkit::token("t1", "alice", TenantRole::Member);

    let sides = [
        ("authenticated-read direct", format!("{direct}/v1/workspaces"), Some(&token)),
        ("authenticated-read through-edge", format!("{edge}/v1/workspaces"), Some(&token)),
        ("proxy-document bare-axum", format!("{bare}/sandbox"), None),
        ("proxy-document apps-origin", format!("{apps}/sandbox"), None),
    ];
    // Requests per second and CPU seconds per request, each side's mean.
    let mut measured = [(0.0, 0.0); 4];
    for _ in 0..ROUNDS {
        for ((_, url, token), sum) in sides.iter().zip(&mut measured) {
            let (rps, cpu) = rate(url, token.map(String::as_str)).await;
            sum.0 += rps / ROUNDS as f64;
            sum.1 += cpu / ROUNDS as f64;
        }
    }
    for ((name, ..), (rps, cpu)) in sides.iter().zip(measured) {
        println!("edge {name} {rps:.0} requests/s, {:.0} µs of this process's CPU a request", cpu * 1e6);
    }
    let [(read_direct, cpu_direct), (read_edge, cpu_edge), (doc_bare, _), (doc_apps, _)] = measured;
    println!("edge hop: {:.0} µs more of this process's CPU a read through the edge (PostgreSQL's not counted)", (cpu_edge - cpu_direct) * 1e6);
    let read = read_edge / read_direct;
    let doc = doc_apps / doc_bare;
    println!("ratio {read:.3} an authenticated read through the edge vs directly to the log service");
    println!("ratio {doc:.3} the proxy document from the apps origin vs a bare axum handler");
    println!("ratio {:.3} edge (the lower of the two)", read.min(doc));
}

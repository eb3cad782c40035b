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

/// Requests per second of `GET url` by `CLIENTS` clients.
async fn rate(url: &str, token: Option<&str>) -> f64 {
    let client = crate::setup::http().pool_max_idle_per_host(CLIENTS).build().unwrap();
    let count = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let measuring_from = start + WARM;
    let end = measuring_from + MEASURE;
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
    count.load(Ordering::Relaxed) as f64 / MEASURE.as_secs_f64()
}

pub async fn run() {
    crate::setup::postgres_from_xtask();
    let (log, _thread) = crate::setup::service(16).await;
    let runner = lattice_agent::Runner::new(lattice_testkit::trusted(&log), lattice_agent::Models::scripted());
    let (_stop, shutdown) = tokio::sync::watch::channel(false);
    let apps = lattice_apps::AppCalls::new(log.clone(), Default::default());
    let state = lattice_api::AppState { log, runner, apps, dev_sign_in: false, max_body_bytes: 1 << 20, guard: std::sync::Arc::new(lattice_api::guard::Guard::new(lattice_api::guard::Limits::default())), readiness: None, switch_heartbeat: std::time::Duration::from_secs(5), shutdown };
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

    let (mut read_direct, mut read_edge, mut doc_bare, mut doc_apps) = (0.0, 0.0, 0.0, 0.0);
    for _ in 0..ROUNDS {
        read_direct += rate(&format!("{direct}/v1/workspaces"), Some(&token)).await / ROUNDS as f64;
        read_edge += rate(&format!("{edge}/v1/workspaces"), Some(&token)).await / ROUNDS as f64;
        doc_bare += rate(&format!("{bare}/sandbox"), None).await / ROUNDS as f64;
        doc_apps += rate(&format!("{apps}/sandbox"), None).await / ROUNDS as f64;
    }
    println!("edge authenticated-read direct {read_direct:.0} requests/s");
    println!("edge authenticated-read through-edge {read_edge:.0} requests/s");
    println!("edge proxy-document bare-axum {doc_bare:.0} requests/s");
    println!("edge proxy-document apps-origin {doc_apps:.0} requests/s");
    let read = read_edge / read_direct;
    let doc = doc_apps / doc_bare;
    println!("ratio {read:.3} an authenticated read through the edge vs directly to the log service");
    println!("ratio {doc:.3} the proxy document from the apps origin vs a bare axum handler");
    println!("ratio {:.3} edge (the lower of the two)", read.min(doc));
}

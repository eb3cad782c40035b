//! What every benchmark on PostgreSQL starts from.

use lattice_core::{Command, TenantRole, ThreadId, WorkspaceId};
use lattice_log::{Backend, Db, LogService};

/// `cargo xtask bench` starts PostgreSQL and passes its URL; the test kit
/// reads it under the tests' name.
pub fn postgres_from_xtask() {
    if std::env::var(lattice_testkit::POSTGRES_ENV).is_err()
        && let Ok(url) = std::env::var("LATTICE_BENCH_POSTGRES_URL")
    {
        // SAFETY: set before any other thread reads the environment.
        unsafe { std::env::set_var(lattice_testkit::POSTGRES_ENV, url) };
    }
}

/// A log service on a fresh PostgreSQL database, with a workspace and a
/// thread of alice's to write in.
pub async fn service(connections: u32) -> (LogService, ThreadId) {
    let url = lattice_testkit::fresh_url(Backend::Postgres).await;
    let db = Db::connect(&url, connections).await.expect("connecting");
    db.migrate().await.expect("migrating");
    let log = lattice_testkit::service_on(db);
    let alice = lattice_testkit::who("t1", "alice", TenantRole::Member);
    let thread = thread_of(&log, &alice).await;
    (log, thread)
}

/// A new workspace of `who`'s with a thread in it.
pub async fn thread_of(log: &LogService, who: &lattice_log::Authenticated) -> ThreadId {
    let alice = who;
    let ws = log.execute(alice, Command::CreateWorkspace { name: "bench".into() }).await.unwrap().id.unwrap();
    let th = log
        .execute(alice, Command::CreateThread { workspace: WorkspaceId::parse("ws", &ws).unwrap(), title: "bench".into(), restricted: false })
        .await
        .unwrap()
        .id
        .unwrap();
    ThreadId::parse("th", &th).unwrap()
}

/// An HTTP client builder with rustls on ring, as the binary's.
pub fn http() -> reqwest::ClientBuilder {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
}

/// The API over `log` as `lattice serve log` serves it, with the scripted
/// models, the caller limits given and no dev sign-in.
pub fn api_state(log: &LogService, limits: lattice_api::guard::Limits, shutdown: tokio::sync::watch::Receiver<bool>) -> lattice_api::AppState {
    lattice_api::AppState {
        log: log.clone(),
        runner: lattice_agent::Runner::new(lattice_testkit::trusted(log), lattice_agent::Models::scripted()),
        apps: lattice_app_calls::AppCalls::new(log.clone(), Default::default()),
        dev_sign_in: false,
        identity: None,
        portal_origin: "http://127.0.0.1:8080".into(),
        max_body_bytes: 1 << 20,
        guard: std::sync::Arc::new(lattice_api::guard::Guard::new(limits)),
        readiness: None,
        switch_heartbeat: std::time::Duration::from_secs(5),
        shutdown,
    }
}

/// Serves `router` on `listener` as `lattice serve` serves its main
/// listener: Nagle's algorithm off, and each connection a clone of the
/// router with its peer's address. Served as a bare `Router`, axum would
/// build the whole route table again for every connection
/// (`Router::with_state` per connection): with the API's routes, tens of
/// KiB an open stream that the product does not spend.
pub async fn serve_on(listener: tokio::net::TcpListener, router: axum::Router) {
    axum::serve(without_delay(listener), router.into_make_service_with_connect_info::<std::net::SocketAddr>()).await.unwrap();
}

/// [`serve_on`] a free loopback port, in the background: its URL.
pub async fn serve(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(serve_on(listener, router));
    format!("http://{addr}")
}

/// As [`serve`], without the peer's address: as `lattice serve` serves
/// the apps origin.
pub async fn serve_without_peers(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(without_delay(listener), router.into_make_service()).await.unwrap() });
    format!("http://{addr}")
}

fn without_delay(listener: tokio::net::TcpListener) -> axum::serve::TapIo<tokio::net::TcpListener, fn(&mut tokio::net::TcpStream)> {
    fn no_delay(tcp: &mut tokio::net::TcpStream) {
        let _ = tcp.set_nodelay(true);
    }
    axum::serve::ListenerExt::tap_io(listener, no_delay as fn(&mut tokio::net::TcpStream))
}

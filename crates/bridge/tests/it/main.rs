//! The bridge against a real nats-server (started here) and the real log
//! service, on both backends.

mod chains;
mod files;
mod leader;
mod permissions;
mod projections;
mod reads;
mod schema;
mod slow_writer;
mod stalled_checkpoint;
mod tls;
mod trace;

use async_nats::jetstream;
use serde_json::Value;

/// Every message in the LATTICE stream: (subject, Nats-Msg-Id, payload).
pub async fn stream_messages(js: &jetstream::Context) -> Vec<(String, String, Value)> {
    // The bridge creates the stream when it connects: none yet, nothing in it.
    let Ok(mut stream) = js.get_stream(lattice_bridge::STREAM).await else { return Vec::new() };
    let info = stream.info().await.unwrap().clone();
    let mut out = Vec::new();
    if info.state.messages == 0 {
        return out;
    }
    for seq in info.state.first_sequence..=info.state.last_sequence {
        let Ok(m) = stream.get_raw_message(seq).await else { continue };
        let id = m.headers.get("Nats-Msg-Id").map(|v| v.as_str().to_owned()).unwrap_or_default();
        out.push((m.subject.to_string(), id, serde_json::from_slice(&m.payload).unwrap_or(Value::Null)));
    }
    out
}

/// The bridge over `log`, publishing to the NATS at `url` (no user) until
/// `stop`, minting chains under the key the log service checks them with.
pub fn spawn_bridge(
    log: &lattice_log::LogService,
    url: &str,
    stop: tokio::sync::watch::Receiver<bool>,
) -> tokio::task::JoinHandle<Result<(), lattice_core::Error>> {
    let config = lattice_bridge::BridgeConfig {
        nats_url: url.to_owned(),
        user: None,
        password: None,
        name: "bridge".into(),
        ca_file: None,
        stream_replicas: 1,
    };
    let chains = log.authenticator().chains().clone();
    tokio::spawn(lattice_bridge::Bridge::new(lattice_log::LogReader::of(log), config).with_chains(chains).run(stop))
}

/// A fresh PostgreSQL database with the log on it, a workspace and a
/// thread by alice, and a nats-server: what a test of one bridge starts from.
pub struct OnPostgres {
    pub nats: lattice_testkit::nats::NatsServer,
    pub url: String,
    pub log: lattice_log::LogService,
    pub alice: lattice_log::Authenticated,
    pub workspace: String,
    pub thread: String,
}

impl OnPostgres {
    pub async fn start() -> Self {
        use lattice_core::TenantRole;
        let nats = lattice_testkit::nats::NatsServer::start();
        let url = lattice_testkit::fresh_url(lattice_log::Backend::Postgres).await;
        let db = lattice_log::Db::connect(&url, 8).await.unwrap();
        db.migrate().await.unwrap();
        let log = lattice_testkit::service_on(db);
        let alice = lattice_testkit::who("t1", "alice", TenantRole::Member);
        let (workspace, thread) = a_thread(&log, &alice, false).await;
        Self { nats, url, log, alice, workspace, thread: thread.to_string() }
    }
}

/// A workspace "W" made by `who`, and a thread "T" in it: their ids.
pub async fn a_thread(log: &lattice_log::LogService, who: &lattice_log::Authenticated, restricted: bool) -> (String, lattice_core::ThreadId) {
    use lattice_core::{Command, ThreadId, WorkspaceId};
    let workspace = log.execute(who, Command::CreateWorkspace { name: "W".into() }).await.unwrap().id.unwrap();
    let thread = log
        .execute(who, Command::CreateThread { workspace: WorkspaceId::parse("w", &workspace).unwrap(), title: "T".into(), restricted })
        .await
        .unwrap()
        .id
        .unwrap();
    (workspace, ThreadId::parse("th", &thread).unwrap())
}

//! The log service's store suite: every test runs against SQLite and
//! PostgreSQL (`name::sqlite`, `name::postgres`).

mod access;
#[cfg(target_os = "linux")]
mod connections;
mod deadlines;
mod horizon;
mod migrations;
mod proofs;
mod queries;
mod reads;
mod replicas;
mod requests_order;
mod revocation;
mod sessions;
mod switches;
mod waiting;
mod write_path;

use lattice_core::{Command, ThreadId, WorkspaceId};
use lattice_log::{Authenticated, LogService};

/// A workspace with a thread, made by `who`.
pub async fn workspace_with_thread(log: &LogService, who: &Authenticated) -> (WorkspaceId, ThreadId) {
    let ws = log.execute(who, Command::CreateWorkspace { name: "W".into() }).await.unwrap().id.unwrap();
    let ws = WorkspaceId::parse("ws", &ws).unwrap();
    let th = log.execute(who, Command::CreateThread { workspace: ws.clone(), title: "T".into(), restricted: false }).await.unwrap().id.unwrap();
    (ws, ThreadId::parse("th", &th).unwrap())
}

pub fn dashboard(title: &str) -> serde_json::Value {
    serde_json::json!({"title": title, "as_of": "2026-11-29T12:00:00Z", "panels": [
        {"type": "metric", "label": "Open incidents", "value": 3}
    ]})
}

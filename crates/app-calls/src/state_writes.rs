//! `set_state` writes, coalesced (REQUIREMENTS.md M5): a busy app makes at most one
//! version per five seconds per caller. Calls that arrive inside the window
//! wait for the one write that carries all their operations, and its one
//! audit row, which says how many calls it carries.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use lattice_core::{ArtifactId, Audit, Command, Error};
use lattice_log::{Authenticated, LogService};
use serde_json::{Value, json};
use tokio::sync::{Mutex, oneshot};

/// At most one version per app and caller per this.
const EVERY: Duration = Duration::from_secs(5);

/// Whose writes wait together: the tenant, the app and the caller.
type Writer = (String, String, String);

#[derive(Clone, Default)]
pub(crate) struct StateWrites(Arc<Mutex<HashMap<Writer, Pending>>>);

#[derive(Default)]
struct Pending {
    ops: Vec<Value>,
    waiting: Vec<oneshot::Sender<Result<Value, Error>>>,
    audit: Option<Audit>,
    calls: u64,
    scheduled: bool,
    last_write: Option<Instant>,
}

impl StateWrites {
    pub(crate) async fn write(&self, log: &LogService, who: &Authenticated, app: &str, ops: Vec<Value>, audit: Audit) -> Result<Value, Error> {
        let p = who.principal();
        let key = (p.tenant.to_string(), app.to_owned(), p.user.to_string());
        let (tx, rx) = oneshot::channel();
        let delay = {
            let mut all = self.0.lock().await;
            let pending = all.entry(key.clone()).or_default();
            pending.ops.extend(ops);
            pending.waiting.push(tx);
            pending.calls += 1;
            pending.audit.get_or_insert(audit);
            if pending.scheduled {
                None
            } else {
                pending.scheduled = true;
                Some(pending.last_write.map_or(Duration::ZERO, |at| (at + EVERY).saturating_duration_since(Instant::now())))
            }
        };
        if let Some(delay) = delay {
            let (writes, log, who) = (self.clone(), log.clone(), who.clone());
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                writes.flush(&log, &who, key).await;
            });
        }
        rx.await.unwrap_or_else(|_| Err(Error::unavailable("the state write was dropped")))
    }

    async fn flush(&self, log: &LogService, who: &Authenticated, key: Writer) {
        let (ops, waiting, audit, calls) = {
            let mut all = self.0.lock().await;
            let pending = all.entry(key.clone()).or_default();
            pending.scheduled = false;
            pending.last_write = Some(Instant::now());
            let calls = std::mem::take(&mut pending.calls);
            (std::mem::take(&mut pending.ops), std::mem::take(&mut pending.waiting), pending.audit.take(), calls)
        };
        let Some(mut audit) = audit else { return };
        if let Some(data) = audit.data.as_object_mut() {
            data.insert("calls".into(), json!(calls));
        }
        let outcome = write_now(log, who, &key.1, ops, audit).await;
        for w in waiting {
            let _ = w.send(outcome.clone());
        }
        // Once its window has passed with nothing new, the caller is
        // forgotten: the map holds only callers writing now.
        let writes = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(EVERY).await;
            let mut all = writes.0.lock().await;
            if all.get(&key).is_some_and(|p| !p.scheduled && p.last_write.is_some_and(|t| t.elapsed() >= EVERY)) {
                all.remove(&key);
            }
        });
    }
}

/// One version of the app's state, with its audit row.
pub(crate) async fn write_now(log: &LogService, who: &Authenticated, app: &str, mut ops: Vec<Value>, audit: Audit) -> Result<Value, Error> {
    let id = ArtifactId::from_trusted(app);
    let head = log.artifact(who, &id, None).await?;
    // An app made without a state gets one at its first write.
    if head.data.get("state").is_none_or(Value::is_null) {
        ops.insert(0, json!({"op": "add", "path": "/state", "value": {}}));
    }
    let patch = serde_json::from_value(Value::Array(ops)).map_err(|e| Error::field("arguments.patch", "patch", e.to_string()))?;
    let done = log.execute_audited(who, Command::EditArtifact { id, expected_version: head.version, patch }, audit).await?;
    Ok(done.receipt())
}

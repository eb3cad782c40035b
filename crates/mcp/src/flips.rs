//! Switch flips, told only to the sessions they concern: a deployment
//! flip to every tenant's, a tenant's flip and a flip of one of its
//! workspaces to that tenant's. One dispatcher per exporter follows the
//! log's switch changes and reads which tenants they were for, so that one
//! tenant admin's flip costs the other tenants' sessions nothing (each
//! woken session reads its switches again).
//!
//! The log tells only that some switch changed (`LogService::switch_changes`,
//! a sequence number); which tenant it concerns is read from the switch
//! envelopes since the last one seen (`Sessions::tenants_flipped`), once
//! per flip, not once per session.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use lattice_core::TenantId;
use lattice_core::envelope::DEPLOYMENT_TENANT;
use lattice_log::LogService;
use tokio::sync::watch;

/// The flips of each tenant, told to its sessions' watchers.
#[derive(Clone)]
pub(crate) struct Flips {
    inner: Arc<Inner>,
}

struct Inner {
    log: LogService,
    /// Per tenant, the sequence number of the last flip that concerned it.
    tenants: Mutex<HashMap<String, watch::Sender<i64>>>,
    started: AtomicBool,
    /// The last switch change every concerned watcher was told of.
    dispatched: watch::Sender<i64>,
}

impl Flips {
    pub(crate) fn new(log: LogService) -> Self {
        Self { inner: Arc::new(Inner { log, tenants: Mutex::default(), started: AtomicBool::new(false), dispatched: watch::channel(0).0 }) }
    }

    /// Moves whenever a flip concerns `tenant`: its own, one of its
    /// workspaces', the deployment's. A watcher reads its switches after
    /// taking this, so nothing that flipped before escapes it.
    pub(crate) fn watch(&self, tenant: &TenantId) -> watch::Receiver<i64> {
        if !self.inner.started.swap(true, Ordering::AcqRel) {
            // Taken before the horizon is read: no flip falls between.
            let changes = self.inner.log.switch_changes();
            let after = self.inner.log.horizon().current();
            tokio::spawn(dispatch(Arc::downgrade(&self.inner), self.inner.log.sessions(), changes, after));
        }
        let mut tenants = self.inner.tenants.lock().expect("never poisoned");
        tenants.entry(tenant.to_string()).or_insert_with(|| watch::channel(0).0).subscribe()
    }

    /// Follows the last switch change whose watchers were all told.
    #[cfg(test)]
    pub(crate) fn dispatched(&self) -> watch::Receiver<i64> {
        self.inner.dispatched.subscribe()
    }
}

impl Inner {
    /// Tells the watchers of the tenants in `flipped` (all of them for the
    /// deployment) that the switches moved to `seq`, in one pass.
    fn wake(&self, flipped: &[String], seq: i64) {
        let mut tenants = self.tenants.lock().expect("never poisoned");
        // A tenant whose sessions all ended is forgotten.
        tenants.retain(|_, tx| tx.receiver_count() > 0);
        if flipped.iter().any(|t| t == DEPLOYMENT_TENANT) {
            tenants.values().for_each(|tx| {
                tx.send_replace(seq);
            });
        } else {
            for tenant in flipped {
                if let Some(tx) = tenants.get(tenant) {
                    tx.send_replace(seq);
                }
            }
        }
        drop(tenants);
        self.dispatched.send_replace(seq);
    }
}

/// Follows the log's switch changes after `after` until the exporter or
/// the log service is gone.
async fn dispatch(inner: Weak<Inner>, table: lattice_log::Sessions, mut changes: watch::Receiver<i64>, mut after: i64) {
    loop {
        if changes.changed().await.is_err() {
            return;
        }
        let to = *changes.borrow_and_update();
        if to <= after {
            continue;
        }
        let flipped = loop {
            match table.tenants_flipped(after, to).await {
                Ok(flipped) => break flipped,
                Err(e) => {
                    tracing::warn!(error = %e, "the MCP flips' dispatcher cannot read the log; retrying");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        };
        let Some(inner) = inner.upgrade() else { return };
        inner.wake(&flipped, to);
        after = to;
    }
}

#[cfg(test)]
mod tests {
    use lattice_core::{Command, Level, SwitchKey, SwitchState, TenantId, TenantRole, WorkspaceId};
    use lattice_testkit::who;

    use super::Flips;

    fn tenant(id: &str) -> TenantId {
        TenantId::parse("tenant", id).unwrap()
    }

    async fn flip(log: &lattice_log::LogService, who: &lattice_log::Authenticated, level: Level) -> i64 {
        let set = Command::SetSwitch { level, key: SwitchKey::Forms, state: SwitchState::Off, reason: "testing the flips".into() };
        log.execute(who, set).await.unwrap().seq
    }

    /// The dispatcher is done with `seq` (every watcher it concerns told).
    async fn dispatched(flips: &Flips, seq: i64) {
        let mut done = flips.dispatched();
        tokio::time::timeout(std::time::Duration::from_secs(10), done.wait_for(|d| *d >= seq)).await.expect("the flip is dispatched").unwrap();
    }

    // A tenant's flip, and a flip of one of its workspaces, wake that
    // tenant's watchers and no other's; the deployment's wakes all.
    lattice_testkit::both_backends! {
        async fn a_flip_wakes_only_the_watchers_it_concerns(backend: Backend) {
            let log = lattice_testkit::service(backend).await;
            let flips = Flips::new(log.clone());
            let mut a = flips.watch(&tenant("ta"));
            let mut b = flips.watch(&tenant("tb"));

            let admin_a = who("ta", "root", TenantRole::TenantAdmin);
            let seq = flip(&log, &admin_a, Level::Tenant(tenant("ta"))).await;
            dispatched(&flips, seq).await;
            assert!(a.has_changed().unwrap(), "A's watcher is told of A's flip");
            assert!(!b.has_changed().unwrap(), "B's watcher is not woken by A's flip");
            a.borrow_and_update();

            let ws = log.execute(&admin_a, Command::CreateWorkspace { name: "W".into() }).await.unwrap().id.unwrap();
            let seq = flip(&log, &admin_a, Level::Workspace(WorkspaceId::parse("ws", &ws).unwrap())).await;
            dispatched(&flips, seq).await;
            assert!(a.has_changed().unwrap(), "A's watcher is told of its workspace's flip");
            assert!(!b.has_changed().unwrap(), "B's watcher is not woken by A's workspace's flip");
            a.borrow_and_update();

            let admin_b = who("tb", "root", TenantRole::TenantAdmin);
            let seq = flip(&log, &admin_b, Level::Tenant(tenant("tb"))).await;
            dispatched(&flips, seq).await;
            assert!(b.has_changed().unwrap() && !a.has_changed().unwrap(), "B's flip wakes B only");
            b.borrow_and_update();

            let operator = who("ops", "root", TenantRole::DeploymentAdmin);
            let seq = flip(&log, &operator, Level::Deployment).await;
            dispatched(&flips, seq).await;
            assert!(a.has_changed().unwrap() && b.has_changed().unwrap(), "the deployment's flip wakes every tenant's");
        }
    }
}

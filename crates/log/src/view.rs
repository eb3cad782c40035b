//! The workspace as the acting principal sees it: what checks (L5) read.

use std::sync::Arc;

use lattice_core::clock::SharedClock;
use lattice_core::{
    ArtifactId, ArtifactView, DeferredRequest, Error, FileView, Principal, Role, RunId, TenantId, ThreadId, WorkspaceId, WorkspaceView,
};

use crate::access::{Access, thread_access};
use crate::scope::LoadedRun;
use crate::store::runs::{load_requests, load_run};
use crate::store::{Db, load_artifact};

/// Reads the store (through the principal's access) and the log's clock.
pub(crate) struct ScopedView {
    db: Db,
    clock: SharedClock,
    principal: Principal,
    access: Access,
    /// The run the command names, as authorization read it.
    run: Option<Arc<LoadedRun>>,
    /// The thread the command acts in, which the principal reads.
    thread: Option<ThreadId>,
}

impl ScopedView {
    pub(crate) fn new(
        db: Db,
        clock: SharedClock,
        principal: Principal,
        access: Access,
        run: Option<Arc<LoadedRun>>,
        thread: Option<ThreadId>,
    ) -> Self {
        Self { db, clock, principal, access, run, thread }
    }
}

#[async_trait::async_trait]
impl WorkspaceView for ScopedView {
    fn tenant(&self) -> &TenantId {
        &self.access.tenant
    }

    fn workspace(&self) -> &WorkspaceId {
        &self.access.workspace
    }

    fn principal(&self) -> &Principal {
        &self.principal
    }

    fn role(&self) -> Role {
        self.access.role
    }

    fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    fn thread(&self) -> Option<&ThreadId> {
        self.thread.as_ref()
    }

    async fn artifact(&self, id: &ArtifactId, version: Option<u64>) -> Result<Option<ArtifactView>, Error> {
        let row = load_artifact(&self.db, &self.access.tenant, id, version).await?;
        // Only this workspace's artifacts, in threads the principal reads:
        // a check never reaches across, nor into a restricted thread.
        let Some(row) = row.filter(|r| r.workspace == self.access.workspace.as_str()) else { return Ok(None) };
        if self.thread.as_ref().is_none_or(|t| t.as_str() != row.thread)
            && thread_access(&self.db, &self.principal, &ThreadId::from_trusted(row.thread.clone())).await.is_err()
        {
            return Ok(None);
        }
        Ok(Some(row.view()))
    }

    async fn file(&self, id: &str) -> Result<Option<FileView>, Error> {
        let row = crate::store::files::head(&self.db, self.access.tenant.as_str(), id).await?;
        let Some(row) = row.filter(|r| r.complete && r.workspace == self.access.workspace.as_str()) else { return Ok(None) };
        if self.thread.as_ref().is_none_or(|t| t.as_str() != row.thread)
            && thread_access(&self.db, &self.principal, &ThreadId::from_trusted(row.thread.clone())).await.is_err()
        {
            return Ok(None);
        }
        Ok(Some(FileView {
            reference: row.reference(),
            thread: ThreadId::from_trusted(row.thread.clone()),
            uploader: row.uploader.clone(),
            erased: row.erased_at.is_some(),
        }))
    }

    async fn deferred_request(&self, run: &RunId, tool_call_id: &str) -> Result<Option<DeferredRequest>, Error> {
        let request = |loaded: &LoadedRun| {
            loaded.request(tool_call_id).map(|r| DeferredRequest {
                tool_call_id: r.tool_call_id.clone(),
                tool_name: r.tool_name.clone(),
                args: r.args.clone(),
                expires_in_secs: None,
                expires_at: r.expires(),
                sign_in: None,
            })
        };
        if let Some(loaded) = self.run.as_ref().filter(|l| l.run.id == run.as_str()) {
            return Ok(request(loaded));
        }
        let db = &self.db;
        let Some(row) = load_run(db, &self.access.tenant, run).await? else { return Ok(None) };
        if row.workspace != self.access.workspace.as_str() {
            return Ok(None);
        }
        let requests = load_requests(db, &self.access.tenant, &row.id).await?;
        Ok(request(&LoadedRun { run: row, requests }))
    }
}

//! The workspace as the acting principal sees it: what checks (L5) read.

use std::sync::Arc;

use lattice_core::{ArtifactId, ArtifactView, DeferredRequest, Error, Principal, Role, RunId, TenantId, ThreadId, WorkspaceId, WorkspaceView};

use crate::access::Access;
use crate::authorize::LoadedRun;
use crate::service::LogService;
use crate::store::load_artifact;

pub(crate) struct ScopedView {
    service: LogService,
    principal: Principal,
    access: Access,
    /// The run the command names, as authorization read it.
    run: Option<Arc<LoadedRun>>,
    /// The thread the command acts in, which the principal reads.
    thread: Option<ThreadId>,
}

impl ScopedView {
    pub(crate) fn new(service: LogService, principal: Principal, access: Access, run: Option<Arc<LoadedRun>>, thread: Option<ThreadId>) -> Self {
        Self { service, principal, access, run, thread }
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
        crate::clock::now_ms()
    }

    async fn artifact(&self, id: &ArtifactId, version: Option<u64>) -> Result<Option<ArtifactView>, Error> {
        let row = load_artifact(&self.service.inner.db, &self.access.tenant, id, version).await?;
        // Only this workspace's artifacts, in threads the principal reads:
        // a check never reaches across, nor into a restricted thread.
        let Some(row) = row.filter(|r| r.workspace == self.access.workspace.as_str()) else { return Ok(None) };
        if self.thread.as_ref().is_none_or(|t| t.as_str() != row.thread)
            && crate::access::thread_access(&self.service.inner.db, &self.principal, &ThreadId::from_trusted(row.thread.clone())).await.is_err()
        {
            return Ok(None);
        }
        Ok(Some(row.view()))
    }

    async fn deferred_request(&self, run: &RunId, tool_call_id: &str) -> Result<Option<DeferredRequest>, Error> {
        let request = |loaded: &LoadedRun| {
            loaded.request(tool_call_id).map(|r| DeferredRequest {
                tool_call_id: r.tool_call_id.clone(),
                tool_name: r.tool_name.clone(),
                args: r.args.clone(),
                expires_in_secs: None,
                expires_at: r.expires(),
            })
        };
        if let Some(loaded) = self.run.as_ref().filter(|l| l.run.id == run.as_str()) {
            return Ok(request(loaded));
        }
        let db = &self.service.inner.db;
        let Some(row) = crate::runs::load_run(db, &self.access.tenant, run).await? else { return Ok(None) };
        if row.workspace != self.access.workspace.as_str() {
            return Ok(None);
        }
        let requests = crate::runs::load_requests(db, &self.access.tenant, &row.id).await?;
        Ok(request(&LoadedRun { run: row, requests }))
    }
}

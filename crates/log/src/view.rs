//! The workspace as the acting principal sees it: what checks (L5) read.

use lattice_core::{ArtifactId, ArtifactView, Error, Principal, Role, TenantId, WorkspaceId, WorkspaceView};

use crate::access::Access;
use crate::service::LogService;
use crate::store::load_artifact;

pub(crate) struct ScopedView {
    service: LogService,
    principal: Principal,
    access: Access,
}

impl ScopedView {
    pub(crate) fn new(service: LogService, principal: Principal, access: Access) -> Self {
        Self { service, principal, access }
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

    async fn artifact(&self, id: &ArtifactId, version: Option<u64>) -> Result<Option<ArtifactView>, Error> {
        let row = load_artifact(&self.service.inner.db, &self.access.tenant, id, version).await?;
        // Only this workspace's artifacts: a check never reaches across.
        Ok(row.filter(|r| r.workspace == self.access.workspace.as_str()).map(|r| r.view()))
    }
}

//! The switch store (REQUIREMENTS.md I1, I2): what each level holds for each key. A
//! missing row is `unset`. Changes are commands (`SetSwitch`) and so leave
//! their audit trail in the log as `switch_set` envelopes; their writer is
//! the store's (store/switches.rs).

use lattice_core::integrations::resolve;
use std::sync::Arc;

use lattice_core::{Connected, Effective, Error, Integrations, Level, SwitchKey, SwitchState, TenantId, WorkspaceId};

use crate::store::Db;
use crate::store::switches as stored;

#[derive(Clone)]
pub struct SwitchStore {
    db: Db,
    connected: Arc<Connected>,
}

impl SwitchStore {
    pub(crate) fn new(db: Db, connected: Connected) -> Self {
        Self { db, connected: Arc::new(connected) }
    }

    /// The MCP servers the deployment connected.
    pub fn connected(&self) -> &Connected {
        &self.connected
    }

    /// The three levels' states for one key in one workspace.
    pub async fn states(&self, tenant: &TenantId, workspace: &WorkspaceId, key: SwitchKey) -> Result<[SwitchState; 3], Error> {
        let levels = [Level::Deployment.to_string(), Level::Tenant(tenant.clone()).to_string(), Level::Workspace(workspace.clone()).to_string()];
        stored::states(&self.db, &levels, key).await
    }

    /// What each of `levels` holds for each of `keys`, in one query: a
    /// missing row is `unset`. Indexed as `levels`, then as `keys`.
    pub async fn states_of(&self, levels: &[Level], keys: &[SwitchKey]) -> Result<Vec<Vec<SwitchState>>, Error> {
        stored::states_of(&self.db, levels, keys).await
    }

    /// What one level holds for one key.
    pub async fn state(&self, level: &Level, key: SwitchKey) -> Result<SwitchState, Error> {
        stored::state(&self.db, level, key).await
    }

    /// Each level that holds a state for some key, the deployment first.
    pub(crate) async fn levels_held(&self) -> Result<Vec<Level>, Error> {
        let mut levels = vec![Level::Deployment];
        for level in stored::levels_held(&self.db).await? {
            match Level::parse(&level) {
                Ok(Level::Deployment) | Err(_) => {}
                Ok(other) => levels.push(other),
            }
        }
        Ok(levels)
    }
}

#[async_trait::async_trait]
impl Integrations for SwitchStore {
    async fn effective(&self, tenant: &TenantId, workspace: &WorkspaceId, key: SwitchKey) -> Result<Effective, Error> {
        // A server this deployment does not offer the tenant is off, whatever
        // a level holds for its key.
        if let SwitchKey::Server(server) = key
            && !self.connected.offers(server, tenant)
        {
            return Ok(Effective { enabled: false, because: format!("{key} is not connected for this tenant") });
        }
        let [d, t, w] = self.states(tenant, workspace, key).await?;
        Ok(resolve(key, d, t, w))
    }
}

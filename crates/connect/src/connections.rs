//! The deployment's connected servers, by name.

use std::collections::BTreeMap;
use std::sync::Arc;

use lattice_core::{Connected, ServerKey, TenantId};

use crate::config::ServerConfig;
use crate::server::Server;

/// Cheap to clone; clones share the sessions.
#[derive(Clone, Default)]
pub struct Connections {
    servers: Arc<BTreeMap<&'static str, Arc<Server>>>,
    connected: Connected,
}

impl Connections {
    /// The servers a configuration names, each checked: the first fault
    /// is the error, in words an operator acts on.
    pub fn configure(servers: &BTreeMap<String, ServerConfig>) -> Result<Self, String> {
        Self::configure_in(servers, std::env::temp_dir().join(format!("lattice-mcp-{}", std::process::id())))
    }

    /// The same, with the stdio servers' folders (their homes) under
    /// `homes` (the deployment's data folder's `mcp/`).
    pub fn configure_in(servers: &BTreeMap<String, ServerConfig>, homes: std::path::PathBuf) -> Result<Self, String> {
        let mut by_name = BTreeMap::new();
        let mut connected = Connected::default();
        for (name, config) in servers {
            config.check(name)?;
            let key = ServerKey::configure(name).map_err(|e| e.to_string())?;
            let tenants = config
                .tenants
                .as_ref()
                .map(|list| list.iter().map(|t| TenantId::parse("tenants", t).map_err(|e| e.to_string())).collect::<Result<Vec<_>, _>>())
                .transpose()?;
            connected.add(key, tenants);
            by_name.insert(key.name(), Arc::new(Server::new(key, config.clone(), homes.clone())));
        }
        Ok(Self { servers: Arc::new(by_name), connected })
    }

    /// Which servers are connected for which tenants: what the log's
    /// switches govern.
    pub fn connected(&self) -> &Connected {
        &self.connected
    }

    pub fn get(&self, name: &str) -> Option<&Arc<Server>> {
        self.servers.get(name)
    }

    /// The servers offered to `tenant`.
    pub fn offered_to<'a>(&'a self, tenant: &'a TenantId) -> impl Iterator<Item = &'a Arc<Server>> + 'a {
        self.servers.values().filter(move |s| self.connected.offers(s.key(), tenant))
    }

    pub fn all(&self) -> impl Iterator<Item = &Arc<Server>> {
        self.servers.values()
    }

    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }
}

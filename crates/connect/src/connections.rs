//! The deployment's connected servers, by name.

use std::collections::BTreeMap;
use std::sync::Arc;

use lattice_core::{Connected, ServerKey, TenantId};

use crate::config::ServerConfig;
use crate::error::CallError;
use crate::server::Server;
use crate::sign_in::{Owner, SignIns};

/// Cheap to clone; clones share the sessions.
#[derive(Clone, Default)]
pub struct Connections {
    servers: Arc<BTreeMap<&'static str, Arc<Server>>>,
    connected: Connected,
    sign_ins: Option<SignIns>,
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
        Self::configure_with(servers, homes, None)
    }

    /// The same, people signing in to the servers that ask for it through
    /// `sign_ins`.
    pub fn configure_with(servers: &BTreeMap<String, ServerConfig>, homes: std::path::PathBuf, sign_ins: Option<SignIns>) -> Result<Self, String> {
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
            if config.sign_in.is_some() && sign_ins.is_none() {
                return Err(format!("mcp server {name}: sign_in needs the log's keeper of sign-ins (lattice serve log, lattice up)"));
            }
            // What its apps may reach, as the apps origin reads it (the
            // chat's and the apps origin are refused where those are known).
            let mut config = config.clone();
            config.app_domains = config.app_domains.allowance(&[]).map_err(|e| format!("mcp server {name}: app_domains: {e}"))?;
            by_name.insert(key.name(), Arc::new(Server::new(key, config, homes.clone(), sign_ins.clone())));
        }
        Ok(Self { servers: Arc::new(by_name), connected, sign_ins })
    }

    /// Whose sign-in `state` is, and to which server, while it may finish.
    pub async fn sign_in_of(&self, state: &str) -> Result<Option<(Owner, String)>, CallError> {
        let Some(sign_ins) = &self.sign_ins else { return Ok(None) };
        Ok(crate::sign_in::attempt(sign_ins, state).await?.map(|(owner, server, _)| (owner, server)))
    }

    /// Ends `owner`'s sign-in that a server's authorization server sent
    /// them back from (`state`, `code`, and its `iss` where it says it):
    /// answers the server. A sign-in begun by someone else is used up and
    /// refused (a link to one's own sign-in sent to another person binds
    /// nothing of theirs).
    pub async fn finish_sign_in(&self, owner: &Owner, state: &str, code: &str, issuer: Option<&str>) -> Result<String, CallError> {
        let Some(sign_ins) = &self.sign_ins else { return Err(CallError::SignIn("no server takes a person's sign-in here".into())) };
        let (begun_by, server, kept) = crate::sign_in::attempt(sign_ins, state)
            .await?
            .ok_or_else(|| CallError::SignIn("this sign-in was finished already or took too long: start again".into()))?;
        if &begun_by != owner {
            let _ = sign_ins.keeper.finish(state).await;
            return Err(CallError::SignIn("this sign-in was begun by another person: start your own".into()));
        }
        let found = self.get(&server).ok_or_else(|| CallError::SignIn(format!("{server} is no longer connected")))?;
        found.finish_sign_in(owner, &kept, state, code, issuer).await?;
        Ok(server)
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

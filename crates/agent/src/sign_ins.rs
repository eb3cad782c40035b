//! Where people's sign-ins to connected servers are kept: the log, sealed
//! (`lattice_log::Trusted`'s server connections), for lattice's MCP client
//! to act for each person alone.
//!
//! The connected servers are made before the log service starts (the log
//! needs to know which servers are connected), so the keeper is made
//! empty and given the log once it runs; until then it keeps nothing.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use lattice_connect::{Keeper, Owner};
use lattice_log::Trusted;

/// How long a sign-in begun may take to come back from the authorization
/// server.
pub const SIGN_IN_TTL: Duration = Duration::from_secs(600);

#[derive(Clone, Default)]
pub struct LogKeeper {
    trusted: Arc<OnceLock<Trusted>>,
}

impl LogKeeper {
    /// A keeper over `trusted`'s log.
    pub fn over(trusted: Trusted) -> Self {
        let keeper = Self::default();
        keeper.attach(trusted);
        keeper
    }

    /// Gives the keeper the log it keeps in (once: later calls are no-ops).
    pub fn attach(&self, trusted: Trusted) {
        let _ = self.trusted.set(trusted);
    }

    fn log(&self) -> Result<&Trusted, String> {
        self.trusted.get().ok_or_else(|| "the log service has not started".to_owned())
    }
}

#[async_trait::async_trait]
impl Keeper for LogKeeper {
    async fn load(&self, owner: &Owner, server: &str) -> Result<Option<String>, String> {
        self.log()?.server_connection(&owner.tenant, &owner.user, server).await.map_err(|e| e.to_string())
    }

    async fn save(&self, owner: &Owner, server: &str, value: &str) -> Result<(), String> {
        self.log()?.save_server_connection(&owner.tenant, &owner.user, server, value).await.map_err(|e| e.to_string())
    }

    async fn clear(&self, owner: &Owner, server: &str) -> Result<(), String> {
        self.log()?.clear_server_connection(&owner.tenant, &owner.user, server).await.map(drop).map_err(|e| e.to_string())
    }

    async fn begin(&self, state: &str, owner: &Owner, server: &str, value: &str) -> Result<(), String> {
        self.log()?.begin_server_sign_in(state, &owner.tenant, &owner.user, server, value, SIGN_IN_TTL).await.map_err(|e| e.to_string())
    }

    async fn attempt(&self, state: &str) -> Result<Option<(Owner, String, String)>, String> {
        let found = self.log()?.server_sign_in(state).await.map_err(|e| e.to_string())?;
        Ok(found.map(|(tenant, user, server, kept)| (Owner { tenant, user }, server, kept)))
    }

    async fn finish(&self, state: &str) -> Result<(), String> {
        match self.log()?.finish_server_sign_in(state).await {
            Ok(true) => Ok(()),
            Ok(false) => Err("this sign-in was finished already".to_owned()),
            Err(e) => Err(e.to_string()),
        }
    }
}

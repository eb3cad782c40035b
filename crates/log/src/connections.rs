//! People's sign-ins to connected MCP servers (R7), sealed at rest
//! (`crate::vault`): what lattice's MCP client keeps for each person and
//! server, and the sign-ins begun and not yet back. Used only for the
//! person they belong to: in-process through [`crate::Trusted`], read by
//! their person through the API (the servers, never the tokens).

use lattice_core::Error;
use lattice_core::clock::SharedClock;

use crate::auth::Authenticated;
use crate::store::Db;
use crate::store::connections as stored;
use crate::vault::{Vault, bound};

/// A connection as its person sees it: the server, since when, last renewed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionRow {
    pub server: String,
    pub connected_at: i64,
    pub updated_at: i64,
}

/// The most a sign-in may keep: tokens, the client, the authorization
/// server's metadata. An authorization server that answers more is refused
/// before anything is sealed.
pub const MAX_CONNECTION_BYTES: usize = 64 * 1024;

fn within(plain: &str) -> Result<(), Error> {
    if plain.len() > MAX_CONNECTION_BYTES {
        return Err(Error::too_large(lattice_core::Code::TooLarge, MAX_CONNECTION_BYTES as u64, plain.len() as u64));
    }
    Ok(())
}

#[derive(Clone)]
pub(crate) struct ServerConnections {
    db: Db,
    clock: SharedClock,
    vault: Vault,
}

impl ServerConnections {
    pub fn new(db: Db, clock: SharedClock, key: &[u8; 32]) -> Self {
        Self { db, clock, vault: Vault::new(key) }
    }

    /// A record that no longer opens (the deployment's secret changed) is
    /// none: the person signs in again, and their new one replaces it.
    pub async fn load(&self, tenant: &str, user: &str, server: &str) -> Result<Option<String>, Error> {
        let Some(sealed) = stored::load(&self.db, tenant, user, server).await? else { return Ok(None) };
        match self.vault.open(&sealed, &bound(tenant, user, server)) {
            Ok(plain) => Ok(Some(plain)),
            Err(_) => {
                tracing::warn!(
                    server,
                    "a person's sign-in to a server does not open under this deployment's secret; they are asked to sign in again"
                );
                Ok(None)
            }
        }
    }

    pub async fn save(&self, tenant: &str, user: &str, server: &str, plain: &str) -> Result<(), Error> {
        within(plain)?;
        let sealed = self.vault.seal(plain, &bound(tenant, user, server))?;
        stored::save(&self.db, tenant, user, server, &sealed, self.clock.now_ms()).await
    }

    pub async fn clear(&self, tenant: &str, user: &str, server: &str) -> Result<bool, Error> {
        stored::clear(&self.db, tenant, user, server).await
    }

    pub async fn of(&self, who: &Authenticated) -> Result<Vec<ConnectionRow>, Error> {
        let p = who.principal();
        let rows = stored::of_person(&self.db, p.tenant.as_str(), p.user.as_str()).await?;
        Ok(rows.into_iter().map(|(server, connected_at, updated_at)| ConnectionRow { server, connected_at, updated_at }).collect())
    }

    /// How many people are signed in to `server`: of the caller's tenant,
    /// or of every one for a deployment admin.
    pub async fn count(&self, who: &Authenticated, server: &str) -> Result<i64, Error> {
        let p = who.principal();
        let tenant = (p.role != lattice_core::TenantRole::DeploymentAdmin).then(|| p.tenant.as_str());
        stored::count(&self.db, server, tenant).await
    }

    /// Keeps a sign-in begun (what the exchange will need), for `ttl`.
    pub async fn begin(&self, state: &str, tenant: &str, user: &str, server: &str, plain: &str, ttl: std::time::Duration) -> Result<(), Error> {
        within(plain)?;
        let sealed = self.vault.seal(plain, &bound(tenant, user, server))?;
        let now = self.clock.now_ms();
        stored::begin(&self.db, state, (tenant, user, server), &sealed, now + ttl.as_millis() as i64, now).await
    }

    /// A sign-in begun: (tenant, user, server, what was kept), while in time.
    pub async fn attempt(&self, state: &str) -> Result<Option<(String, String, String, String)>, Error> {
        if state.is_empty() || state.len() > 512 {
            return Ok(None);
        }
        let Some((tenant, user, server, sealed)) = stored::attempt(&self.db, state, self.clock.now_ms()).await? else { return Ok(None) };
        let plain = self.vault.open(&sealed, &bound(&tenant, &user, &server))?;
        Ok(Some((tenant, user, server, plain)))
    }

    /// Takes a sign-in begun: once.
    pub async fn finish(&self, state: &str) -> Result<bool, Error> {
        stored::finish(&self.db, state).await
    }
}

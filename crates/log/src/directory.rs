//! A tenant's directory and credentials as their admins read them (R6):
//! the people and groups SCIM provisions, the API keys and SCIM tokens
//! issued. Only the tenant's admins read the directory (a SCIM client acts
//! as one); a workspace's admins read the keys of their workspace.

use lattice_core::directory::KeyScope;
use lattice_core::event::CredentialKind;
use lattice_core::{Error, Principal, TenantRole};

use crate::access::workspace_access;
use crate::auth::Authenticated;
use crate::store::Db;
use crate::store::credentials::{self, CredentialRow};
use crate::store::groups::{self, GroupRow};
use crate::store::people::{self, PersonRow};

/// Directory pages are read this many rows at most at a time.
pub const DIRECTORY_PAGE: i64 = 1000;

fn tenant_admin(p: &Principal) -> Result<(), Error> {
    if p.role == TenantRole::TenantAdmin && p.scope.is_none() && !p.agent {
        Ok(())
    } else {
        Err(Error::forbidden(lattice_core::Code::AdminOnly, "only the tenant's admins read its directory"))
    }
}

pub(crate) struct Directory {
    db: Db,
}

impl Directory {
    pub fn new(db: Db) -> Self {
        Self { db }
    }

    pub async fn person(&self, who: &Authenticated, user: &str) -> Result<PersonRow, Error> {
        let p = who.principal();
        tenant_admin(p)?;
        people::person(&self.db, p.tenant.as_str(), user).await?.ok_or(Error::NotFound)
    }

    pub async fn person_named(&self, who: &Authenticated, name: &str) -> Result<Option<PersonRow>, Error> {
        let p = who.principal();
        tenant_admin(p)?;
        people::person_named(&self.db, p.tenant.as_str(), name).await
    }

    pub async fn people(&self, who: &Authenticated, after: &str, limit: i64) -> Result<Vec<PersonRow>, Error> {
        let p = who.principal();
        tenant_admin(p)?;
        people::people_page(&self.db, p.tenant.as_str(), after, limit.clamp(1, DIRECTORY_PAGE)).await
    }

    /// A page of the directory's people from the `offset`th, and how many
    /// it holds.
    pub async fn people_at(&self, who: &Authenticated, offset: i64, limit: i64) -> Result<(Vec<PersonRow>, i64), Error> {
        let p = who.principal();
        tenant_admin(p)?;
        people::people_at(&self.db, p.tenant.as_str(), offset.max(0), limit.clamp(1, DIRECTORY_PAGE)).await
    }

    /// Every membership of the tenant's groups: (person, group id, name).
    pub async fn memberships(&self, who: &Authenticated) -> Result<Vec<(String, String, String)>, Error> {
        let p = who.principal();
        tenant_admin(p)?;
        groups::memberships(&self.db, p.tenant.as_str()).await
    }

    pub async fn group(&self, who: &Authenticated, id: &str) -> Result<GroupRow, Error> {
        let p = who.principal();
        tenant_admin(p)?;
        groups::group(&self.db, p.tenant.as_str(), id).await?.ok_or(Error::NotFound)
    }

    pub async fn groups(&self, who: &Authenticated, after: &str, limit: i64) -> Result<Vec<GroupRow>, Error> {
        let p = who.principal();
        tenant_admin(p)?;
        groups::groups_page(&self.db, p.tenant.as_str(), after, limit.clamp(1, DIRECTORY_PAGE)).await
    }

    /// The groups a person is in: (id, display name).
    pub async fn groups_of(&self, who: &Authenticated, user: &str) -> Result<Vec<(String, String)>, Error> {
        let p = who.principal();
        tenant_admin(p)?;
        groups::groups_of(&self.db, p.tenant.as_str(), user).await
    }

    /// Every group a person is in, by name: their directory groups and the
    /// groups their last sign-in's token named (what the group rules read).
    pub async fn all_groups_of(&self, tenant: &str, user: &str) -> Result<Vec<String>, Error> {
        let mut names: Vec<String> = groups::groups_of(&self.db, tenant, user).await?.into_iter().map(|(_, name)| name).collect();
        if let Some(person) = people::person(&self.db, tenant, user).await? {
            names.extend(person.claimed_groups);
        }
        Ok(names)
    }

    /// The API keys `who` may see: all of the tenant's for its admins,
    /// those of the workspaces they administer for a workspace's admins.
    pub async fn api_keys(&self, who: &Authenticated) -> Result<Vec<CredentialRow>, Error> {
        let p = who.principal();
        if p.agent || p.scope.is_some() {
            return Err(Error::forbidden(lattice_core::Code::AgentNotAllowed, "an agent's key does not list keys"));
        }
        let all = credentials::of_tenant(&self.db, p.tenant.as_str(), CredentialKind::ApiKey).await?;
        if p.role == TenantRole::TenantAdmin {
            return Ok(all);
        }
        let mut mine = Vec::new();
        for key in all {
            if let Some(KeyScope::Workspace { workspace, .. }) = &key.scope
                && workspace_access(&self.db, p, workspace.as_str()).await.is_ok_and(|a| a.allow(lattice_core::policy::Action::ManageMembers).is_ok())
            {
                mine.push(key);
            }
        }
        Ok(mine)
    }

    pub async fn scim_tokens(&self, who: &Authenticated) -> Result<Vec<CredentialRow>, Error> {
        let p = who.principal();
        tenant_admin(p)?;
        credentials::of_tenant(&self.db, p.tenant.as_str(), CredentialKind::ScimToken).await
    }
}

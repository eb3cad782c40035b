//! Access (REQUIREMENTS.md T1–T3): who may see and do what in a workspace. Anything the
//! caller may not see answers `NotFound`, so another tenant learns nothing,
//! not even whether an id exists; what they may see but not do answers
//! `Forbidden`.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use lattice_core::policy::{self, Action, thread_role};
use lattice_core::{ArtifactId, Error, Principal, Role, TenantId, TenantRole, ThreadId, WorkspaceId};

use crate::store::access::{self as stored, ThreadStanding};
use crate::store::{ArtifactRow, Db, load_artifact};

/// A workspace the caller can see, with the caller's role in it.
#[derive(Debug, Clone)]
pub struct Access {
    pub tenant: TenantId,
    pub workspace: WorkspaceId,
    pub role: Role,
}

impl Access {
    /// Refuses unless the policy lets the caller's role do `action` here.
    pub fn allow(&self, action: Action) -> Result<(), Error> {
        policy::decide(self.role, action)
    }
}

pub(crate) async fn workspace_access(db: &Db, p: &Principal, workspace: &str) -> Result<Access, Error> {
    let Some(tenant) = stored::workspace_tenant(db, workspace).await? else { return Err(Error::NotFound) };
    access_in(db, p, tenant, workspace.to_owned()).await
}

async fn access_in(db: &Db, p: &Principal, tenant: String, workspace: String) -> Result<Access, Error> {
    if tenant != p.tenant.as_str() {
        return Err(Error::NotFound);
    }
    let member = membership(db, &workspace, p.user.as_str(), p.role).await?;
    let access = resolve(p, tenant, workspace, member)?;
    bounded(db, p, access).await
}

/// Access bounded by the principal's `within` (a resumed run's starter):
/// the lower of the two roles, and nothing where the starter has nothing.
async fn bounded(db: &Db, p: &Principal, access: Access) -> Result<Access, Error> {
    let Some(within) = &p.within else { return Ok(access) };
    let starter = Principal { user: within.user.clone(), role: within.role, within: None, ..p.clone() };
    let member = membership(db, access.workspace.as_str(), within.user.as_str(), within.role).await?;
    let theirs = resolve(&starter, access.tenant.to_string(), access.workspace.to_string(), member)?;
    Ok(Access { role: access.role.min(theirs.role), ..access })
}

/// Whether `workspace` is within what the principal may reach: a key of
/// one workspace reaches nothing outside it, whatever else lists it.
pub(crate) fn in_scope(p: &Principal, workspace: &str) -> bool {
    p.scope.as_ref().is_none_or(|scope| scope.as_str() == workspace)
}

/// A user's role in the workspace's members list; a tenant admin's is not
/// looked up (it is admin of every workspace of the tenant).
async fn membership(db: &Db, workspace: &str, user: &str, role: TenantRole) -> Result<Option<String>, Error> {
    if role == TenantRole::TenantAdmin {
        return Ok(None);
    }
    stored::member_role(db, workspace, user).await
}

/// The caller's role from its token and the workspace's members list.
fn resolve(p: &Principal, tenant: String, workspace: String, member: Option<String>) -> Result<Access, Error> {
    if tenant != p.tenant.as_str() || !in_scope(p, &workspace) {
        return Err(Error::NotFound);
    }
    let role = if p.role == TenantRole::TenantAdmin {
        Role::Admin
    } else {
        match member {
            None => return Err(Error::NotFound),
            Some(role) => Role::parse(&role).ok_or_else(|| Error::unavailable(format!("stored role {role:?} is unknown")))?,
        }
    };
    Ok(Access { tenant: TenantId::from_trusted(tenant), workspace: WorkspaceId::from_trusted(workspace), role })
}

/// The caller's access to a thread: its role there, bounded by a resumed
/// run's starter's role there.
pub(crate) async fn thread_access(db: &Db, p: &Principal, thread: &ThreadId) -> Result<Access, Error> {
    let access = thread_access_of(db, p, thread).await?;
    let Some(within) = &p.within else { return Ok(access) };
    let starter = Principal { user: within.user.clone(), role: within.role, within: None, ..p.clone() };
    let theirs = thread_access_of(db, &starter, thread).await?;
    Ok(Access { role: access.role.min(theirs.role), ..access })
}

async fn thread_access_of(db: &Db, p: &Principal, thread: &ThreadId) -> Result<Access, Error> {
    let Some(standing) = stored::thread_standing(db, thread.as_str(), p.user.as_str()).await? else { return Err(Error::NotFound) };
    decide(p, &standing)
}

/// The caller's access to a thread from what decides it.
fn decide(p: &Principal, standing: &ThreadStanding) -> Result<Access, Error> {
    if standing.tenant != p.tenant.as_str() || !in_scope(p, &standing.workspace) {
        return Err(Error::NotFound);
    }
    let member = stored_role(standing.member.clone())?;
    let listed = stored_role(standing.listed.clone())?;
    let role = thread_role(p.role, member, standing.restricted, listed).ok_or(Error::NotFound)?;
    Ok(Access { tenant: TenantId::from_trusted(standing.tenant.clone()), workspace: WorkspaceId::from_trusted(standing.workspace.clone()), role })
}

/// The caller's access to a thread for a write that `action` names, and
/// the standing it was decided from, which the commit's statement checks
/// again (`store::access::holds`): the write goes ahead only if that
/// standing still holds as it is written, so a standing remembered from
/// the caller's last write there serves, and the write costs no read of
/// its own. Unless `fresh` or it would refuse: a refusal is only ever
/// decided from what is stored now. For a principal of its own (not
/// bounded by a run's starter).
pub(crate) async fn thread_access_to_write(
    db: &Db,
    standings: &Standings,
    p: &Principal,
    thread: &ThreadId,
    action: Action,
    fresh: bool,
) -> Result<(Access, ThreadStanding), Error> {
    debug_assert!(p.within.is_none(), "a bounded principal's access is read, never remembered");
    let key = (thread.to_string(), p.user.to_string());
    if !fresh
        && let Some(standing) = standings.get(&key)
        && let Ok(access) = decide(p, &standing)
        && access.allow(action).is_ok()
    {
        return Ok((access, standing));
    }
    let Some(standing) = stored::thread_standing(db, thread.as_str(), p.user.as_str()).await? else {
        standings.forget(&key);
        return Err(Error::NotFound);
    };
    standings.remember(key, standing.clone());
    let access = decide(p, &standing)?;
    access.allow(action)?;
    Ok((access, standing))
}

/// Standings remembered from earlier writes, by thread and user: a hint
/// the commit checks, never a decision on its own. Bounded: when full, it
/// starts over.
#[derive(Default)]
pub(crate) struct Standings {
    remembered: Mutex<HashMap<(String, String), ThreadStanding>>,
}

/// How many standings are remembered at most (a few hundred bytes each).
const REMEMBERED: usize = 4_096;

impl Standings {
    /// What is remembered is whole whatever a panic interrupted: each
    /// change is one map operation.
    fn remembered(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), ThreadStanding>> {
        self.remembered.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn get(&self, key: &(String, String)) -> Option<ThreadStanding> {
        self.remembered().get(key).cloned()
    }

    fn remember(&self, key: (String, String), standing: ThreadStanding) {
        let mut remembered = self.remembered();
        if remembered.len() >= REMEMBERED && !remembered.contains_key(&key) {
            remembered.clear();
        }
        remembered.insert(key, standing);
    }

    fn forget(&self, key: &(String, String)) {
        self.remembered().remove(key);
    }
}

fn stored_role(role: Option<String>) -> Result<Option<Role>, Error> {
    role.map(|r| Role::parse(&r).ok_or_else(|| Error::unavailable(format!("stored role {r:?} is unknown")))).transpose()
}

pub(crate) async fn artifact_access(db: &Db, p: &Principal, id: &ArtifactId) -> Result<(Access, ArtifactRow), Error> {
    let Some(row) = load_artifact(db, &p.tenant, id, None).await? else {
        return Err(Error::NotFound);
    };
    let access = thread_access(db, p, &ThreadId::from_trusted(row.thread.clone())).await?;
    Ok((access, row))
}

/// Whether `user` is a member of the workspace.
pub(crate) async fn is_member(db: &Db, workspace: &str, user: &str) -> Result<bool, Error> {
    stored::is_member(db, workspace, user).await
}

/// The workspace of a thread the caller is listed on from outside the
/// workspace, with the lowest role (what it learns there is what governs
/// the threads shared with it, never their neighbours).
pub(crate) async fn listed_in(db: &Db, p: &Principal, workspace: &str) -> Result<Access, Error> {
    if !in_scope(p, workspace) || !stored::listed_in(db, p.tenant.as_str(), workspace, p.user.as_str()).await? {
        return Err(Error::NotFound);
    }
    Ok(Access { tenant: p.tenant.clone(), workspace: WorkspaceId::from_trusted(workspace.to_owned()), role: Role::Viewer })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn standing(workspace: &str) -> ThreadStanding {
        ThreadStanding { tenant: "t1".into(), workspace: workspace.into(), member: Some("editor".into()), restricted: false, listed: None }
    }

    /// At most [`REMEMBERED`] standings: the one after starts over.
    #[test]
    fn standings_are_bounded() {
        let standings = Standings::default();
        let key = |i: usize| (format!("th_{i}"), "ann".to_owned());
        for i in 0..REMEMBERED {
            standings.remember(key(i), standing("ws"));
        }
        assert_eq!(standings.remembered().len(), REMEMBERED);
        // One already remembered changes in place.
        standings.remember(key(0), standing("ws_2"));
        let len = standings.remembered().len();
        assert_eq!((len, standings.get(&key(0)).map(|s| s.workspace)), (REMEMBERED, Some("ws_2".to_owned())));
        standings.remember(key(REMEMBERED), standing("ws"));
        assert_eq!(standings.remembered().len(), 1);
        assert!(standings.get(&key(1)).is_none() && standings.get(&key(REMEMBERED)).is_some());
        standings.forget(&key(REMEMBERED));
        assert!(standings.remembered().is_empty());
    }
}

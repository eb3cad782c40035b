//! Access (REQUIREMENTS.md T1–T3): who may see and do what in a workspace. Anything the
//! caller may not see answers `NotFound`, so another tenant learns nothing,
//! not even whether an id exists; what they may see but not do answers
//! `Forbidden`.

use lattice_core::policy::{self, Action, thread_role};
use lattice_core::{ArtifactId, Error, Principal, Role, TenantId, TenantRole, ThreadId, WorkspaceId};
use sqlx::Row;

use crate::db::{Db, db_error};
use crate::store::{ArtifactRow, load_artifact};

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
    let row = sqlx::query("SELECT tenant FROM workspaces WHERE id = $1").bind(workspace).fetch_optional(&db.pool).await.map_err(db_error)?;
    let Some(row) = row else { return Err(Error::NotFound) };
    let tenant: String = row.try_get(0).map_err(db_error)?;
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

/// A user's role in the workspace's members list; a tenant admin's is not
/// looked up (it is admin of every workspace of the tenant).
async fn membership(db: &Db, workspace: &str, user: &str, role: TenantRole) -> Result<Option<String>, Error> {
    if role == TenantRole::TenantAdmin {
        return Ok(None);
    }
    sqlx::query("SELECT role FROM members WHERE workspace = $1 AND user_id = $2")
        .bind(workspace)
        .bind(user)
        .fetch_optional(&db.pool)
        .await
        .map_err(db_error)?
        .map(|row| row.try_get::<String, _>(0))
        .transpose()
        .map_err(db_error)
}

/// The caller's role from its token and the workspace's members list.
fn resolve(p: &Principal, tenant: String, workspace: String, member: Option<String>) -> Result<Access, Error> {
    if tenant != p.tenant.as_str() {
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
    // One round trip: the thread's workspace, whether it is restricted, the
    // caller's membership of the workspace and its listing on the thread.
    let row = sqlx::query(
        "SELECT w.tenant, w.id, m.role, t.restricted, s.role FROM threads t JOIN workspaces w ON w.id = t.workspace \
         LEFT JOIN members m ON m.workspace = w.id AND m.user_id = $2 \
         LEFT JOIN thread_members s ON s.thread = t.id AND s.user_id = $2 WHERE t.id = $1",
    )
    .bind(thread.as_str())
    .bind(p.user.as_str())
    .fetch_optional(&db.pool)
    .await
    .map_err(db_error)?;
    let Some(row) = row else { return Err(Error::NotFound) };
    let tenant: String = row.try_get(0).map_err(db_error)?;
    if tenant != p.tenant.as_str() {
        return Err(Error::NotFound);
    }
    let workspace: String = row.try_get(1).map_err(db_error)?;
    let member = stored_role(row.try_get(2).map_err(db_error)?)?;
    let restricted = row.try_get::<i64, _>(3).map_err(db_error)? != 0;
    let listed = stored_role(row.try_get(4).map_err(db_error)?)?;
    let role = thread_role(p.role, member, restricted, listed).ok_or(Error::NotFound)?;
    Ok(Access { tenant: TenantId::from_trusted(tenant), workspace: WorkspaceId::from_trusted(workspace), role })
}

fn stored_role(role: Option<String>) -> Result<Option<Role>, Error> {
    role.map(|r| Role::parse(&r).ok_or_else(|| Error::unavailable(format!("stored role {r:?} is unknown")))).transpose()
}

/// The SQL condition that thread `{t}.id` is visible to `{user}` (a bind
/// placeholder), for a caller whose workspace role is below admin.
pub(crate) fn visible_thread(t: &str, user: &str) -> String {
    format!("({t}.restricted = 0 OR {t}.id IN (SELECT thread FROM thread_members WHERE user_id = {user}))")
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
    let row = sqlx::query("SELECT 1 FROM members WHERE workspace = $1 AND user_id = $2")
        .bind(workspace)
        .bind(user)
        .fetch_optional(&db.pool)
        .await
        .map_err(db_error)?;
    Ok(row.is_some())
}

/// The workspace of a thread the caller is listed on from outside the
/// workspace, with the lowest role (what it learns there is what governs
/// the threads shared with it, never their neighbours).
pub(crate) async fn listed_in(db: &Db, p: &Principal, workspace: &str) -> Result<Access, Error> {
    let row = sqlx::query(
        "SELECT w.tenant FROM thread_members s JOIN threads t ON t.id = s.thread JOIN workspaces w ON w.id = t.workspace \
         WHERE s.user_id = $1 AND t.workspace = $2 AND w.tenant = $3 LIMIT 1",
    )
    .bind(p.user.as_str())
    .bind(workspace)
    .bind(p.tenant.as_str())
    .fetch_optional(&db.pool)
    .await
    .map_err(db_error)?;
    row.ok_or(Error::NotFound)?;
    Ok(Access { tenant: p.tenant.clone(), workspace: WorkspaceId::from_trusted(workspace.to_owned()), role: Role::Viewer })
}

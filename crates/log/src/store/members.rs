//! Who is on a workspace's members list or listed on a thread, and which
//! workspaces a person is in.

use lattice_core::{Error, Role};
use serde::Serialize;
use sqlx::Row;

use super::db::{Db, db_error};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkspaceSummary {
    pub id: String,
    pub name: String,
    pub role: Role,
}

/// A person on a workspace's members list or listed on a thread.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Listed {
    pub user: String,
    pub role: Role,
}

/// The tenant's workspaces `user` is a member of, with the role; every one
/// as admin for a tenant admin (`user` `None`). Oldest first.
pub(crate) async fn workspaces_of(db: &Db, tenant: &str, user: Option<&str>) -> Result<Vec<WorkspaceSummary>, Error> {
    let rows = match user {
        None => {
            sqlx::query("SELECT id, name, 'admin' FROM workspaces WHERE tenant = $1 ORDER BY created_at, id").bind(tenant).fetch_all(&db.pool).await
        }
        Some(user) => {
            sqlx::query(
                "SELECT w.id, w.name, m.role FROM workspaces w JOIN members m ON m.workspace = w.id \
                 WHERE w.tenant = $1 AND m.user_id = $2 ORDER BY w.created_at, w.id",
            )
            .bind(tenant)
            .bind(user)
            .fetch_all(&db.pool)
            .await
        }
    }
    .map_err(db_error)?;
    rows.iter()
        .map(|row| {
            let role: String = row.try_get(2).map_err(db_error)?;
            Ok(WorkspaceSummary {
                id: row.try_get(0).map_err(db_error)?,
                name: row.try_get(1).map_err(db_error)?,
                role: Role::parse(&role).unwrap_or(Role::Viewer),
            })
        })
        .collect()
}

/// The workspaces of a tenant, or of the whole deployment.
pub(crate) async fn count_workspaces(db: &Db, tenant: Option<&str>) -> Result<u64, Error> {
    let query = match tenant {
        Some(t) => sqlx::query("SELECT COUNT(*) FROM workspaces WHERE tenant = $1").bind(t),
        None => sqlx::query("SELECT COUNT(*) FROM workspaces"),
    };
    let row = query.fetch_one(&db.pool).await.map_err(db_error)?;
    Ok(row.try_get::<i64, _>(0).map_err(db_error)?.max(0) as u64)
}

/// A workspace's members list, by user id.
pub(crate) async fn workspace_members(db: &Db, workspace: &str) -> Result<Vec<Listed>, Error> {
    listed(db, "SELECT user_id, role FROM members WHERE workspace = $1 ORDER BY user_id LIMIT 10000", workspace).await
}

/// The people listed on a thread, by user id.
pub(crate) async fn thread_members(db: &Db, thread: &str) -> Result<Vec<Listed>, Error> {
    listed(db, "SELECT user_id, role FROM thread_members WHERE thread = $1 ORDER BY user_id LIMIT 10000", thread).await
}

async fn listed(db: &Db, query: &'static str, on: &str) -> Result<Vec<Listed>, Error> {
    let rows = sqlx::query(query).bind(on).fetch_all(&db.pool).await.map_err(db_error)?;
    rows.iter()
        .map(|row| {
            let role: String = row.try_get(1).map_err(db_error)?;
            let role = Role::parse(&role).ok_or_else(|| Error::unavailable(format!("stored role {role:?} is unknown")))?;
            Ok(Listed { user: row.try_get(0).map_err(db_error)?, role })
        })
        .collect()
}

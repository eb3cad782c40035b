//! The groups of a tenant's directory and their members, and the writers
//! that change them: a change of a group changes the tenant role of the
//! members the rules give a role by it, kept in `people.role` in the same
//! transaction.

use std::collections::BTreeSet;

use lattice_core::directory::ProvisionedGroup;
use lattice_core::event::{Event, GroupRemoved, GroupSaved};
use lattice_core::identity::GroupRules;
use lattice_core::{Error, TenantRole};
use sqlx::{AnyConnection, Row};

use super::db::{Db, budget_turn, db_error};
use super::people::{role_name, role_of};
use super::writing::Writing;

/// A group as stored, with its members' ids.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupRow {
    pub id: String,
    pub display_name: String,
    pub external_id: Option<String>,
    pub members: Vec<String>,
    pub document: serde_json::Value,
    pub version: u64,
    pub created_at: i64,
    pub updated_at: i64,
}

const GROUP_COLUMNS: &str = "id, display_name, external_id, document, version, created_at, updated_at";

/// Ids asked about in one statement (within every backend's bound on
/// parameters).
const IDS_PER_QUERY: usize = 500;

/// The groups one tenant may hold.
pub const MAX_GROUPS_PER_TENANT: i64 = 10_000;

fn group_row(row: &sqlx::any::AnyRow, members: Vec<String>) -> Result<GroupRow, Error> {
    let document: String = row.try_get(3).map_err(db_error)?;
    Ok(GroupRow {
        id: row.try_get(0).map_err(db_error)?,
        display_name: row.try_get(1).map_err(db_error)?,
        external_id: row.try_get(2).map_err(db_error)?,
        members,
        document: lattice_core::json::from_str(&document).map_err(|_| Error::unavailable("a directory group does not read back"))?,
        version: row.try_get::<i64, _>(4).map_err(db_error)?.max(0) as u64,
        created_at: row.try_get(5).map_err(db_error)?,
        updated_at: row.try_get(6).map_err(db_error)?,
    })
}

async fn members_of(db: &Db, tenant: &str, id: &str) -> Result<Vec<String>, Error> {
    sqlx::query_scalar("SELECT user_id FROM group_members WHERE tenant = $1 AND group_id = $2 ORDER BY user_id")
        .bind(tenant)
        .bind(id)
        .fetch_all(&db.pool)
        .await
        .map_err(db_error)
}

pub(crate) async fn group(db: &Db, tenant: &str, id: &str) -> Result<Option<GroupRow>, Error> {
    let sql = format!("SELECT {GROUP_COLUMNS} FROM directory_groups WHERE tenant = $1 AND id = $2");
    let Some(row) = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(tenant).bind(id).fetch_optional(&db.pool).await.map_err(db_error)? else {
        return Ok(None);
    };
    let members = members_of(db, tenant, id).await?;
    group_row(&row, members).map(Some)
}

/// Up to `limit` groups of the tenant after `after` (by id), in id order.
pub(crate) async fn groups_page(db: &Db, tenant: &str, after: &str, limit: i64) -> Result<Vec<GroupRow>, Error> {
    let sql = format!("SELECT {GROUP_COLUMNS} FROM directory_groups WHERE tenant = $1 AND id > $2 ORDER BY id LIMIT $3");
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(tenant).bind(after).bind(limit).fetch_all(&db.pool).await.map_err(db_error)?;
    let mut out = Vec::with_capacity(rows.len());
    for row in &rows {
        let id: String = row.try_get(0).map_err(db_error)?;
        out.push(group_row(row, members_of(db, tenant, &id).await?)?);
    }
    Ok(out)
}

/// The groups a person is in: (id, display name), by id.
pub(crate) async fn groups_of(db: &Db, tenant: &str, user: &str) -> Result<Vec<(String, String)>, Error> {
    let rows = sqlx::query(
        "SELECT g.id, g.display_name FROM group_members m JOIN directory_groups g ON g.tenant = m.tenant AND g.id = m.group_id \
         WHERE m.tenant = $1 AND m.user_id = $2 ORDER BY g.id",
    )
    .bind(tenant)
    .bind(user)
    .fetch_all(&db.pool)
    .await
    .map_err(db_error)?;
    rows.iter().map(|r| Ok((r.try_get(0).map_err(db_error)?, r.try_get(1).map_err(db_error)?))).collect()
}

/// Every membership of a tenant's groups: (person, group id, its display
/// name), so that a list of people reads their groups in one statement.
pub(crate) async fn memberships(db: &Db, tenant: &str) -> Result<Vec<(String, String, String)>, Error> {
    let rows = sqlx::query(
        "SELECT m.user_id, g.id, g.display_name FROM group_members m JOIN directory_groups g ON g.tenant = m.tenant AND g.id = m.group_id \
         WHERE m.tenant = $1 ORDER BY m.user_id, g.id",
    )
    .bind(tenant)
    .fetch_all(&db.pool)
    .await
    .map_err(db_error)?;
    rows.iter().map(|r| Ok((r.try_get(0).map_err(db_error)?, r.try_get(1).map_err(db_error)?, r.try_get(2).map_err(db_error)?))).collect()
}

/// Recomputes the tenant role of each of `people` (after their groups
/// changed) and answers those whose role changed.
async fn recompute_roles(conn: &mut AnyConnection, w: &Writing<'_>, rules: &GroupRules, people: &BTreeSet<String>) -> Result<Vec<String>, Error> {
    let mut changed = Vec::new();
    if rules.roles.is_empty() {
        return Ok(changed);
    }
    for user in people {
        let row = sqlx::query("SELECT role, claimed_groups FROM people WHERE tenant = $1 AND user_id = $2")
            .bind(w.tenant)
            .bind(user)
            .fetch_optional(&mut *conn)
            .await
            .map_err(db_error)?;
        let Some(row) = row else { continue };
        let was: String = row.try_get(0).map_err(db_error)?;
        let claimed: Vec<String> = serde_json::from_str(&row.try_get::<String, _>(1).map_err(db_error)?).unwrap_or_default();
        let role: TenantRole = role_of(conn, rules, w.tenant, user, &claimed).await?;
        if role.as_str() != was {
            sqlx::query("UPDATE people SET role = $3, updated_at = $4 WHERE tenant = $1 AND user_id = $2")
                .bind(w.tenant)
                .bind(user)
                .bind(role_name(role))
                .bind(w.at)
                .execute(&mut *conn)
                .await
                .map_err(db_error)?;
            changed.push(user.clone());
        }
    }
    Ok(changed)
}

/// Creates or replaces a group and its members (each a person of the
/// tenant's directory).
pub(crate) async fn provision_group(
    conn: &mut AnyConnection,
    w: &Writing<'_>,
    rules: &GroupRules,
    id: &str,
    group: &ProvisionedGroup,
    create: bool,
    expected_version: Option<u64>,
) -> Result<Event, Error> {
    let now: Option<(i64, String)> = sqlx::query("SELECT version, display_name FROM directory_groups WHERE tenant = $1 AND id = $2")
        .bind(w.tenant)
        .bind(id)
        .fetch_optional(&mut *conn)
        .await
        .map_err(db_error)?
        .map(|r| Ok::<_, Error>((r.try_get(0).map_err(db_error)?, r.try_get(1).map_err(db_error)?)))
        .transpose()?;
    let version = match (&now, create) {
        (Some(_), true) => return Err(Error::conflict(lattice_core::Code::AlreadyExists, format!("a group {id} exists already"))),
        (None, false) => return Err(Error::NotFound),
        (Some((version, _)), false) => {
            let version = version.max(&0).unsigned_abs();
            if let Some(expected) = expected_version
                && expected != version
            {
                return Err(Error::version_conflict(expected, version));
            }
            version + 1
        }
        (None, true) => {
            budget_turn(conn, &format!("groups:{}", w.tenant)).await?;
            let held: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM directory_groups WHERE tenant = $1")
                .bind(w.tenant)
                .fetch_one(&mut *conn)
                .await
                .map_err(db_error)?;
            if held >= MAX_GROUPS_PER_TENANT {
                return Err(Error::field("displayName", "limit", format!("the tenant's directory holds {MAX_GROUPS_PER_TENANT} groups, its limit")));
            }
            1
        }
    };
    let before: BTreeSet<String> = sqlx::query_scalar("SELECT user_id FROM group_members WHERE tenant = $1 AND group_id = $2")
        .bind(w.tenant)
        .bind(id)
        .fetch_all(&mut *conn)
        .await
        .map_err(db_error)?
        .into_iter()
        .collect();
    let after: BTreeSet<String> = group.members.iter().map(|u| u.to_string()).collect();
    let wanted: Vec<&String> = after.iter().collect();
    for chunk in wanted.chunks(IDS_PER_QUERY) {
        let marks: Vec<String> = (0..chunk.len()).map(|i| format!("${}", i + 2)).collect();
        let sql = format!("SELECT user_id FROM people WHERE tenant = $1 AND user_id IN ({})", marks.join(", "));
        let mut query = sqlx::query_scalar::<_, String>(sqlx::AssertSqlSafe(sql)).bind(w.tenant);
        for user in chunk {
            query = query.bind(*user);
        }
        let known: BTreeSet<String> = query.fetch_all(&mut *conn).await.map_err(db_error)?.into_iter().collect();
        if let Some(unknown) = chunk.iter().find(|u| !known.contains(u.as_str())) {
            return Err(Error::field("members", "exists", format!("{unknown} is not a person of the tenant's directory")));
        }
    }
    let document = serde_json::to_string(&group.document).map_err(|_| Error::unavailable("a directory group does not serialize"))?;
    sqlx::query(
        "INSERT INTO directory_groups (tenant, id, display_name, external_id, document, version, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $7) ON CONFLICT (tenant, id) DO UPDATE SET display_name = excluded.display_name, \
         external_id = excluded.external_id, document = excluded.document, version = excluded.version, updated_at = excluded.updated_at",
    )
    .bind(w.tenant)
    .bind(id)
    .bind(&group.display_name)
    .bind(group.external_id.as_deref())
    .bind(&document)
    .bind(version as i64)
    .bind(w.at)
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    for gone in before.difference(&after) {
        sqlx::query("DELETE FROM group_members WHERE tenant = $1 AND group_id = $2 AND user_id = $3")
            .bind(w.tenant)
            .bind(id)
            .bind(gone)
            .execute(&mut *conn)
            .await
            .map_err(db_error)?;
    }
    for added in after.difference(&before) {
        sqlx::query("INSERT INTO group_members (tenant, group_id, user_id) VALUES ($1, $2, $3)")
            .bind(w.tenant)
            .bind(id)
            .bind(added)
            .execute(&mut *conn)
            .await
            .map_err(db_error)?;
    }
    // A renamed group may give other roles to everyone in it.
    let renamed = now.as_ref().is_some_and(|(_, name)| *name != group.display_name);
    let touched: BTreeSet<String> =
        if renamed { before.union(&after).cloned().collect() } else { before.symmetric_difference(&after).cloned().collect() };
    let roles_changed = recompute_roles(conn, w, rules, &touched).await?;
    Ok(GroupSaved { group: id.to_owned(), display_name: group.display_name.clone(), members: after.len() as u64, version, roles_changed }.into())
}

pub(crate) async fn remove_group(conn: &mut AnyConnection, w: &Writing<'_>, rules: &GroupRules, id: &str) -> Result<Event, Error> {
    let members: BTreeSet<String> = sqlx::query_scalar("SELECT user_id FROM group_members WHERE tenant = $1 AND group_id = $2")
        .bind(w.tenant)
        .bind(id)
        .fetch_all(&mut *conn)
        .await
        .map_err(db_error)?
        .into_iter()
        .collect();
    let removed = sqlx::query("DELETE FROM directory_groups WHERE tenant = $1 AND id = $2")
        .bind(w.tenant)
        .bind(id)
        .execute(&mut *conn)
        .await
        .map_err(db_error)?;
    if removed.rows_affected() == 0 {
        return Err(Error::NotFound);
    }
    sqlx::query("DELETE FROM group_members WHERE tenant = $1 AND group_id = $2")
        .bind(w.tenant)
        .bind(id)
        .execute(&mut *conn)
        .await
        .map_err(db_error)?;
    let roles_changed = recompute_roles(conn, w, rules, &members).await?;
    Ok(GroupRemoved { group: id.to_owned(), roles_changed }.into())
}

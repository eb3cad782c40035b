//! What access is decided from: a workspace's tenant, a person's role on
//! its members list, a thread's restriction and listings.

use lattice_core::Error;
use sqlx::Row;

use super::db::{Db, db_error};

/// The tenant a workspace belongs to, if it exists.
pub(crate) async fn workspace_tenant(db: &Db, workspace: &str) -> Result<Option<String>, Error> {
    let row = sqlx::query("SELECT tenant FROM workspaces WHERE id = $1").bind(workspace).fetch_optional(&db.pool).await.map_err(db_error)?;
    row.map(|row| row.try_get::<String, _>(0).map_err(db_error)).transpose()
}

/// A user's role on a workspace's members list, as stored.
pub(crate) async fn member_role(db: &Db, workspace: &str, user: &str) -> Result<Option<String>, Error> {
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

/// What decides a user's access to a thread, as stored.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ThreadStanding {
    pub tenant: String,
    pub workspace: String,
    /// The user's role on the workspace's members list.
    pub member: Option<String>,
    pub restricted: bool,
    /// The user's role on the thread's listing.
    pub listed: Option<String>,
}

/// A thread's workspace, whether it is restricted, and `user`'s
/// membership of the workspace and listing on the thread, in one round trip.
pub(crate) async fn thread_standing(db: &Db, thread: &str, user: &str) -> Result<Option<ThreadStanding>, Error> {
    static READ: std::sync::LazyLock<String> =
        std::sync::LazyLock::new(|| format!("SELECT w.tenant, w.id, m.role, t.restricted, s.role {}", standing_of("$1", "$2")));
    let row = sqlx::query(sqlx::AssertSqlSafe(READ.as_str())).bind(thread).bind(user).fetch_optional(&db.pool).await.map_err(db_error)?;
    let Some(row) = row else { return Ok(None) };
    Ok(Some(ThreadStanding {
        tenant: row.try_get(0).map_err(db_error)?,
        workspace: row.try_get(1).map_err(db_error)?,
        member: row.try_get(2).map_err(db_error)?,
        restricted: row.try_get::<i64, _>(3).map_err(db_error)? != 0,
        listed: row.try_get(4).map_err(db_error)?,
    }))
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

/// Whether `user` is listed on some thread of the tenant's workspace.
pub(crate) async fn listed_in(db: &Db, tenant: &str, workspace: &str, user: &str) -> Result<bool, Error> {
    let row = sqlx::query(
        "SELECT w.tenant FROM thread_members s JOIN threads t ON t.id = s.thread JOIN workspaces w ON w.id = t.workspace \
         WHERE s.user_id = $1 AND t.workspace = $2 AND w.tenant = $3 LIMIT 1",
    )
    .bind(user)
    .bind(workspace)
    .bind(tenant)
    .fetch_optional(&db.pool)
    .await
    .map_err(db_error)?;
    Ok(row.is_some())
}

/// A standing a write was authorized from, which its commit's own
/// statement checks again: the envelope is written only if the standing
/// still holds when it is (a write authorized from a standing remembered
/// from an earlier write costs no read of its own, and a change of access
/// committed since is never written past).
pub(crate) struct Holds<'a> {
    pub thread: &'a str,
    pub user: &'a str,
    pub standing: &'a ThreadStanding,
}

/// The SQL condition that a [`Holds`] holds, its seven values bound from
/// `$first` on by [`bind_holds`]: the query [`thread_standing`] runs,
/// compared with what it answered.
pub(crate) fn holds(first: usize) -> String {
    let [thread, user, tenant, workspace, restricted, member, listed] = std::array::from_fn(|i| format!("${}", first + i));
    format!(
        "EXISTS (SELECT 1 {} AND w.tenant = {tenant} AND w.id = {workspace} AND t.restricted = {restricted} \
         AND m.role IS NOT DISTINCT FROM {member} AND s.role IS NOT DISTINCT FROM {listed})",
        standing_of(&thread, &user)
    )
}

/// Where a standing is read from, the thread `{thread}` and the user
/// `{user}` (placeholders): [`thread_standing`] and [`holds`] read it alike.
fn standing_of(thread: &str, user: &str) -> String {
    format!(
        "FROM threads t JOIN workspaces w ON w.id = t.workspace \
         LEFT JOIN members m ON m.workspace = w.id AND m.user_id = {user} \
         LEFT JOIN thread_members s ON s.thread = t.id AND s.user_id = {user} WHERE t.id = {thread}"
    )
}

/// Binds a [`Holds`]'s values in the order [`holds`] names them.
pub(crate) fn bind_holds<'q>(
    query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments>,
    h: &Holds<'_>,
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments> {
    query
        .bind(h.thread)
        .bind(h.user)
        .bind(h.standing.tenant.as_str())
        .bind(h.standing.workspace.as_str())
        .bind(i64::from(h.standing.restricted))
        .bind(h.standing.member.as_deref())
        .bind(h.standing.listed.as_deref())
}

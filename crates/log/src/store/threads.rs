//! Threads as read: the ones a caller may see, by the visibility rule of
//! [`lattice_core::policy::thread_role`], and what the bridge asks of one.

use lattice_core::Error;
use serde::Serialize;
use sqlx::Row;
use sqlx::any::AnyRow;

use super::db::{Db, db_error};
use super::unread;
use crate::clock::rfc3339;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThreadSummary {
    pub id: String,
    pub workspace: String,
    pub title: String,
    pub created_by: String,
    pub created_at: String,
    pub restricted: bool,
    /// Whether something is new there for the reader who listed it (a
    /// list's; `None` where the thread was read for no one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unread: Option<bool>,
}

/// Who lists threads, for what is new to them: their user id, their
/// envelope actor as stored, and how far the log may be read.
pub(crate) struct Reader<'a> {
    pub user: &'a str,
    pub actor: String,
    pub upto: i64,
}

const THREAD_COLUMNS: &str = "t.id, t.workspace, t.title, t.created_by, t.created_at, t.restricted";

fn thread_from_row(row: &AnyRow) -> Result<ThreadSummary, Error> {
    Ok(ThreadSummary {
        id: row.try_get(0).map_err(db_error)?,
        workspace: row.try_get(1).map_err(db_error)?,
        title: row.try_get(2).map_err(db_error)?,
        created_by: row.try_get(3).map_err(db_error)?,
        created_at: rfc3339(row.try_get(4).map_err(db_error)?),
        restricted: row.try_get::<i64, _>(5).map_err(db_error)? != 0,
        unread: None,
    })
}

/// The SQL condition that thread `{t}.id` is visible to `{user}` (a bind
/// placeholder), for a caller whose workspace role is below admin.
fn visible_thread(t: &str, user: &str) -> String {
    format!("({t}.restricted = 0 OR {t}.id IN (SELECT thread FROM thread_members WHERE user_id = {user}))")
}

/// The newest thread of the tenant that `user` reads, and its workspace;
/// any thread's for a tenant admin (`user` `None`).
pub(crate) async fn latest_readable(db: &Db, tenant: &str, user: Option<&str>) -> Result<Option<(String, String)>, Error> {
    Ok(readable(db, tenant, user, "", 1).await?.into_iter().next())
}

/// The tenant's threads `user` can read (all of them for `None`, a tenant
/// admin), newest first, whose id begins with `prefix`, at most `limit`:
/// each with its workspace.
pub(crate) async fn readable(db: &Db, tenant: &str, user: Option<&str>, prefix: &str, limit: i64) -> Result<Vec<(String, String)>, Error> {
    // `substr`, not `LIKE`: an id's `_` would be LIKE's wildcard.
    let rows = match user {
        None => {
            sqlx::query(
                "SELECT t.id, t.workspace FROM threads t JOIN workspaces w ON w.id = t.workspace \
                 WHERE w.tenant = $1 AND substr(t.id, 1, length($2)) = $2 ORDER BY t.created_at DESC, t.id DESC LIMIT $3",
            )
            .bind(tenant)
            .bind(prefix)
            .bind(limit)
            .fetch_all(&db.pool)
            .await
        }
        // A member's threads (an admin's all, anyone else's those not
        // restricted), and the threads the caller is listed on.
        Some(user) => {
            sqlx::query(
                "SELECT t.id, t.workspace FROM threads t JOIN workspaces w ON w.id = t.workspace \
                 LEFT JOIN members m ON m.workspace = w.id AND m.user_id = $2 \
                 LEFT JOIN thread_members s ON s.thread = t.id AND s.user_id = $2 \
                 WHERE w.tenant = $1 AND (s.role IS NOT NULL OR m.role = 'admin' OR (m.role IS NOT NULL AND t.restricted = 0)) \
                 AND substr(t.id, 1, length($3)) = $3 ORDER BY t.created_at DESC, t.id DESC LIMIT $4",
            )
            .bind(tenant)
            .bind(user)
            .bind(prefix)
            .bind(limit)
            .fetch_all(&db.pool)
            .await
        }
    }
    .map_err(db_error)?;
    rows.iter().map(|row| Ok((row.try_get::<String, _>(0).map_err(db_error)?, row.try_get(1).map_err(db_error)?))).collect()
}

/// The most threads a list holds, the newest: no person reads further
/// down a list.
pub const LISTED_MAX: usize = 500;

/// A workspace's threads, newest first (at most [`LISTED_MAX`]), each with
/// whether it is unread by `reader`: all of them (`whole`), or the ones not
/// restricted and the restricted ones the reader is listed on.
pub(crate) async fn in_workspace(db: &Db, workspace: &str, reader: &Reader<'_>, whole: bool) -> Result<Vec<ThreadSummary>, Error> {
    let visible = if whole { String::new() } else { format!(" AND {}", visible_thread("t", "$2")) };
    read_by(db, "", &format!("t.workspace = $1{visible}"), workspace, reader).await
}

/// The tenant's threads `reader` is listed on, newest first (at most
/// [`LISTED_MAX`]), each with whether it is unread by them.
pub(crate) async fn listing(db: &Db, tenant: &str, reader: &Reader<'_>) -> Result<Vec<ThreadSummary>, Error> {
    let joins = "JOIN workspaces w ON w.id = t.workspace JOIN thread_members s ON s.thread = t.id AND s.user_id = $2";
    read_by(db, joins, "w.tenant = $1", tenant, reader).await
}

/// The threads `t` (joined with `joins`) for which `filter` holds (`$1`
/// bound to `first`, `$2` the reader's id), newest first, each with
/// whether it is unread by `reader`: one range of the threads, each with
/// the reader's mark (the reader's marks lie side by side), and what the
/// fold has not reached yet.
async fn read_by(db: &Db, joins: &str, filter: &str, first: &str, reader: &Reader<'_>) -> Result<Vec<ThreadSummary>, Error> {
    let recent = unread::recent("$4");
    let unread = unread::unread("t", "COALESCE(r.seq, 0)", "$3", "$4");
    let sql = format!(
        "{recent}SELECT {THREAD_COLUMNS}, {unread} FROM threads t {joins} \
         LEFT JOIN read_marks r ON r.user_id = $2 AND r.thread = t.id \
         WHERE {filter} ORDER BY t.created_at DESC, t.id DESC LIMIT {LISTED_MAX}"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(first)
        .bind(reader.user)
        .bind(&reader.actor)
        .bind(reader.upto)
        .fetch_all(&db.pool)
        .await
        .map_err(db_error)?;
    rows.iter()
        .map(|row| {
            // A condition is a boolean in PostgreSQL and an integer in SQLite.
            let unread = row.try_get::<bool, _>(6).or_else(|_| row.try_get::<i64, _>(6).map(|n| n != 0)).map_err(db_error)?;
            Ok(ThreadSummary { unread: Some(unread), ..thread_from_row(row)? })
        })
        .collect()
}

/// One thread, which must exist.
pub(crate) async fn thread(db: &Db, thread: &str) -> Result<ThreadSummary, Error> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT {THREAD_COLUMNS} FROM threads t WHERE t.id = $1")))
        .bind(thread)
        .fetch_one(&db.pool)
        .await
        .map_err(db_error)?;
    thread_from_row(&row)
}

/// Whether a thread is restricted to the people listed on it (`false`
/// for one that does not exist).
pub(crate) async fn restricted(db: &Db, thread: &str) -> Result<bool, Error> {
    let row = sqlx::query("SELECT restricted FROM threads WHERE id = $1").bind(thread).fetch_optional(&db.pool).await.map_err(db_error)?;
    Ok(row.map(|r| r.try_get::<i64, _>(0)).transpose().map_err(db_error)?.unwrap_or(0) != 0)
}

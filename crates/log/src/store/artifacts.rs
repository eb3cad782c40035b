//! Artifacts as stored: the head and every version (each stays readable
//! in `artifact_versions`), the reads of them and their writers (created,
//! changed to a next version, archived).

use lattice_core::event::{ArtifactArchived, ArtifactChanged, ArtifactCreated, Event};
use lattice_core::{ArtifactId, ArtifactView, Asking, Error, TenantId, ThreadId};
use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::db::{Db, db_error};
use super::writing::Writing;

/// An artifact's head or one of its versions, as stored.
#[derive(Debug, Clone)]
pub struct ArtifactRow {
    pub id: String,
    pub workspace: String,
    pub thread: String,
    pub kind: String,
    pub version: u64,
    pub data: Value,
    pub digest: String,
    pub author: String,
    pub created_at: i64,
    pub updated_at: i64,
    pub archived: bool,
}

impl ArtifactRow {
    pub fn view(&self) -> ArtifactView {
        ArtifactView {
            id: ArtifactId::from_trusted(self.id.clone()),
            kind: self.kind.clone(),
            thread: ThreadId::from_trusted(self.thread.clone()),
            version: self.version,
            data: self.data.clone(),
            author: self.author.clone(),
            archived: self.archived,
            digest: self.digest.clone(),
        }
    }
}

const ARTIFACT_COLUMNS: &str = "a.id, a.workspace, a.thread, a.kind, a.version, a.data, a.digest, a.author, a.created_at, a.updated_at, a.archived";

pub(crate) fn artifact_from_row(row: &AnyRow) -> Result<ArtifactRow, Error> {
    let data: String = row.try_get(5).map_err(db_error)?;
    Ok(ArtifactRow {
        id: row.try_get(0).map_err(db_error)?,
        workspace: row.try_get(1).map_err(db_error)?,
        thread: row.try_get(2).map_err(db_error)?,
        kind: row.try_get(3).map_err(db_error)?,
        version: row.try_get::<i64, _>(4).map_err(db_error)? as u64,
        data: serde_json::from_str(&data).map_err(|e| Error::unavailable(format!("stored artifact is not JSON: {e}")))?,
        digest: row.try_get(6).map_err(db_error)?,
        author: row.try_get(7).map_err(db_error)?,
        created_at: row.try_get(8).map_err(db_error)?,
        updated_at: row.try_get(9).map_err(db_error)?,
        archived: row.try_get::<i64, _>(10).map_err(db_error)? != 0,
    })
}

/// The head of an artifact, or one version of it (`version`), in a tenant.
pub(crate) async fn load_artifact(db: &Db, tenant: &TenantId, id: &ArtifactId, version: Option<u64>) -> Result<Option<ArtifactRow>, Error> {
    let row = match version {
        None => {
            sqlx::query(sqlx::AssertSqlSafe(format!("SELECT {ARTIFACT_COLUMNS} FROM artifacts a WHERE a.tenant = $1 AND a.id = $2")))
                .bind(tenant.as_str())
                .bind(id.as_str())
                .fetch_optional(&db.pool)
                .await
        }
        Some(version) => {
            sqlx::query(
                "SELECT a.id, a.workspace, a.thread, a.kind, v.version, v.data, v.digest, v.author, \
                 a.created_at, v.at, a.archived \
                 FROM artifacts a JOIN artifact_versions v ON v.tenant = a.tenant AND v.id = a.id \
                 WHERE a.tenant = $1 AND a.id = $2 AND v.version = $3",
            )
            .bind(tenant.as_str())
            .bind(id.as_str())
            .bind(version as i64)
            .fetch_optional(&db.pool)
            .await
        }
    }
    .map_err(db_error)?;
    row.as_ref().map(artifact_from_row).transpose()
}

/// The artifacts of a thread, optionally of one kind or one parent (an
/// empty one is no filter).
///
/// Only the filters given are in the statement: written as `($3 = '' OR
/// a.kind = $3)`, no index could serve them, and SQLite read every
/// artifact of the tenant (by its key's `tenant`) to find a thread's.
/// As it is, `artifacts_by_thread` (thread, kind) finds a kind's, and the
/// (tenant, parent) prefix of `artifacts_by_parent_author` a form's
/// submissions, however many artifacts the tenant has.
pub(crate) async fn list_artifacts(
    db: &Db,
    tenant: &TenantId,
    thread: &ThreadId,
    kind: Option<&str>,
    parent: Option<&str>,
) -> Result<Vec<ArtifactRow>, Error> {
    let (kind, parent) = (kind.filter(|k| !k.is_empty()), parent.filter(|p| !p.is_empty()));
    let mut filters = String::new();
    let mut next = 3;
    for (column, value) in [("kind", kind), ("parent", parent)] {
        if value.is_some() {
            filters.push_str(&format!(" AND a.{column} = ${next}"));
            next += 1;
        }
    }
    let sql = format!("SELECT {ARTIFACT_COLUMNS} FROM artifacts a WHERE a.tenant = $1 AND a.thread = $2{filters} ORDER BY a.created_at, a.id");
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(tenant.as_str()).bind(thread.as_str());
    for value in [kind, parent].into_iter().flatten() {
        query = query.bind(value);
    }
    let rows = query.fetch_all(&db.pool).await.map_err(db_error)?;
    rows.iter().map(artifact_from_row).collect()
}

/// The chain an artifact keeps (that of the run that made it), if any.
pub(crate) async fn artifact_chain(db: &Db, tenant: &str, id: &str) -> Result<Option<String>, Error> {
    let row = sqlx::query("SELECT chain FROM artifacts WHERE tenant = $1 AND id = $2")
        .bind(tenant)
        .bind(id)
        .fetch_optional(&db.pool)
        .await
        .map_err(db_error)?;
    row.map(|r| r.try_get::<Option<String>, _>(0).map_err(db_error)).transpose().map(Option::flatten)
}

/// What an artifact's kind derives from its data, kept beside it: the
/// artifact it belongs to, what it asks.
pub(crate) struct Derived<'a> {
    pub parent: Option<&'a str>,
    pub asks: Option<&'a Asking>,
}

/// An artifact at version 1; an id already taken is refused.
pub(crate) async fn create_artifact(
    conn: &mut AnyConnection,
    w: &Writing<'_>,
    id: &ArtifactId,
    kind: &str,
    data: Value,
    digest: String,
    derived: Derived<'_>,
) -> Result<Event, Error> {
    let Derived { parent, asks } = derived;
    let data_text = serde_json::to_string(&data).expect("JSON serializes");
    let inserted = sqlx::query(
        "INSERT INTO artifacts (tenant, id, workspace, thread, kind, version, data, digest, author, \
         created_at, updated_at, archived, parent, chain, asks, asks_title, asks_until, author_agent) \
         VALUES ($1, $2, $3, $4, $5, 1, $6, $7, $8, $9, $9, 0, $10, (SELECT chain FROM runs WHERE tenant = $1 AND id = $11), \
         $12, $13, $14, $15) \
         ON CONFLICT DO NOTHING",
    )
    .bind(w.tenant)
    .bind(id.as_str())
    .bind(w.workspace.expect("an artifact lives in a workspace"))
    .bind(w.thread.expect("an artifact lives in a thread"))
    .bind(kind)
    .bind(&data_text)
    .bind(&digest)
    .bind(w.author)
    .bind(w.at)
    .bind(parent)
    .bind(w.run)
    .bind(asks.map(|a| a.answered_by.as_str()))
    .bind(asks.map(|a| a.title.as_str()))
    .bind(asks.and_then(|a| a.closes_at_ms))
    .bind(i64::from(w.agent))
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    if inserted.rows_affected() == 0 {
        return Err(Error::exists(format!("artifact {id}")));
    }
    insert_version(conn, w, id.as_str(), 1, &data_text, &digest).await?;
    Ok(ArtifactCreated { id: id.to_string(), kind: kind.to_owned(), version: 1, data, digest }.into())
}

/// The version after `head`, if `head` is still the head.
pub(crate) async fn change_artifact(
    conn: &mut AnyConnection,
    w: &Writing<'_>,
    head: &ArtifactRow,
    data: &Value,
    digest: String,
    patch: json_patch::Patch,
    asks: Option<&Asking>,
) -> Result<Event, Error> {
    let version = head.version + 1;
    let data_text = serde_json::to_string(data).expect("JSON serializes");
    let updated = sqlx::query(
        "UPDATE artifacts SET version = $1, data = $2, digest = $3, updated_at = $4, asks = $8, asks_title = $9, asks_until = $10 \
         WHERE tenant = $5 AND id = $6 AND version = $7 AND archived = 0",
    )
    .bind(version as i64)
    .bind(&data_text)
    .bind(&digest)
    .bind(w.at)
    .bind(w.tenant)
    .bind(&head.id)
    .bind(head.version as i64)
    .bind(asks.map(|a| a.answered_by.as_str()))
    .bind(asks.map(|a| a.title.as_str()))
    .bind(asks.and_then(|a| a.closes_at_ms))
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    if updated.rows_affected() == 0 {
        // Someone else committed a version since the head was read.
        let row = sqlx::query("SELECT version FROM artifacts WHERE tenant = $1 AND id = $2")
            .bind(w.tenant)
            .bind(&head.id)
            .fetch_one(&mut *conn)
            .await
            .map_err(db_error)?;
        let actual: i64 = row.try_get(0).map_err(db_error)?;
        return Err(Error::version_conflict(head.version, actual as u64));
    }
    insert_version(conn, w, &head.id, version, &data_text, &digest).await?;
    Ok(ArtifactChanged { id: head.id.clone(), kind: head.kind.clone(), version, patch, digest }.into())
}

/// An artifact archived, if it was not already.
pub(crate) async fn archive_artifact(conn: &mut AnyConnection, w: &Writing<'_>, head: &ArtifactRow) -> Result<Event, Error> {
    let updated = sqlx::query("UPDATE artifacts SET archived = 1, updated_at = $1 WHERE tenant = $2 AND id = $3 AND archived = 0")
        .bind(w.at)
        .bind(w.tenant)
        .bind(&head.id)
        .execute(&mut *conn)
        .await
        .map_err(db_error)?;
    if updated.rows_affected() == 0 {
        return Err(Error::invalid_state(lattice_core::Code::ArtifactArchived, "the artifact is archived"));
    }
    Ok(ArtifactArchived { id: head.id.clone(), kind: head.kind.clone(), version: head.version }.into())
}

async fn insert_version(conn: &mut AnyConnection, w: &Writing<'_>, id: &str, version: u64, data: &str, digest: &str) -> Result<(), Error> {
    sqlx::query("INSERT INTO artifact_versions (tenant, id, version, data, digest, author, at) VALUES ($1, $2, $3, $4, $5, $6, $7)")
        .bind(w.tenant)
        .bind(id)
        .bind(version as i64)
        .bind(data)
        .bind(digest)
        .bind(w.author)
        .bind(w.at)
        .execute(&mut *conn)
        .await
        .map_err(db_error)?;
    Ok(())
}

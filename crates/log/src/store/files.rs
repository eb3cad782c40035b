//! The `files` and `file_chunks` tables: files' bytes in chunks beside the
//! log, each file's row with what the log's reference says of it (name,
//! type, size, sha256) and whether it was erased.

use lattice_core::Error;
use sqlx::{AnyConnection, Row};

use super::db::{Db, budget_turn, db_error};

/// A file's row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRow {
    pub tenant: String,
    pub id: String,
    pub workspace: String,
    pub thread: String,
    pub uploader: String,
    pub name: String,
    pub media_type: String,
    pub size: u64,
    pub sha256: String,
    pub complete: bool,
    pub created_at: i64,
    pub erased_at: Option<i64>,
    pub erased_by: Option<String>,
}

pub(super) const COLUMNS: &str =
    "tenant, id, workspace, thread, uploader, name, media_type, size, sha256, complete, created_at, erased_at, erased_by";

pub(super) fn row(r: &sqlx::any::AnyRow) -> Result<FileRow, Error> {
    Ok(FileRow {
        tenant: r.try_get(0).map_err(db_error)?,
        id: r.try_get(1).map_err(db_error)?,
        workspace: r.try_get(2).map_err(db_error)?,
        thread: r.try_get(3).map_err(db_error)?,
        uploader: r.try_get(4).map_err(db_error)?,
        name: r.try_get(5).map_err(db_error)?,
        media_type: r.try_get(6).map_err(db_error)?,
        size: r.try_get::<i64, _>(7).map_err(db_error)?.max(0) as u64,
        sha256: r.try_get(8).map_err(db_error)?,
        complete: r.try_get::<i64, _>(9).map_err(db_error)? != 0,
        created_at: r.try_get(10).map_err(db_error)?,
        erased_at: r.try_get(11).map_err(db_error)?,
        erased_by: r.try_get(12).map_err(db_error)?,
    })
}

/// The tenant's bounds on files: how many it holds, and their bytes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Quota {
    pub files: u64,
    pub bytes: u64,
}

/// A new file's row, while its bytes arrive: its size 0 (a streamed
/// upload, counted by its chunks), or the size a resumable upload declared
/// (which that reserves of the tenant's room). Written only if the tenant
/// holds fewer than `quota.files` and has room for what it reserves,
/// decided in the tenant's turn (`budget_turn`) with the write, so
/// uploads begun at once never pass the quota together. Answers the room
/// that was left before it.
pub(crate) async fn begin(db: &Db, file: &FileRow, quota: Quota) -> Result<u64, Error> {
    // SQLite has one writer: every write takes its turn (`Db::writer`).
    let _writer = db.writer().await;
    let mut tx = db.begin().await?;
    budget_turn(&mut tx, &format!("files:{}", file.tenant)).await?;
    let (held, files) = held(&mut tx, &file.tenant).await?;
    if files >= quota.files {
        return Err(Error::too_large(lattice_core::Code::QuotaExceeded, quota.files, files + 1));
    }
    let room = quota.bytes.saturating_sub(held + arriving(&mut tx, &file.tenant).await?);
    if file.size > room {
        return Err(Error::too_large(lattice_core::Code::QuotaExceeded, room, file.size));
    }
    sqlx::query(
        "INSERT INTO files (tenant, id, workspace, thread, uploader, name, media_type, size, sha256, complete, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, '', $8, '', 0, $7)",
    )
    .bind(&file.tenant)
    .bind(&file.id)
    .bind(&file.workspace)
    .bind(&file.thread)
    .bind(&file.uploader)
    .bind(&file.name)
    .bind(file.created_at)
    .bind(file.size as i64)
    .execute(&mut *tx)
    .await
    .map_err(db_error)?;
    tx.commit().await.map_err(db_error)?;
    Ok(room)
}

/// The next chunk of a streamed upload, written only if the tenant's room
/// still holds it with every other upload's bytes (the room told at its
/// beginning is shared with those begun beside it): decided in the
/// tenant's turn with the write. `stored`: the upload's bytes before this
/// chunk; a refusal says the room the upload had.
pub(crate) async fn streamed_chunk(db: &Db, tenant: &str, file: &str, n: i64, bytes: &[u8], stored: u64, quota_bytes: u64) -> Result<(), Error> {
    let _writer = db.writer().await;
    let mut tx = db.begin().await?;
    budget_turn(&mut tx, &format!("files:{tenant}")).await?;
    let (held, _) = held(&mut tx, tenant).await?;
    let others = arriving(&mut tx, tenant).await?.saturating_sub(stored);
    let room = quota_bytes.saturating_sub(held + others);
    if stored + bytes.len() as u64 > room {
        return Err(Error::too_large(lattice_core::Code::QuotaExceeded, room, stored + bytes.len() as u64));
    }
    sqlx::query("INSERT INTO file_chunks (tenant, file, n, bytes) VALUES ($1, $2, $3, $4)")
        .bind(tenant)
        .bind(file)
        .bind(n)
        .bind(bytes.to_vec())
        .execute(&mut *tx)
        .await
        .map_err(db_error)?;
    tx.commit().await.map_err(db_error)?;
    Ok(())
}

/// One chunk of a file's bytes.
pub(crate) async fn chunk(db: &Db, tenant: &str, file: &str, n: i64, bytes: &[u8]) -> Result<(), Error> {
    // SQLite has one writer: every write takes its turn (`Db::writer`).
    let _writer = db.writer().await;
    let written = sqlx::query("INSERT INTO file_chunks (tenant, file, n, bytes) VALUES ($1, $2, $3, $4)")
        .bind(tenant)
        .bind(file)
        .bind(n)
        .bind(bytes.to_vec())
        .execute(&db.pool)
        .await;
    match written {
        Ok(_) => Ok(()),
        // Two parts of one upload sent at once: the first holds the place,
        // the other is told where the upload stands now.
        Err(e) if super::db::writers_met(&e) => {
            drop(_writer);
            let (held, _) = stored(db, tenant, file).await?;
            Err(Error::Conflict {
                code: lattice_core::Code::UploadOffset,
                reason: format!("another part of the upload was written at the same place at the same time: it holds {held} bytes, send from there"),
                expected: None,
                actual: Some(held),
            })
        }
        Err(e) => Err(db_error(e)),
    }
}

/// What a file's chunks hold so far: their bytes and how many they are.
pub(crate) async fn stored(db: &Db, tenant: &str, id: &str) -> Result<(u64, i64), Error> {
    let r = sqlx::query("SELECT CAST(COALESCE(SUM(LENGTH(bytes)), 0) AS BIGINT), COUNT(*) FROM file_chunks WHERE tenant = $1 AND file = $2")
        .bind(tenant)
        .bind(id)
        .fetch_one(&db.pool)
        .await
        .map_err(db_error)?;
    let bytes: i64 = r.try_get(0).map_err(db_error)?;
    let count: i64 = r.try_get(1).map_err(db_error)?;
    Ok((bytes.max(0) as u64, count))
}

/// The file whole: its type, size and digest, readable from now on.
pub(crate) async fn finish(db: &Db, tenant: &str, id: &str, media_type: &str, size: u64, sha256: &str) -> Result<(), Error> {
    // SQLite has one writer: every write takes its turn (`Db::writer`).
    let _writer = db.writer().await;
    sqlx::query("UPDATE files SET media_type = $1, size = $2, sha256 = $3, complete = 1 WHERE tenant = $4 AND id = $5")
        .bind(media_type)
        .bind(size as i64)
        .bind(sha256)
        .bind(tenant)
        .bind(id)
        .execute(&db.pool)
        .await
        .map_err(db_error)?;
    Ok(())
}

/// An upload refused or cut off: its chunks and its row go.
pub(crate) async fn abandon(db: &Db, tenant: &str, id: &str) -> Result<(), Error> {
    // SQLite has one writer: every write takes its turn (`Db::writer`).
    let _writer = db.writer().await;
    sqlx::query("DELETE FROM file_chunks WHERE tenant = $1 AND file = $2").bind(tenant).bind(id).execute(&db.pool).await.map_err(db_error)?;
    sqlx::query("DELETE FROM files WHERE tenant = $1 AND id = $2 AND complete = 0")
        .bind(tenant)
        .bind(id)
        .execute(&db.pool)
        .await
        .map_err(db_error)?;
    Ok(())
}

/// Forgets a tenant's uploads that began before `before` and never
/// finished (their service stopped under them): what they wrote is read
/// back by nobody and counts against nobody's room.
pub(crate) async fn forget_stale(db: &Db, tenant: &str, before: i64) -> Result<(), Error> {
    let stale = sqlx::query("SELECT id FROM files WHERE tenant = $1 AND complete = 0 AND created_at < $2 LIMIT 100")
        .bind(tenant)
        .bind(before)
        .fetch_all(&db.pool)
        .await
        .map_err(db_error)?;
    for row in stale {
        let id: String = row.try_get(0).map_err(db_error)?;
        abandon(db, tenant, &id).await?;
    }
    Ok(())
}

/// What a tenant holds: bytes and files, those arriving included, erased
/// ones left out.
pub(crate) async fn held(conn: &mut AnyConnection, tenant: &str) -> Result<(u64, u64), Error> {
    let r = sqlx::query("SELECT CAST(COALESCE(SUM(size), 0) AS BIGINT), COUNT(*) FROM files WHERE tenant = $1 AND erased_at IS NULL")
        .bind(tenant)
        .fetch_one(&mut *conn)
        .await
        .map_err(db_error)?;
    let bytes: i64 = r.try_get(0).map_err(db_error)?;
    let count: i64 = r.try_get(1).map_err(db_error)?;
    Ok((bytes.max(0) as u64, count.max(0) as u64))
}

/// Bytes of the streamed uploads under way in a tenant (their rows say 0
/// until they end): counted from their chunks. A resumable upload's row
/// holds the size it declared, which `held` counts.
pub(crate) async fn arriving(conn: &mut AnyConnection, tenant: &str) -> Result<u64, Error> {
    let r = sqlx::query(
        "SELECT CAST(COALESCE(SUM(LENGTH(c.bytes)), 0) AS BIGINT) FROM file_chunks c JOIN files f ON f.tenant = c.tenant AND f.id = c.file \
         WHERE f.tenant = $1 AND f.complete = 0 AND f.size = 0",
    )
    .bind(tenant)
    .fetch_one(&mut *conn)
    .await
    .map_err(db_error)?;
    let bytes: i64 = r.try_get(0).map_err(db_error)?;
    Ok(bytes.max(0) as u64)
}

pub(crate) async fn head(db: &Db, tenant: &str, id: &str) -> Result<Option<FileRow>, Error> {
    let sql = format!("SELECT {COLUMNS} FROM files WHERE tenant = $1 AND id = $2");
    let found = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(tenant).bind(id).fetch_optional(&db.pool).await.map_err(db_error)?;
    found.as_ref().map(row).transpose()
}

/// Chunks `from` on, at most `limit` of them, in order.
pub(crate) async fn chunks(db: &Db, tenant: &str, id: &str, from: i64, limit: i64) -> Result<Vec<Vec<u8>>, Error> {
    let rows = sqlx::query("SELECT bytes FROM file_chunks WHERE tenant = $1 AND file = $2 AND n >= $3 ORDER BY n LIMIT $4")
        .bind(tenant)
        .bind(id)
        .bind(from)
        .bind(limit)
        .fetch_all(&db.pool)
        .await
        .map_err(db_error)?;
    rows.iter().map(|r| r.try_get::<Vec<u8>, _>(0).map_err(db_error)).collect()
}

/// Erases a file's bytes; its row stays, saying when and by whom.
pub(crate) async fn erase(db: &Db, tenant: &str, id: &str, by: &str, at: i64) -> Result<(), Error> {
    // SQLite has one writer: every write takes its turn (`Db::writer`).
    let _writer = db.writer().await;
    let mut tx = db.begin().await?;
    sqlx::query("DELETE FROM file_chunks WHERE tenant = $1 AND file = $2").bind(tenant).bind(id).execute(&mut *tx).await.map_err(db_error)?;
    sqlx::query("UPDATE files SET erased_at = $1, erased_by = $2 WHERE tenant = $3 AND id = $4 AND erased_at IS NULL")
        .bind(at)
        .bind(by)
        .bind(tenant)
        .bind(id)
        .execute(&mut *tx)
        .await
        .map_err(db_error)?;
    tx.commit().await.map_err(db_error)
}

//! The `follower_checkpoints` table: each follower of the log's durable
//! checkpoint, and the lead among the followers of one name. A follower's
//! own bookkeeping, not the product's state: no command, no envelope.

use lattice_core::Error;
use sqlx::{AnyConnection, Row};

use super::db::{Db, db_error};

/// The follower's checkpoint (0 when it never ran).
pub(crate) async fn checkpoint(db: &Db, name: &str) -> Result<i64, Error> {
    checkpoint_on(&mut *db.pool.acquire().await.map_err(db_error)?, name).await
}

/// [`checkpoint`], read on `conn` (in a transaction that moves it).
pub(crate) async fn checkpoint_on(conn: &mut AnyConnection, name: &str) -> Result<i64, Error> {
    let row = sqlx::query("SELECT seq FROM follower_checkpoints WHERE name = $1").bind(name).fetch_optional(conn).await.map_err(db_error)?;
    Ok(match row {
        Some(row) => row.try_get(0).map_err(db_error)?,
        None => 0,
    })
}

/// Takes or renews the lead of `name` for `holder` until `until`: granted
/// when nobody holds it, its holder's time ended before `now`, or `holder`
/// has it already.
pub(crate) async fn lead(db: &Db, name: &str, holder: &str, now: i64, until: i64) -> Result<bool, Error> {
    let _writer = db.writer().await;
    let done = sqlx::query(
        "INSERT INTO follower_checkpoints (name, seq, updated_at, holder, lead_until) VALUES ($1, 0, $2, $3, $4) \
         ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, lead_until = excluded.lead_until \
         WHERE follower_checkpoints.holder IS NULL OR follower_checkpoints.holder = excluded.holder \
         OR follower_checkpoints.lead_until < $2",
    )
    .bind(name)
    .bind(now)
    .bind(holder)
    .bind(until)
    .execute(&db.pool)
    .await
    .map_err(db_error)?;
    Ok(done.rows_affected() == 1)
}

/// Frees the lead of `name`, if `holder` has it.
pub(crate) async fn step_down(db: &Db, name: &str, holder: &str) -> Result<(), Error> {
    let _writer = db.writer().await;
    sqlx::query("UPDATE follower_checkpoints SET holder = NULL, lead_until = NULL WHERE name = $1 AND holder = $2")
        .bind(name)
        .bind(holder)
        .execute(&db.pool)
        .await
        .map_err(db_error)?;
    Ok(())
}

/// Moves the checkpoint forward to `seq` (never back), stamped `now`.
pub(crate) async fn save_checkpoint(db: &Db, name: &str, seq: i64, now: i64) -> Result<(), Error> {
    let _writer = db.writer().await;
    save_checkpoint_on(&mut *db.pool.acquire().await.map_err(db_error)?, name, seq, now).await
}

/// [`save_checkpoint`], written on `conn` (in a transaction with what it
/// records), whose writer's turn the caller holds.
pub(crate) async fn save_checkpoint_on(conn: &mut AnyConnection, name: &str, seq: i64, now: i64) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO follower_checkpoints (name, seq, updated_at) VALUES ($1, $2, $3) \
         ON CONFLICT (name) DO UPDATE SET seq = excluded.seq, updated_at = excluded.updated_at \
         WHERE follower_checkpoints.seq < excluded.seq",
    )
    .bind(name)
    .bind(seq)
    .bind(now)
    .execute(conn)
    .await
    .map_err(db_error)?;
    Ok(())
}

/// Whether some holder has the lead of `name` at `now`.
pub(crate) async fn led(db: &Db, name: &str, now: i64) -> Result<bool, Error> {
    let row = sqlx::query("SELECT 1 FROM follower_checkpoints WHERE name = $1 AND holder IS NOT NULL AND lead_until >= $2")
        .bind(name)
        .bind(now)
        .fetch_optional(&db.pool)
        .await
        .map_err(db_error)?;
    Ok(row.is_some())
}

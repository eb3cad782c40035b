//! How far each person has read each thread (`read_marks`); what of a
//! thread is new to them is store/unread.rs's to say.

use lattice_core::Error;

use super::db::{Db, db_error};

/// Moves `user`'s mark in `thread` to `seq`, never back and never past the
/// thread's last envelope; answers the mark as it now stands.
pub(crate) async fn mark(db: &Db, thread: &str, user: &str, seq: i64) -> Result<i64, Error> {
    let last: Option<i64> =
        sqlx::query_scalar("SELECT MAX(seq) FROM envelopes WHERE thread = $1").bind(thread).fetch_one(&db.pool).await.map_err(db_error)?;
    let seq = seq.min(last.unwrap_or(0)).max(0);
    // Two marks at once leave the further one.
    sqlx::query_scalar(
        "INSERT INTO read_marks (thread, user_id, seq) VALUES ($1, $2, $3) \
         ON CONFLICT (user_id, thread) DO UPDATE SET seq = CASE WHEN read_marks.seq > excluded.seq THEN read_marks.seq ELSE excluded.seq END \
         RETURNING seq",
    )
    .bind(thread)
    .bind(user)
    .bind(seq)
    .fetch_one(&db.pool)
    .await
    .map_err(db_error)
}

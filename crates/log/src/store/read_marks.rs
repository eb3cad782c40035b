//! How far each person has read each thread (`read_marks`), and what of a
//! thread is new to them: a message or an artifact by anyone but them
//! after their mark.

use lattice_core::Error;

use super::db::{Db, db_error};

/// The envelopes that make a thread unread: what someone else said or
/// showed there, not the steps of a run or a change of state.
const NEW_TO_A_READER: &str = "('message_posted', 'artifact_created')";

/// The SQL condition that thread `{t}.id` has something new for the
/// reader: `{user}` the reader's id, `{actor}` the reader's envelope
/// actor as stored (both bind placeholders), `{upto}` how far the log may
/// be read. One probe of `envelopes_by_thread` from the mark on.
pub(super) fn unread(t: &str, user: &str, actor: &str, upto: &str) -> String {
    format!(
        "EXISTS (SELECT 1 FROM envelopes e WHERE e.thread = {t}.id \
         AND e.seq > COALESCE((SELECT r.seq FROM read_marks r WHERE r.thread = {t}.id AND r.user_id = {user}), 0) \
         AND e.seq <= {upto} AND e.type IN {NEW_TO_A_READER} AND e.actor <> {actor})"
    )
}

/// Moves `user`'s mark in `thread` to `seq`, never back and never past the
/// thread's last envelope; answers the mark as it now stands.
pub(crate) async fn mark(db: &Db, thread: &str, user: &str, seq: i64) -> Result<i64, Error> {
    let last: Option<i64> =
        sqlx::query_scalar("SELECT MAX(seq) FROM envelopes WHERE thread = $1").bind(thread).fetch_one(&db.pool).await.map_err(db_error)?;
    let seq = seq.min(last.unwrap_or(0)).max(0);
    // Two marks at once leave the further one.
    sqlx::query_scalar(
        "INSERT INTO read_marks (thread, user_id, seq) VALUES ($1, $2, $3) \
         ON CONFLICT (thread, user_id) DO UPDATE SET seq = CASE WHEN read_marks.seq > excluded.seq THEN read_marks.seq ELSE excluded.seq END \
         RETURNING seq",
    )
    .bind(thread)
    .bind(user)
    .bind(seq)
    .fetch_one(&db.pool)
    .await
    .map_err(db_error)
}

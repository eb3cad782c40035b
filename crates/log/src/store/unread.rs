//! What of a thread is new to a reader: a message or an artifact by anyone
//! but them after their read mark (`read_marks`). A thread list answers it
//! for each of its threads from the thread's row, where the last such
//! envelope, its author and the last one by anyone else are folded in off
//! the write path ([`fold`], run by src/unread.rs), and from the log itself
//! for what came after the fold's checkpoint.

use std::collections::BTreeMap;

use lattice_core::Error;
use sqlx::Row;

use super::db::{Db, db_error};
use super::followers;

/// The envelopes that make a thread unread: what someone else said or
/// showed there, not the steps of a run or a change of state.
const SAID: &str = "('message_posted', 'artifact_created')";

/// The fold's checkpoint in `follower_checkpoints`: every envelope at or
/// below it is folded into its thread's row.
const CHECKPOINT: &str = "unread";

/// How far behind the horizon the fold may be for a list to read what it
/// has not folded from the log in one range: further (a fold that stopped),
/// each thread's envelopes are probed, as lists once did.
const BEHIND_MAX: i64 = 20_000;

/// `WITH` clauses a thread list's query begins with: `recent`, the
/// envelopes after the fold's checkpoint up to `{upto}` (a bind
/// placeholder) that make a thread unread. Read once per list, as one
/// range of `envelopes_by_type`, and only as long as the fold is behind.
pub(super) fn recent(upto: &str) -> String {
    format!(
        "WITH folded AS MATERIALIZED (SELECT COALESCE(MAX(seq), 0) AS upto FROM follower_checkpoints WHERE name = '{CHECKPOINT}'), \
         recent AS MATERIALIZED (SELECT e.thread, e.seq, e.actor FROM envelopes e \
         WHERE e.type IN {SAID} AND e.seq > (SELECT upto FROM folded) AND e.seq <= {upto} \
         AND (SELECT upto FROM folded) >= {upto} - {BEHIND_MAX}) "
    )
}

/// The SQL condition that thread `{t}` has something new for the reader
/// whose mark there is `{mark}` (an expression), `{actor}` the reader's
/// envelope actor as stored and `{upto}` how far the log may be read (bind
/// placeholders). With [`recent`] before it.
///
/// The row holds the last envelope by someone other than the reader up
/// to the checkpoint: the last one (`said_seq`) unless the reader wrote
/// it, else the last by anyone else (`said_before`). When that lies past
/// `{upto}` (another replica folded what this one cannot read yet), or the
/// fold is more than [`BEHIND_MAX`] behind, the thread's envelopes are
/// probed instead, as every list once did.
pub(super) fn unread(t: &str, mark: &str, actor: &str, upto: &str) -> String {
    let others = format!("(CASE WHEN {t}.said_by <> {actor} THEN {t}.said_seq ELSE {t}.said_before END)");
    format!(
        "(CASE WHEN {others} <= {upto} AND (SELECT upto FROM folded) >= {upto} - {BEHIND_MAX} THEN ({others} > {mark} \
         OR EXISTS (SELECT 1 FROM recent x WHERE x.thread = {t}.id AND x.seq > {mark} AND x.actor <> {actor})) \
         ELSE EXISTS (SELECT 1 FROM envelopes e WHERE e.thread = {t}.id AND e.seq > {mark} AND e.seq <= {upto} \
         AND e.type IN {SAID} AND e.actor <> {actor}) END)"
    )
}

/// How far the log is folded into its threads' rows.
pub(crate) async fn folded(db: &Db) -> Result<i64, Error> {
    followers::checkpoint(db, CHECKPOINT).await
}

/// One envelope that makes its thread unread.
struct Said {
    seq: i64,
    thread: String,
    actor: String,
}

/// Folds what makes threads unread, from the checkpoint up to `upto` (the
/// horizon: nothing at or below it is still to come), at most `batch`
/// envelopes, into the threads' rows, and moves the checkpoint in the same
/// transaction. Answers the checkpoint as it now stands.
///
/// Folding an envelope twice, or two replicas folding at once, changes
/// nothing more: the row's three columns are a function of the set of
/// envelopes folded, and each update merges one envelope into what the row
/// holds when it is written.
pub(crate) async fn fold(db: &Db, upto: i64, batch: i64, now: i64) -> Result<i64, Error> {
    let _writer = db.writer().await;
    let mut tx = db.begin().await?;
    let from = followers::checkpoint_on(&mut tx, CHECKPOINT).await?;
    if from >= upto {
        return Ok(from);
    }
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT seq, thread, actor FROM envelopes WHERE type IN {SAID} AND thread IS NOT NULL AND seq > $1 AND seq <= $2 ORDER BY seq LIMIT $3"
    )))
    .bind(from)
    .bind(upto)
    .bind(batch)
    .fetch_all(&mut *tx)
    .await
    .map_err(db_error)?;
    let full = rows.len() as i64 == batch;
    let mut said = Vec::with_capacity(rows.len());
    for row in &rows {
        said.push(Said {
            seq: row.try_get(0).map_err(db_error)?,
            thread: row.try_get(1).map_err(db_error)?,
            actor: row.try_get(2).map_err(db_error)?,
        });
    }
    // A full batch ends at its last envelope; one that is not, at `upto`.
    let to = if full { said.last().map_or(upto, |s| s.seq) } else { upto };
    // Threads in the order of their ids: two replicas folding at once
    // lock the rows they share in the same order.
    for (thread, said) in what_counts(said) {
        for s in said {
            merge(&mut tx, &thread, s.seq, &s.actor).await?;
        }
    }
    followers::save_checkpoint_on(&mut tx, CHECKPOINT, to, now).await?;
    tx.commit().await.map_err(db_error)?;
    Ok(to)
}

/// Of a batch, per thread, the envelopes that can change its row: the
/// last, and the last by anyone other than its author (whatever else the
/// batch holds is older than one of those two by the same author, or by
/// someone other than the last's, and merges to nothing more).
fn what_counts(said: Vec<Said>) -> BTreeMap<String, Vec<Said>> {
    let mut by_thread: BTreeMap<String, Vec<Said>> = BTreeMap::new();
    // Newest first: the first of a thread is its last.
    for s in said.into_iter().rev() {
        let kept = by_thread.entry(s.thread.clone()).or_default();
        match kept.as_slice() {
            [] => kept.push(s),
            [last] if last.actor != s.actor => kept.push(s),
            _ => {}
        }
    }
    by_thread
}

/// Merges one envelope (`seq` by `actor`) into its thread's row: a newer
/// one becomes the last, and the last becomes the last by anyone else
/// unless the same author wrote both; an older one by someone other than
/// the last's author may be the last by anyone else.
async fn merge(conn: &mut sqlx::AnyConnection, thread: &str, seq: i64, actor: &str) -> Result<(), Error> {
    sqlx::query(
        "UPDATE threads SET \
         said_before = CASE WHEN $2 > said_seq THEN (CASE WHEN $3 = said_by THEN said_before ELSE said_seq END) \
         WHEN $2 < said_seq AND $3 <> said_by AND $2 > said_before THEN $2 ELSE said_before END, \
         said_by = CASE WHEN $2 > said_seq THEN $3 ELSE said_by END, \
         said_seq = CASE WHEN $2 > said_seq THEN $2 ELSE said_seq END \
         WHERE id = $1",
    )
    .bind(thread)
    .bind(seq)
    .bind(actor)
    .execute(conn)
    .await
    .map_err(db_error)?;
    Ok(())
}

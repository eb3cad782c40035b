//! What the horizon tracker reads (src/horizon.rs says why): the last
//! sequence number, the numbers after the horizon, the writers holding
//! the writers' lock; and the notification that tells other replicas.

use lattice_core::Error;
use sqlx::Row;

use super::db::{Db, db_error};

/// The advisory lock every writer holds in shared mode from just before it
/// takes a sequence number until its transaction ends ("lattice1").
pub const WRITER_LOCK: i64 = 0x6c61_7474_6963_6531;

/// How `pg_locks` names [`WRITER_LOCK`]: a bigint key is split into its
/// high and low halves.
const WRITER_LOCK_ROWS: &str = "locktype = 'advisory' AND classid = 1818326132 AND objid = 1768121649 AND objsubid = 1 \
     AND database = (SELECT oid FROM pg_database WHERE datname = current_database())";

/// The channel on which trackers tell each other that their process's
/// commits are below their horizon.
pub(crate) const CHANNEL: &str = "lattice_log";

/// The notification, as one implicit transaction (a simple query of two
/// statements) that commits without waiting for the disk.
const NOTIFY: &str = "SET LOCAL synchronous_commit = off; SELECT pg_notify('lattice_log', '')";

/// The last sequence number (0 for an empty log).
pub(crate) async fn last_seq(db: &Db) -> Result<i64, Error> {
    let row = sqlx::query("SELECT COALESCE(MAX(seq), 0) FROM envelopes").fetch_one(&db.pool).await.map_err(db_error)?;
    row.try_get(0).map_err(db_error)
}

/// Up to `limit` sequence numbers after `after`, in order.
pub(crate) async fn seqs_after(db: &Db, after: i64, limit: i64) -> Result<Vec<i64>, Error> {
    sqlx::query_scalar("SELECT seq FROM envelopes WHERE seq > $1 ORDER BY seq LIMIT $2")
        .bind(after)
        .bind(limit)
        .fetch_all(&db.pool)
        .await
        .map_err(db_error)
}

/// The writers in progress now: the holders of the writers' lock, as
/// their virtual transaction ids, comma-separated. Virtual transaction ids
/// are not reused while the server runs.
pub(crate) async fn writers_now(db: &Db) -> Result<String, Error> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT COALESCE(string_agg(virtualtransaction, ','), '') FROM pg_locks WHERE {WRITER_LOCK_ROWS} AND granted"
    )))
    .fetch_one(&db.pool)
    .await
    .map_err(db_error)?;
    row.try_get(0).map_err(db_error)
}

/// Whether every writer of `writers` (as [`writers_now`] answered) has ended.
pub(crate) async fn all_ended(db: &Db, writers: &str) -> Result<bool, Error> {
    if writers.is_empty() {
        return Ok(true);
    }
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT NOT EXISTS (SELECT 1 FROM pg_locks WHERE {WRITER_LOCK_ROWS} \
         AND virtualtransaction = ANY(string_to_array($1, ',')))"
    )))
    .bind(writers)
    .fetch_one(&db.pool)
    .await
    .map_err(db_error)?;
    row.try_get(0).map_err(db_error)
}

/// Tells the trackers listening on [`CHANNEL`] that the log moved.
pub(crate) async fn announce(db: &Db) -> Result<(), sqlx::Error> {
    sqlx::raw_sql(NOTIFY).execute(&db.pool).await.map(drop)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_lock_writers_take_is_the_one_the_tracker_looks_for() {
        let key = super::WRITER_LOCK;
        let (high, low) = ((key as u64) >> 32, (key as u64) & 0xffff_ffff);
        assert!(super::WRITER_LOCK_ROWS.contains(&format!("classid = {high} AND objid = {low}")));
        assert!(crate::store::envelopes::INSERT_ENVELOPE_POSTGRES.contains(&format!("pg_advisory_xact_lock_shared({key})")));
    }

    #[test]
    fn the_announcement_goes_to_the_channel_the_trackers_listen_on() {
        assert!(super::NOTIFY.contains(&format!("pg_notify('{}'", super::CHANNEL)));
    }
}

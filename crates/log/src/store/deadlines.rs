//! What the deadline scheduler reads: the requests whose deadline passed,
//! and the turn that keeps two replicas from looking at once.

use lattice_core::{Error, RunId, TenantId};
use sqlx::{Any, Row, Transaction};

use super::db::{Backend, Db, db_error};

/// The advisory lock only the replica looking for deadlines holds.
const LOCK: i64 = 0x6c61_7474_6963_0001;

/// One look's turn: on PostgreSQL a transaction holding the lock until
/// the turn is dropped; on SQLite nothing (one process owns the file).
pub(crate) struct Turn {
    _lock: Option<Transaction<'static, Any>>,
}

/// Takes the turn to look for deadlines: `None` when another replica has
/// it and `wait` is false; with `wait`, once the other's look is done.
pub(crate) async fn take_turn(db: &Db, wait: bool) -> Result<Option<Turn>, Error> {
    match db.backend {
        Backend::Postgres => {
            let mut tx = db.begin().await?;
            if wait {
                sqlx::query("SELECT pg_advisory_xact_lock($1)").bind(LOCK).execute(&mut *tx).await.map_err(db_error)?;
            } else {
                let held: bool = sqlx::query("SELECT pg_try_advisory_xact_lock($1)")
                    .bind(LOCK)
                    .fetch_one(&mut *tx)
                    .await
                    .map_err(db_error)?
                    .try_get(0)
                    .map_err(db_error)?;
                if !held {
                    return Ok(None);
                }
            }
            Ok(Some(Turn { _lock: Some(tx) }))
        }
        Backend::Sqlite => Ok(Some(Turn { _lock: None })),
    }
}

/// An open request whose deadline passed.
pub(crate) struct Due {
    pub tenant: TenantId,
    pub run: RunId,
    pub tool_call_id: String,
}

/// Up to `limit` open requests whose deadline is at or before `now`, the
/// earliest first: of paused runs, and a connected server's questions
/// (`elicitation`), which a running run asks.
pub(crate) async fn due(db: &Db, now: i64, limit: i64) -> Result<Vec<Due>, Error> {
    let rows = sqlx::query(
        "SELECT r.tenant, r.run, r.tool_call_id FROM run_requests r JOIN runs u ON u.tenant = r.tenant AND u.id = r.run \
         WHERE r.expires_at <= $1 AND r.answered_by IS NULL \
         AND (u.status = 'paused' OR (u.status = 'running' AND r.tool_name = 'elicitation')) ORDER BY r.expires_at LIMIT $2",
    )
    .bind(now)
    .bind(limit)
    .fetch_all(&db.pool)
    .await
    .map_err(db_error)?;
    rows.iter()
        .map(|row| {
            Ok(Due {
                tenant: TenantId::from_trusted(row.try_get::<String, _>(0).map_err(db_error)?),
                run: RunId::from_trusted(row.try_get::<String, _>(1).map_err(db_error)?),
                tool_call_id: row.try_get(2).map_err(db_error)?,
            })
        })
        .collect()
}

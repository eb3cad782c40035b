//! Following the log from outside the write path: the bridge reads every
//! envelope in order, never past the horizon, from a durable checkpoint.
//!
//! The checkpoint is the follower's own bookkeeping, not the product's
//! state: it is written here (only `crates/log` writes to the database) but
//! is no command and leaves no envelope.

use std::time::Duration;

use lattice_core::{Envelope, Error};
use sqlx::Row;

use crate::clock::now_ms;
use crate::db::{Db, db_error};
use crate::horizon::Horizon;
use crate::store::{ENVELOPE_COLUMNS, StoredEnvelope};

/// A reader of the whole log, in order, with its own horizon tracker (or
/// the log service's, when it runs in the same process).
#[derive(Clone)]
pub struct LogReader {
    db: Db,
    horizon: Horizon,
}

impl LogReader {
    /// A reader with a tracker of its own, polling every `poll` while idle
    /// (a separate process hears of no commits).
    pub fn open(db: Db, poll: Duration) -> Self {
        let horizon = Horizon::start_polling(db.clone(), poll);
        Self { db, horizon }
    }

    /// A reader sharing the log service's horizon (same process: woken by
    /// every commit).
    pub fn of(service: &crate::LogService) -> Self {
        Self { db: service.db().clone(), horizon: service.horizon().clone() }
    }

    /// Follows the horizon: while this lives, the tracker looks on every
    /// commit (see [`Horizon::subscribe`]).
    pub fn horizon(&self) -> crate::Following {
        self.horizon.subscribe()
    }

    /// Up to `limit` envelopes after `after`, never past the horizon.
    pub async fn read(&self, after: i64, limit: i64) -> Result<Vec<Envelope>, Error> {
        self.read_stored(after, limit).await?.iter().map(StoredEnvelope::decode).collect()
    }

    /// As `read`, leaving actors and payloads as their stored JSON text.
    pub async fn read_stored(&self, after: i64, limit: i64) -> Result<Vec<StoredEnvelope>, Error> {
        let horizon = self.horizon.current();
        if horizon <= after {
            return Ok(Vec::new());
        }
        let rows =
            sqlx::query(sqlx::AssertSqlSafe(format!("SELECT {ENVELOPE_COLUMNS} FROM envelopes WHERE seq > $1 AND seq <= $2 ORDER BY seq LIMIT $3")))
                .bind(after)
                .bind(horizon)
                .bind(limit)
                .fetch_all(&self.db.pool)
                .await
                .map_err(db_error)?;
        rows.iter().map(StoredEnvelope::from_row).collect()
    }

    /// The follower's checkpoint (0 when it never ran).
    pub async fn checkpoint(&self, name: &str) -> Result<i64, Error> {
        let row =
            sqlx::query("SELECT seq FROM follower_checkpoints WHERE name = $1").bind(name).fetch_optional(&self.db.pool).await.map_err(db_error)?;
        Ok(match row {
            Some(row) => row.try_get(0).map_err(db_error)?,
            None => 0,
        })
    }

    /// Takes, or renews, the lead among the followers called `name` for
    /// `ttl`: granted when nobody holds it, its holder's time is up, or
    /// `holder` has it already. Only the leader publishes.
    pub async fn lead(&self, name: &str, holder: &str, ttl: Duration) -> Result<bool, Error> {
        let _writer = self.db.writer().await;
        let now = now_ms();
        let done = sqlx::query(
            "INSERT INTO follower_checkpoints (name, seq, updated_at, holder, lead_until) VALUES ($1, 0, $2, $3, $4) \
             ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, lead_until = excluded.lead_until \
             WHERE follower_checkpoints.holder IS NULL OR follower_checkpoints.holder = excluded.holder \
             OR follower_checkpoints.lead_until < $2",
        )
        .bind(name)
        .bind(now)
        .bind(holder)
        .bind(now + ttl.as_millis() as i64)
        .execute(&self.db.pool)
        .await
        .map_err(db_error)?;
        Ok(done.rows_affected() == 1)
    }

    /// Gives the lead back, if `holder` has it: another follower takes it
    /// at its next look instead of after the lead's time runs out.
    pub async fn step_down(&self, name: &str, holder: &str) -> Result<(), Error> {
        let _writer = self.db.writer().await;
        sqlx::query("UPDATE follower_checkpoints SET holder = NULL, lead_until = NULL WHERE name = $1 AND holder = $2")
            .bind(name)
            .bind(holder)
            .execute(&self.db.pool)
            .await
            .map_err(db_error)?;
        Ok(())
    }

    /// Moves the checkpoint forward (never back).
    pub async fn save_checkpoint(&self, name: &str, seq: i64) -> Result<(), Error> {
        let _writer = self.db.writer().await;
        sqlx::query(
            "INSERT INTO follower_checkpoints (name, seq, updated_at) VALUES ($1, $2, $3) \
             ON CONFLICT (name) DO UPDATE SET seq = excluded.seq, updated_at = excluded.updated_at \
             WHERE follower_checkpoints.seq < excluded.seq",
        )
        .bind(name)
        .bind(seq)
        .bind(now_ms())
        .execute(&self.db.pool)
        .await
        .map_err(db_error)?;
        Ok(())
    }

    /// The form's or app's title, and a request's args: what projections
    /// read besides the envelope. `None` when absent.
    pub async fn artifact_data(&self, tenant: &str, id: &str, version: Option<u64>) -> Result<Option<(String, serde_json::Value)>, Error> {
        let tenant = lattice_core::TenantId::from_trusted(tenant);
        let id = lattice_core::ArtifactId::from_trusted(id);
        Ok(crate::store::load_artifact(&self.db, &tenant, &id, version).await?.map(|a| (a.kind, a.data)))
    }

    /// Whether a thread is restricted to the people listed on it.
    pub async fn thread_restricted(&self, thread: &str) -> Result<bool, Error> {
        let row = sqlx::query("SELECT restricted FROM threads WHERE id = $1")
            .bind(thread)
            .fetch_optional(&self.db.pool)
            .await
            .map_err(crate::db::db_error)?;
        Ok(row.map(|r| sqlx::Row::try_get::<i64, _>(&r, 0)).transpose().map_err(crate::db::db_error)?.unwrap_or(0) != 0)
    }

    /// The chain an artifact keeps (that of the run that made it), if any.
    pub async fn artifact_chain(&self, tenant: &str, id: &str) -> Result<Option<String>, Error> {
        let row = sqlx::query("SELECT chain FROM artifacts WHERE tenant = $1 AND id = $2")
            .bind(tenant)
            .bind(id)
            .fetch_optional(&self.db.pool)
            .await
            .map_err(crate::db::db_error)?;
        row.map(|r| sqlx::Row::try_get::<Option<String>, _>(&r, 0).map_err(crate::db::db_error)).transpose().map(Option::flatten)
    }

    pub async fn request_args(&self, tenant: &str, run: &str, tool_call_id: &str) -> Result<Option<serde_json::Value>, Error> {
        let tenant = lattice_core::TenantId::from_trusted(tenant);
        let requests = crate::runs::load_requests(&self.db, &tenant, run).await?;
        Ok(requests.into_iter().find(|r| r.tool_call_id == tool_call_id).map(|r| r.args))
    }
}

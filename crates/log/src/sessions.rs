//! Protocol sessions that replicas share (the MCP transport's): a session
//! opened on one replica is found on another. The log keeps each session's
//! owner and its state, which it does not read; only the owner may use it.
//!
//! The table is the truth of which sessions live: a session whose row is
//! gone (forgotten for the caller's newer ones, closed, or its person
//! signed out) has ended, whatever a replica still holds in memory. So an
//! owner is read from the table on every request, never remembered: a
//! replica cannot see another's eviction in what it remembers.

use std::time::Duration;

use lattice_core::{Error, Principal};

use crate::clock::now_ms;
use crate::db::{Db, db_error};
use crate::service::LogService;

/// The largest state a session may keep (a client's handshake).
pub const SESSION_STATE_BYTES: usize = 64 * 1024;
/// Sessions older than this are forgotten.
const KEPT: Duration = Duration::from_secs(7 * 24 * 3600);
/// The sessions one caller keeps at most: opening another forgets its oldest.
pub const SESSIONS_PER_CALLER: i64 = 64;
/// Ids asked about in one statement (within every backend's bound on
/// parameters).
const IDS_PER_QUERY: usize = 500;

/// The shared session table.
#[derive(Clone)]
pub struct Sessions {
    db: Db,
}

fn owner_of(p: &Principal) -> String {
    owner_key(p.tenant.as_str(), p.user.as_str())
}

/// How a session's owner is stored (a person's sign-out drops theirs).
pub(crate) fn owner_key(tenant: &str, user: &str) -> String {
    format!("{tenant}/{user}")
}

impl LogService {
    pub fn sessions(&self) -> Sessions {
        Sessions { db: self.inner.db.clone() }
    }
}

impl Sessions {
    /// Records who opened `id` (a session's owner never changes), and
    /// forgets the sessions that opening it leaves over the bounds: the
    /// caller's oldest past [`SESSIONS_PER_CALLER`], anyone's older than a
    /// week. Answers the ids forgotten, which have ended: whoever serves
    /// one closes it.
    pub async fn open(&self, id: &str, owner: &Principal) -> Result<Vec<String>, Error> {
        let _writer = self.db.writer().await;
        let now = now_ms();
        sqlx::query(
            "INSERT INTO sessions (id, owner, opened_at) VALUES ($1, $2, $3) \
             ON CONFLICT (id) DO UPDATE SET owner = COALESCE(sessions.owner, excluded.owner)",
        )
        .bind(id)
        .bind(owner_of(owner))
        .bind(now)
        .execute(&self.db.pool)
        .await
        .map_err(db_error)?;
        let mut forgotten: Vec<String> = sqlx::query_scalar("DELETE FROM sessions WHERE opened_at < $1 RETURNING id")
            .bind(now - KEPT.as_millis() as i64)
            .fetch_all(&self.db.pool)
            .await
            .map_err(db_error)?;
        forgotten.extend(
            sqlx::query_scalar::<_, String>(
                "DELETE FROM sessions WHERE owner = $1 AND id NOT IN \
                 (SELECT id FROM sessions WHERE owner = $1 ORDER BY opened_at DESC, id DESC LIMIT $2) RETURNING id",
            )
            .bind(owner_of(owner))
            .bind(SESSIONS_PER_CALLER)
            .fetch_all(&self.db.pool)
            .await
            .map_err(db_error)?,
        );
        Ok(forgotten)
    }

    /// Whether `who` owns `id`; `None` when the table has no owner for it:
    /// never opened, or ended (forgotten, closed, its person signed out).
    pub async fn owned_by(&self, id: &str, who: &Principal) -> Result<Option<bool>, Error> {
        let owner: Option<Option<String>> =
            sqlx::query_scalar("SELECT owner FROM sessions WHERE id = $1").bind(id).fetch_optional(&self.db.pool).await.map_err(db_error)?;
        Ok(owner.flatten().map(|owner| owner == owner_of(who)))
    }

    /// Which of `ids` still have their row and its owner: the rest ended.
    pub async fn living(&self, ids: &[String]) -> Result<Vec<String>, Error> {
        let mut living = Vec::new();
        for chunk in ids.chunks(IDS_PER_QUERY) {
            let marks: Vec<String> = (1..=chunk.len()).map(|i| format!("${i}")).collect();
            let sql = format!("SELECT id FROM sessions WHERE owner IS NOT NULL AND id IN ({})", marks.join(", "));
            let mut query = sqlx::query_scalar::<_, String>(sqlx::AssertSqlSafe(sql));
            for id in chunk {
                query = query.bind(id);
            }
            living.extend(query.fetch_all(&self.db.pool).await.map_err(db_error)?);
        }
        Ok(living)
    }

    pub async fn state(&self, id: &str) -> Result<Option<String>, Error> {
        let state: Option<Option<String>> =
            sqlx::query_scalar("SELECT state FROM sessions WHERE id = $1").bind(id).fetch_optional(&self.db.pool).await.map_err(db_error)?;
        Ok(state.flatten())
    }

    pub async fn keep_state(&self, id: &str, state: &str) -> Result<(), Error> {
        let _writer = self.db.writer().await;
        if state.len() > SESSION_STATE_BYTES {
            return Err(Error::TooLarge { limit: SESSION_STATE_BYTES as u64, size: state.len() as u64 });
        }
        sqlx::query(
            "INSERT INTO sessions (id, state, opened_at) VALUES ($1, $2, $3) \
             ON CONFLICT (id) DO UPDATE SET state = excluded.state",
        )
        .bind(id)
        .bind(state)
        .bind(now_ms())
        .execute(&self.db.pool)
        .await
        .map_err(db_error)?;
        Ok(())
    }

    pub async fn close(&self, id: &str) -> Result<(), Error> {
        let _writer = self.db.writer().await;
        sqlx::query("DELETE FROM sessions WHERE id = $1").bind(id).execute(&self.db.pool).await.map_err(db_error)?;
        Ok(())
    }

    /// The tenants whose switches were set after `after` up to `to` (the
    /// deployment's flips as `lattice_core::envelope::DEPLOYMENT_TENANT`),
    /// in order, once each: what a flip concerns, so that it wakes only
    /// the sessions of those tenants. A switch's envelope is kept under
    /// the tenant it governs (a workspace's under its tenant).
    pub async fn tenants_flipped(&self, after: i64, to: i64) -> Result<Vec<String>, Error> {
        let tenants: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT tenant FROM envelopes WHERE type = '{}' AND seq > $1 AND seq <= $2 ORDER BY seq",
            lattice_core::event::SwitchSet::NAME
        )))
        .bind(after)
        .bind(to)
        .fetch_all(&self.db.pool)
        .await
        .map_err(db_error)?;
        let mut once = Vec::new();
        for tenant in tenants {
            if !once.contains(&tenant) {
                once.push(tenant);
            }
        }
        Ok(once)
    }
}

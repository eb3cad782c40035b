//! Protocol sessions that replicas share (the MCP transport's): a session
//! opened on one replica is found on another. The log keeps each session's
//! owner and its state, which it does not read; only the owner may use it.

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

/// Owners remembered in this process (an owner never changes), so that a
/// session's every request does not read the table.
const REMEMBERED: usize = 4096;

/// The shared session table. Clones share what they remember.
#[derive(Clone)]
pub struct Sessions {
    db: Db,
    owners: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, String>>>,
}

fn owner_of(p: &Principal) -> String {
    format!("{}/{}", p.tenant, p.user)
}

impl LogService {
    pub fn sessions(&self) -> Sessions {
        Sessions { db: self.inner.db.clone(), owners: Default::default() }
    }
}

impl Sessions {
    /// Records who opened `id`; a session's owner never changes.
    pub async fn open(&self, id: &str, owner: &Principal) -> Result<(), Error> {
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
        let mut owners = self.owners.lock().expect("not poisoned");
        for id in forgotten {
            owners.remove(&id);
        }
        Ok(())
    }

    /// Whether `who` owns `id`; `None` when no replica has recorded it.
    pub async fn owned_by(&self, id: &str, who: &Principal) -> Result<Option<bool>, Error> {
        let caller = owner_of(who);
        if let Some(owner) = self.owners.lock().expect("not poisoned").get(id) {
            return Ok(Some(*owner == caller));
        }
        let owner: Option<Option<String>> =
            sqlx::query_scalar("SELECT owner FROM sessions WHERE id = $1").bind(id).fetch_optional(&self.db.pool).await.map_err(db_error)?;
        let Some(owner) = owner.flatten() else { return Ok(None) };
        let mut owners = self.owners.lock().expect("not poisoned");
        if owners.len() >= REMEMBERED {
            owners.clear();
        }
        owners.insert(id.to_owned(), owner.clone());
        Ok(Some(owner == caller))
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
        self.owners.lock().expect("not poisoned").remove(id);
        let _writer = self.db.writer().await;
        sqlx::query("DELETE FROM sessions WHERE id = $1").bind(id).execute(&self.db.pool).await.map_err(db_error)?;
        Ok(())
    }
}

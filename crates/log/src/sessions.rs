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

use lattice_core::clock::SharedClock;
use lattice_core::{Error, Principal};

use crate::store::Db;
use crate::store::sessions::{self as stored, owner_key};

/// The largest state a session may keep (a client's handshake).
pub const SESSION_STATE_BYTES: usize = 64 * 1024;
/// Sessions older than this, by the log's clock, are forgotten.
const KEPT: Duration = Duration::from_secs(7 * 24 * 3600);
/// The sessions one caller keeps at most: opening another forgets its oldest.
pub const SESSIONS_PER_CALLER: i64 = 64;

/// The shared session table. Reads the store and the log's clock.
#[derive(Clone)]
pub struct Sessions {
    db: Db,
    clock: SharedClock,
}

fn owner_of(p: &Principal) -> String {
    owner_key(p.tenant.as_str(), p.user.as_str())
}

impl Sessions {
    pub(crate) fn new(db: Db, clock: SharedClock) -> Self {
        Self { db, clock }
    }

    /// Records who opened `id` (a session's owner never changes), and
    /// forgets the sessions that opening it leaves over the bounds: the
    /// caller's oldest past [`SESSIONS_PER_CALLER`], anyone's older than a
    /// week. Answers the ids forgotten, which have ended: whoever serves
    /// one closes it.
    pub async fn open(&self, id: &str, owner: &Principal) -> Result<Vec<String>, Error> {
        let now = self.clock.now_ms();
        stored::open(&self.db, id, &owner_of(owner), now, now - KEPT.as_millis() as i64, SESSIONS_PER_CALLER).await
    }

    /// Whether `who` owns `id`; `None` when the table has no owner for it:
    /// never opened, or ended (forgotten, closed, its person signed out).
    pub async fn owned_by(&self, id: &str, who: &Principal) -> Result<Option<bool>, Error> {
        let owner = stored::owner(&self.db, id).await?;
        Ok(owner.map(|owner| owner == owner_of(who)))
    }

    /// Which of `ids` still have their row and its owner: the rest ended.
    pub async fn living(&self, ids: &[String]) -> Result<Vec<String>, Error> {
        stored::living(&self.db, ids).await
    }

    pub async fn state(&self, id: &str) -> Result<Option<String>, Error> {
        stored::state(&self.db, id).await
    }

    pub async fn keep_state(&self, id: &str, state: &str) -> Result<(), Error> {
        if state.len() > SESSION_STATE_BYTES {
            return Err(Error::too_large(lattice_core::Code::TooLarge, SESSION_STATE_BYTES as u64, state.len() as u64));
        }
        stored::keep_state(&self.db, id, state, self.clock.now_ms()).await
    }

    pub async fn close(&self, id: &str) -> Result<(), Error> {
        stored::close(&self.db, id).await
    }

    /// The tenants whose switches were set after `after` up to `to` (the
    /// deployment's flips as `lattice_core::envelope::DEPLOYMENT_TENANT`),
    /// in order, once each: what a flip concerns, so that it wakes only
    /// the sessions of those tenants. A switch's envelope is kept under
    /// the tenant it governs (a workspace's under its tenant).
    pub async fn tenants_flipped(&self, after: i64, to: i64) -> Result<Vec<String>, Error> {
        let tenants = crate::store::envelopes::switch_set_tenants(&self.db, after, to).await?;
        let mut once = Vec::new();
        for tenant in tenants {
            if !once.contains(&tenant) {
                once.push(tenant);
            }
        }
        Ok(once)
    }
}

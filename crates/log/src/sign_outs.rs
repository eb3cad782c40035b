//! "Sign out everywhere" (R1): a person's tokens end when they, or a tenant
//! admin, say so. Tokens stay stateless JWTs, and every request checks the
//! person's last sign-out against when its token was issued.
//!
//! Chosen over short-lived tokens with a refresh: lattice's tokens come from
//! an operator's `lattice token`, the dev sign-in and the configured
//! issuers, none of which refreshes, and a refresh the server refuses still
//! leaves every access token alive until it expires. A per-person epoch ends
//! them at once, on every replica, and the open streams with them.
//!
//! The check costs a map lookup: what the table says of a person is kept
//! for [`FRESH`] by the log's clock, so another replica's sign-out is
//! believed within it, and this replica's own at once (its commit forgets
//! what was kept).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use lattice_core::clock::SharedClock;
use lattice_core::{Error, Principal};

use crate::auth::{Authenticated, Issued};
use crate::store::{Db, signed_out_at};

/// How long a person's last sign-out, as read, is believed.
pub const FRESH: Duration = Duration::from_millis(250);
/// People whose sign-out is kept in memory; past it the map starts again
/// (a request then costs one read more, nothing else).
const KEPT: usize = 100_000;

/// Reads the store's sign-outs and the log's clock.
pub(crate) struct SignOuts {
    db: Db,
    clock: SharedClock,
    /// Each person's last sign-out as read, and when it was read (ms).
    kept: Mutex<HashMap<String, (Option<i64>, i64)>>,
}

fn key(tenant: &str, user: &str) -> String {
    format!("{tenant}/{user}")
}

impl SignOuts {
    pub(crate) fn new(db: Db, clock: SharedClock) -> Self {
        Self { db, clock, kept: Mutex::new(HashMap::new()) }
    }

    /// Refuses a token issued at or before its person's last sign-out;
    /// `fresh` reads the table whatever is kept (an open stream rechecking).
    pub(crate) async fn check(&self, who: &Authenticated, fresh: bool) -> Result<(), Error> {
        let Issued(Some(issued)) = who.issued() else { return Ok(()) };
        let p = who.principal();
        let ended = self.ended_at(p, fresh).await?;
        match ended {
            Some(at) if issued <= at => Err(Error::Unauthorized { reason: "the token was ended by a sign-out: sign in again".into() }),
            _ => Ok(()),
        }
    }

    async fn ended_at(&self, p: &Principal, fresh: bool) -> Result<Option<i64>, Error> {
        let key = key(p.tenant.as_str(), p.user.as_str());
        let now = self.clock.now_ms();
        if !fresh {
            let kept = self.kept.lock().expect("the sign-outs' lock is never poisoned");
            // A clock set back makes what was kept stale, not fresher.
            if let Some((at, read)) = kept.get(&key)
                && (0..FRESH.as_millis() as i64).contains(&(now - read))
            {
                return Ok(*at);
            }
        }
        let at = signed_out_at(&self.db, p.tenant.as_str(), p.user.as_str()).await?;
        let mut kept = self.kept.lock().expect("the sign-outs' lock is never poisoned");
        if kept.len() >= KEPT {
            kept.clear();
        }
        kept.insert(key, (at, now));
        Ok(at)
    }

    /// Forgets what was kept of a person: their sign-out just committed here.
    pub(crate) fn forget(&self, tenant: &str, user: &str) {
        self.kept.lock().expect("the sign-outs' lock is never poisoned").remove(&key(tenant, user));
    }
}

//! Whether what vouched for a caller still stands (R1, R6): on every
//! request, and again whenever an open stream's person's access changes.
//! A token issued at or before its person's last sign-out is refused; so
//! is every token of a person their tenant's directory made inactive, one
//! of a sign-in session that ended, and an API key revoked or past its
//! time. Tokens stay stateless JWTs; what may end them is read here.
//!
//! Chosen over long-lived tokens alone: a refresh the server refuses still
//! leaves every access token alive until it expires. An epoch, a session's
//! end, a key's revocation end them at once, on every replica, and the
//! open streams with them.
//!
//! Each check costs a map lookup: what the store says of a person, a
//! session or a key is kept for [`FRESH`] by the log's clock, so another
//! replica's change is believed within it, and this replica's own at once
//! (its commit forgets what was kept).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use lattice_core::clock::SharedClock;
use lattice_core::{Error, TenantRole};

use crate::auth::{Authenticated, Issued, Via};
use crate::store::Db;
use crate::store::credentials::{self as stored, CredentialRow};
use crate::store::people::{PersonStanding, standing};
use crate::store::sign_ins::{self, SignInRow};

/// How long what the store said of a person, a session or a key is believed.
pub const FRESH: Duration = Duration::from_millis(250);
/// Entries kept in memory; past it the map starts again (a request then
/// costs one read more, nothing else).
const KEPT: usize = 100_000;
/// How often a key's last use is written at most.
const USE_NOTED_EVERY_MS: i64 = 60_000;

#[derive(Clone)]
enum Kept {
    Person(PersonStanding),
    Session(Option<SignInRow>),
    Key(Option<CredentialRow>),
    Named(Option<String>),
}

/// Reads the store's sign-outs, directory, sessions and keys by the log's
/// clock.
pub(crate) struct Credentials {
    db: Db,
    clock: SharedClock,
    /// What was read, and when (ms), by `p:tenant/user`, `s:sid`, `k:digest`.
    kept: Mutex<HashMap<String, (Kept, i64)>>,
    /// When each key's use was last written.
    noted: Mutex<HashMap<String, i64>>,
}

fn person_key(tenant: &str, user: &str) -> String {
    format!("p:{tenant}/{user}")
}

impl Credentials {
    pub(crate) fn new(db: Db, clock: SharedClock) -> Self {
        Self { db, clock, kept: Mutex::new(HashMap::new()), noted: Mutex::new(HashMap::new()) }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Kept, i64)>> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What was kept under `key`, if still fresh (`fresh` reads anew).
    fn recall(&self, key: &str, fresh: bool) -> Option<Kept> {
        if fresh {
            return None;
        }
        let now = self.clock.now_ms();
        // A clock set back makes what was kept stale, not fresher.
        self.kept().get(key).filter(|(_, read)| (0..FRESH.as_millis() as i64).contains(&(now - read))).map(|(k, _)| k.clone())
    }

    fn keep(&self, key: String, value: Kept) {
        let now = self.clock.now_ms();
        let mut kept = self.kept();
        if kept.len() >= KEPT {
            kept.clear();
        }
        kept.insert(key, (value, now));
    }

    /// What the store says of a person: their last sign-out and their
    /// directory entry.
    pub(crate) async fn person(&self, tenant: &str, user: &str, fresh: bool) -> Result<PersonStanding, Error> {
        let key = person_key(tenant, user);
        if let Some(Kept::Person(p)) = self.recall(&key, fresh) {
            return Ok(p);
        }
        let read = standing(&self.db, tenant, user).await?;
        self.keep(key, Kept::Person(read));
        Ok(read)
    }

    /// The id of the person of `tenant` named `name` in its directory,
    /// whatever the case (a provider's token names people by their name).
    pub(crate) async fn person_id(&self, tenant: &str, name: &str) -> Result<Option<String>, Error> {
        let key = format!("n:{tenant}/{}", crate::store::people::name_key(name));
        if let Some(Kept::Named(id)) = self.recall(&key, false) {
            return Ok(id);
        }
        let read = crate::store::people::id_named(&self.db, tenant, name).await?;
        self.keep(key, Kept::Named(read.clone()));
        Ok(read)
    }

    async fn session(&self, id: &str, fresh: bool) -> Result<Option<SignInRow>, Error> {
        let key = format!("s:{id}");
        if let Some(Kept::Session(s)) = self.recall(&key, fresh) {
            return Ok(s);
        }
        let read = sign_ins::get(&self.db, id).await?;
        self.keep(key, Kept::Session(read.clone()));
        Ok(read)
    }

    /// The credential whose digest is `digest`, as stored (revoked or not).
    pub(crate) async fn key(&self, digest: &str, fresh: bool) -> Result<Option<CredentialRow>, Error> {
        let key = format!("k:{digest}");
        if let Some(Kept::Key(k)) = self.recall(&key, fresh) {
            return Ok(k);
        }
        let read = stored::by_digest(&self.db, digest).await?;
        self.keep(key, Kept::Key(read.clone()));
        Ok(read)
    }

    /// Notes that a key was used now, at most once a minute per key.
    pub(crate) async fn note_use(&self, id: &str) {
        let now = self.clock.now_ms();
        {
            let mut noted = self.noted.lock().unwrap_or_else(PoisonError::into_inner);
            if noted.get(id).is_some_and(|at| now - at < USE_NOTED_EVERY_MS) {
                return;
            }
            if noted.len() >= KEPT {
                noted.clear();
            }
            noted.insert(id.to_owned(), now);
        }
        if let Err(e) = stored::used(&self.db, id, now).await {
            tracing::warn!(error = %e, key = id, "a key's last use was not noted");
        }
    }

    /// Refuses a caller whose token no longer stands: ended by a sign-out,
    /// its person made inactive, its session ended, its key revoked or
    /// past its time, or (for a sign-in's token, whose role the directory
    /// gives) a role the directory changed since. `fresh` reads the store
    /// whatever is kept (an open stream rechecking).
    pub(crate) async fn check(&self, who: &Authenticated, fresh: bool) -> Result<(), Error> {
        let Issued(Some(issued)) = who.issued() else { return Ok(()) };
        let p = who.principal();
        let person = self.person(p.tenant.as_str(), p.user.as_str(), fresh).await?;
        refuse_ended(issued, &person)?;
        match who.via() {
            Via::Session(id) => {
                let session = self.session(id, fresh).await?;
                self.session_stands(session.as_ref(), p.user.as_str())?;
                directory_role_unchanged(&person, p.role)
            }
            Via::Provider(_) => directory_role_unchanged(&person, p.role),
            Via::Key(digest) => key_stands(self.key(digest, fresh).await?.as_ref(), self.clock.now_ms()).map(drop),
            Via::Token | Via::Trusted => Ok(()),
        }
    }

    fn session_stands(&self, session: Option<&SignInRow>, user: &str) -> Result<(), Error> {
        let now = self.clock.now_ms();
        match session {
            Some(s) if s.user == user && s.ended_at.is_none() && s.expires_at >= now => Ok(()),
            Some(s) if s.user == user && s.ended_at.is_none() => {
                Err(unauthorized(lattice_core::Code::TokenExpired, "the sign-in has expired: sign in again"))
            }
            _ => Err(unauthorized(lattice_core::Code::TokenRevoked, "the sign-in was signed out: sign in again")),
        }
    }

    /// Forgets what was kept of a person: a change of theirs just committed here.
    pub(crate) fn forget(&self, tenant: &str, user: &str) {
        self.kept().remove(&person_key(tenant, user));
    }

    /// Forgets everything kept (a change that may touch many people).
    pub(crate) fn forget_everyone(&self) {
        self.kept().clear();
    }

    /// Forgets everything kept of sessions and keys (a revocation or a
    /// session's end just committed here; they are few).
    pub(crate) fn forget_credentials(&self) {
        self.kept().retain(|k, _| k.starts_with("p:"));
    }
}

fn unauthorized(code: lattice_core::Code, reason: &str) -> Error {
    Error::unauthorized(code, reason)
}

/// Refuses a token issued at or before its person's last sign-out, or of a
/// person the directory made inactive.
pub(crate) fn refuse_ended(issued: i64, person: &PersonStanding) -> Result<(), Error> {
    // Said first: a deactivation signs out too, and this is its reason.
    if person.listed.is_some_and(|(active, _)| !active) {
        return Err(unauthorized(
            lattice_core::Code::PersonDeactivated,
            "the person is deactivated in the tenant's directory: ask the tenant's admin",
        ));
    }
    if person.signed_out_at.is_some_and(|at| issued <= at) {
        return Err(unauthorized(lattice_core::Code::TokenRevoked, "the token was ended by a sign-out: sign in again"));
    }
    Ok(())
}

/// A sign-in's token carries the role the directory gave: a change ends it
/// (its stream decides again with the new one).
fn directory_role_unchanged(person: &PersonStanding, role: TenantRole) -> Result<(), Error> {
    match person.listed {
        Some((_, listed)) if listed != role => {
            Err(unauthorized(lattice_core::Code::TokenRevoked, "the person's role changed in the tenant's directory: sign in again"))
        }
        _ => Ok(()),
    }
}

/// A key that is neither revoked nor past its time.
pub(crate) fn key_stands(key: Option<&CredentialRow>, now: i64) -> Result<&CredentialRow, Error> {
    let Some(key) = key else { return Err(unauthorized(lattice_core::Code::TokenInvalid, "no such key: it may have been mistyped")) };
    if key.revoked_at.is_some() {
        return Err(unauthorized(lattice_core::Code::TokenRevoked, "the key was revoked"));
    }
    if key.expires_at.is_some_and(|at| at <= now) {
        return Err(unauthorized(lattice_core::Code::TokenExpired, "the key has expired"));
    }
    Ok(key)
}

//! Sign-in sessions (R6): what the server holds of a sign-in through a
//! provider while the browser is away at it, the session its short-lived
//! tokens name, the one-time code the chat trades for its first token, and
//! the renewal that keeps a person who is active signed in.

use std::time::Duration;

use lattice_core::clock::SharedClock;
use lattice_core::{Error, Principal, TenantId, UserId};
use rand::RngCore;

use crate::auth::{Authenticated, Authenticator};
use crate::credentials::Credentials;
use crate::digest::secret_digest;
use crate::store::Db;
use crate::store::people::{name_key, person, person_named};
use crate::store::sign_ins::{self, Attempt, NewSignIn, SignInRow};

/// How long sign-ins last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    /// A session token's life: a person inactive for longer signs in again.
    pub token_ttl: Duration,
    /// A session's whole life, however active its person.
    pub max_age: Duration,
    /// How long a sign-in may stay at the provider.
    pub attempt_ttl: Duration,
    /// How long the one-time code the browser is sent back with lasts.
    pub handoff_ttl: Duration,
}

impl Default for SessionLimits {
    fn default() -> Self {
        Self {
            token_ttl: Duration::from_secs(15 * 60),
            max_age: Duration::from_secs(12 * 3600),
            attempt_ttl: Duration::from_secs(10 * 60),
            handoff_ttl: Duration::from_secs(60),
        }
    }
}

/// A session's token and how long it lasts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionToken {
    pub token: String,
    pub expires_in: u64,
    /// The session's own end, however active its person (ms since the epoch).
    pub session_ends_at: i64,
}

/// 32 random bytes, URL-safe: a state, a code, a session id, a key.
pub fn random_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    base64::Engine::encode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, bytes)
}

/// The id a person named `user_name` gets when the directory does not
/// know them yet: the name itself, lowercase, when it makes an id (not an
/// API key's). One rule for a sign-in, a provider's token and SCIM.
pub fn derived_user_id(user_name: &str) -> Option<UserId> {
    UserId::parse("user", &name_key(user_name)).ok().filter(|id| !lattice_core::directory::is_key_user(id.as_str()))
}

/// The sign-in sessions' part of the log.
pub(crate) struct SignIns {
    db: Db,
    clock: SharedClock,
    limits: SessionLimits,
}

impl SignIns {
    pub fn new(db: Db, clock: SharedClock, limits: SessionLimits) -> Self {
        Self { db, clock, limits }
    }

    pub fn limits(&self) -> SessionLimits {
        self.limits
    }

    /// Keeps what a sign-in begun at `provider` with `state` needs when it
    /// comes back.
    pub async fn begin(&self, state: String, provider: &str, nonce: String, verifier: String, binding: Option<String>) -> Result<(), Error> {
        let expires_at = self.clock.now_ms() + self.limits.attempt_ttl.as_millis() as i64;
        let attempt = Attempt { state, provider: provider.to_owned(), nonce, verifier, binding, expires_at };
        sign_ins::begin(&self.db, &attempt, self.clock.now_ms()).await
    }

    /// The provider the session `who`'s token names was opened through.
    pub async fn provider_of(&self, who: &Authenticated) -> Result<Option<String>, Error> {
        let Some(id) = who.session() else { return Ok(None) };
        Ok(sign_ins::get(&self.db, id).await?.filter(|row| row.user == who.principal().user.as_str()).map(|row| row.provider))
    }

    /// The sign-in a provider sent the browser back with, once.
    pub async fn take(&self, state: &str) -> Result<Attempt, Error> {
        if state.is_empty() || state.len() > 256 {
            return Err(Error::field("state", "maxLength", "not a state lattice gave"));
        }
        sign_ins::take(&self.db, state, self.clock.now_ms())
            .await?
            .ok_or_else(|| Error::invalid_state(lattice_core::Code::SignInExpired, "this sign-in was finished already or took too long: start again"))
    }

    /// The id a person signing in as `user_name` has in the tenant: theirs
    /// if the directory knows the name, else the name itself (lowercase)
    /// when it makes an id, else a new one.
    pub async fn user_for(&self, tenant: &TenantId, user_name: &str) -> Result<UserId, Error> {
        if let Some(row) = person_named(&self.db, tenant.as_str(), user_name).await? {
            return Ok(UserId::from_trusted(row.user));
        }
        Ok(derived_user_id(user_name).unwrap_or_else(|| UserId::from_trusted(format!("u-{}", ulid::Ulid::generate().to_string().to_lowercase()))))
    }

    /// Opens a session for a person who just signed in; answers the
    /// one-time code the browser trades for its first token.
    pub async fn open(
        &self,
        tenant: &TenantId,
        user: &UserId,
        provider: &str,
        subject: &str,
        provider_sid: Option<&str>,
        binding: Option<&str>,
    ) -> Result<String, Error> {
        let now = self.clock.now_ms();
        let code = random_secret();
        let handoff = secret_digest(&code);
        let id = random_secret();
        sign_ins::open(
            &self.db,
            &NewSignIn {
                id: &id,
                tenant: tenant.as_str(),
                user: user.as_str(),
                provider,
                subject,
                provider_sid,
                now,
                expires_at: now + self.limits.max_age.as_millis() as i64,
                handoff: &handoff,
                handoff_until: now + self.limits.handoff_ttl.as_millis() as i64,
                binding,
            },
        )
        .await?;
        Ok(code)
    }

    /// Trades a one-time code for its session's first token: once, in time,
    /// and only with the secret of the page that began the sign-in when it
    /// gave one.
    pub async fn redeem(&self, auth: &Authenticator, code: &str, binding: Option<&str>) -> Result<SessionToken, Error> {
        let refused = || {
            Error::unauthorized(
                lattice_core::Code::SignInFailed,
                "the sign-in code was used already, has expired, or is not one lattice gave: sign in again",
            )
        };
        if code.is_empty() || code.len() > 256 {
            return Err(refused());
        }
        let handoff = secret_digest(code);
        // The page's secret is checked before the code is used up: a page
        // that did not begin the sign-in cannot spend the one that did.
        let row = sign_ins::handed_off(&self.db, &handoff, self.clock.now_ms()).await?.ok_or_else(refused)?;
        if let Some(expected) = &row.binding
            && binding.map(secret_digest).as_deref() != Some(expected.as_str())
        {
            return Err(Error::unauthorized(
                lattice_core::Code::SignInFailed,
                "this sign-in was begun in another browser tab or window: sign in again from here",
            ));
        }
        let row = sign_ins::redeem(&self.db, &handoff, self.clock.now_ms()).await?.ok_or_else(refused)?;
        self.token(auth, &row).await
    }

    /// A new token for the session `who`'s token names, while it stands.
    pub async fn renew(&self, auth: &Authenticator, credentials: &Credentials, who: &Authenticated) -> Result<SessionToken, Error> {
        let Some(id) = who.session() else {
            return Err(Error::invalid_state(
                lattice_core::Code::NotASignInToken,
                "only a sign-in's token is renewed; this token was minted by an operator or a dev sign-in",
            ));
        };
        credentials.check(who, true).await?;
        let row = sign_ins::get(&self.db, id)
            .await?
            .ok_or_else(|| Error::unauthorized(lattice_core::Code::TokenRevoked, "the sign-in was signed out: sign in again"))?;
        sign_ins::renewed(&self.db, id, self.clock.now_ms()).await?;
        self.token(auth, &row).await
    }

    async fn token(&self, auth: &Authenticator, row: &SignInRow) -> Result<SessionToken, Error> {
        let now = self.clock.now_ms();
        if row.ended_at.is_some() || row.expires_at <= now {
            return Err(Error::unauthorized(lattice_core::Code::TokenExpired, "the sign-in has ended: sign in again"));
        }
        let stored = person(&self.db, &row.tenant, &row.user).await?;
        let Some(listed) = stored else {
            return Err(Error::unauthorized(lattice_core::Code::PersonDeactivated, "the person is no longer in the tenant's directory"));
        };
        if !listed.active {
            return Err(Error::unauthorized(
                lattice_core::Code::PersonDeactivated,
                "the person is deactivated in the tenant's directory: ask the tenant's admin",
            ));
        }
        let principal = Principal {
            tenant: TenantId::from_trusted(row.tenant.clone()),
            user: UserId::from_trusted(row.user.clone()),
            role: listed.role,
            agent: false,
            run: None,
            within: None,
            scope: None,
        };
        // The token never outlives its session.
        let left = Duration::from_millis((row.expires_at - now).max(0) as u64);
        let ttl = self.limits.token_ttl.min(left);
        Ok(SessionToken { token: auth.mint_session(&principal, &row.id, ttl), expires_in: ttl.as_secs(), session_ends_at: row.expires_at })
    }

    /// The people a provider's session (or subject) signed in.
    pub async fn signed_in_by(&self, provider: &str, subject: Option<&str>, sid: Option<&str>) -> Result<Vec<(String, String)>, Error> {
        sign_ins::signed_in_by(&self.db, provider, subject, sid).await
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn secrets_are_url_safe_and_unguessable_in_length() {
        let a = super::random_secret();
        let b = super::random_secret();
        assert_eq!(a.len(), 43, "32 bytes, base64url without padding");
        assert!(a.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'), "{a}");
        assert_ne!(a, b);
    }
}

//! Authentication (REQUIREMENTS.md T4): signed bearer tokens. A verified token is the
//! only way to get an [`Authenticated`], and the write path takes nothing
//! else, so no command runs for an identity nobody vouched for.

use std::time::Duration;

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use lattice_core::clock::{self, SharedClock};
use lattice_core::{Actor, Error, Principal, TenantId, TenantRole, UserId};
use serde::{Deserialize, Serialize};

/// A principal whose token verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authenticated(Principal, Option<String>, Issued, Via);

/// What vouched for a principal, and so what may end it besides its
/// person's sign-outs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Via {
    /// A token lattice minted without a session (`lattice token`, the dev
    /// sign-in).
    Token,
    /// A sign-in session's token (its `sid`): ended with the session.
    Session(String),
    /// A configured provider's own token, by the provider's name.
    Provider(String),
    /// An API key, by its digest: ended when it is revoked or expires.
    Key(String),
    /// Nothing: lattice's own parts.
    Trusted,
}

/// When a principal's token was issued (ms since the epoch): a person's
/// sign-out refuses every token issued at or before it. What no token
/// vouched for (lattice's own parts) has no time and is never signed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Issued(pub(crate) Option<i64>);

impl Authenticated {
    pub fn principal(&self) -> &Principal {
        &self.0
    }

    /// When its token was issued, if a token vouched for it.
    pub fn issued(&self) -> Issued {
        self.2
    }

    /// What vouched for it.
    pub fn via(&self) -> &Via {
        &self.3
    }

    /// The sign-in session its token names, if it is a session's.
    pub fn session(&self) -> Option<&str> {
        match &self.3 {
            Via::Session(id) => Some(id),
            _ => None,
        }
    }

    /// Who its envelopes name: the principal, or the named part of lattice
    /// acting with the principal's rights (an operator's command line).
    pub fn actor(&self) -> Actor {
        match &self.1 {
            Some(name) => Actor::System { name: name.clone() },
            None => self.0.actor(),
        }
    }

    /// A principal no token vouched for: only through [`crate::Trusted`].
    pub(crate) fn trusted(principal: Principal) -> Self {
        Self(principal, None, Issued(None), Via::Trusted)
    }

    /// A principal a provider's token, an API key or a sign-in session
    /// vouched for, issued at `issued` (ms): only the log's authentication
    /// makes one.
    pub(crate) fn vouched(principal: Principal, issued: i64, via: Via) -> Self {
        Self(principal, None, Issued(Some(issued)), via)
    }

    /// A part of lattice named `name`, with `principal`'s rights: only
    /// through [`crate::Trusted`].
    pub(crate) fn system(name: String, principal: Principal) -> Self {
        Self(principal, Some(name), Issued(None), Via::Trusted)
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    sub: String,
    tenant: String,
    #[serde(default)]
    role: TenantRole,
    #[serde(default)]
    agent: bool,
    iat: u64,
    /// `iat` in milliseconds: a sign-out and a new sign-in in the same
    /// second are told apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ims: Option<u64>,
    exp: u64,
    /// The sign-in session a token was minted for: it ends with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sid: Option<String>,
}

/// A view's capability: the right to call one artifact's app-only tools
/// as one caller. `agent` is part of who the caller is: a person's view
/// and that person's agent (the same `sub`) are two callers. It has no
/// default, so a capability minted before it was a claim does not verify.
#[derive(Debug, Serialize, Deserialize)]
struct CapabilityClaims {
    sub: String,
    tenant: String,
    agent: bool,
    art: String,
    exp: u64,
}

/// How long a view's capability lasts.
pub const CAPABILITY_TTL: Duration = Duration::from_secs(3600);

/// A file's download link: who asked for it, with their role and when
/// their token was issued (a sign-out after it ends the link too), the
/// file, and when it stops working. Its `file` field makes it no
/// capability, and a capability's `art` no link.
#[derive(Debug, Serialize, Deserialize)]
struct FileLinkClaims {
    sub: String,
    tenant: String,
    role: TenantRole,
    agent: bool,
    file: String,
    ims: Option<i64>,
    exp: u64,
}

/// How long a file's download link lasts.
pub const FILE_LINK_TTL: Duration = Duration::from_secs(300);

/// Seconds a token or capability is still taken past its `exp`: clocks of
/// the machines that mint and verify differ a little.
const LEEWAY_SECS: i64 = 5;

/// Mints and verifies HS256 tokens with one deployment secret. When a
/// token is issued and whether it has expired are read from its clock
/// (the wall clock unless given another, [`Authenticator::with_clock`]).
#[derive(Clone)]
pub struct Authenticator {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
    ttl: Duration,
    /// Capabilities are signed with a key of their own (derived from the
    /// secret), so that one is never a bearer token, nor a bearer token one.
    capability_encoding: EncodingKey,
    capability_decoding: DecodingKey,
    /// Chains are minted under a key of their own, from the same secret.
    chains: crate::chain::ChainKey,
    seal: lattice_seal::SealKey,
    /// The key MCP's `requestState` is sealed under: its own, from the
    /// same secret, so any replica opens what another sealed.
    request_state: [u8; 32],
    /// The key people's sign-ins to connected servers are sealed under.
    connections: [u8; 32],
    clock: SharedClock,
}

impl Authenticator {
    /// The secret must be at least 32 bytes: HS256 is only as strong as it.
    pub fn new(secret: &[u8], ttl: Duration) -> Result<Self, Error> {
        if secret.len() < 32 {
            return Err(Error::unavailable("the token secret must be at least 32 bytes"));
        }
        let mut validation = Validation::new(Algorithm::HS256);
        // Expiry is checked against the authenticator's clock, not the
        // library's wall clock ([`Self::unexpired`]); `exp` stays required.
        validation.validate_exp = false;
        validation.leeway = LEEWAY_SECS as u64;
        validation.set_required_spec_claims(&["exp", "sub"]);
        let bad_key = |e: jsonwebtoken::errors::Error| Error::unavailable(format!("the token secret is unusable: {e}"));
        let derived = {
            use sha2::Digest;
            let mut h = sha2::Sha256::new();
            h.update(b"lattice.capability.v1\0");
            h.update(secret);
            h.finalize().to_vec()
        };
        Ok(Self {
            encoding: EncodingKey::from_secret(secret).map_err(bad_key)?,
            decoding: DecodingKey::from_secret(secret).map_err(bad_key)?,
            validation,
            ttl,
            capability_encoding: EncodingKey::from_secret(&derived).map_err(bad_key)?,
            capability_decoding: DecodingKey::from_secret(&derived).map_err(bad_key)?,
            chains: crate::chain::ChainKey::derive(secret),
            seal: lattice_seal::SealKey::derive(secret),
            request_state: {
                use sha2::Digest;
                sha2::Sha256::new().chain_update(b"lattice.request-state.v1\0").chain_update(secret).finalize().into()
            },
            connections: {
                use sha2::Digest;
                sha2::Sha256::new().chain_update(b"lattice.server-connections.v1\0").chain_update(secret).finalize().into()
            },
            clock: clock::system(),
        })
    }

    /// The same authenticator reading time from `clock`: what a test moves
    /// to see tokens and capabilities expire without waiting.
    pub fn with_clock(mut self, clock: SharedClock) -> Self {
        self.clock = clock;
        self
    }

    /// The clock tokens are issued and checked by.
    pub fn clock(&self) -> &SharedClock {
        &self.clock
    }

    /// Whether an `exp` (seconds since the epoch) is still ahead of the
    /// clock, within the leeway.
    fn unexpired(&self, exp: u64) -> bool {
        i64::try_from(exp).is_ok_and(|exp| exp >= self.clock.now_secs() - LEEWAY_SECS)
    }

    /// The key a multi round-trip request's state is sealed under
    /// (lattice-mcp's `rounds`): never a token's, a capability's or a
    /// chain's.
    pub fn request_state_key(&self) -> &[u8; 32] {
        &self.request_state
    }

    /// The key people's sign-ins to connected servers are sealed under.
    pub(crate) fn connections_key(&self) -> &[u8; 32] {
        &self.connections
    }

    /// The key the write path checks a run's chain under.
    pub fn chains(&self) -> &crate::chain::ChainKey {
        &self.chains
    }

    /// The key the log's checkpoints are signed with (docs/SEAL.md), from
    /// the same secret, derived apart.
    pub fn seal_key(&self) -> &lattice_seal::SealKey {
        &self.seal
    }

    pub fn mint(&self, principal: &Principal) -> String {
        self.mint_for(principal, None, self.ttl)
    }

    /// A token of a sign-in session `sid`, lasting `ttl`: the chat renews
    /// it while the person is active, and it ends with the session.
    pub fn mint_session(&self, principal: &Principal, sid: &str, ttl: Duration) -> String {
        self.mint_for(principal, Some(sid.to_owned()), ttl)
    }

    fn mint_for(&self, principal: &Principal, sid: Option<String>, ttl: Duration) -> String {
        let now_ms = u64::try_from(self.clock.now_ms()).unwrap_or_default();
        let now = now_ms / 1000;
        let claims = Claims {
            sub: principal.user.to_string(),
            tenant: principal.tenant.to_string(),
            role: principal.role,
            agent: principal.agent,
            iat: now,
            ims: Some(now_ms),
            exp: now + ttl.as_secs(),
            sid,
        };
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding).expect("HS256 signing with a valid key cannot fail")
    }

    /// Verifies the token of an `Authorization` header's value: the one
    /// place a bearer header is read (the API, MCP and the edge's checks
    /// call it). The scheme is matched in any case, as RFC 9110 has it.
    pub fn verify_header(&self, header: Option<&[u8]>) -> Result<Authenticated, Error> {
        let header = header.ok_or_else(|| Error::unauthorized(lattice_core::Code::TokenMissing, "no bearer token"))?;
        let token = bearer_token(header)
            .ok_or_else(|| Error::unauthorized(lattice_core::Code::TokenInvalid, "the Authorization header is not `Bearer <token>`"))?;
        self.verify(token)
    }

    /// Verifies a bearer token's signature, expiry and claims.
    pub fn verify(&self, token: &str) -> Result<Authenticated, Error> {
        let unauthorized = |reason: &str| Error::unauthorized(lattice_core::Code::TokenInvalid, reason);
        let data = jsonwebtoken::decode::<Claims>(token, &self.decoding, &self.validation).map_err(|_| unauthorized("the token does not verify"))?;
        let claims = data.claims;
        if !self.unexpired(claims.exp) {
            return Err(Error::unauthorized(lattice_core::Code::TokenExpired, "the token has expired"));
        }
        let tenant = TenantId::parse("tenant", &claims.tenant).map_err(|_| unauthorized("bad tenant claim"))?;
        let user = UserId::parse("sub", &claims.sub).map_err(|_| unauthorized("bad subject claim"))?;
        let issued = claims.ims.unwrap_or(claims.iat.saturating_mul(1000)).min(i64::MAX as u64) as i64;
        let principal = Principal { tenant, user, role: claims.role, agent: claims.agent, run: None, within: None, scope: None };
        let via = claims.sid.map_or(Via::Token, Via::Session);
        Ok(Authenticated(principal, None, Issued(Some(issued)), via))
    }

    /// A link to `file`'s bytes for `who`, on the apps origin, for
    /// [`FILE_LINK_TTL`]: a download is a navigation, which carries no
    /// bearer header, so the link itself says who asked.
    pub fn file_link(&self, who: &Authenticated, file: &str) -> String {
        let p = who.principal();
        let now = u64::try_from(self.clock.now_secs()).unwrap_or_default();
        let claims = FileLinkClaims {
            sub: p.user.to_string(),
            tenant: p.tenant.to_string(),
            role: p.role,
            agent: p.agent,
            file: file.to_owned(),
            ims: who.issued().0,
            exp: now + FILE_LINK_TTL.as_secs(),
        };
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.capability_encoding).expect("HS256 signing with a valid key cannot fail")
    }

    /// Who a file's link was given to, and the file, if it verifies and
    /// has not expired. Whether they may still read it is the caller's to
    /// ask again (their access and their sign-outs).
    pub fn verify_file_link(&self, token: &str) -> Result<(Authenticated, String), Error> {
        let refused =
            |reason: &str| Error::forbidden(lattice_core::Code::FileLinkInvalid, format!("the file's link {reason}: ask the chat for another"));
        let data =
            jsonwebtoken::decode::<FileLinkClaims>(token, &self.capability_decoding, &self.validation).map_err(|_| refused("does not verify"))?;
        let claims = data.claims;
        if !self.unexpired(claims.exp) {
            return Err(refused("has expired"));
        }
        let tenant = TenantId::parse("tenant", &claims.tenant).map_err(|_| refused("does not verify"))?;
        let user = UserId::parse("sub", &claims.sub).map_err(|_| refused("does not verify"))?;
        let principal = Principal { tenant, user, role: claims.role, agent: claims.agent, run: None, within: None, scope: None };
        Ok((Authenticated(principal, None, Issued(claims.ims), Via::Token), claims.file))
    }

    /// The capability to call `artifact`'s app-only tools as `principal`:
    /// given to the artifact's view only (in a tool result's `_meta`, which
    /// hosts do not show to models), so a model holding the same token
    /// cannot make those calls.
    pub fn capability(&self, principal: &Principal, artifact: &str) -> String {
        let now = u64::try_from(self.clock.now_secs()).unwrap_or_default();
        let claims = CapabilityClaims {
            sub: principal.user.to_string(),
            tenant: principal.tenant.to_string(),
            agent: principal.agent,
            art: artifact.to_owned(),
            exp: now + CAPABILITY_TTL.as_secs(),
        };
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.capability_encoding).expect("HS256 signing with a valid key cannot fail")
    }

    /// The artifact a capability was given for, if it verifies and is
    /// `who`'s.
    pub fn capability_artifact(&self, token: &str, who: &Authenticated) -> Result<String, Error> {
        let refused =
            |reason: &str| Error::forbidden(lattice_core::Code::CapabilityInvalid, format!("an app-only tool needs its view's capability: {reason}"));
        let data = jsonwebtoken::decode::<CapabilityClaims>(token, &self.capability_decoding, &self.validation)
            .map_err(|_| refused("it does not verify"))?;
        if !self.unexpired(data.claims.exp) {
            return Err(refused("it has expired"));
        }
        let p = who.principal();
        if data.claims.sub != p.user.as_str() || data.claims.tenant != p.tenant.as_str() {
            return Err(refused("it was given to someone else"));
        }
        // A person's view and their agent's token are not one caller: a
        // capability minted for the view never lets the agent make the call.
        if data.claims.agent != p.agent {
            let given = if data.claims.agent { "to an agent, not to the person" } else { "to the person, not to an agent" };
            return Err(refused(&format!("it was given to someone else ({given})")));
        }
        Ok(data.claims.art)
    }

    /// Vouches for a principal without a token, in lattice's own tests
    /// (in-process parts get [`crate::Trusted`] from the log's builder).
    #[cfg(any(test, feature = "testing"))]
    pub fn vouch(&self, principal: Principal) -> Authenticated {
        Authenticated(principal, None, Issued(None), Via::Trusted)
    }
}

/// The token of `Bearer <token>`, the scheme in any case.
pub(crate) fn bearer_token(header: &[u8]) -> Option<&str> {
    let header = std::str::from_utf8(header).ok()?.trim();
    let (scheme, token) = header.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bearer_header_is_read_one_way() {
        assert_eq!(bearer_token(b"Bearer abc"), Some("abc"));
        assert_eq!(bearer_token(b"bearer  abc "), Some("abc"));
        assert_eq!(bearer_token(b"BEARER abc"), Some("abc"));
        assert_eq!(bearer_token(b"Basic abc"), None);
        assert_eq!(bearer_token(b"Bearer "), None);
        assert_eq!(bearer_token(b"Bearerabc"), None);
        assert_eq!(bearer_token(&[0xff, b' ', b'a']), None);
        let auth = Authenticator::new(&[7; 32], Duration::from_secs(60)).unwrap();
        let no_header = auth.verify_header(None).unwrap_err();
        assert!(matches!(no_header, Error::Unauthorized { ref reason, .. } if reason == "no bearer token"), "{no_header:?}");
        let basic = auth.verify_header(Some(b"Basic abc")).unwrap_err();
        assert!(matches!(basic, Error::Unauthorized { ref reason, .. } if reason.contains("not `Bearer")), "{basic:?}");
    }

    #[test]
    fn a_capability_is_its_callers_for_its_artifact_and_never_a_bearer_token() {
        let auth = Authenticator::new(&[7u8; 32], Duration::from_secs(60)).unwrap();
        let ana = Principal {
            tenant: TenantId::parse("t", "acme").unwrap(),
            user: UserId::parse("u", "ana").unwrap(),
            role: TenantRole::Member,
            agent: false,
            run: None,
            within: None,
            scope: None,
        };
        let bob = Principal { user: UserId::parse("u", "bob").unwrap(), ..ana.clone() };
        let anas_agent = Principal { agent: true, ..ana.clone() };
        let cap = auth.capability(&ana, "art_1");
        assert_eq!(auth.capability_artifact(&cap, &auth.vouch(ana.clone())).unwrap(), "art_1");
        assert!(auth.capability_artifact(&cap, &auth.vouch(bob)).unwrap_err().to_string().contains("someone else"));
        // The same name is not the same caller: the person's view's
        // capability is not the agent's, nor the agent's the person's.
        let refused = auth.capability_artifact(&cap, &auth.vouch(anas_agent.clone())).unwrap_err();
        assert!(matches!(refused, Error::Forbidden { .. }) && refused.to_string().contains("not to an agent"), "{refused}");
        let agents = auth.capability(&anas_agent, "art_1");
        assert_eq!(auth.capability_artifact(&agents, &auth.vouch(anas_agent)).unwrap(), "art_1");
        assert!(auth.capability_artifact(&agents, &auth.vouch(ana.clone())).unwrap_err().to_string().contains("to an agent"));
        assert!(auth.verify(&cap).is_err(), "a capability is no bearer token");
        let bearer = auth.mint(&ana);
        assert!(auth.capability_artifact(&bearer, &auth.vouch(ana)).is_err(), "a bearer token is no capability");
    }

    fn auth() -> Authenticator {
        Authenticator::new(&[7u8; 32], Duration::from_secs(60)).unwrap()
    }

    #[test]
    fn a_minted_token_verifies_to_its_principal() {
        let p = Principal {
            tenant: TenantId::parse("t", "t1").unwrap(),
            user: UserId::parse("u", "alice").unwrap(),
            role: TenantRole::TenantAdmin,
            agent: false,
            run: None,
            within: None,
            scope: None,
        };
        let token = auth().mint(&p);
        assert_eq!(auth().verify(&token).unwrap().principal(), &p);
    }

    #[test]
    fn another_secret_or_a_tampered_token_is_refused() {
        let p = Principal {
            tenant: TenantId::parse("t", "t1").unwrap(),
            user: UserId::parse("u", "alice").unwrap(),
            role: TenantRole::Member,
            agent: false,
            run: None,
            within: None,
            scope: None,
        };
        let token = auth().mint(&p);
        let other = Authenticator::new(&[8u8; 32], Duration::from_secs(60)).unwrap();
        assert!(matches!(other.verify(&token), Err(Error::Unauthorized { .. })));
        let mut tampered = token.clone();
        tampered.insert(tampered.len() / 2, 'x');
        assert!(auth().verify(&tampered).is_err());
        assert!(auth().verify("").is_err());
        assert!(Authenticator::new(b"short", Duration::from_secs(1)).is_err());
    }

    #[test]
    fn tokens_and_capabilities_expire_by_the_authenticators_clock() {
        use lattice_core::clock::{Clock, ManualClock};
        let clock = ManualClock::new();
        let auth = Authenticator::new(&[7u8; 32], Duration::from_secs(60)).unwrap().with_clock(clock.clone());
        let p = Principal {
            tenant: TenantId::parse("t", "t1").unwrap(),
            user: UserId::parse("u", "alice").unwrap(),
            role: TenantRole::Member,
            agent: false,
            run: None,
            within: None,
            scope: None,
        };
        let token = auth.mint(&p);
        let capability = auth.capability(&p, "art_1");
        let issued = auth.verify(&token).unwrap().issued();
        assert_eq!(issued, Issued(Some(clock.now_ms())), "issued by the clock, to the millisecond");

        // The token's lifetime and the leeway past it: still taken.
        clock.advance(Duration::from_secs(60 + LEEWAY_SECS as u64));
        assert!(auth.verify(&token).is_ok());
        clock.advance(Duration::from_secs(1));
        let expired = auth.verify(&token).unwrap_err();
        assert!(matches!(expired, Error::Unauthorized { ref reason, .. } if reason.contains("expired")), "{expired:?}");

        let who = auth.vouch(p.clone());
        assert_eq!(auth.capability_artifact(&capability, &who).unwrap(), "art_1");
        clock.advance(CAPABILITY_TTL - Duration::from_secs(61));
        assert_eq!(auth.capability_artifact(&capability, &who).unwrap(), "art_1", "a capability outlives a token");
        clock.advance(Duration::from_secs(1));
        let expired = auth.capability_artifact(&capability, &who).unwrap_err();
        assert!(matches!(expired, Error::Forbidden { .. }) && expired.to_string().contains("expired"), "{expired}");
        // Minted now, it verifies again: expiry is the clock's, not the wall's.
        assert!(auth.verify(&auth.mint(&p)).is_ok());
    }
}

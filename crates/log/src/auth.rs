//! Authentication (SPEC T4): signed bearer tokens. A verified token is the
//! only way to get an [`Authenticated`], and the write path takes nothing
//! else, so no command runs for an identity nobody vouched for.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use lattice_core::{Error, Principal, TenantId, TenantRole, UserId};
use serde::{Deserialize, Serialize};

/// A principal whose token verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authenticated(Principal);

impl Authenticated {
    pub fn principal(&self) -> &Principal {
        &self.0
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
    exp: u64,
}

/// Mints and verifies HS256 tokens with one deployment secret.
#[derive(Clone)]
pub struct Authenticator {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
    ttl: Duration,
}

impl Authenticator {
    /// The secret must be at least 32 bytes: HS256 is only as strong as it.
    pub fn new(secret: &[u8], ttl: Duration) -> Result<Self, Error> {
        if secret.len() < 32 {
            return Err(Error::unavailable("the token secret must be at least 32 bytes"));
        }
        let mut validation = Validation::new(Algorithm::HS256);
        validation.leeway = 5;
        validation.set_required_spec_claims(&["exp", "sub"]);
        let bad_key = |e: jsonwebtoken::errors::Error| Error::unavailable(format!("the token secret is unusable: {e}"));
        Ok(Self {
            encoding: EncodingKey::from_secret(secret).map_err(bad_key)?,
            decoding: DecodingKey::from_secret(secret).map_err(bad_key)?,
            validation,
            ttl,
        })
    }

    pub fn mint(&self, principal: &Principal) -> String {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
        let claims = Claims {
            sub: principal.user.to_string(),
            tenant: principal.tenant.to_string(),
            role: principal.role,
            agent: principal.agent,
            iat: now,
            exp: now + self.ttl.as_secs(),
        };
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
            .expect("HS256 signing with a valid key cannot fail")
    }

    /// Verifies a bearer token's signature, expiry and claims.
    pub fn verify(&self, token: &str) -> Result<Authenticated, Error> {
        let unauthorized = |reason: &str| Error::Unauthorized { reason: reason.to_owned() };
        let data = jsonwebtoken::decode::<Claims>(token, &self.decoding, &self.validation).map_err(|e| {
            match e.kind() {
                jsonwebtoken::errors::ErrorKind::ExpiredSignature => unauthorized("the token has expired"),
                _ => unauthorized("the token does not verify"),
            }
        })?;
        let claims = data.claims;
        let tenant = TenantId::parse("tenant", &claims.tenant).map_err(|_| unauthorized("bad tenant claim"))?;
        let user = UserId::parse("sub", &claims.sub).map_err(|_| unauthorized("bad subject claim"))?;
        Ok(Authenticated(Principal { tenant, user, role: claims.role, agent: claims.agent, run: None, within: None }))
    }

    /// Vouches for a principal without a token. For lattice's own in-process
    /// parts (an agent's run acting as its agent), never for a request.
    pub fn vouch(&self, principal: Principal) -> Authenticated {
        Authenticated(principal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}

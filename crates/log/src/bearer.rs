//! Who a bearer token is (T4, R6): the one reader of every kind of token a
//! request may carry. lattice's own (HS256, minted by `lattice token`, the
//! dev sign-in, or a sign-in session), an API key (`lk_…`), or a token a
//! configured provider signed, verified by the identity port. Whatever
//! vouched, what may have ended it since is asked of [`Credentials`].

use std::sync::Arc;

use lattice_core::directory::KeyScope;
use lattice_core::identity::{Audience, TokenIssuers};
use lattice_core::{Error, Principal, TenantId, TenantRole, UserId};
use serde::Deserialize;

use crate::auth::{Authenticated, Authenticator, Via, bearer_token};
use crate::credentials::{Credentials, key_stands};
use crate::digest::secret_digest;
use crate::sign_in::derived_user_id;

/// The bytes of a bearer token read at most: a token longer than this is
/// refused before anything decodes it.
pub const MAX_TOKEN_BYTES: usize = 16 * 1024;
/// What every API key begins with.
pub const API_KEY_PREFIX: &str = "lk_";
/// What every SCIM token begins with.
pub const SCIM_TOKEN_PREFIX: &str = "ls_";

/// Reads bearer tokens of every kind.
pub(crate) struct Bearers {
    pub auth: Authenticator,
    pub issuers: Option<Arc<dyn TokenIssuers>>,
    pub credentials: Arc<Credentials>,
}

#[derive(Deserialize)]
struct Issuer {
    iss: Option<String>,
}

fn unauthorized(reason: impl Into<String>) -> Error {
    Error::unauthorized(lattice_core::Code::TokenInvalid, reason)
}

impl Bearers {
    /// The caller of an `Authorization` header presented to `audience`.
    pub async fn authenticate(&self, header: Option<&[u8]>, audience: Audience) -> Result<Authenticated, Error> {
        let header = header.ok_or_else(|| Error::unauthorized(lattice_core::Code::TokenMissing, "no bearer token"))?;
        if header.len() > MAX_TOKEN_BYTES + 16 {
            return Err(unauthorized(format!("the token is longer than {} KiB", MAX_TOKEN_BYTES / 1024)));
        }
        let token = bearer_token(header).ok_or_else(|| unauthorized("the Authorization header is not `Bearer <token>`"))?;
        if token.starts_with(API_KEY_PREFIX) {
            return self.by_key(token).await;
        }
        if token.starts_with(SCIM_TOKEN_PREFIX) {
            return Err(unauthorized("a SCIM token is taken at /scim/v2 alone"));
        }
        let issuer = jsonwebtoken::dangerous::insecure_decode_claims::<Issuer>(token).ok().and_then(|c| c.iss);
        let who = match (&self.issuers, issuer) {
            (Some(issuers), Some(iss)) if issuers.trusts(&iss) => self.by_provider(issuers.as_ref(), token, audience).await?,
            // lattice's own tokens name no issuer.
            (_, Some(iss)) => return Err(unauthorized(format!("the token's issuer {} is not a provider this deployment trusts", cut(&iss)))),
            (_, None) => self.by_lattice(token).await?,
        };
        self.credentials.check(&who, false).await?;
        Ok(who)
    }

    /// lattice's own token: a sign-in session's takes the role the
    /// directory gives its person now.
    async fn by_lattice(&self, token: &str) -> Result<Authenticated, Error> {
        let who = self.auth.verify(token)?;
        let Via::Session(sid) = who.via() else { return Ok(who) };
        let p = who.principal();
        let person = self.credentials.person(p.tenant.as_str(), p.user.as_str(), false).await?;
        match person.listed {
            Some((_, role)) if role != p.role => {
                let principal = Principal { role, ..p.clone() };
                Ok(Authenticated::vouched(principal, who.issued().0.unwrap_or_default(), Via::Session(sid.clone())))
            }
            _ => Ok(who),
        }
    }

    /// A provider's token: its person as the provider's configuration maps
    /// the claims, with the role the directory gives when it holds them.
    async fn by_provider(&self, issuers: &dyn TokenIssuers, token: &str, audience: Audience) -> Result<Authenticated, Error> {
        let vouched = issuers.verify(token, audience).await?;
        // The person the name is in the directory, as a sign-in finds them.
        let user = match self.credentials.person_id(vouched.tenant.as_str(), vouched.user.as_str()).await? {
            Some(id) => UserId::from_trusted(id),
            None => derived_user_id(vouched.user.as_str())
                .ok_or_else(|| unauthorized("the token's user claim makes no user id lattice can hold: configure another user_claim"))?,
        };
        let person = self.credentials.person(vouched.tenant.as_str(), user.as_str(), false).await?;
        let role = person.listed.map_or(vouched.role, |(_, role)| role);
        let principal = Principal { tenant: vouched.tenant, user, role, agent: false, run: None, within: None, scope: None };
        Ok(Authenticated::vouched(principal, vouched.issued_ms, Via::Provider(vouched.provider)))
    }

    /// An API key: its agent, at its scope.
    async fn by_key(&self, token: &str) -> Result<Authenticated, Error> {
        let digest = secret_digest(token);
        let row = self.credentials.key(&digest, false).await?;
        let now = self.auth.clock().now_ms();
        let key = key_stands(row.as_ref(), now)?;
        if key.kind != lattice_core::event::CredentialKind::ApiKey {
            return Err(unauthorized("a SCIM token is taken at /scim/v2 alone"));
        }
        let (role, scope) = match &key.scope {
            Some(KeyScope::Tenant { role }) => (*role, None),
            Some(KeyScope::Workspace { workspace, .. }) => (TenantRole::Member, Some(workspace.clone())),
            None => return Err(unauthorized("the key's scope does not read back: issue another")),
        };
        let principal = Principal {
            tenant: TenantId::from_trusted(key.tenant.clone()),
            user: UserId::from_trusted(key.id.clone()),
            role,
            agent: true,
            run: None,
            within: None,
            scope,
        };
        let who = Authenticated::vouched(principal, key.created_at, Via::Key(digest));
        self.credentials.check(&who, false).await?;
        self.credentials.note_use(&key.id).await;
        Ok(who)
    }

    /// A SCIM client: the token's tenant, acting as its directory's admin
    /// (`scim:<token id>`), for the directory's commands alone.
    pub async fn scim_client(&self, header: Option<&[u8]>) -> Result<Authenticated, Error> {
        let header = header.ok_or_else(|| Error::unauthorized(lattice_core::Code::TokenMissing, "no bearer token"))?;
        if header.len() > MAX_TOKEN_BYTES {
            return Err(unauthorized("the token is too long"));
        }
        let token = bearer_token(header).ok_or_else(|| unauthorized("the Authorization header is not `Bearer <token>`"))?;
        if !token.starts_with(SCIM_TOKEN_PREFIX) {
            return Err(unauthorized("SCIM takes a SCIM token (POST /v1/scim-tokens), nothing else"));
        }
        let row = self.credentials.key(&secret_digest(token), false).await?;
        let key = key_stands(row.as_ref(), self.auth.clock().now_ms())?;
        if key.kind != lattice_core::event::CredentialKind::ScimToken {
            return Err(unauthorized("SCIM takes a SCIM token (POST /v1/scim-tokens), nothing else"));
        }
        self.credentials.note_use(&key.id).await;
        let principal = Principal {
            tenant: TenantId::from_trusted(key.tenant.clone()),
            user: UserId::from_trusted(format!("scim-{}", key.id)),
            role: TenantRole::TenantAdmin,
            agent: false,
            run: None,
            within: None,
            scope: None,
        };
        Ok(Authenticated::system(format!("scim:{}", key.id), principal))
    }
}

/// An untrusted value shown in a refusal: cut short, printable only.
fn cut(value: &str) -> String {
    let shown: String = value.chars().filter(|c| !c.is_control()).take(120).collect();
    format!("{shown:?}")
}

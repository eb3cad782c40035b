//! [`Providers`]: the deployment's configured providers, the one entry
//! point of this crate. Made without any network access; each provider is
//! discovered on its first use.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use lattice_core::identity::{Audience, GroupRules, TokenIssuers, Vouched};
use lattice_core::{Error, SharedClock};
use serde::Serialize;
use serde_json::Value;

use crate::claims;
use crate::config::{ProviderConfig, check_all, cut};
use crate::flow::{self, Begun, SignedIn};
use crate::http::Http;
use crate::logout::{self, LogoutNotice};
use crate::provider::Provider;
use crate::verify::{self, Expect, Kind};

/// How the providers are run.
#[derive(Debug, Clone)]
pub struct ProvidersOptions {
    /// Whether an `http://` issuer (and http endpoints in its discovery)
    /// is accepted: outside the production profile only.
    pub allow_http: bool,
    /// The deployment's MCP resource (e.g. `http://127.0.0.1:8080/mcp`): an
    /// audience `/mcp` takes from every provider.
    pub mcp_audience: Option<String>,
    /// What tokens' times are checked by, and caches age by.
    pub clock: SharedClock,
    /// The longest wait for a provider's discovery or token endpoint (its
    /// key set waits at most 5 s).
    pub timeout: Duration,
}

impl Default for ProvidersOptions {
    fn default() -> Self {
        Self { allow_http: false, mcp_audience: None, clock: lattice_core::clock::system(), timeout: Duration::from_secs(10) }
    }
}

/// A provider as the sign-in page lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProviderInfo {
    pub name: String,
    /// What its button says.
    pub title: String,
}

/// The configured providers. Cheap to clone: one set shared.
#[derive(Clone)]
pub struct Providers {
    inner: Arc<Inner>,
}

struct Inner {
    providers: BTreeMap<String, Provider>,
    mcp_audience: Option<String>,
}

impl fmt::Debug for Providers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Providers").field("names", &self.inner.providers.keys().collect::<Vec<_>>()).finish()
    }
}

impl Providers {
    /// Checks `configs` (every problem named as `oidc_providers.<name>.<key>`)
    /// and reads each client secret file; touches no network.
    pub fn new(configs: &BTreeMap<String, ProviderConfig>, options: ProvidersOptions) -> Result<Self, Error> {
        let settings = check_all(configs, options.allow_http)?;
        if let Some(aud) = &options.mcp_audience
            && aud.is_empty()
        {
            return Err(Error::field("mcp_audience", "audience", "the deployment's MCP resource must not be empty"));
        }
        let http = Http::new(options.timeout)?;
        let providers =
            settings.into_iter().map(|s| (s.name.clone(), Provider::new(s, http.clone(), options.clock.clone(), options.allow_http))).collect();
        Ok(Self { inner: Arc::new(Inner { providers, mcp_audience: options.mcp_audience }) })
    }

    fn provider(&self, name: &str) -> Result<&Provider, Error> {
        self.inner.providers.get(name).ok_or(Error::NotFound)
    }

    /// Every provider, by name.
    pub fn list(&self) -> Vec<ProviderInfo> {
        self.inner.providers.values().map(|p| ProviderInfo { name: p.settings.name.clone(), title: p.settings.title.clone() }).collect()
    }

    pub fn is_empty(&self) -> bool {
        self.inner.providers.is_empty()
    }

    /// The issuer of provider `name`.
    pub fn issuer(&self, name: &str) -> Option<&str> {
        self.inner.providers.get(name).map(|p| p.settings.issuer.as_str())
    }

    /// The configured issuers, each once (what MCP's protected resource
    /// metadata names as authorization servers).
    pub fn issuers(&self) -> Vec<String> {
        let mut issuers: Vec<String> = Vec::new();
        for p in self.inner.providers.values() {
            if !issuers.contains(&p.settings.issuer) {
                issuers.push(p.settings.issuer.clone());
            }
        }
        issuers
    }

    /// Every provider's group rules, gathered: a provider bound to a tenant
    /// gives rules in that tenant, one that reads the tenant from a claim
    /// rules in any.
    pub fn rules(&self) -> GroupRules {
        let mut rules = GroupRules::default();
        for p in self.inner.providers.values() {
            rules.roles.extend(p.settings.rules.roles.iter().cloned());
            rules.workspaces.extend(p.settings.rules.workspaces.iter().cloned());
        }
        rules
    }

    /// Begins a sign-in with provider `name`; the provider sends the person
    /// back to `redirect_uri`. Unknown name: `NotFound`; provider
    /// unreachable: `Unavailable`.
    pub async fn begin(&self, name: &str, redirect_uri: &str) -> Result<Begun, Error> {
        flow::begin(self.provider(name)?, redirect_uri).await
    }

    /// Ends a sign-in: exchanges `code` (with the client secret and the
    /// PKCE verifier), verifies the ID token (its nonce `nonce`) and maps
    /// its claims.
    pub async fn finish(&self, name: &str, code: &str, pkce_verifier: &str, nonce: &str, redirect_uri: &str) -> Result<SignedIn, Error> {
        flow::finish(self.provider(name)?, code, pkce_verifier, nonce, redirect_uri).await
    }

    /// Verifies a back-channel logout token provider `name` sent.
    pub async fn verify_logout(&self, name: &str, logout_token: &str) -> Result<LogoutNotice, Error> {
        logout::verify_logout(self.provider(name)?, logout_token).await
    }

    /// Where to send a person signing out of lattice so the provider signs
    /// them out too (RP-initiated logout), coming back to
    /// `post_logout_redirect_uri`. None when the provider names no
    /// end_session_endpoint, or cannot be discovered now.
    pub async fn end_session_url(&self, name: &str, post_logout_redirect_uri: &str) -> Option<String> {
        flow::end_session_url(self.provider(name).ok()?, post_logout_redirect_uri).await
    }

    /// How many times provider `name`'s key set was fetched.
    pub fn jwks_fetches(&self, name: &str) -> u64 {
        self.provider(name).map_or(0, Provider::jwks_fetches)
    }

    /// The audiences a token for `audience` may carry from `provider`.
    fn audiences<'a>(&'a self, provider: &'a Provider, audience: Audience) -> Vec<&'a str> {
        let mut audiences = vec![provider.settings.client_id.as_str()];
        if audience == Audience::Mcp {
            for aud in [provider.settings.mcp_audience.as_deref(), self.inner.mcp_audience.as_deref()].into_iter().flatten() {
                if !audiences.contains(&aud) {
                    audiences.push(aud);
                }
            }
        }
        audiences
    }
}

#[async_trait::async_trait]
impl TokenIssuers for Providers {
    fn trusts(&self, issuer: &str) -> bool {
        self.inner.providers.values().any(|p| p.settings.issuer == issuer)
    }

    async fn verify(&self, token: &str, audience: Audience) -> Result<Vouched, Error> {
        // Routed by what the token says unverified: its issuer picks the
        // provider (and, where one issuer serves two configured clients,
        // its audience the client); the provider then verifies all of it.
        let (_, claims) = verify::peek(token)?;
        let Some(Value::String(iss)) = claims.get("iss") else {
            return Err(Error::unauthorized(lattice_core::Code::TokenInvalid, "the token names no issuer"));
        };
        let candidates: Vec<&Provider> = self.inner.providers.values().filter(|p| p.settings.issuer == *iss).collect();
        if candidates.is_empty() {
            return Err(Error::unauthorized(
                lattice_core::Code::TokenInvalid,
                format!("the token's issuer {:?} is not a configured provider", cut(iss, 200)),
            ));
        }
        let said = verify::audiences(&claims)?;
        let provider = candidates.iter().find(|p| self.audiences(p, audience).iter().any(|a| said.contains(a))).unwrap_or(&candidates[0]);
        let expect = Expect { kind: Kind::Access, audiences: self.audiences(provider, audience) };
        let verified = provider.verify(token, &expect).await?;
        let person = claims::person(&provider.settings, &verified.claims)?;
        Ok(Vouched {
            provider: provider.settings.name.clone(),
            tenant: person.tenant,
            user: person.user,
            role: person.role,
            issued_ms: verified.iat.saturating_mul(1000),
        })
    }
}

//! One configured provider at run time: its settings, what discovery said,
//! its keys and the logout tokens it has sent, and the verification of a
//! token of its (header, key, signature and claims, in that order).

use std::sync::Arc;

use jsonwebtoken::DecodingKey;
use lattice_core::{Error, SharedClock};

use crate::config::Settings;
use crate::discovery::{Discovered, DiscoveryCache};
use crate::http::{BODY_MAX, Http, is_json};
use crate::jwks::{FETCH_TIMEOUT, KeyCache, KeySet};
use crate::replays::Replays;
use crate::verify::{Expect, Token, Verified};

pub(crate) struct Provider {
    pub settings: Settings,
    pub http: Http,
    pub clock: SharedClock,
    allow_http: bool,
    discovery: DiscoveryCache,
    keys: KeyCache,
    pub replays: Replays,
}

impl Provider {
    pub(crate) fn new(settings: Settings, http: Http, clock: SharedClock, allow_http: bool) -> Self {
        Self { settings, http, clock, allow_http, discovery: DiscoveryCache::default(), keys: KeyCache::default(), replays: Replays::default() }
    }

    pub(crate) async fn discovered(&self) -> Result<Arc<Discovered>, Error> {
        self.discovery.get(&self.settings, &self.http, &self.clock, self.allow_http).await
    }

    pub(crate) fn jwks_fetches(&self) -> u64 {
        self.keys.fetches()
    }

    /// The key a token's header points at, the set fetched when needed.
    async fn key(&self, token: &Token<'_>) -> Result<DecodingKey, Error> {
        let name = &self.settings.name;
        self.keys
            .key(token.kid(), token.alg(), name, &self.clock, || async {
                let discovered = self.discovered().await.map_err(|e| e.to_string())?;
                self.keys.note_fetch();
                let url = &discovered.jwks_uri;
                let response =
                    self.http.get_json(url, BODY_MAX, Some(FETCH_TIMEOUT)).await.map_err(|e| format!("provider {name}'s key set ({url}): {e}"))?;
                if response.status() != openidconnect::http::StatusCode::OK {
                    return Err(format!("provider {name}'s key set ({url}) answered {}", response.status()));
                }
                if !is_json(&response) {
                    return Err(format!("provider {name}'s key set ({url}) is not JSON"));
                }
                KeySet::parse(response.body()).map_err(|e| format!("provider {name}'s key set ({url}) {e}"))
            })
            .await
    }

    /// Verifies `token` as one of this provider's, for `expect`.
    pub(crate) async fn verify(&self, token: &str, expect: &Expect<'_>) -> Result<Verified, Error> {
        let checked = async {
            let token = Token::read(token, &self.settings, expect.kind)?;
            let key = self.key(&token).await?;
            token.check(&key, &self.settings, expect, self.clock.now_secs())
        }
        .await;
        if let Err(e) = &checked {
            tracing::debug!(provider = %self.settings.name, error = %e, "a token was refused");
        }
        checked
    }
}

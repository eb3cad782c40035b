//! A provider's discovery document (OpenID Connect Discovery 1.0), read
//! on first use rather than at start (a provider that is down must not
//! keep lattice from starting), then kept: read again at most once an hour.
//! A failed read is not kept: the next use tries again, and callers that
//! waited on a read in flight share its outcome instead of each trying.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use lattice_core::{Error, SharedClock};
use openidconnect::ProviderMetadataWithLogout;
use openidconnect::core::CoreClientAuthMethod;
use tokio::sync::Mutex;

use crate::config::{Settings, cut};
use crate::http::{BODY_MAX, Http, is_json};

/// How long a discovery document is used before it is read again.
const REFRESH_MS: i64 = 3600 * 1000;

/// What discovery says, checked.
#[derive(Debug)]
pub(crate) struct Discovered {
    pub metadata: ProviderMetadataWithLogout,
    /// The key set's URL.
    pub jwks_uri: String,
    /// Whether the token endpoint takes the client's secret in the body
    /// only (`client_secret_post`), not as HTTP Basic.
    pub secret_in_body: bool,
}

#[derive(Default)]
pub(crate) struct DiscoveryCache {
    slot: Mutex<Slot>,
    /// Reads finished, counted outside the lock: a caller that saw it move
    /// while waiting takes that read's outcome.
    reads: AtomicU64,
}

#[derive(Default)]
struct Slot {
    current: Option<(Arc<Discovered>, i64)>,
    last_failure: Option<String>,
}

impl DiscoveryCache {
    pub(crate) async fn get(&self, settings: &Settings, http: &Http, clock: &SharedClock, allow_http: bool) -> Result<Arc<Discovered>, Error> {
        let seen = self.reads.load(Ordering::SeqCst);
        let mut slot = self.slot.lock().await;
        let now = clock.now_ms();
        if let Some((discovered, at)) = &slot.current
            && now.saturating_sub(*at) < REFRESH_MS
        {
            return Ok(discovered.clone());
        }
        if self.reads.load(Ordering::SeqCst) != seen {
            // A read finished while this caller waited: its outcome is this
            // caller's too.
            if let Some((discovered, _)) = &slot.current {
                return Ok(discovered.clone());
            }
            if let Some(failure) = &slot.last_failure {
                return Err(Error::unavailable(failure));
            }
        }
        let outcome = read(settings, http, allow_http).await;
        self.reads.fetch_add(1, Ordering::SeqCst);
        match outcome {
            Ok(discovered) => {
                tracing::info!(provider = %settings.name, issuer = %settings.issuer, "read the provider's discovery document");
                let discovered = Arc::new(discovered);
                slot.current = Some((discovered.clone(), now));
                slot.last_failure = None;
                Ok(discovered)
            }
            Err(reason) => {
                tracing::warn!(provider = %settings.name, issuer = %settings.issuer, %reason, "the provider's discovery failed");
                slot.last_failure = Some(reason.clone());
                match &slot.current {
                    // An hour-old document still names the right endpoints
                    // more often than not: keep it until a read succeeds.
                    Some((discovered, _)) => Ok(discovered.clone()),
                    None => Err(Error::unavailable(reason)),
                }
            }
        }
    }
}

/// The discovery URL of `issuer` (Discovery 4.1: the issuer, without a
/// trailing slash, then `/.well-known/openid-configuration`).
pub(crate) fn discovery_url(issuer: &str) -> String {
    format!("{}/.well-known/openid-configuration", issuer.trim_end_matches('/'))
}

async fn read(settings: &Settings, http: &Http, allow_http: bool) -> Result<Discovered, String> {
    let name = &settings.name;
    let url = discovery_url(&settings.issuer);
    let response = http.get_json(&url, BODY_MAX, None).await.map_err(|e| format!("provider {name}'s discovery ({url}) failed: {e}"))?;
    if response.status() != openidconnect::http::StatusCode::OK {
        return Err(format!("provider {name}'s discovery ({url}) answered {}", response.status()));
    }
    if !is_json(&response) {
        return Err(format!("provider {name}'s discovery ({url}) did not answer JSON"));
    }
    let metadata: ProviderMetadataWithLogout =
        serde_json::from_slice(response.body()).map_err(|e| format!("provider {name}'s discovery document is not readable: {e}"))?;
    check(settings, &metadata, allow_http)?;
    let secret_in_body = metadata.token_endpoint_auth_methods_supported().is_some_and(|methods| {
        !methods.contains(&CoreClientAuthMethod::ClientSecretBasic) && methods.contains(&CoreClientAuthMethod::ClientSecretPost)
    });
    Ok(Discovered { jwks_uri: metadata.jwks_uri().url().to_string(), metadata, secret_in_body })
}

/// The document must be the configured issuer's (Discovery 4.3: its
/// `issuer` is the configured one exactly), and its endpoints as safe as
/// the issuer: https, unless the deployment allows http.
fn check(settings: &Settings, metadata: &ProviderMetadataWithLogout, allow_http: bool) -> Result<(), String> {
    let name = &settings.name;
    let said = metadata.issuer().as_str();
    if said != settings.issuer {
        return Err(format!("provider {name}'s discovery document names the issuer {:?}, not the configured {:?}", cut(said, 200), settings.issuer));
    }
    let Some(token) = metadata.token_endpoint() else {
        return Err(format!("provider {name}'s discovery document names no token_endpoint"));
    };
    let mut endpoints = vec![
        ("authorization_endpoint", metadata.authorization_endpoint().url()),
        ("token_endpoint", token.url()),
        ("jwks_uri", metadata.jwks_uri().url()),
    ];
    if let Some(end) = &metadata.additional_metadata().end_session_endpoint {
        endpoints.push(("end_session_endpoint", end.url()));
    }
    for (what, url) in endpoints {
        match url.scheme() {
            "https" => {}
            "http" if allow_http => {}
            other => return Err(format!("provider {name}'s {what} is {other}:, not https:")),
        }
    }
    Ok(())
}

//! Each person's own sign-in to a remote server (R7), as the MCP
//! authorization specification (2025-11-25) describes it, by rmcp's OAuth
//! client: the server's protected-resource metadata (RFC 9728) and its
//! authorization server's (RFC 8414, OpenID discovery, with the fallbacks
//! the spec lists); the client a pre-registered one from the server's
//! table, a Client ID Metadata Document lattice serves, or one registered
//! dynamically (RFC 7591); the authorization code with PKCE (S256) and the
//! `resource` of RFC 8707; tokens refreshed and rotated as the server's
//! authorization server says.
//!
//! What a sign-in gives is kept by a [`Keeper`] (lattice's log, which seals
//! it under a key of the deployment's, for that person and server alone),
//! never here, never in a log line.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationRequest, AuthorizationSession, CredentialStore, OAuthClientConfig,
    StateStore, StoredAuthorizationState, StoredCredentials,
};
use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;

use crate::config::SignInConfig;
use crate::error::CallError;

/// A person, in their tenant: whose sign-in it is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Owner {
    pub tenant: String,
    pub user: String,
}

/// Where people's sign-ins are kept, sealed by the keeper: what a sign-in
/// gave (`StoredCredentials` as JSON) per person and server, and each
/// sign-in begun and not yet back, by its `state`.
#[async_trait::async_trait]
pub trait Keeper: Send + Sync + 'static {
    async fn load(&self, owner: &Owner, server: &str) -> Result<Option<String>, String>;
    async fn save(&self, owner: &Owner, server: &str, value: &str) -> Result<(), String>;
    async fn clear(&self, owner: &Owner, server: &str) -> Result<(), String>;
    async fn begin(&self, state: &str, owner: &Owner, server: &str, value: &str) -> Result<(), String>;
    /// (owner, server, what `begin` kept), while in time.
    async fn attempt(&self, state: &str) -> Result<Option<(Owner, String, String)>, String>;
    /// Uses a sign-in begun up.
    async fn finish(&self, state: &str) -> Result<(), String>;
}

/// How lattice signs people in to servers: where they are kept, and what
/// the authorization servers are told of lattice.
#[derive(Clone)]
pub struct SignIns {
    pub keeper: Arc<dyn Keeper>,
    /// Where an authorization server sends the person back
    /// (`{portal}/v1/connections/callback`).
    pub redirect_uri: String,
    /// lattice's Client ID Metadata Document, when it is served over https.
    pub client_metadata_url: Option<String>,
}

/// What a sign-in begun keeps until it comes back.
#[derive(Serialize, Deserialize)]
struct Begun {
    state: StoredAuthorizationState,
    client_id: String,
    scopes: Vec<String>,
    metadata: AuthorizationMetadata,
}

/// The person's credentials, through the keeper.
struct KeptCredentials {
    keeper: Arc<dyn Keeper>,
    owner: Owner,
    server: String,
}

#[async_trait::async_trait]
impl CredentialStore for KeptCredentials {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let kept = self.keeper.load(&self.owner, &self.server).await.map_err(AuthError::CredentialStoreError)?;
        Ok(kept.and_then(|json| serde_json::from_str(&json).ok()))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let json = serde_json::to_string(&credentials).map_err(|e| AuthError::CredentialStoreError(e.to_string()))?;
        self.keeper.save(&self.owner, &self.server, &json).await.map_err(AuthError::CredentialStoreError)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.keeper.clear(&self.owner, &self.server).await.map_err(AuthError::CredentialStoreError)
    }
}

/// One flow's state, in memory: `begin` takes what rmcp keeps here to the
/// keeper with the rest; the callback puts it back.
#[derive(Default, Clone)]
struct OneState(Arc<Mutex<HashMap<String, StoredAuthorizationState>>>);

#[async_trait::async_trait]
impl StateStore for OneState {
    async fn save(&self, csrf_token: &str, state: StoredAuthorizationState) -> Result<(), AuthError> {
        self.0.lock().await.insert(csrf_token.to_owned(), state);
        Ok(())
    }

    async fn load(&self, csrf_token: &str) -> Result<Option<StoredAuthorizationState>, AuthError> {
        Ok(self.0.lock().await.get(csrf_token).cloned())
    }

    async fn delete(&self, csrf_token: &str) -> Result<(), AuthError> {
        self.0.lock().await.remove(csrf_token);
        Ok(())
    }
}

/// A refusal of the OAuth client, said without anything it carried.
pub(crate) fn oauth_error(e: &AuthError) -> CallError {
    tracing::info!(error = %e, "a connected server's sign-in failed");
    let short: String = e.to_string().chars().take(300).collect();
    CallError::SignIn(short)
}

/// One server people sign in to, as a sign-in needs it.
pub(crate) struct Target<'a> {
    pub sign_ins: &'a SignIns,
    pub config: &'a SignInConfig,
    pub server: &'a str,
    pub url: &'a str,
    pub allow_internal: bool,
}

async fn manager(url: &str, allow_internal: bool) -> Result<AuthorizationManager, CallError> {
    let made = if allow_internal { AuthorizationManager::new_allowing_private_addresses(url).await } else { AuthorizationManager::new(url).await };
    made.map_err(|e| oauth_error(&e))
}

/// The most scopes a sign-in asks for, and the longest a scope may be.
const MAX_SCOPES: usize = 32;
const MAX_SCOPE_BYTES: usize = 128;

/// A scope a server asked for (RFC 6749 §3.3: printable ASCII but `"`,
/// `\` and space), checked before it is asked of an authorization server.
pub fn scope_is_valid(scope: &str) -> bool {
    !scope.is_empty()
        && scope.len() <= MAX_SCOPE_BYTES
        && scope.bytes().all(|b| b == 0x21 || (0x23..=0x5b).contains(&b) || (0x5d..=0x7e).contains(&b))
}

/// Begins `owner`'s sign-in to `server` (at `url`): answers the address the
/// person opens at the server's authorization server. The scopes asked are
/// the table's (or those the server's metadata names), what the person was
/// granted before, and `more` (what a call was refused for: step-up).
pub(crate) async fn begin(target: &Target<'_>, owner: &Owner, more: &[String]) -> Result<String, CallError> {
    let Target { sign_ins, config, server, url, allow_internal } = *target;
    let mut manager = manager(url, allow_internal).await?;
    let resolved = manager.resolve_metadata().await.map_err(|e| oauth_error(&e))?;
    let metadata = resolved.metadata;
    manager.set_metadata(metadata.clone());
    let states = OneState::default();
    manager.set_state_store(states.clone());
    let before: Option<StoredCredentials> = match sign_ins.keeper.load(owner, server).await.map_err(CallError::SignIn)? {
        Some(json) => serde_json::from_str(&json).ok(),
        None => None,
    };
    let mut scopes = if config.scopes.is_empty() { manager.select_initial_scopes(&[]).await } else { config.scopes.clone() };
    if let Some(before) = &before {
        scopes.extend(before.granted_scopes.iter().cloned());
    }
    scopes.extend(more.iter().filter(|s| scope_is_valid(s)).cloned());
    let mut seen = std::collections::BTreeSet::new();
    scopes.retain(|s| seen.insert(s.clone()));
    scopes.truncate(MAX_SCOPES);
    let mut request = AuthorizationRequest::new(&sign_ins.redirect_uri).with_client_name("lattice").with_application_type("web");
    if !scopes.is_empty() {
        request = request.with_scopes(scopes);
    }
    // A client registered for this person before, at the same authorization
    // server, is theirs again (not one more registration per sign-in).
    let registered =
        before.filter(|b| b.issuer.is_some() && b.issuer == metadata.issuer && !b.client_id.starts_with("https://")).map(|b| b.client_id);
    if let Some(client_id) = &config.client_id {
        request = request.with_preregistered_client(client_id.clone());
        if let Some(secret) = config.client_secret()? {
            request = request.with_client_secret(secret);
        }
    } else if let Some(document) = sign_ins.client_metadata_url.as_ref().filter(|_| takes_metadata_documents(&metadata)) {
        request = request.with_client_metadata_url(document.clone());
    } else if let Some(client_id) = registered {
        request = request.with_preregistered_client(client_id);
    }
    let session = AuthorizationSession::new(manager, request).await.map_err(|(_, e)| oauth_error(&e))?;
    let (client_id, _) = session.get_credentials().await.map_err(|e| oauth_error(&e))?;
    let (csrf, state) = states.0.lock().await.drain().next().ok_or_else(|| CallError::SignIn("the sign-in kept no state".into()))?;
    let scopes = state.requested_scopes.clone();
    let begun = Begun { state, client_id, scopes, metadata };
    let value = serde_json::to_string(&begun).map_err(|e| CallError::SignIn(e.to_string()))?;
    sign_ins.keeper.begin(&csrf, owner, server, &value).await.map_err(CallError::SignIn)?;
    Ok(session.get_authorization_url().to_owned())
}

/// Whether an authorization server takes a Client ID Metadata Document's
/// address as a client's id.
fn takes_metadata_documents(metadata: &AuthorizationMetadata) -> bool {
    metadata.additional_fields.get("client_id_metadata_document_supported").and_then(serde_json::Value::as_bool).unwrap_or(false)
}

/// lattice as the authorization server knows it: a web application, with
/// the secret of its table where it was registered with one.
fn client(config: &SignInConfig, client_id: String, scopes: Vec<String>, redirect_uri: &str) -> Result<OAuthClientConfig, CallError> {
    let mut client = OAuthClientConfig::new(client_id, redirect_uri).with_scopes(scopes).with_application_type("web");
    if config.client_id.is_some()
        && let Some(secret) = config.client_secret()?
    {
        client = client.with_client_secret(secret);
    }
    Ok(client)
}

/// The sign-in `state` names, if it is one lattice began: (owner, server).
pub(crate) async fn attempt(sign_ins: &SignIns, state: &str) -> Result<Option<(Owner, String, String)>, CallError> {
    sign_ins.keeper.attempt(state).await.map_err(CallError::SignIn)
}

/// Ends a sign-in: the code exchanged (with the PKCE verifier and the
/// `resource`), the issuer of the answer checked (RFC 9207) where given,
/// what it gave kept for its person alone.
pub(crate) async fn finish(target: &Target<'_>, owner: &Owner, kept: &str, state: &str, code: &str, issuer: Option<&str>) -> Result<(), CallError> {
    let Target { sign_ins, config, server, url, allow_internal } = *target;
    let begun: Begun = serde_json::from_str(kept).map_err(|e| CallError::SignIn(e.to_string()))?;
    let mut manager = manager(url, allow_internal).await?;
    // Found again, so the `resource` the code is exchanged for is the one
    // the server names now, at the authorization server the person was sent to.
    let found = manager.resolve_metadata().await.map_err(|e| oauth_error(&e))?.metadata;
    if found.issuer != begun.metadata.issuer || found.token_endpoint != begun.metadata.token_endpoint {
        return Err(CallError::SignIn(format!("{server} names another authorization server than when the sign-in began")));
    }
    manager.set_metadata(found);
    manager.configure_client(client(config, begun.client_id, begun.scopes, &sign_ins.redirect_uri)?).map_err(|e| oauth_error(&e))?;
    let states = OneState::default();
    states.0.lock().await.insert(state.to_owned(), begun.state);
    manager.set_state_store(states);
    manager.set_credential_store(KeptCredentials { keeper: sign_ins.keeper.clone(), owner: owner.clone(), server: server.to_owned() });
    // Used up first: a code brought twice is refused the second time.
    sign_ins.keeper.finish(state).await.map_err(CallError::SignIn)?;
    manager.exchange_code_for_token_with_issuer(code, state, issuer).await.map_err(|e| oauth_error(&e))?;
    Ok(())
}

/// The OAuth client for `owner`'s session with `server`, from what their
/// sign-in gave; `NeedsSignIn` when there is nothing (or nothing usable).
pub(crate) async fn authorized(target: &Target<'_>, owner: &Owner) -> Result<AuthorizationManager, CallError> {
    let Target { sign_ins, config, server, url, allow_internal } = *target;
    let needs = || CallError::NeedsSignIn { server: server.to_owned(), scope: None };
    if sign_ins.keeper.load(owner, server).await.map_err(CallError::SignIn)?.is_none() {
        return Err(needs());
    }
    let mut manager = manager(url, allow_internal).await?;
    manager.set_credential_store(KeptCredentials { keeper: sign_ins.keeper.clone(), owner: owner.clone(), server: server.to_owned() });
    match manager.initialize_from_store().await {
        // A confidential client refreshes with its secret, read from its
        // file each time (rotated there, taken up here).
        Ok(true) if config.client_id.is_some() => {
            let (client_id, _) = manager.get_credentials().await.map_err(|e| oauth_error(&e))?;
            manager.configure_client(client(config, client_id, Vec::new(), &sign_ins.redirect_uri)?).map_err(|e| oauth_error(&e))?;
            Ok(manager)
        }
        Ok(true) => Ok(manager),
        Ok(false) => Err(needs()),
        Err(e) => Err(oauth_error(&e)),
    }
}

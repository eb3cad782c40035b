//! Each person's own sign-in to a remote server (R7), as the MCP
//! authorization specification (2025-11-25) describes it, by rmcp's OAuth
//! client: the server's protected-resource metadata (RFC 9728), found from
//! its 401 to an `initialize` without a token where it names it, and its
//! authorization server's (RFC 8414, OpenID discovery, with the fallbacks
//! the spec lists); the client a pre-registered one from the server's
//! table, a Client ID Metadata Document lattice serves, or one registered
//! dynamically (RFC 7591, its secret kept where it is given one); the
//! authorization code with PKCE (S256) and the `resource` of RFC 8707;
//! tokens refreshed and rotated as the server's authorization server says.
//!
//! What a sign-in gives is kept by a [`Keeper`] (lattice's log, which seals
//! it under a key of the deployment's, for that person and server alone),
//! never here, never in a log line.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationRequest, AuthorizationSession, CredentialStore, OAuthClientConfig,
    StateStore, StoredAuthorizationState, StoredCredentials, WWWAuthenticateParams,
};
use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;

use crate::config::SignInConfig;
use crate::error::CallError;
use crate::scopes::scope_is_valid;

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
    /// The server's challenge discovery began from: the end finds the
    /// authorization server again from it, or it would find another (or
    /// none) where only the challenge names the metadata.
    #[serde(default)]
    challenge: Option<String>,
    /// The secret of a client registered dynamically; a configured one's is
    /// read from its file when it is needed.
    #[serde(default)]
    client_secret: Option<String>,
}

/// What the keeper keeps of a person's sign-in to a server: rmcp's
/// credentials (as they were kept before, at the top level) and what they
/// cannot hold.
#[derive(Serialize, Deserialize)]
struct Kept {
    #[serde(flatten)]
    credentials: StoredCredentials,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_secret: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    challenge: Option<String>,
}

impl Kept {
    /// A record that does not read is no sign-in: the person signs in again.
    fn read(json: &str) -> Option<Self> {
        serde_json::from_str(json).ok()
    }
}

/// The person's credentials, through the keeper; each save keeps with them
/// the client's secret and the challenge of the sign-in that gave them,
/// which a refresh needs again.
struct KeptCredentials {
    keeper: Arc<dyn Keeper>,
    owner: Owner,
    server: String,
    client_secret: Option<String>,
    challenge: Option<String>,
}

#[async_trait::async_trait]
impl CredentialStore for KeptCredentials {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let kept = self.keeper.load(&self.owner, &self.server).await.map_err(AuthError::CredentialStoreError)?;
        Ok(kept.as_deref().and_then(Kept::read).map(|k| k.credentials))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let kept = Kept { credentials, client_secret: self.client_secret.clone(), challenge: self.challenge.clone() };
        let json = serde_json::to_string(&kept).map_err(|e| AuthError::CredentialStoreError(e.to_string()))?;
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

/// The most scopes a sign-in asks for.
const MAX_SCOPES: usize = 32;
/// The longest challenge of a server taken up (and kept with a sign-in).
const MAX_CHALLENGE_BYTES: usize = 4096;

/// The server's `WWW-Authenticate` to an `initialize` without a token, if
/// it answers 401. Discovery's own probe is a GET, which a server that
/// protects only its POSTs answers without a challenge: the metadata
/// address and the scope that only the challenge names would be missed.
/// `http` is lattice's client for the server (its headers, its address
/// guard, no redirect); the answer's body is never read.
async fn challenge(http: &reqwest::Client, url: &str, timeout: Duration) -> Option<String> {
    let initialize = serde_json::json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "lattice", "version": env!("CARGO_PKG_VERSION")},
        },
    });
    let sent = http.post(url).timeout(timeout).header(reqwest::header::ACCEPT, "application/json, text/event-stream").json(&initialize).send().await;
    let answer = match sent {
        Ok(answer) => answer,
        Err(e) => {
            // Discovery's own requests say whether the server is there.
            tracing::info!(error = %e, "a connected server did not answer a sign-in's first request");
            return None;
        }
    };
    if answer.status() != reqwest::StatusCode::UNAUTHORIZED {
        return None;
    }
    let base = url::Url::parse(url).ok()?;
    let challenges: Vec<&str> = answer
        .headers()
        .get_all(reqwest::header::WWW_AUTHENTICATE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter(|v| v.len() <= MAX_CHALLENGE_BYTES)
        .collect();
    // As rmcp's discovery reads several: the one naming the metadata, else
    // one naming a scope, else the first.
    let named = |pick: fn(&WWWAuthenticateParams) -> bool| challenges.iter().find(|c| pick(&WWWAuthenticateParams::parse(c, &base)));
    named(|p| p.resource_metadata_url.is_some()).or_else(|| named(|p| p.scope.is_some())).or(challenges.first()).map(|c| (*c).to_owned())
}

/// Begins `owner`'s sign-in to `server` (at `url`, reached by `http`
/// within `timeout`): answers the address the person opens at the server's
/// authorization server. The scopes asked are the table's (or, as the MCP
/// spec selects them, those the server's challenge names, else its
/// metadata's), what the person was granted before, and `more` (what a
/// call was refused for: step-up).
pub(crate) async fn begin(
    target: &Target<'_>,
    owner: &Owner,
    more: &[String],
    http: &reqwest::Client,
    timeout: Duration,
) -> Result<String, CallError> {
    let Target { sign_ins, config, server, url, allow_internal } = *target;
    let mut manager = manager(url, allow_internal).await?;
    let challenge = challenge(http, url, timeout).await;
    let resolved = manager.resolve_metadata_from_challenge(challenge.as_deref()).await.map_err(|e| oauth_error(&e))?;
    let metadata = resolved.metadata;
    manager.set_metadata(metadata.clone());
    let states = OneState::default();
    manager.set_state_store(states.clone());
    let before = match sign_ins.keeper.load(owner, server).await.map_err(CallError::SignIn)? {
        Some(json) => Kept::read(&json),
        None => None,
    };
    let mut scopes = if config.scopes.is_empty() { manager.select_initial_scopes(&[]).await } else { config.scopes.clone() };
    if let Some(before) = &before {
        scopes.extend(before.credentials.granted_scopes.iter().cloned());
    }
    scopes.extend(more.iter().filter(|s| scope_is_valid(s)).cloned());
    let mut seen = std::collections::BTreeSet::new();
    scopes.retain(|s| seen.insert(s.clone()));
    scopes.truncate(MAX_SCOPES);
    let mut request = AuthorizationRequest::new(&sign_ins.redirect_uri).with_client_name("lattice").with_application_type("web");
    // A client registered for this person before, at the same authorization
    // server, is theirs again (not one more registration per sign-in).
    let registered = before.filter(|b| {
        let kept = &b.credentials;
        kept.issuer.is_some() && kept.issuer == metadata.issuer && !kept.client_id.starts_with("https://")
    });
    // Only a client registered dynamically has its secret kept with the sign-in.
    let mut client_secret = None;
    if let Some(client_id) = &config.client_id {
        request = request.with_preregistered_client(client_id.clone());
        if let Some(secret) = config.client_secret()? {
            request = request.with_client_secret(secret);
        }
    } else if let Some(document) = sign_ins.client_metadata_url.as_ref().filter(|_| takes_metadata_documents(&metadata)) {
        request = request.with_client_metadata_url(document.clone());
    } else if let Some(registered) = registered {
        request = request.with_preregistered_client(registered.credentials.client_id);
        client_secret = registered.client_secret;
    } else {
        // Registered here, not by the session: the session keeps no secret
        // the authorization server gives, and a server that gives one wants
        // it back at its token endpoint. rmcp registers as the kind of
        // client last configured (SEP-837): a web application.
        manager
            .configure_client(OAuthClientConfig::new("lattice", &sign_ins.redirect_uri).with_application_type("web"))
            .map_err(|e| oauth_error(&e))?;
        let asked: Vec<&str> = scopes.iter().map(String::as_str).collect();
        let client = manager.register_client("lattice", &sign_ins.redirect_uri, &asked).await.map_err(|e| oauth_error(&e))?;
        request = request.with_preregistered_client(client.client_id);
        client_secret = client.client_secret;
    }
    if let Some(secret) = &client_secret {
        request = request.with_client_secret(secret.clone());
    }
    if !scopes.is_empty() {
        request = request.with_scopes(scopes);
    }
    let session = AuthorizationSession::new(manager, request).await.map_err(|(_, e)| oauth_error(&e))?;
    let (client_id, _) = session.get_credentials().await.map_err(|e| oauth_error(&e))?;
    let (csrf, state) = states.0.lock().await.drain().next().ok_or_else(|| CallError::SignIn("the sign-in kept no state".into()))?;
    let scopes = state.requested_scopes.clone();
    let begun = Begun { state, client_id, scopes, metadata, challenge, client_secret };
    let value = serde_json::to_string(&begun).map_err(|e| CallError::SignIn(e.to_string()))?;
    let address = session.get_authorization_url().to_owned();
    // Checked before anything is kept: a server names its authorization
    // server, and a hostile one could send the person anywhere.
    person_may_open(&address, allow_internal)?;
    sign_ins.keeper.begin(&csrf, owner, server, &value).await.map_err(CallError::SignIn)?;
    Ok(address)
}

/// The longest address a person is sent to for a sign-in.
const MAX_ADDRESS_BYTES: usize = 8192;

/// Whether the person's browser may be sent to `address`: an https page
/// of the web (http too for a server allowed on internal addresses, as in
/// a test bed), never `javascript:`, `data:` or a page with credentials in
/// it, and of a bounded length.
fn person_may_open(address: &str, allow_internal: bool) -> Result<(), CallError> {
    let refused = |why: &str| Err(CallError::SignIn(format!("the server's authorization server is not a place to send a person: {why}")));
    if address.len() > MAX_ADDRESS_BYTES {
        return refused("its address is too long");
    }
    let Ok(parsed) = url::Url::parse(address) else { return refused("its address does not parse") };
    match parsed.scheme() {
        "https" => {}
        "http" if allow_internal => {}
        other => return refused(&format!("{other}: is not https")),
    }
    if parsed.host().is_none() || !parsed.username().is_empty() || parsed.password().is_some() {
        return refused("no host, or credentials in the address");
    }
    Ok(())
}

/// Whether an authorization server takes a Client ID Metadata Document's
/// address as a client's id.
fn takes_metadata_documents(metadata: &AuthorizationMetadata) -> bool {
    metadata.additional_fields.get("client_id_metadata_document_supported").and_then(serde_json::Value::as_bool).unwrap_or(false)
}

/// lattice as the authorization server knows it: a web application, with
/// the secret of its table where it is the table's client, else the secret
/// it was given when it registered (`registered`), if any.
fn client(
    config: &SignInConfig,
    client_id: String,
    registered: Option<String>,
    scopes: Vec<String>,
    redirect_uri: &str,
) -> Result<OAuthClientConfig, CallError> {
    let secret = if config.client_id.as_deref() == Some(client_id.as_str()) { config.client_secret()? } else { registered };
    let mut client = OAuthClientConfig::new(client_id, redirect_uri).with_scopes(scopes).with_application_type("web");
    if let Some(secret) = secret {
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
    let found = manager.resolve_metadata_from_challenge(begun.challenge.as_deref()).await.map_err(|e| oauth_error(&e))?.metadata;
    if found.issuer != begun.metadata.issuer || found.token_endpoint != begun.metadata.token_endpoint {
        return Err(CallError::SignIn(format!("{server} names another authorization server than when the sign-in began")));
    }
    manager.set_metadata(found);
    let client = client(config, begun.client_id, begun.client_secret.clone(), begun.scopes, &sign_ins.redirect_uri)?;
    manager.configure_client(client).map_err(|e| oauth_error(&e))?;
    let states = OneState::default();
    states.0.lock().await.insert(state.to_owned(), begun.state);
    manager.set_state_store(states);
    manager.set_credential_store(KeptCredentials {
        keeper: sign_ins.keeper.clone(),
        owner: owner.clone(),
        server: server.to_owned(),
        client_secret: begun.client_secret,
        challenge: begun.challenge,
    });
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
    let kept = sign_ins.keeper.load(owner, server).await.map_err(CallError::SignIn)?;
    let Some(Kept { credentials, client_secret, challenge }) = kept.as_deref().and_then(Kept::read) else { return Err(needs()) };
    if credentials.token_response.is_none() {
        return Err(needs());
    }
    let mut manager = manager(url, allow_internal).await?;
    // Found as the sign-in found it: the token endpoint a refresh goes to
    // may be named only by the server's challenge.
    let found = manager.resolve_metadata_from_challenge(challenge.as_deref()).await.map_err(|e| oauth_error(&e))?.metadata;
    manager.set_metadata(found);
    let confidential = config.client_id.is_some() || client_secret.is_some();
    manager.set_credential_store(KeptCredentials {
        keeper: sign_ins.keeper.clone(),
        owner: owner.clone(),
        server: server.to_owned(),
        client_secret: client_secret.clone(),
        challenge,
    });
    match manager.initialize_from_store().await {
        // A confidential client refreshes with its secret: the table's read
        // from its file each time (rotated there, taken up here), a
        // registered one's from the sign-in.
        Ok(true) if confidential => {
            let (client_id, _) = manager.get_credentials().await.map_err(|e| oauth_error(&e))?;
            manager.configure_client(client(config, client_id, client_secret, Vec::new(), &sign_ins.redirect_uri)?).map_err(|e| oauth_error(&e))?;
            Ok(manager)
        }
        Ok(true) => Ok(manager),
        Ok(false) => Err(needs()),
        Err(e) => Err(oauth_error(&e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_person_is_sent_only_to_a_page_of_the_web() {
        assert!(person_may_open("https://as.example/authorize?client_id=lattice", false).is_ok());
        assert!(person_may_open("http://127.0.0.1:9000/authorize", true).is_ok());
        for hostile in [
            "http://as.example/authorize",
            "javascript:alert(document.cookie)",
            "data:text/html,<script>alert(1)</script>",
            "https://user:pass@as.example/authorize",
            "file:///etc/passwd",
            "not a url",
        ] {
            let refused = person_may_open(hostile, false).unwrap_err().to_string();
            assert!(refused.contains("not a place to send a person"), "{hostile}: {refused}");
        }
        assert!(person_may_open("javascript:alert(1)", true).is_err(), "internal addresses allowed is no licence for another scheme");
        assert!(person_may_open(&format!("https://as.example/?q={}", "a".repeat(MAX_ADDRESS_BYTES)), false).is_err());
    }
    use axum::http::{StatusCode, header};
    use axum::response::IntoResponse;
    use serde_json::json;

    /// A record as kept before the secret and the challenge were kept with it.
    fn credentials() -> serde_json::Value {
        json!({
            "client_id": "registered-1",
            "token_response": {"access_token": "at", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "rt", "scope": "notes:read"},
            "granted_scopes": ["notes:read"],
            "token_received_at": 1_700_000_000u64,
            "issuer": "https://as.example",
        })
    }

    #[test]
    fn a_record_kept_before_reads_and_a_new_one_keeps_the_secret_and_the_challenge() {
        let old = Kept::read(&credentials().to_string()).expect("an older record reads");
        assert_eq!(old.credentials.client_id, "registered-1");
        assert!(old.credentials.token_response.is_some());
        assert_eq!((old.client_secret, old.challenge), (None, None));

        let kept = Kept {
            client_secret: Some("s3cret".into()),
            challenge: Some(r#"Bearer resource_metadata="https://mcp.example/custom.json""#.into()),
            ..old
        };
        let json = serde_json::to_value(&kept).unwrap();
        assert_eq!(json["client_id"], "registered-1", "rmcp's credentials stay at the top level: {json}");
        assert_eq!(json["token_response"]["refresh_token"], "rt");
        let again = Kept::read(&json.to_string()).expect("it reads back");
        assert_eq!(again.client_secret.as_deref(), Some("s3cret"));
        assert!(again.challenge.as_deref().is_some_and(|c| c.contains("custom.json")));
        assert_eq!(again.credentials.granted_scopes, ["notes:read"]);
        assert_eq!(again.credentials.token_received_at, Some(1_700_000_000));

        let without = serde_json::to_value(Kept { client_secret: None, challenge: None, ..again }).unwrap();
        assert!(without.get("client_secret").is_none() && without.get("challenge").is_none(), "{without}");
    }

    #[test]
    fn a_sign_in_begun_before_reads() {
        let begun = json!({
            "state": {"pkce_verifier": "v", "csrf_token": "c", "created_at": 1},
            "client_id": "registered-1",
            "scopes": ["notes:read"],
            "metadata": {"authorization_endpoint": "https://as.example/authorize", "token_endpoint": "https://as.example/token"},
        });
        let begun: Begun = serde_json::from_value(begun).expect("a sign-in begun before reads");
        assert_eq!((begun.challenge, begun.client_secret), (None, None));
    }

    /// A server that answers a POST as `post` does and a GET 405: where only
    /// POSTs are protected.
    async fn server(post: axum::response::Response) -> String {
        let post = std::sync::Arc::new(std::sync::Mutex::new(Some(post)));
        let app = axum::Router::new().route(
            "/mcp",
            axum::routing::post(move |body: String| {
                let post = post.clone();
                async move {
                    assert!(body.contains("\"initialize\""), "{body}");
                    post.lock().unwrap().take().expect("one POST")
                }
            })
            .get(|| async { StatusCode::METHOD_NOT_ALLOWED }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        url
    }

    #[tokio::test]
    async fn the_challenge_is_read_from_a_posts_401() {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).no_proxy().build().unwrap();
        let bound = Duration::from_secs(5);

        let unauthorized = (
            StatusCode::UNAUTHORIZED,
            [
                (header::WWW_AUTHENTICATE, r#"Basic realm="mcp""#),
                (header::WWW_AUTHENTICATE, r#"Bearer scope="mcp:basic""#),
                (header::WWW_AUTHENTICATE, r#"Bearer resource_metadata="/custom/metadata/location.json", scope="mcp:basic""#),
            ],
        );
        let url = server(unauthorized.into_response()).await;
        let found = challenge(&http, &url, bound).await.expect("the 401's challenge");
        assert!(found.contains("resource_metadata") && found.contains("mcp:basic"), "the one naming the metadata: {found}");

        let scope_only = (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, r#"Bearer scope="notes:read""#)]);
        let url = server(scope_only.into_response()).await;
        assert_eq!(challenge(&http, &url, bound).await.as_deref(), Some(r#"Bearer scope="notes:read""#));

        let long = format!(r#"Bearer scope="{}""#, "a".repeat(MAX_CHALLENGE_BYTES));
        let url = server((StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, long)]).into_response()).await;
        assert_eq!(challenge(&http, &url, bound).await, None, "a challenge longer than its bound is not taken up");

        let url = server((StatusCode::OK, "{}").into_response()).await;
        assert_eq!(challenge(&http, &url, bound).await, None, "a server that takes the POST challenges nothing");

        assert_eq!(challenge(&http, "http://127.0.0.1:9/mcp", bound).await, None, "no server: discovery says so");
    }
}

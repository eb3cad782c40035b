//! A fake OpenID Connect provider for these tests: discovery, a JWK set and
//! a token endpoint (which checks the client's secret and the PKCE
//! verifier) served on 127.0.0.1, and the keys to sign its tokens with.
//! Tokens are minted by the test itself, by the same clock the relying
//! party reads.

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use jsonwebtoken::jwk::{Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, EncodingKey};
use lattice_core::clock::{Clock, ManualClock};
use lattice_core::{Error, SharedClock};
use lattice_identity::{ProviderConfig, Providers, ProvidersOptions};
use serde_json::{Value, json};
use sha2::Digest;

pub const CLIENT_ID: &str = "lattice";
pub const CLIENT_SECRET: &str = "s3cret-of-the-client";
pub const MCP_RESOURCE: &str = "http://127.0.0.1:8080/mcp";
pub const REDIRECT_URI: &str = "http://127.0.0.1:8080/v1/auth/oidc/corp/callback";

/// A signing key with its JWK (kid set, `use: sig`).
#[derive(Clone)]
pub struct TestKey {
    pub kid: String,
    pub alg: Algorithm,
    encoding: EncodingKey,
    pub jwk: Value,
}

fn der(pem: &str) -> Vec<u8> {
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    STANDARD.decode(body).expect("a PEM test key")
}

impl TestKey {
    fn new(kid: &str, alg: Algorithm, encoding: EncodingKey) -> Self {
        let mut jwk = Jwk::from_encoding_key(&encoding, alg).expect("a JWK of the test key");
        jwk.common.key_id = Some(kid.to_owned());
        jwk.common.public_key_use = Some(PublicKeyUse::Signature);
        let jwk = serde_json::to_value(jwk).expect("a JWK as JSON");
        Self { kid: kid.to_owned(), alg, encoding, jwk }
    }

    pub fn rsa_a() -> Self {
        Self::new("a", Algorithm::RS256, EncodingKey::from_rsa_der(&der(include_str!("keys/rsa_a.pem"))))
    }

    pub fn rsa_b() -> Self {
        Self::new("b", Algorithm::RS256, EncodingKey::from_rsa_der(&der(include_str!("keys/rsa_b.pem"))))
    }

    pub fn rsa_1024() -> Self {
        Self::new("short", Algorithm::RS256, EncodingKey::from_rsa_der(&der(include_str!("keys/rsa_1024.pem"))))
    }

    pub fn ec() -> Self {
        Self::new("ec", Algorithm::ES256, EncodingKey::from_ec_der(&der(include_str!("keys/ec_p256.pem"))))
    }

    pub fn ed() -> Self {
        Self::new("ed", Algorithm::EdDSA, EncodingKey::from_ed_der(&der(include_str!("keys/ed25519.pem"))))
    }

    /// The same key under another kid or algorithm (RS256 → PS256).
    pub fn with(&self, kid: &str, alg: Algorithm) -> Self {
        let mut key = self.clone();
        key.kid = kid.to_owned();
        key.alg = alg;
        key.jwk["kid"] = json!(kid);
        key
    }

    /// The header this key signs with by default.
    pub fn header(&self) -> Value {
        json!({"alg": format!("{:?}", self.alg), "kid": self.kid, "typ": "JWT"})
    }

    pub fn sign(&self, claims: &Value) -> String {
        self.sign_with(&self.header(), claims)
    }

    /// Signs `claims` under any header (the signature by this key's alg).
    pub fn sign_with(&self, header: &Value, claims: &Value) -> String {
        let message = format!("{}.{}", b64(header), b64(claims));
        let signature = jsonwebtoken::crypto::sign(message.as_bytes(), &self.encoding, self.alg).expect("signing with a test key");
        format!("{message}.{signature}")
    }
}

pub fn b64(value: &Value) -> String {
    URL_SAFE_NO_PAD.encode(value.to_string())
}

/// A token under `header` whose signature is `signature` verbatim: what an
/// attacker sends (`alg: none`, an HMAC keyed by public bytes, a made-up kid).
pub fn forged(header: &Value, claims: &Value, signature: &str) -> String {
    format!("{}.{}.{signature}", b64(header), b64(claims))
}

/// An HS256 token keyed by `secret`.
pub fn hmac(header: &Value, claims: &Value, secret: &[u8]) -> String {
    let message = format!("{}.{}", b64(header), b64(claims));
    let key = EncodingKey::from_secret(secret).expect("an HMAC key");
    let signature = jsonwebtoken::crypto::sign(message.as_bytes(), &key, Algorithm::HS256).expect("HMAC signing");
    format!("{message}.{signature}")
}

/// What discovery answers.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Discovery {
    Normal,
    Fails,
    Redirects,
    Huge,
    WrongIssuer,
}

struct Grant {
    claims: Value,
    challenge: String,
    redirect_uri: String,
}

struct Shared {
    issuer: String,
    jwks: Mutex<Value>,
    /// Added to each key set answer, so that callers overlap.
    jwks_delay: Mutex<Duration>,
    discovery: Mutex<Discovery>,
    end_session: Mutex<bool>,
    /// Whether the token endpoint takes the client's secret in the body
    /// only (`client_secret_post`), as discovery then says.
    secret_in_body: Mutex<bool>,
    discovery_reads: AtomicU64,
    signer: Mutex<TestKey>,
    grants: Mutex<HashMap<String, Grant>>,
    next_code: AtomicU64,
}

pub struct Idp {
    pub issuer: String,
    pub clock: Arc<ManualClock>,
    shared: Arc<Shared>,
    server: tokio::task::JoinHandle<()>,
    /// The client secret's file, as an operator would write it.
    secret: TempFile,
}

impl Drop for Idp {
    fn drop(&mut self) {
        self.server.abort();
    }
}

static FILES: AtomicU64 = AtomicU64::new(0);

/// A file in the system's temporary directory, removed when dropped.
pub struct TempFile(std::path::PathBuf);

impl TempFile {
    pub fn path(&self) -> std::path::PathBuf {
        self.0.clone()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A temporary file holding `text`.
pub fn temp_file(text: &str) -> TempFile {
    let path = std::env::temp_dir().join(format!("lattice-identity-it-{}-{}", std::process::id(), FILES.fetch_add(1, Ordering::SeqCst)));
    std::fs::write(&path, text).expect("a temporary file");
    TempFile(path)
}

impl Idp {
    /// A provider publishing `keys`, signing ID tokens with the first.
    pub async fn start(keys: &[TestKey]) -> Idp {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port on 127.0.0.1");
        let addr: SocketAddr = listener.local_addr().expect("the bound address");
        let issuer = format!("http://{addr}");
        let shared = Arc::new(Shared {
            issuer: issuer.clone(),
            jwks: Mutex::new(json!({"keys": keys.iter().map(|k| k.jwk.clone()).collect::<Vec<_>>()})),
            jwks_delay: Mutex::new(Duration::ZERO),
            discovery: Mutex::new(Discovery::Normal),
            end_session: Mutex::new(true),
            secret_in_body: Mutex::new(false),
            discovery_reads: AtomicU64::new(0),
            signer: Mutex::new(keys[0].clone()),
            grants: Mutex::new(HashMap::new()),
            next_code: AtomicU64::new(1),
        });
        let app = Router::new()
            .route("/.well-known/openid-configuration", get(discovery))
            .route("/jwks", get(jwks))
            .route("/token", post(token))
            .with_state(shared.clone());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Idp { issuer, clock: ManualClock::new(), shared, server, secret: temp_file(&format!("  {CLIENT_SECRET}\n")) }
    }

    /// `text` with this provider's port written `PORT`, for snapshots.
    pub fn unport(&self, text: &str) -> String {
        let port = self.issuer.rsplit(':').next().unwrap_or_default();
        text.replace(&format!(":{port}"), ":PORT")
    }

    pub fn clock(&self) -> SharedClock {
        self.clock.clone()
    }

    pub fn now(&self) -> i64 {
        self.clock.now_secs()
    }

    pub fn advance(&self, secs: u64) {
        self.clock.advance(Duration::from_secs(secs));
    }

    pub fn publish(&self, keys: &[TestKey]) {
        *self.shared.jwks.lock().unwrap() = json!({"keys": keys.iter().map(|k| k.jwk.clone()).collect::<Vec<_>>()});
    }

    pub fn publish_raw(&self, jwks: Value) {
        *self.shared.jwks.lock().unwrap() = jwks;
    }

    pub fn delay_jwks(&self, delay: Duration) {
        *self.shared.jwks_delay.lock().unwrap() = delay;
    }

    pub fn discovery(&self, mode: Discovery) {
        *self.shared.discovery.lock().unwrap() = mode;
    }

    pub fn end_session(&self, on: bool) {
        *self.shared.end_session.lock().unwrap() = on;
    }

    pub fn secret_in_body(&self, on: bool) {
        *self.shared.secret_in_body.lock().unwrap() = on;
    }

    pub fn discovery_reads(&self) -> u64 {
        self.shared.discovery_reads.load(Ordering::SeqCst)
    }

    pub fn sign_id_tokens_with(&self, key: &TestKey) {
        *self.shared.signer.lock().unwrap() = key.clone();
    }

    /// The configuration of provider `corp` for this issuer: tenant `acme`,
    /// group `admins` gives tenant_admin, the client secret in a file.
    pub fn config(&self) -> ProviderConfig {
        let mut config = ProviderConfig::new(&self.issuer, CLIENT_ID);
        config.client_secret_file = Some(self.secret.path());
        config.tenant = Some("acme".into());
        config.roles = BTreeMap::from([("admins".to_owned(), "tenant_admin".to_owned())]);
        config
    }

    pub fn options(&self) -> ProvidersOptions {
        ProvidersOptions { allow_http: true, mcp_audience: Some(MCP_RESOURCE.into()), clock: self.clock(), timeout: Duration::from_secs(5) }
    }

    /// Providers of one provider, `corp`, configured by `config`.
    pub fn providers_with(&self, config: ProviderConfig) -> Providers {
        Providers::new(&BTreeMap::from([("corp".to_owned(), config)]), self.options()).expect("the test configuration checks")
    }

    pub fn providers(&self) -> Providers {
        self.providers_with(self.config())
    }

    /// Claims of a token for lattice's client, issued now for five minutes.
    pub fn claims(&self, user: &str) -> Value {
        let now = self.now();
        json!({
            "iss": self.issuer,
            "aud": CLIENT_ID,
            "sub": format!("sub-{user}"),
            "preferred_username": user,
            "iat": now,
            "exp": now + 300,
        })
    }

    /// The person approves the sign-in at `authorize_url`: the provider
    /// keeps what the code stands for (the ID token's claims, `claims` with
    /// the request's nonce added) and returns the code.
    pub fn approve(&self, authorize_url: &str, mut claims: Value) -> String {
        let url = url::Url::parse(authorize_url).expect("an authorize URL");
        let query: HashMap<String, String> = url.query_pairs().into_owned().collect();
        if let Some(nonce) = query.get("nonce")
            && claims.get("nonce").is_none()
        {
            claims["nonce"] = json!(nonce);
        }
        let code = format!("code-{}", self.shared.next_code.fetch_add(1, Ordering::SeqCst));
        let grant = Grant { claims, challenge: query["code_challenge"].clone(), redirect_uri: query["redirect_uri"].clone() };
        self.shared.grants.lock().unwrap().insert(code.clone(), grant);
        code
    }
}

async fn discovery(State(shared): State<Arc<Shared>>) -> Response {
    shared.discovery_reads.fetch_add(1, Ordering::SeqCst);
    let issuer = &shared.issuer;
    let mode = *shared.discovery.lock().unwrap();
    let mut doc = json!({
        "issuer": if mode == Discovery::WrongIssuer { format!("{issuer}/other") } else { issuer.clone() },
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "jwks_uri": format!("{issuer}/jwks"),
        "response_types_supported": ["code"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256", "ES256", "EdDSA"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_jwt", "client_secret_post", "private_key_jwt", "none"],
        "code_challenge_methods_supported": ["S256"],
        // What a real provider (oidc-provider 9) says besides: read past.
        "userinfo_endpoint": format!("{issuer}/me"),
        "revocation_endpoint": format!("{issuer}/token/revocation"),
        "introspection_endpoint": format!("{issuer}/token/introspection"),
        "pushed_authorization_request_endpoint": format!("{issuer}/request"),
        "grant_types_supported": ["implicit", "authorization_code", "refresh_token", "client_credentials", "urn:ietf:params:oauth:grant-type:device_code"],
        "response_modes_supported": ["form_post", "fragment", "query", "web_message", "jwt"],
        "claims_supported": ["sub", "email", "email_verified", "groups", "preferred_username", "sid", "auth_time", "iss"],
        "claim_types_supported": ["normal"],
        "scopes_supported": ["openid", "offline_access", "profile", "email"],
        "request_object_signing_alg_values_supported": ["HS256", "RS256", "PS256", "ES256", "EdDSA"],
        "dpop_signing_alg_values_supported": ["ES256", "EdDSA"],
        "authorization_response_iss_parameter_supported": true,
        "backchannel_logout_supported": true,
        "backchannel_logout_session_supported": true,
        "claims_parameter_supported": false,
        "request_parameter_supported": false,
        "require_pushed_authorization_requests": false,
    });
    if *shared.end_session.lock().unwrap() {
        doc["end_session_endpoint"] = json!(format!("{issuer}/session/end"));
    }
    if *shared.secret_in_body.lock().unwrap() {
        doc["token_endpoint_auth_methods_supported"] = json!(["client_secret_post", "private_key_jwt"]);
    }
    match mode {
        Discovery::Fails => (StatusCode::INTERNAL_SERVER_ERROR, "down").into_response(),
        Discovery::Redirects => (StatusCode::FOUND, [(header::LOCATION, format!("{issuer}/elsewhere"))]).into_response(),
        Discovery::Huge => {
            doc["padding"] = json!("x".repeat(300 * 1024));
            axum::Json(doc).into_response()
        }
        Discovery::Normal | Discovery::WrongIssuer => axum::Json(doc).into_response(),
    }
}

async fn jwks(State(shared): State<Arc<Shared>>) -> Response {
    let delay = *shared.jwks_delay.lock().unwrap();
    // A stub provider slow on purpose: the client's timeout runs on real time.
    tokio::time::sleep(delay).await;
    let body = shared.jwks.lock().unwrap().clone();
    axum::Json(body).into_response()
}

fn token_error(status: StatusCode, error: &str) -> Response {
    (status, axum::Json(json!({"error": error}))).into_response()
}

async fn token(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: String) -> Response {
    let form: HashMap<String, String> = url::form_urlencoded::parse(body.as_bytes()).into_owned().collect();
    let basic = format!("Basic {}", STANDARD.encode(format!("{CLIENT_ID}:{CLIENT_SECRET}")));
    let authorization = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok());
    let authenticated = if *shared.secret_in_body.lock().unwrap() {
        authorization.is_none()
            && form.get("client_id").map(String::as_str) == Some(CLIENT_ID)
            && form.get("client_secret").map(String::as_str) == Some(CLIENT_SECRET)
    } else {
        authorization == Some(basic.as_str()) && !form.contains_key("client_secret")
    };
    if !authenticated {
        return token_error(StatusCode::UNAUTHORIZED, "invalid_client");
    }
    if form.get("grant_type").map(String::as_str) != Some("authorization_code") {
        return token_error(StatusCode::BAD_REQUEST, "unsupported_grant_type");
    }
    let Some(grant) = form.get("code").and_then(|code| shared.grants.lock().unwrap().remove(code)) else {
        return token_error(StatusCode::BAD_REQUEST, "invalid_grant");
    };
    let verifier = form.get("code_verifier").cloned().unwrap_or_default();
    let challenge = URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier.as_bytes()));
    if challenge != grant.challenge || form.get("redirect_uri") != Some(&grant.redirect_uri) {
        return token_error(StatusCode::BAD_REQUEST, "invalid_grant");
    }
    let signer = shared.signer.lock().unwrap().clone();
    let id_token = signer.sign(&grant.claims);
    axum::Json(json!({"access_token": "opaque-access-token", "token_type": "Bearer", "expires_in": 300, "id_token": id_token})).into_response()
}

/// The reason of an `Unauthorized`, or the whole error otherwise.
pub fn reason<T: std::fmt::Debug>(result: Result<T, Error>) -> String {
    match result {
        Err(Error::Unauthorized { reason, .. }) => reason,
        Err(other) => format!("{}: {other}", other.type_name()),
        Ok(value) => format!("accepted: {value:?}"),
    }
}

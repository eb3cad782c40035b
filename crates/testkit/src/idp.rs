//! A real OpenID provider for tests: oidc-provider (npm, OpenID Certified),
//! run by `e2e/idp/provider.mjs` on a free loopback port with the clients,
//! accounts and resources a test gives it. A test signs people in through the
//! provider's own login and consent pages over HTTP ([`Agent`]), signs them
//! out there (which makes the provider send back-channel logout), and forges
//! tokens with the provider's own key for hostile tests ([`Idp::forge`]).
//! The provider's node modules come from `npm ci` in `e2e/` (`cargo xtask
//! test` runs it); without them, starting fails and says so.

use crate::node_script::{self, Started, lock};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use jsonwebtoken::{Algorithm, EncodingKey};
use reqwest::Url;
use serde_json::{Map, Value, json};

/// The kind of key the provider signs ID tokens, access tokens and logout
/// tokens with. RS256 is what most company providers use; an EC key is
/// made faster.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KeyAlg {
    #[default]
    Rs256,
    Es256,
}

impl KeyAlg {
    fn name(self) -> &'static str {
        match self {
            Self::Rs256 => "RS256",
            Self::Es256 => "ES256",
        }
    }

    fn algorithm(self) -> Algorithm {
        match self {
            Self::Rs256 => Algorithm::RS256,
            Self::Es256 => Algorithm::ES256,
        }
    }
}

/// What the provider knows when it starts.
#[derive(Clone, Debug, Default)]
pub struct IdpSetup {
    port: u16,
    key: KeyAlg,
    clients: Vec<Value>,
    accounts: Vec<Value>,
    resources: Vec<Value>,
    ttl: Map<String, Value>,
    claims_in_userinfo_only: bool,
}

impl IdpSetup {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn client(mut self, client: Client) -> Self {
        self.clients.push(Value::Object(client.0));
        self
    }

    pub fn account(mut self, account: Account) -> Self {
        self.accounts.push(json!({"id": account.id, "password": account.password, "claims": account.claims}));
        self
    }

    pub fn resource(mut self, resource: Resource) -> Self {
        self.resources.push(Value::Object(resource.0));
        self
    }

    /// A lifetime in seconds, by oidc-provider's name for the artifact:
    /// `AccessToken`, `IdToken`, `AuthorizationCode`, `RefreshToken`,
    /// `Session`, `Interaction`, `Grant`.
    pub fn ttl(mut self, artifact: &str, seconds: u64) -> Self {
        self.ttl.insert(artifact.to_owned(), seconds.into());
        self
    }

    pub fn key(mut self, key: KeyAlg) -> Self {
        self.key = key;
        self
    }

    /// A fixed port instead of a free one.
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Profile, email and group claims only from the userinfo endpoint, as
    /// OIDC Core says for the code flow; by default the ID token carries
    /// them too, as most company providers do.
    pub fn claims_in_userinfo_only(mut self) -> Self {
        self.claims_in_userinfo_only = true;
        self
    }
}

/// A client (a relying party such as lattice) registered with the provider,
/// in the metadata names of OIDC Dynamic Client Registration.
#[derive(Clone, Debug)]
pub struct Client(Map<String, Value>);

impl Client {
    /// A confidential client: code flow (PKCE always), refresh tokens, the
    /// secret in a Basic header or the form.
    pub fn confidential(id: &str, secret: &str) -> Self {
        let metadata = json!({
            "client_id": id, "client_secret": secret,
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
            "token_endpoint_auth_method": "client_secret_basic",
            "redirect_uris": [], "post_logout_redirect_uris": [],
        });
        let Value::Object(metadata) = metadata else { unreachable!("an object") };
        Self(metadata)
    }

    pub fn redirect_uri(self, uri: &str) -> Self {
        self.push("redirect_uris", uri)
    }

    pub fn post_logout_redirect_uri(self, uri: &str) -> Self {
        self.push("post_logout_redirect_uris", uri)
    }

    /// Where the provider posts logout tokens; the client's ID tokens then
    /// carry `sid` (`backchannel_logout_session_required`).
    pub fn backchannel_logout_uri(self, uri: &str) -> Self {
        self.metadata("backchannel_logout_uri", uri.into()).metadata("backchannel_logout_session_required", true.into())
    }

    /// Any other client metadata (`token_endpoint_auth_method`,
    /// `id_token_signed_response_alg`, …).
    pub fn metadata(mut self, name: &str, value: Value) -> Self {
        self.0.insert(name.to_owned(), value);
        self
    }

    fn push(mut self, list: &str, uri: &str) -> Self {
        if let Some(Value::Array(uris)) = self.0.get_mut(list) {
            uris.push(uri.into());
        }
        self
    }
}

/// A person who can sign in at the provider, and the claims it says of them.
#[derive(Clone, Debug)]
pub struct Account {
    id: String,
    password: String,
    claims: Map<String, Value>,
}

impl Account {
    /// The id is the `sub` and, until [`Account::username`], the
    /// `preferred_username`.
    pub fn new(id: &str, password: &str) -> Self {
        let mut claims = Map::new();
        claims.insert("preferred_username".into(), id.into());
        Self { id: id.to_owned(), password: password.to_owned(), claims }
    }

    pub fn username(self, username: &str) -> Self {
        self.claim("preferred_username", username.into())
    }

    pub fn name(self, name: &str) -> Self {
        self.claim("name", name.into())
    }

    /// A verified email (`email_verified` true until a test says otherwise).
    pub fn email(self, email: &str) -> Self {
        self.claim("email", email.into()).claim("email_verified", true.into())
    }

    pub fn groups(self, groups: &[&str]) -> Self {
        self.claim("groups", groups.iter().map(|g| Value::from(*g)).collect())
    }

    pub fn tenant(self, tenant: &str) -> Self {
        self.claim("tenant", tenant.into())
    }

    /// Any claim; one beyond the standard ones comes with the `openid`
    /// scope, so it is in every ID token.
    pub fn claim(mut self, name: &str, value: Value) -> Self {
        self.claims.insert(name.to_owned(), value);
        self
    }
}

/// A protected resource (RFC 8707) for which the provider issues JWT access
/// tokens, e.g. lattice's MCP endpoint `http://127.0.0.1:PORT/mcp`.
#[derive(Clone, Debug)]
pub struct Resource(Map<String, Value>);

impl Resource {
    /// The indicator is the tokens' `aud` unless [`Resource::audience`]
    /// says otherwise.
    pub fn new(indicator: &str) -> Self {
        let mut resource = Map::new();
        resource.insert("indicator".into(), indicator.into());
        resource.insert("scopes".into(), Value::Array(Vec::new()));
        Self(resource)
    }

    pub fn scopes(mut self, scopes: &[&str]) -> Self {
        self.0.insert("scopes".into(), scopes.iter().map(|s| Value::from(*s)).collect());
        self
    }

    pub fn audience(mut self, audience: &str) -> Self {
        self.0.insert("audience".into(), audience.into());
        self
    }

    pub fn access_token_ttl(mut self, seconds: u64) -> Self {
        self.0.insert("accessTokenTTL".into(), seconds.into());
        self
    }
}

/// A running provider; stopped when dropped.
pub struct Idp {
    issuer: String,
    key: EncodingKey,
    alg: Algorithm,
    kid: String,
    public_jwk: Value,
    public_pem: String,
    browser: Agent,
    log: Arc<Mutex<String>>,
    config: PathBuf,
    child: tokio::process::Child,
}

impl Idp {
    /// Makes a signing key, writes the provider's configuration to a temp
    /// file and starts `node e2e/idp/provider.mjs` on it, returning once it
    /// says it is ready (about half a second).
    pub async fn start(setup: IdpSetup) -> Idp {
        let root = node_script::repository();
        let modules = root.join("e2e/node_modules/oidc-provider");
        assert!(
            modules.join("package.json").exists(),
            "oidc-provider is not installed in {}: run `npm ci` in e2e/ (`cargo xtask test` does)",
            modules.display()
        );
        let key = new_key(&root, setup.key).await;
        let config = std::env::temp_dir().join(format!("lattice-idp-{}.json", ulid::Ulid::generate()));
        let document = json!({
            "port": setup.port, "keys": {"keys": [key.jwk]}, "clients": setup.clients, "accounts": setup.accounts,
            "resources": setup.resources, "ttl": setup.ttl, "conformIdTokenClaims": setup.claims_in_userinfo_only,
        });
        std::fs::write(&config, document.to_string()).unwrap_or_else(|e| panic!("writing {}: {e}", config.display()));

        let Started { child, log, address: issuer } =
            node_script::start("e2e/idp/provider.mjs", &config, "the OpenID provider", "is `npm ci` done in e2e/?").await;
        let browser = Agent::new(&issuer);
        Idp {
            issuer,
            key: key.encoding,
            alg: setup.key.algorithm(),
            kid: key.kid,
            public_jwk: key.public_jwk,
            public_pem: key.public_pem,
            browser,
            log,
            config,
            child,
        }
    }

    /// `http://127.0.0.1:PORT`, exactly as the provider's tokens and
    /// discovery document spell it.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// Where a person's browser goes to sign out (RP-initiated logout),
    /// with `id_token_hint`, `post_logout_redirect_uri`, `state` as the
    /// client wants.
    pub fn end_session_endpoint(&self) -> String {
        format!("{}/session/end", self.issuer)
    }

    /// The public half of the signing key, as the provider's JWKS has it.
    pub fn public_jwk(&self) -> &Value {
        &self.public_jwk
    }

    /// The public key as PEM (SPKI): the secret of the classic
    /// algorithm-confusion attack ([`Idp::forge_with_secret`]).
    pub fn public_key_pem(&self) -> &str {
        &self.public_pem
    }

    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// The provider's own signing key.
    pub fn encoding_key(&self) -> &EncodingKey {
        &self.key
    }

    pub fn algorithm(&self) -> Algorithm {
        self.alg
    }

    /// Claims a token of this provider would have (`iss`, `sub`, `aud`,
    /// `iat`, `exp` in five minutes, `jti`), for a test to change.
    pub fn claims(&self, sub: &str, aud: &str) -> Value {
        let now = jsonwebtoken::get_current_timestamp();
        json!({"iss": self.issuer, "sub": sub, "aud": aud, "iat": now, "exp": now + 300, "jti": ulid::Ulid::generate().to_string()})
    }

    /// A token signed with the provider's key: the header is `alg`, `typ:
    /// JWT` and the provider's `kid`, then `header`'s members (null
    /// removes one). It is signed with the header's `alg`, so `{"alg":
    /// "RS512"}` signs RS512 with the same RSA key.
    pub fn forge(&self, header: Value, claims: Value) -> String {
        let header = merged(json!({"alg": algorithm_name(self.alg), "typ": "JWT", "kid": self.kid}), header);
        let alg = header["alg"].as_str().and_then(|a| a.parse().ok()).unwrap_or(self.alg);
        sign(&header, &claims, &self.key, alg)
    }

    /// A token signed with an HMAC `secret` (HS256, or the header's HS384 or
    /// HS512), with the provider's `kid` unless `header` says otherwise.
    pub fn forge_with_secret(&self, secret: &[u8], header: Value, claims: Value) -> String {
        let header = merged(json!({"alg": "HS256", "typ": "JWT", "kid": self.kid}), header);
        let alg = header["alg"].as_str().and_then(|a| a.parse().ok()).unwrap_or(Algorithm::HS256);
        let key = EncodingKey::from_secret(secret).unwrap_or_else(|e| panic!("an HMAC key: {e}"));
        sign(&header, &claims, &key, alg)
    }

    /// An unsigned token (`alg: none`, an empty signature).
    pub fn forge_unsigned(&self, header: Value, claims: Value) -> String {
        let header = merged(json!({"alg": "none", "typ": "JWT"}), header);
        format!("{}.{}.", URL_SAFE_NO_PAD.encode(header.to_string()), URL_SAFE_NO_PAD.encode(claims.to_string()))
    }

    /// A browser of its own (its own cookies): another person, or the same
    /// person on another device.
    pub fn agent(&self) -> Agent {
        Agent::new(&self.issuer)
    }

    /// [`Agent::sign_in`] in this provider's own browser.
    pub async fn sign_in(&self, authorize_url: &str, login: &str, password: &str) -> Result<String, String> {
        self.browser.sign_in(authorize_url, login, password).await
    }

    /// [`Agent::sign_out`] in this provider's own browser.
    pub async fn sign_out(&self, end_session_url: &str) -> Result<String, String> {
        self.browser.sign_out(end_session_url).await
    }

    /// What the provider wrote (why a request failed, back-channel errors).
    pub fn log(&self) -> String {
        lock(&self.log).clone()
    }
}

impl Drop for Idp {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        let _ = std::fs::remove_file(&self.config);
        if std::thread::panicking() {
            eprintln!("the OpenID provider's log:\n{}", self.log());
        }
    }
}

/// A browser: follows the provider's redirects, keeps its cookies (its
/// session there), fills in its forms, and stops where it would leave the
/// provider.
#[derive(Clone, Debug)]
pub struct Agent {
    http: reqwest::Client,
    issuer: Url,
}

impl Agent {
    fn new(issuer: &str) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .cookie_provider(Arc::new(reqwest::cookie::Jar::default()))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(Duration::from_secs(10))
            .build()
            .expect("an HTTP client");
        Self { http, issuer: Url::parse(issuer).expect("the issuer is a URL") }
    }

    /// The browser's HTTP client (its cookies, no redirects followed), to
    /// go elsewhere as the same person.
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// Opens `authorize_url` (the provider's authorization endpoint with a
    /// client's request), signs in as `login` with `password` on the login
    /// page and accepts on the consent page, as far as they are shown (an
    /// existing session skips them), and returns where the provider then
    /// sends the browser, unvisited: the client's `redirect_uri` with
    /// `code`, `state` and `iss`, or with `error` if the provider refused
    /// the request there. `Err` when the provider answers with a page that
    /// is not a step of sign-in (a wrong password, a bad request).
    pub async fn sign_in(&self, authorize_url: &str, login: &str, password: &str) -> Result<String, String> {
        let start = Url::parse(authorize_url).map_err(|e| format!("{authorize_url}: {e}"))?;
        let mut step = self.walk(self.http.get(start.clone()), start).await?;
        let mut password_sent = false;
        for _ in 0..5 {
            let (url, body) = match step {
                Step::Left(location) => return Ok(location),
                Step::Page { url, body } => (url, body),
            };
            let form = forms(&body).into_iter().next().ok_or_else(|| format!("{url} shows no form: {}", page_text(&body)))?;
            let mut fields = form.fields;
            if fields.iter().any(|(name, _)| name == "password") {
                if password_sent {
                    return Err(format!("the provider asked {login} to sign in again: {}", page_text(&body)));
                }
                set(&mut fields, "login", login);
                set(&mut fields, "password", password);
                password_sent = true;
            }
            let action = url.join(&form.action).map_err(|e| format!("{url}: the form's action {}: {e}", form.action))?;
            step = self.walk(self.http.post(action.clone()).form(&fields), action).await?;
        }
        Err(format!("signing in at {authorize_url} took more than five pages"))
    }

    /// Opens `end_session_url` (the provider's end_session endpoint, with
    /// what the client added) and answers "Yes, sign me out" on its
    /// confirmation page, as a person does. The provider ends its session
    /// and, before it answers, posts a logout token to the back-channel
    /// logout URI of every client the person signed in to in this browser.
    /// Returns where the provider then sends the browser: the client's
    /// `post_logout_redirect_uri` (with `state`), unvisited, or the
    /// provider's own "signed out" page.
    pub async fn sign_out(&self, end_session_url: &str) -> Result<String, String> {
        let start = Url::parse(end_session_url).map_err(|e| format!("{end_session_url}: {e}"))?;
        let (url, body) = match self.walk(self.http.get(start.clone()), start).await? {
            Step::Left(location) => return Ok(location),
            Step::Page { url, body } => (url, body),
        };
        let form = forms(&body).into_iter().next().ok_or_else(|| format!("{url} shows no form: {}", page_text(&body)))?;
        let mut fields = form.fields;
        set(&mut fields, "logout", "yes");
        let action = url.join(&form.action).map_err(|e| format!("{url}: the form's action {}: {e}", form.action))?;
        match self.walk(self.http.post(action.clone()).form(&fields), action).await? {
            Step::Left(location) => Ok(location),
            Step::Page { url, .. } => Ok(url.into()),
        }
    }

    /// Sends `request` and follows redirects while they stay at the
    /// provider.
    async fn walk(&self, mut request: reqwest::RequestBuilder, mut url: Url) -> Result<Step, String> {
        for _ in 0..10 {
            let response = request.send().await.map_err(|e| format!("{url}: {e}"))?;
            let status = response.status();
            if status.is_redirection() {
                let location = response.headers().get(reqwest::header::LOCATION).and_then(|l| l.to_str().ok());
                let location = location.ok_or_else(|| format!("{url} answered {status} without a Location"))?;
                let next = url.join(location).map_err(|e| format!("{url} sent the browser to {location}: {e}"))?;
                if next.origin() != self.issuer.origin() {
                    return Ok(Step::Left(next.into()));
                }
                request = self.http.get(next.clone());
                url = next;
                continue;
            }
            let body = response.text().await.map_err(|e| format!("{url}: {e}"))?;
            if !status.is_success() {
                return Err(format!("{url} answered {status}: {}", page_text(&body)));
            }
            return Ok(Step::Page { url, body });
        }
        Err(format!("more than ten redirects from {url}"))
    }
}

enum Step {
    /// A redirect away from the provider, not followed.
    Left(String),
    /// A page of the provider's.
    Page { url: Url, body: String },
}

struct Key {
    jwk: Value,
    public_jwk: Value,
    public_pem: String,
    kid: String,
    encoding: EncodingKey,
}

/// A new signing key, made by `e2e/idp/new-key.mjs`.
async fn new_key(root: &Path, alg: KeyAlg) -> Key {
    let out = tokio::process::Command::new("node")
        .arg(root.join("e2e/idp/new-key.mjs"))
        .arg(alg.name())
        .output()
        .await
        .unwrap_or_else(|e| panic!("running node e2e/idp/new-key.mjs (is Node.js 20 or newer installed?): {e}"));
    assert!(out.status.success(), "node e2e/idp/new-key.mjs failed: {}", String::from_utf8_lossy(&out.stderr));
    let made: Value = serde_json::from_slice(&out.stdout).expect("new-key.mjs prints JSON");
    let der = STANDARD.decode(made["der"].as_str().expect("der")).expect("der is base64");
    let encoding = match alg {
        KeyAlg::Rs256 => EncodingKey::from_rsa_der(&der),
        KeyAlg::Es256 => EncodingKey::from_ec_der(&der),
    };
    let jwk = made["jwk"].clone();
    let mut public_jwk = jwk.clone();
    if let Some(members) = public_jwk.as_object_mut() {
        for private in ["d", "p", "q", "dp", "dq", "qi"] {
            members.remove(private);
        }
    }
    Key { kid: jwk["kid"].as_str().expect("kid").to_owned(), public_pem: made["pem"].as_str().expect("pem").to_owned(), jwk, public_jwk, encoding }
}

fn sign(header: &Value, claims: &Value, key: &EncodingKey, alg: Algorithm) -> String {
    let message = format!("{}.{}", URL_SAFE_NO_PAD.encode(header.to_string()), URL_SAFE_NO_PAD.encode(claims.to_string()));
    let signature = jsonwebtoken::crypto::sign(message.as_bytes(), key, alg).unwrap_or_else(|e| panic!("signing {alg:?}: {e}"));
    format!("{message}.{signature}")
}

fn algorithm_name(alg: Algorithm) -> String {
    serde_json::to_value(alg).ok().and_then(|a| a.as_str().map(str::to_owned)).unwrap_or_default()
}

/// `base` with `overrides`' members; a null member removes one.
fn merged(mut base: Value, overrides: Value) -> Value {
    if let (Some(base), Value::Object(overrides)) = (base.as_object_mut(), overrides) {
        for (name, value) in overrides {
            if value.is_null() {
                base.remove(&name);
            } else {
                base.insert(name, value);
            }
        }
    }
    base
}

fn set(fields: &mut Vec<(String, String)>, name: &str, value: &str) {
    fields.retain(|(n, _)| n != name);
    fields.push((name.to_owned(), value.to_owned()));
}

/// A form of a page: where it posts, and its inputs' names and values.
#[derive(Debug, PartialEq)]
struct Form {
    action: String,
    fields: Vec<(String, String)>,
}

/// The forms of the provider's pages: plain markup it writes itself, so a
/// scan for `<form>` and `<input>` tags is enough.
fn forms(html: &str) -> Vec<Form> {
    let mut forms = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find("<form") {
        let form = &rest[start..];
        let end = form.find("</form>").unwrap_or(form.len());
        let inner = &form[..end];
        let fields = inner
            .match_indices("<input")
            .map(|(at, _)| attributes(&inner[at..]))
            .filter_map(|input| Some((input.get("name")?.clone(), input.get("value").cloned().unwrap_or_default())))
            .collect();
        forms.push(Form { action: attributes(inner).get("action").cloned().unwrap_or_default(), fields });
        rest = &form[end..];
    }
    forms
}

/// The attributes of the tag `html` starts with, values unescaped.
fn attributes(html: &str) -> std::collections::HashMap<String, String> {
    let mut found = std::collections::HashMap::new();
    let tag = html.trim_start_matches('<');
    let mut rest = tag.trim_start_matches(|c: char| c.is_ascii_alphanumeric());
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '/');
        if rest.is_empty() || rest.starts_with('>') {
            return found;
        }
        let name_end = rest.find(|c: char| c.is_whitespace() || "=>/".contains(c)).unwrap_or(rest.len());
        let name = rest[..name_end].to_ascii_lowercase();
        rest = &rest[name_end..];
        let mut value = String::new();
        if let Some(after) = rest.strip_prefix('=') {
            let (raw, after) = match after.chars().next() {
                Some(quote @ ('"' | '\'')) => {
                    let close = after[1..].find(quote).map_or(after.len(), |i| i + 1);
                    (&after[1..close], after.get(close + 1..).unwrap_or(""))
                }
                _ => {
                    let end = after.find(|c: char| c.is_whitespace() || c == '>').unwrap_or(after.len());
                    (&after[..end], &after[end..])
                }
            };
            value = unescape(raw);
            rest = after;
        }
        found.insert(name, value);
    }
}

fn unescape(text: &str) -> String {
    text.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&#x2F;", "/")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// A page's words, for an error message: no markup, styles or scripts.
fn page_text(html: &str) -> String {
    let mut text = String::new();
    let mut rest = html;
    while let Some(open) = rest.find('<') {
        text.push_str(&rest[..open]);
        text.push(' ');
        let tag = &rest[open..];
        let skip_to = ["<style", "<script"].iter().find(|t| tag.starts_with(*t)).map(|t| format!("</{}", &t[1..]));
        let end = match skip_to.and_then(|close| tag.find(&close)) {
            Some(close) => close + tag[close..].find('>').map_or(0, |i| i + 1),
            None => tag.find('>').map_or(tag.len(), |i| i + 1),
        };
        rest = &tag[end..];
    }
    text.push_str(rest);
    let text = unescape(&text.split_whitespace().collect::<Vec<_>>().join(" "));
    text.chars().take(400).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_of_the_provider_pages() {
        let login = r#"<div><form autocomplete="off" action="http://127.0.0.1:1/interaction/a&amp;b" method="post">
  <input type="hidden" name="prompt" value="login"/>
  <input required type="text" name="login" placeholder="Enter any login" autofocus="on">
  <input required type="password" name="password" placeholder="and password" >
  <button type="submit" class="login login-submit">Sign-in</button></form></div>"#;
        let fields = |f: &[(&str, &str)]| f.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect::<Vec<_>>();
        assert_eq!(
            forms(login),
            vec![Form {
                action: "http://127.0.0.1:1/interaction/a&b".into(),
                fields: fields(&[("prompt", "login"), ("login", ""), ("password", "")])
            }]
        );
        let logout = r#"<form id="op.logoutForm" method="post" action="http://127.0.0.1:1/session/end/confirm"><input type="hidden" name="xsrf" value="x'y"/></form>
<button autofocus type="submit" form="op.logoutForm" value="yes" name="logout">Yes, sign me out</button>"#;
        assert_eq!(forms(logout), vec![Form { action: "http://127.0.0.1:1/session/end/confirm".into(), fields: fields(&[("xsrf", "x'y")]) }]);
        assert_eq!(page_text("<style>a{}</style><p>Wrong &amp; <b>login</b></p><script>x()</script>"), "Wrong & login");
    }
}

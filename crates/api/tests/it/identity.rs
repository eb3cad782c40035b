//! Signing in with a company's identity provider (R6), against a real one:
//! oidc-provider (npm) as a process, its login pages driven over HTTP. The
//! sign-in through the API's routes; the roles its groups give; a
//! session's renewal and its end; the tokens the provider signs taken as
//! bearer tokens, and every hostile one refused with its reason.

use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use lattice_core::{Clock, ManualClock};
use lattice_identity::{ProviderConfig, Providers, ProvidersOptions};
use lattice_testkit::idp::{Account, Client, Idp, IdpSetup, Resource};
use serde_json::{Value, json};

use crate::{App, error_type};

const PORTAL: &str = "http://127.0.0.1:8080";
const SECRET: &str = "a client secret of the test provider";

/// A provider with two people of tenant `acme` (Ada in the admins' group,
/// Bob in staff's), lattice's client, and lattice's MCP resource.
async fn provider() -> Idp {
    let client = Client::confidential("lattice", SECRET)
        .redirect_uri(&format!("{PORTAL}/v1/auth/oidc/corp/callback"))
        .post_logout_redirect_uri(&format!("{PORTAL}/"));
    Idp::start(
        IdpSetup::new()
            .client(client)
            .account(Account::new("ada", "ada-password").name("Ada Lovelace").email("ada@acme.example").groups(&["lattice-admins", "ops"]))
            .account(Account::new("bob", "bob-password").name("Bob").email("bob@acme.example").groups(&["staff"]))
            .resource(Resource::new(&format!("{PORTAL}/mcp")).scopes(&["mcp"])),
    )
    .await
}

fn config(idp: &Idp, tenant: &str) -> ProviderConfig {
    let secret = std::env::temp_dir().join(format!("lattice-idp-secret-{}", ulid::Ulid::generate()));
    std::fs::write(&secret, SECRET).unwrap();
    let mut config = ProviderConfig::new(idp.issuer(), "lattice");
    config.client_secret_file = Some(secret);
    config.title = Some("Corp".into());
    config.tenant = Some(tenant.into());
    config.roles.insert("lattice-admins".into(), "tenant_admin".into());
    // The provider names groups for the `groups` scope, as Okta does.
    config.scopes = ["openid", "profile", "email", "groups"].map(String::from).to_vec();
    config
}

/// The API with `providers`, the log taking their tokens, on `clock`.
async fn app(backend: lattice_log::Backend, configs: &[(&str, ProviderConfig)], clock: Arc<ManualClock>) -> (App, Providers) {
    let configs = configs.iter().map(|(n, c)| (n.to_string(), c.clone())).collect();
    let options =
        ProvidersOptions { allow_http: true, mcp_audience: Some(format!("{PORTAL}/mcp")), clock: clock.clone(), timeout: Duration::from_secs(10) };
    let providers = Providers::new(&configs, options).unwrap();
    (App::with_identity(backend, providers.clone(), clock).await, providers)
}

/// A person's whole sign-in through the API's routes, as a browser makes
/// it: the start (303 to the provider), the provider's own pages, the
/// callback (303 to the chat with a one-time code), and the code traded
/// for a token with the page's secret.
async fn sign_in(app: &App, idp: &Idp, login: &str, password: &str) -> Value {
    let binding = "a secret the page keeps";
    let digest = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(binding.as_bytes()));
    let start = app.send("GET", &format!("/v1/auth/oidc/corp/start?binding={digest}"), None, None).await;
    assert_eq!(start.status, StatusCode::SEE_OTHER, "{:?}", start.body);
    let to_provider = start.location.clone().expect("the start sends the browser to the provider");
    assert!(to_provider.starts_with(idp.issuer()) && to_provider.contains("code_challenge_method=S256"), "{to_provider}");
    assert!(!to_provider.contains("code_verifier") && to_provider.contains("nonce="), "{to_provider}");
    let back = idp.agent().sign_in(&to_provider, login, password).await.unwrap();
    let callback = back.strip_prefix(PORTAL).expect("the provider sends the browser back to lattice");
    let landed = app.send("GET", callback, None, None).await;
    assert_eq!(landed.status, StatusCode::SEE_OTHER);
    let chat = landed.location.clone().unwrap();
    let code = chat.strip_prefix(&format!("{PORTAL}/#signin=")).unwrap_or_else(|| panic!("the chat with a code: {chat}"));
    // Only the page that began the sign-in trades its code.
    let elsewhere = app.send("POST", "/v1/auth/session", None, Some(&json!({"code": code, "binding": "another page"}).to_string())).await;
    assert_eq!(elsewhere.status, StatusCode::UNAUTHORIZED, "{:?}", elsewhere.body);
    assert!(elsewhere.body["error"]["reason"].as_str().unwrap().contains("another browser tab"), "{:?}", elsewhere.body);
    let traded = app.send("POST", "/v1/auth/session", None, Some(&json!({"code": code, "binding": binding}).to_string())).await;
    assert_eq!(traded.status, StatusCode::OK, "{:?}", traded.body);
    // Once.
    let again = app.send("POST", "/v1/auth/session", None, Some(&json!({"code": code, "binding": binding}).to_string())).await;
    assert_eq!(again.status, StatusCode::UNAUTHORIZED, "{:?}", again.body);
    traded.body
}

lattice_testkit::both_backends! {
    async fn people_sign_in_through_the_provider_with_the_role_their_group_gives(backend: Backend) {
        let idp = provider().await;
        let clock = ManualClock::new();
        let (app, _) = app(backend, &[("corp", config(&idp, "acme"))], clock.clone()).await;
        let listed = app.send("GET", "/v1/auth/providers", None, None).await;
        assert_eq!(listed.body, json!([{"name": "corp", "title": "Corp", "start": "/v1/auth/oidc/corp/start"}]));

        let ada = sign_in(&app, &idp, "ada", "ada-password").await;
        let token = ada["token"].as_str().unwrap().to_owned();
        assert_eq!(ada["expires_in"], json!(900), "{ada}");
        let me = app.get("/v1/me", &token).await;
        assert_eq!(me.body, json!({"tenant": "acme", "user": "ada", "role": "tenant_admin", "agent": false}));
        let bob = sign_in(&app, &idp, "bob", "bob-password").await;
        let me = app.get("/v1/me", bob["token"].as_str().unwrap()).await;
        assert_eq!(me.body, json!({"tenant": "acme", "user": "bob", "role": "member", "agent": false}));
        // A tenant admin acts as one: a workspace of the tenant's, its admin.
        let ws = app.post("/v1/workspaces", &token, json!({"name": "Ops"})).await;
        assert_eq!(ws.status, StatusCode::OK, "{:?}", ws.body);

        // Renewed while active: a new token of the same session.
        clock.advance(Duration::from_secs(600));
        let renewed = app.post("/v1/auth/renew", &token, json!({})).await;
        assert_eq!(renewed.status, StatusCode::OK, "{:?}", renewed.body);
        let token = renewed.body["token"].as_str().unwrap().to_owned();
        // The first token runs out; the renewed one stands.
        clock.advance(Duration::from_secs(600));
        assert_eq!(app.get("/v1/me", ada["token"].as_str().unwrap()).await.status, StatusCode::UNAUTHORIZED);
        assert_eq!(app.get("/v1/me", &token).await.status, StatusCode::OK);
        // A token no sign-in made is not renewed.
        let dev = app.token("acme", "ada", lattice_core::TenantRole::Member, false).await;
        assert_eq!(app.post("/v1/auth/renew", &dev, json!({})).await.status, StatusCode::CONFLICT);

        // Signing out ends the session at once, and says where the provider
        // signs the person out too; Bob's session stands.
        let bobs = sign_in(&app, &idp, "bob", "bob-password").await["token"].as_str().unwrap().to_owned();
        let out = app.post("/v1/auth/sign-out", &token, json!({})).await;
        assert_eq!(out.status, StatusCode::OK, "{:?}", out.body);
        let end = out.body["end_session_url"].as_str().expect("the provider's end-session page");
        assert!(end.starts_with(idp.issuer()) && end.contains("client_id=lattice") && end.contains("post_logout_redirect_uri="), "{end}");
        let after = app.get("/v1/me", &token).await;
        assert_eq!((after.status, error_type(&after)), (StatusCode::UNAUTHORIZED, "Unauthorized"));
        assert!(after.body["error"]["reason"].as_str().unwrap().contains("signed out"), "{:?}", after.body);
        assert_eq!(app.post("/v1/auth/renew", &token, json!({})).await.status, StatusCode::UNAUTHORIZED);
        assert_eq!(app.get("/v1/me", &bobs).await.status, StatusCode::OK);

        // The provider's refusal reaches the chat as the reason.
        let refused = app.send("GET", "/v1/auth/oidc/corp/callback?error=access_denied&error_description=nope&state=x", None, None).await;
        assert!(refused.location.unwrap().contains("#signin_error=the+provider+refused"), "the chat is told why");
        // A state nobody gave: no sign-in.
        let forged = app.send("GET", "/v1/auth/oidc/corp/callback?code=abc&state=never-given", None, None).await;
        assert!(forged.location.unwrap().contains("#signin_error="));
    }
}

lattice_testkit::both_backends! {
    async fn hostile_tokens_are_refused_each_with_its_reason(backend: Backend) {
        let idp = provider().await;
        let other = provider().await;
        let clock = ManualClock::new();
        let (app, providers) = app(backend, &[("corp", config(&idp, "acme")), ("globex", config(&other, "globex"))], clock.clone()).await;
        let now = clock.now_secs();
        let claims = |aud: &str| json!({"iss": idp.issuer(), "sub": "ada", "aud": aud, "iat": now, "exp": now + 300, "preferred_username": "ada", "groups": ["lattice-admins"]});

        // A good one first: the provider's token for lattice's client.
        let good = idp.forge(json!({}), claims("lattice"));
        let me = app.get("/v1/me", &good).await;
        assert_eq!(me.body, json!({"tenant": "acme", "user": "ada", "role": "tenant_admin", "agent": false}), "{:?}", me.body);
        let fetched = providers.jwks_fetches("corp");

        let mut expired = claims("lattice");
        expired["exp"] = json!(now - 61);
        let mut skewed = claims("lattice");
        skewed["exp"] = json!(now - 59);
        let mut other_issuer = claims("lattice");
        other_issuer["iss"] = json!("http://127.0.0.1:1/not-a-provider");
        let mut globex_as_corp = claims("lattice");
        globex_as_corp["iss"] = json!(idp.issuer());
        let hostile: Vec<(&str, String, &str)> = vec![
            ("wrong issuer", idp.forge(json!({}), other_issuer), "not a provider this deployment trusts"),
            ("wrong audience", idp.forge(json!({}), claims("someone-else")), "audience"),
            ("lattice's MCP resource at the API", idp.forge(json!({}), claims(&format!("{PORTAL}/mcp"))), "audience"),
            ("expired past the skew", idp.forge(json!({}), expired), "expired"),
            ("alg none", idp.forge_unsigned(json!({}), claims("lattice")), "none"),
            ("HS256 keyed with the provider's public key", idp.forge_with_secret(idp.public_key_pem().as_bytes(), json!({"alg": "HS256"}), claims("lattice")), "HS256"),
            ("an unknown key id", idp.forge(json!({"kid": "not-a-key"}), claims("lattice")), "kid"),
            ("another provider's key under this one's issuer", other.forge(json!({"kid": idp.kid()}), globex_as_corp), "signature"),
        ];
        let mut table = Vec::new();
        for (what, token, says) in &hostile {
            let r = app.get("/v1/me", token).await;
            let reason = r.body["error"]["reason"].as_str().unwrap_or_default().to_owned();
            assert_eq!((r.status, error_type(&r)), (StatusCode::UNAUTHORIZED, "Unauthorized"), "{what}: {:?}", r.body);
            assert!(reason.contains(says), "{what}: the reason {reason:?} says {says:?}");
            assert!(!reason.contains(token.as_str()), "{what}: a refusal never echoes the token");
            table.push(format!("| {what} | 401 | {reason} |"));
        }
        println!("{}", table.join("\n"));
        // Within the skew: taken.
        assert_eq!(app.get("/v1/me", &idp.forge(json!({}), skewed)).await.status, StatusCode::OK);

        // A flood of unknown key ids costs one fetch of the provider's keys
        // at most; a minute on, one more.
        for i in 0..50 {
            let token = idp.forge(json!({"kid": format!("random-{i}")}), claims("lattice"));
            assert_eq!(app.get("/v1/me", &token).await.status, StatusCode::UNAUTHORIZED);
        }
        assert!(providers.jwks_fetches("corp") <= fetched + 1, "{} fetches for 50 unknown kids", providers.jwks_fetches("corp") - fetched);
        clock.advance(Duration::from_secs(61));
        let late = idp.forge(json!({"kid": "late"}), json!({"iss": idp.issuer(), "sub": "ada", "aud": "lattice", "iat": clock.now_secs(), "exp": clock.now_secs() + 300, "preferred_username": "ada"}));
        assert_eq!(app.get("/v1/me", &late).await.status, StatusCode::UNAUTHORIZED);
        assert!(providers.jwks_fetches("corp") <= fetched + 2);

        // Another tenant's provider: its token is its tenant's person, who
        // finds nothing of acme's.
        let ws = app.post("/v1/workspaces", &good, json!({"name": "Acme only"})).await;
        let ws = ws.body["id"].as_str().unwrap().to_owned();
        let now = clock.now_secs();
        let theirs = other.forge(json!({}), json!({"iss": other.issuer(), "sub": "mal", "aud": "lattice", "iat": now, "exp": now + 300, "preferred_username": "mal", "groups": ["lattice-admins"]}));
        let me = app.get("/v1/me", &theirs).await;
        assert_eq!((me.body["tenant"].as_str(), me.body["role"].as_str()), (Some("globex"), Some("tenant_admin")), "{:?}", me.body);
        assert_eq!(app.get(&format!("/v1/workspaces/{ws}/threads"), &theirs).await.status, StatusCode::NOT_FOUND);
        assert_eq!(app.get("/v1/workspaces", &theirs).await.body, json!([]));
    }
}

lattice_testkit::both_backends! {
    async fn the_directory_has_the_last_word_on_a_persons_tokens(backend: Backend) {
        let idp = provider().await;
        let clock = ManualClock::new();
        let (app, _) = app(backend, &[("corp", config(&idp, "acme"))], clock.clone()).await;
        let root = app.token("acme", "root", lattice_core::TenantRole::TenantAdmin, false).await;
        let scim = app.post("/v1/scim-tokens", &root, json!({})).await.body["token"].as_str().unwrap().to_owned();
        let session = sign_in(&app, &idp, "bob", "bob-password").await["token"].as_str().unwrap().to_owned();
        let now = clock.now_secs();
        let bearer = idp.forge(json!({}), json!({"iss": idp.issuer(), "sub": "bob", "aud": "lattice", "iat": now, "exp": now + 600, "preferred_username": "Bob"}));
        assert_eq!(app.get("/v1/me", &bearer).await.body["user"], json!("bob"), "a name is matched whatever its case");

        // A SCIM group that gives the tenant admin role: the directory's
        // role wins over the token's, on the next request.
        let group = json!({"schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"], "displayName": "lattice-admins", "members": [{"value": "bob"}]});
        let made = app.send_scim("POST", "/scim/v2/Groups", &scim, Some(group)).await;
        assert_eq!(made.status, StatusCode::CREATED, "{:?}", made.body);
        assert_eq!(app.get("/v1/me", &session).await.body["role"], json!("tenant_admin"));
        assert_eq!(app.get("/v1/me", &bearer).await.body["role"], json!("tenant_admin"));

        // Deactivated: every token of theirs is refused at once, and a
        // sign-in too.
        let patch = json!({"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], "Operations": [{"op": "replace", "path": "active", "value": false}]});
        let off = app.send_scim("PATCH", "/scim/v2/Users/bob", &scim, Some(patch)).await;
        assert_eq!(off.status, StatusCode::OK, "{:?}", off.body);
        for token in [&session, &bearer] {
            let r = app.get("/v1/me", token).await;
            assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{:?}", r.body);
            assert!(r.body["error"]["reason"].as_str().unwrap().contains("deactivated"), "{:?}", r.body);
        }
        let start = app.send("GET", "/v1/auth/oidc/corp/start", None, None).await;
        let back = idp.agent().sign_in(start.location.as_deref().unwrap(), "bob", "bob-password").await.unwrap();
        let landed = app.send("GET", back.strip_prefix(PORTAL).unwrap(), None, None).await;
        assert!(landed.location.unwrap().contains("#signin_error=") , "a deactivated person is not signed in");
        // Made active again, they sign in anew (old tokens stay ended).
        let patch = json!({"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], "Operations": [{"op": "replace", "path": "active", "value": true}]});
        assert_eq!(app.send_scim("PATCH", "/scim/v2/Users/bob", &scim, Some(patch)).await.status, StatusCode::OK);
        assert_eq!(app.get("/v1/me", &session).await.status, StatusCode::UNAUTHORIZED);
        clock.advance(Duration::from_secs(1));
        let again = sign_in(&app, &idp, "bob", "bob-password").await;
        assert_eq!(app.get("/v1/me", again["token"].as_str().unwrap()).await.status, StatusCode::OK);
    }
}

lattice_testkit::both_backends! {
    async fn a_group_that_takes_a_role_away_ends_the_streams_that_needed_it(backend: Backend) {
        let idp = provider().await;
        let clock = ManualClock::new();
        let (app, _) = app(backend, &[("corp", config(&idp, "acme"))], clock.clone()).await;
        let root = app.token("acme", "root", lattice_core::TenantRole::TenantAdmin, false).await;
        let scim = app.post("/v1/scim-tokens", &root, json!({})).await.body["token"].as_str().unwrap().to_owned();
        let (_, th) = app.workspace_with_thread(&root).await;
        let bob = sign_in(&app, &idp, "bob", "bob-password").await["token"].as_str().unwrap().to_owned();
        // The admins' group gives Bob the tenant admin role: he reads a
        // thread of a workspace he is no member of.
        let group = json!({"schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"], "displayName": "lattice-admins", "members": [{"value": "bob"}]});
        let made = app.send_scim("POST", "/scim/v2/Groups", &scim, Some(group)).await;
        let id = made.body["id"].as_str().unwrap().to_owned();
        let mut sse = crate::Sse::open(&app, &format!("/v1/threads/{th}/events"), &bob).await;
        let (event, _) = sse.next(Duration::from_secs(5)).await.expect("the thread's first envelope");
        assert_eq!(event, "thread_created");

        // Taken out of the group: his stream ends at once, and the thread is
        // as missing to his next request.
        let out = json!({"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
            "Operations": [{"op": "remove", "path": "members[value eq \"bob\"]"}]});
        let patched = app.send_scim("PATCH", &format!("/scim/v2/Groups/{id}"), &scim, Some(out)).await;
        assert_eq!(patched.status, StatusCode::OK, "{:?}", patched.body);
        let at = std::time::Instant::now();
        let (event, data) = sse.next(Duration::from_secs(1)).await.expect("access_lost");
        assert_eq!(event, "access_lost", "{data}");
        assert!(at.elapsed() < Duration::from_secs(1), "{:?}", at.elapsed());
        assert!(sse.next(Duration::from_secs(1)).await.is_none(), "the stream ends");
        assert_eq!(app.get("/v1/me", &bob).await.body["role"], json!("member"));
        assert_eq!(app.get(&format!("/v1/threads/{th}"), &bob).await.status, StatusCode::NOT_FOUND);
    }
}

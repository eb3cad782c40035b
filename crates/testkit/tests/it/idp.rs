//! The OpenID provider of the tests, end to end over HTTP: discovery, a
//! confidential client's code flow with PKCE, a resource's JWT access token,
//! a wrong password, forged tokens against the published JWKS, and sign-out
//! with back-channel logout.

use std::sync::{Arc, Mutex};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use lattice_testkit::idp::{Account, Client, Idp, IdpSetup, KeyAlg, Resource};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const SECRET: &str = "lattice-client-secret-lattice-client-secret";
const CALLBACK: &str = "http://127.0.0.1:9/v1/auth/oidc/test/callback";
const SIGNED_OUT: &str = "http://127.0.0.1:9/signed-out";
const MCP: &str = "http://127.0.0.1:9/mcp";

fn alice() -> Account {
    Account::new("alice", "alice-password").name("Alice Liddell").email("alice@example.com").groups(&["engineering", "lattice-admins"]).tenant("acme")
}

fn bob() -> Account {
    Account::new("bob", "bob-password").email("bob@example.com").groups(&["sales"])
}

fn lattice(backchannel: Option<&str>) -> Client {
    let client = Client::confidential("lattice", SECRET).redirect_uri(CALLBACK).post_logout_redirect_uri(SIGNED_OUT);
    match backchannel {
        Some(uri) => client.backchannel_logout_uri(uri),
        None => client,
    }
}

async fn setup(key: KeyAlg, backchannel: Option<&str>) -> Idp {
    let setup = IdpSetup::new().key(key).client(lattice(backchannel)).account(alice()).account(bob());
    Idp::start(setup.resource(Resource::new(MCP).scopes(&["mcp"]))).await
}

async fn get_json(url: &str) -> Value {
    let response = reqwest::get(url).await.unwrap_or_else(|e| panic!("{url}: {e}"));
    assert!(response.status().is_success(), "{url}: {}", response.status());
    response.json().await.expect("JSON")
}

/// A PKCE verifier and its S256 challenge.
fn pkce() -> (String, String) {
    let verifier = format!("{}{}", ulid::Ulid::generate(), ulid::Ulid::generate());
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    (verifier, challenge)
}

fn authorize_url(idp: &Idp, scope: &str, challenge: &str, extra: &[(&str, &str)]) -> String {
    let mut url = url::Url::parse(&format!("{}/auth", idp.issuer())).unwrap();
    url.query_pairs_mut()
        .extend_pairs([
            ("client_id", "lattice"),
            ("response_type", "code"),
            ("redirect_uri", CALLBACK),
            ("scope", scope),
            ("state", "the-state"),
            ("nonce", "the-nonce"),
            ("code_challenge", challenge),
            ("code_challenge_method", "S256"),
        ])
        .extend_pairs(extra);
    url.into()
}

fn query(location: &str, name: &str) -> Option<String> {
    url::Url::parse(location).unwrap().query_pairs().find(|(n, _)| n == name).map(|(_, v)| v.into_owned())
}

/// The token endpoint's answer to the code, as lattice asks (secret in a
/// Basic header, the PKCE verifier).
async fn exchange(idp: &Idp, code: &str, verifier: &str, extra: &[(&str, &str)]) -> reqwest::Response {
    let mut form = vec![("grant_type", "authorization_code"), ("code", code), ("redirect_uri", CALLBACK), ("code_verifier", verifier)];
    form.extend_from_slice(extra);
    reqwest::Client::new()
        .post(format!("{}/token", idp.issuer()))
        .basic_auth("lattice", Some(SECRET))
        .form(&form)
        .send()
        .await
        .expect("the token endpoint")
}

/// `token`'s claims, verified with the key the provider publishes.
async fn verified(idp: &Idp, token: &str, audience: &str) -> Value {
    let jwks: JwkSet = serde_json::from_value(get_json(&format!("{}/jwks", idp.issuer())).await).expect("a JWKS");
    let kid = jsonwebtoken::decode_header(token).expect("a JWT header").kid.expect("a kid");
    let jwk = jwks.find(&kid).unwrap_or_else(|| panic!("the JWKS has no key {kid}"));
    let mut validation = Validation::new(idp.algorithm());
    validation.set_audience(&[audience]);
    validation.set_issuer(&[idp.issuer()]);
    jsonwebtoken::decode::<Value>(token, &DecodingKey::from_jwk(jwk).expect("a key"), &validation)
        .map(|t| t.claims)
        .map_err(|e| e.to_string())
        .expect("verifies")
}

#[tokio::test]
async fn discovery_names_the_issuer_and_what_it_supports() {
    let idp = setup(KeyAlg::Es256, None).await;
    let discovery = get_json(&format!("{}/.well-known/openid-configuration", idp.issuer())).await;
    assert_eq!(discovery["issuer"], idp.issuer());
    assert_eq!(discovery["code_challenge_methods_supported"], json!(["S256"]));
    assert_eq!(discovery["end_session_endpoint"], idp.end_session_endpoint());
    assert_eq!(discovery["backchannel_logout_supported"], true);
    assert_eq!(discovery["backchannel_logout_session_supported"], true);
    assert_eq!(discovery["client_id_metadata_document_supported"], true);
    assert!(discovery["registration_endpoint"].is_string() && discovery["revocation_endpoint"].is_string());
    assert!(discovery.get("introspection_endpoint").is_none());
    assert!(discovery["claims_supported"].as_array().unwrap().contains(&json!("groups")));
    assert_eq!(discovery["id_token_signing_alg_values_supported"].as_array().map(|a| a.contains(&json!("ES256"))), Some(true));
}

#[tokio::test]
async fn a_confidential_client_signs_a_person_in_with_pkce() {
    let idp = setup(KeyAlg::Rs256, Some("http://127.0.0.1:9/backchannel")).await;
    let (_, challenge) = pkce();
    let location = idp.sign_in(&authorize_url(&idp, "openid profile email groups", &challenge, &[]), "alice", "alice-password").await.unwrap();
    assert!(location.starts_with(CALLBACK), "{location}");
    assert_eq!(query(&location, "state").as_deref(), Some("the-state"));
    assert_eq!(query(&location, "iss").as_deref(), Some(idp.issuer()));
    let code = query(&location, "code").expect("a code");

    // The verifier is checked.
    let refused = exchange(&idp, &code, "a-wrong-verifier-a-wrong-verifier-a-wrong-verifier", &[]).await;
    assert_eq!(refused.status(), 400);

    // The browser's session at the provider signs alice in again without her password.
    let (verifier, challenge) = pkce();
    let location = idp.sign_in(&authorize_url(&idp, "openid profile email groups", &challenge, &[]), "alice", "").await.unwrap();
    let code = query(&location, "code").expect("a code");
    let response = exchange(&idp, &code, &verifier, &[]).await;
    assert_eq!(response.status(), 200);
    let tokens: Value = response.json().await.unwrap();
    let replayed: Value = exchange(&idp, &code, &verifier, &[]).await.json().await.unwrap();
    assert_eq!(replayed["error"], "invalid_grant", "a code is used once: {replayed}");
    let id_token = verified(&idp, tokens["id_token"].as_str().unwrap(), "lattice").await;
    assert_eq!(id_token["sub"], "alice");
    assert_eq!(id_token["nonce"], "the-nonce");
    assert!(id_token["sid"].is_string(), "{id_token}");
    assert_eq!(id_token["preferred_username"], "alice");
    assert_eq!(id_token["email"], "alice@example.com");
    assert_eq!(id_token["groups"], json!(["engineering", "lattice-admins"]));
    assert_eq!(id_token["tenant"], "acme");
    eprintln!("ID token claims: {id_token}");

    // Without PKCE the provider refuses the request at the client's redirect URI.
    let mut no_pkce = url::Url::parse(&authorize_url(&idp, "openid", "x", &[])).unwrap();
    let pairs: Vec<(String, String)> =
        no_pkce.query_pairs().filter(|(n, _)| !n.starts_with("code_challenge")).map(|(n, v)| (n.into(), v.into())).collect();
    no_pkce.query_pairs_mut().clear().extend_pairs(pairs);
    let refused = idp.agent().sign_in(no_pkce.as_str(), "alice", "alice-password").await.unwrap();
    assert_eq!(query(&refused, "error").as_deref(), Some("invalid_request"), "{refused}");
}

#[tokio::test]
async fn a_resource_gets_a_jwt_access_token_with_its_audience() {
    let idp = setup(KeyAlg::Rs256, None).await;
    let (verifier, challenge) = pkce();
    let url = authorize_url(&idp, "openid mcp", &challenge, &[("resource", MCP)]);
    let location = idp.sign_in(&url, "bob", "bob-password").await.unwrap();
    let response = exchange(&idp, &query(&location, "code").unwrap(), &verifier, &[("resource", MCP)]).await;
    let tokens: Value = response.json().await.unwrap();
    assert_eq!(tokens["scope"], "mcp", "the access token's scope: {tokens}");
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(jsonwebtoken::decode_header(access).unwrap().typ.as_deref(), Some("at+jwt"));
    let claims = verified(&idp, access, MCP).await;
    assert_eq!(claims["sub"], "bob");
    assert_eq!(claims["client_id"], "lattice");
    assert_eq!(claims["scope"], "mcp");
    assert_eq!(claims["preferred_username"], "bob");
    assert_eq!(claims["email"], "bob@example.com");
    assert_eq!(claims["groups"], json!(["sales"]));
    eprintln!("access token claims: {claims}");

    // A resource the provider does not know is refused.
    let (_, challenge) = pkce();
    let url = authorize_url(&idp, "openid", &challenge, &[("resource", "http://127.0.0.1:9/elsewhere")]);
    let refused = idp.sign_in(&url, "bob", "bob-password").await.unwrap();
    assert_eq!(query(&refused, "error").as_deref(), Some("invalid_target"), "{refused}");
}

#[tokio::test]
async fn a_wrong_password_or_an_unknown_person_fails() {
    let idp = setup(KeyAlg::Es256, None).await;
    let (_, challenge) = pkce();
    let url = authorize_url(&idp, "openid", &challenge, &[]);
    let wrong = idp.sign_in(&url, "alice", "bob-password").await.unwrap_err();
    assert!(wrong.contains("Wrong login or password"), "{wrong}");
    let unknown = idp.sign_in(&url, "mallory", "").await.unwrap_err();
    assert!(unknown.contains("Wrong login or password"), "{unknown}");
    // A bad request is the provider's error page, not a sign-in.
    let bad = idp.sign_in(&url.replace("client_id=lattice", "client_id=nobody"), "alice", "alice-password").await.unwrap_err();
    assert!(bad.contains("invalid_client"), "{bad}");
}

#[tokio::test]
async fn forged_tokens_verify_only_when_signed_with_the_provider_key() {
    for key in [KeyAlg::Rs256, KeyAlg::Es256] {
        let idp = setup(key, None).await;
        let forged = idp.forge(json!({}), idp.claims("alice", "lattice"));
        assert_eq!(verified(&idp, &forged, "lattice").await["sub"], "alice");
        assert_eq!(idp.public_jwk()["kid"], idp.kid());
        assert!(idp.public_jwk().get("d").is_none());

        let decoding = DecodingKey::from_jwk(&serde_json::from_value(idp.public_jwk().clone()).unwrap()).unwrap();
        let mut validation = Validation::new(idp.algorithm());
        validation.set_audience(&["lattice"]);
        let check = |token: &str| jsonwebtoken::decode::<Value>(token, &decoding, &validation).map_err(|e| e.to_string());
        let unsigned = idp.forge_unsigned(json!({}), idp.claims("alice", "lattice"));
        assert!(unsigned.ends_with('.'));
        assert!(check(&unsigned).is_err());
        let confused = idp.forge_with_secret(idp.public_key_pem().as_bytes(), json!({}), idp.claims("alice", "lattice"));
        assert_eq!(jsonwebtoken::decode_header(&confused).unwrap().alg, Algorithm::HS256);
        assert!(check(&confused).is_err());
        let expired = idp.forge(json!({}), json!({"iss": idp.issuer(), "sub": "alice", "aud": "lattice", "exp": 1}));
        assert!(check(&expired).unwrap_err().contains("Expired"));
        let other = idp.forge(json!({"kid": "someone-else", "typ": null}), idp.claims("alice", "lattice"));
        let header = jsonwebtoken::decode_header(&other).unwrap();
        assert_eq!((header.kid.as_deref(), header.typ), (Some("someone-else"), None));
    }
}

/// A listener for the provider's back-channel logout posts.
async fn backchannel_listener() -> (String, Arc<Mutex<Vec<String>>>) {
    let received = Arc::new(Mutex::new(Vec::new()));
    let keep = received.clone();
    let router = axum::Router::new().route(
        "/backchannel",
        axum::routing::post(move |body: String| async move {
            let token = url::form_urlencoded::parse(body.as_bytes()).find(|(n, _)| n == "logout_token").map(|(_, v)| v.into_owned());
            keep.lock().unwrap().push(token.unwrap_or_default());
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let uri = format!("http://{}/backchannel", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    (uri, received)
}

#[tokio::test]
async fn signing_out_at_the_provider_posts_back_channel_logout() {
    let (backchannel, received) = backchannel_listener().await;
    let idp = setup(KeyAlg::Rs256, Some(&backchannel)).await;
    let (alice_browser, bob_browser) = (idp.agent(), idp.agent());
    let (verifier, challenge) = pkce();
    let location = alice_browser.sign_in(&authorize_url(&idp, "openid", &challenge, &[]), "alice", "alice-password").await.unwrap();
    let tokens: Value = exchange(&idp, &query(&location, "code").unwrap(), &verifier, &[]).await.json().await.unwrap();
    let id_token = tokens["id_token"].as_str().unwrap();
    let sid = verified(&idp, id_token, "lattice").await["sid"].clone();
    let (_, challenge) = pkce();
    bob_browser.sign_in(&authorize_url(&idp, "openid", &challenge, &[]), "bob", "bob-password").await.unwrap();

    let mut end_session = url::Url::parse(&idp.end_session_endpoint()).unwrap();
    end_session.query_pairs_mut().extend_pairs([("id_token_hint", id_token), ("post_logout_redirect_uri", SIGNED_OUT), ("state", "bye")]);
    let after = alice_browser.sign_out(end_session.as_str()).await.unwrap();
    assert_eq!(after, format!("{SIGNED_OUT}?state=bye"));

    let posted = received.lock().unwrap().clone();
    assert_eq!(posted.len(), 1, "one logout token, for alice's session: {posted:?}\n{}", idp.log());
    assert_eq!(jsonwebtoken::decode_header(&posted[0]).unwrap().typ.as_deref(), Some("logout+jwt"));
    let logout = verified(&idp, &posted[0], "lattice").await;
    assert_eq!(logout["sub"], "alice");
    assert_eq!(logout["sid"], sid);
    assert_eq!(logout["events"], json!({"http://schemas.openid.net/event/backchannel-logout": {}}));
    assert!(logout.get("nonce").is_none());
    eprintln!("logout token claims: {logout}");

    // Alice must sign in again; Bob, in his own browser, is still signed in.
    let (_, challenge) = pkce();
    let again = alice_browser.sign_in(&authorize_url(&idp, "openid", &challenge, &[]), "alice", "").await.unwrap_err();
    assert!(again.contains("Wrong login or password"), "{again}");
    let (_, challenge) = pkce();
    let still = bob_browser.sign_in(&authorize_url(&idp, "openid", &challenge, &[]), "bob", "").await.unwrap();
    assert!(query(&still, "code").is_some(), "{still}");

    // Without a post_logout_redirect_uri the browser ends on the provider's own page.
    let after = bob_browser.sign_out(&idp.end_session_endpoint()).await.unwrap();
    assert!(after.starts_with(&format!("{}/session/end/success", idp.issuer())), "{after}");
    assert_eq!(received.lock().unwrap().len(), 2);
}

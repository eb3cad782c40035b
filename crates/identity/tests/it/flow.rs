//! A person's sign-in, begun and finished against the fake provider (which
//! checks the client secret, the redirect URI and the PKCE verifier), and
//! discovery: lazy, kept an hour, a failure not kept, bounded, not redirected.

use std::collections::{BTreeMap, HashMap};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use expect_test::expect;
use lattice_core::{Error, TenantRole};
use lattice_identity::{ProviderConfig, Providers, SignedIn};
use serde_json::json;
use sha2::Digest;

use crate::idp::{CLIENT_ID, Discovery, Idp, REDIRECT_URI, TestKey, reason, temp_file};

fn query(url: &str) -> HashMap<String, String> {
    url::Url::parse(url).unwrap().query_pairs().into_owned().collect()
}

/// Signs `user` in through the whole flow, the ID token's claims changed by `change`.
async fn sign_in(idp: &Idp, p: &Providers, change: impl FnOnce(&mut serde_json::Value)) -> Result<SignedIn, Error> {
    let begun = p.begin("corp", REDIRECT_URI).await?;
    let mut claims = idp.claims("ana");
    change(&mut claims);
    let code = idp.approve(&begun.authorize_url, claims);
    p.finish("corp", &code, &begun.pkce_verifier, &begun.nonce, REDIRECT_URI).await
}

#[tokio::test]
async fn a_sign_in_asks_for_a_code_with_pkce_s256_and_a_nonce() {
    let idp = Idp::start(&[TestKey::rsa_a()]).await;
    let p = idp.providers();
    assert_eq!(idp.discovery_reads(), 0, "nothing is read before the first use");
    let begun = p.begin("corp", REDIRECT_URI).await.unwrap();
    assert!(begun.authorize_url.starts_with(&format!("{}/authorize?", idp.issuer)));
    let q = query(&begun.authorize_url);
    assert_eq!(q["response_type"], "code");
    assert_eq!(q["client_id"], CLIENT_ID);
    assert_eq!(q["redirect_uri"], REDIRECT_URI);
    assert_eq!(q["scope"], "openid profile email", "openid once, first");
    assert_eq!(q["code_challenge_method"], "S256");
    assert_eq!(q["code_challenge"], URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(begun.pkce_verifier.as_bytes())));
    assert_eq!((q["state"].as_str(), q["nonce"].as_str()), (begun.state.as_str(), begun.nonce.as_str()));
    assert!(!begun.authorize_url.contains(&begun.pkce_verifier), "the verifier stays with lattice");
    assert!(begun.pkce_verifier.len() >= 43 && begun.state.len() >= 16 && begun.nonce.len() >= 16);
    let shown = format!("{begun:?}");
    assert!(!shown.contains(&begun.pkce_verifier) && shown.contains("[redacted]"), "{shown}");

    let again = p.begin("corp", REDIRECT_URI).await.unwrap();
    assert!(again.state != begun.state && again.nonce != begun.nonce && again.pkce_verifier != begun.pkce_verifier, "fresh each time");
    assert_eq!(idp.discovery_reads(), 1, "discovery is kept");

    let mut config = idp.config();
    config.scopes = vec!["groups".into(), "openid".into(), "groups".into()];
    let q = query(&idp.providers_with(config).begin("corp", REDIRECT_URI).await.unwrap().authorize_url);
    assert_eq!(q["scope"], "openid groups");
}

#[tokio::test]
async fn a_finished_sign_in_maps_the_id_tokens_claims() {
    let idp = Idp::start(&[TestKey::rsa_a()]).await;
    let p = idp.providers();
    let signed = sign_in(&idp, &p, |c| {
        c["name"] = json!("Ana Lima");
        c["email"] = json!("ana@acme.example");
        c["groups"] = json!(["admins", "staff"]);
        c["sid"] = json!("op-session-1");
    })
    .await
    .unwrap();
    assert_eq!(signed.provider, "corp");
    assert_eq!((signed.tenant.as_str(), signed.user.as_str(), signed.subject.as_str()), ("acme", "ana", "sub-ana"));
    assert_eq!((signed.name.as_deref(), signed.email.as_deref()), (Some("Ana Lima"), Some("ana@acme.example")));
    assert_eq!(signed.groups, ["admins", "staff"]);
    assert_eq!(signed.role, TenantRole::TenantAdmin);
    assert_eq!(signed.provider_sid.as_deref(), Some("op-session-1"));
    assert_eq!(signed.issued_ms, idp.now() * 1000);

    let unverified = sign_in(&idp, &p, |c| {
        c["email"] = json!("ana@acme.example");
        c["email_verified"] = json!(false);
    })
    .await
    .unwrap();
    assert_eq!(unverified.email, None, "an address the provider has not verified");
}

#[tokio::test]
async fn the_id_token_is_held_to_the_one_verifiers_rules() {
    let idp = Idp::start(&[TestKey::rsa_a()]).await;
    let p = idp.providers();
    let now = idp.now();
    let said = async |change: &dyn Fn(&mut serde_json::Value)| reason(sign_in(&idp, &p, change).await);
    expect!["the ID token's nonce does not match the sign-in's"].assert_eq(&said(&|c| c["nonce"] = json!("another-sign-ins-nonce")).await);
    expect!["the token has expired (61 s ago, beyond the allowed clock skew of 60 s)"].assert_eq(&said(&|c| c["exp"] = json!(now - 61)).await);
    expect!["the token's audience is not this deployment's (expected lattice)"].assert_eq(&said(&|c| c["aud"] = json!("someone-else")).await);
    expect!["the ID token names several audiences and no azp (expected lattice)"].assert_eq(&said(&|c| c["aud"] = json!([CLIENT_ID, "other"])).await);
    expect!["the ID token's azp is not this client (lattice)"].assert_eq(
        &said(&|c| {
            c["aud"] = json!([CLIENT_ID, "other"]);
            c["azp"] = json!("other");
        })
        .await,
    );
    assert!(
        said(&|c| {
            c["aud"] = json!([CLIENT_ID, "other"]);
            c["azp"] = json!(CLIENT_ID);
        })
        .await
        .starts_with("accepted")
    );
    expect![[r#"the user id "key_9f2" is refused: the prefix key_ is reserved for API keys"#]]
        .assert_eq(&said(&|c| c["preferred_username"] = json!("key_9f2")).await);

    idp.sign_id_tokens_with(&TestKey::rsa_b());
    expect![[r#"no key of provider corp has kid "b""#]].assert_eq(&said(&|_| {}).await);
}

#[tokio::test]
async fn the_code_exchange_is_the_clients_with_its_verifier() {
    let idp = Idp::start(&[TestKey::rsa_a()]).await;
    let p = idp.providers();
    let begun = p.begin("corp", REDIRECT_URI).await.unwrap();
    let code = idp.approve(&begun.authorize_url, idp.claims("ana"));
    let other_verifier = "x".repeat(43);
    expect!["provider corp refused the code: invalid_grant"]
        .assert_eq(&reason(p.finish("corp", &code, &other_verifier, &begun.nonce, REDIRECT_URI).await));
    let code = idp.approve(&begun.authorize_url, idp.claims("ana"));
    assert!(p.finish("corp", &code, &begun.pkce_verifier, &begun.nonce, REDIRECT_URI).await.is_ok());
    expect!["provider corp refused the code: invalid_grant"]
        .assert_eq(&reason(p.finish("corp", &code, &begun.pkce_verifier, &begun.nonce, REDIRECT_URI).await));

    let mut config = idp.config();
    let wrong = temp_file("not-the-secret");
    config.client_secret_file = Some(wrong.path());
    let wrong_secret = idp.providers_with(config);
    let begun = wrong_secret.begin("corp", REDIRECT_URI).await.unwrap();
    let code = idp.approve(&begun.authorize_url, idp.claims("ana"));
    expect!["provider corp refused the code: invalid_client"]
        .assert_eq(&reason(wrong_secret.finish("corp", &code, &begun.pkce_verifier, &begun.nonce, REDIRECT_URI).await));

    expect!["the PKCE verifier is not 43 to 128 unreserved characters"].assert_eq(&reason(p.finish("corp", "c", "short", "n", REDIRECT_URI).await));
    expect!["the authorization code must be 1 to 4096 bytes"].assert_eq(&reason(p.finish("corp", "", &other_verifier, "n", REDIRECT_URI).await));
    expect!["Malformed: malformed request: the redirect_uri is not an absolute URL: relative URL without a base"]
        .assert_eq(&reason(p.begin("corp", "/callback").await));
    expect!["NotFound: not found"].assert_eq(&reason(p.begin("nope", REDIRECT_URI).await));
    expect!["NotFound: not found"].assert_eq(&reason(p.finish("nope", "c", &other_verifier, "n", REDIRECT_URI).await));
}

#[tokio::test]
async fn the_secret_goes_in_the_body_where_basic_is_not_offered() {
    let idp = Idp::start(&[TestKey::rsa_a()]).await;
    idp.secret_in_body(true);
    let p = idp.providers();
    assert_eq!(sign_in(&idp, &p, |_| {}).await.map(|s| s.user.to_string()), Ok("ana".to_owned()));
}

#[tokio::test]
async fn discovery_is_lazy_kept_an_hour_and_a_failure_is_not_kept() {
    let idp = Idp::start(&[TestKey::rsa_a()]).await;
    idp.discovery(Discovery::Fails);
    let p = idp.providers();
    assert_eq!(idp.discovery_reads(), 0);
    expect!["Unavailable: unavailable: provider corp's discovery (http://127.0.0.1:PORT/.well-known/openid-configuration) answered 500 Internal Server Error"]
        .assert_eq(&idp.unport(&reason(p.begin("corp", REDIRECT_URI).await)));
    idp.discovery(Discovery::Normal);
    assert!(p.begin("corp", REDIRECT_URI).await.is_ok(), "the failure was not kept");
    assert!(p.begin("corp", REDIRECT_URI).await.is_ok());
    assert_eq!(idp.discovery_reads(), 2);
    idp.advance(3599);
    assert!(p.begin("corp", REDIRECT_URI).await.is_ok());
    assert_eq!(idp.discovery_reads(), 2);
    idp.advance(1);
    assert!(p.begin("corp", REDIRECT_URI).await.is_ok());
    assert_eq!(idp.discovery_reads(), 3, "an hour later, read again");

    // A failed refresh keeps the document it had, and tries again next use.
    idp.advance(3600);
    idp.discovery(Discovery::Fails);
    assert!(p.begin("corp", REDIRECT_URI).await.is_ok());
    assert!(p.begin("corp", REDIRECT_URI).await.is_ok());
    assert_eq!(idp.discovery_reads(), 5);
}

#[tokio::test]
async fn discovery_is_not_redirected_bounded_and_the_issuers_own() {
    let idp = Idp::start(&[TestKey::rsa_a()]).await;
    let p = idp.providers();
    idp.discovery(Discovery::Redirects);
    expect!["Unavailable: unavailable: provider corp's discovery (http://127.0.0.1:PORT/.well-known/openid-configuration) answered 302 Found"]
        .assert_eq(&idp.unport(&reason(p.begin("corp", REDIRECT_URI).await)));
    idp.discovery(Discovery::Huge);
    expect!["Unavailable: unavailable: provider corp's discovery (http://127.0.0.1:PORT/.well-known/openid-configuration) failed: the answer is over 262144 bytes"]
        .assert_eq(&idp.unport(&reason(p.begin("corp", REDIRECT_URI).await)));
    idp.discovery(Discovery::WrongIssuer);
    expect![[r#"Unavailable: unavailable: provider corp's discovery document names the issuer "http://127.0.0.1:PORT/other", not the configured "http://127.0.0.1:PORT""#]]
        .assert_eq(&idp.unport(&reason(p.begin("corp", REDIRECT_URI).await)));

    // A provider that is not there: lattice starts, its sign-in is unavailable.
    let mut config = ProviderConfig::new("http://127.0.0.1:9", CLIENT_ID);
    config.tenant = Some("acme".into());
    let gone = Providers::new(&BTreeMap::from([("corp".to_owned(), config)]), idp.options()).unwrap();
    let said = reason(gone.begin("corp", REDIRECT_URI).await);
    assert!(
        said.starts_with("Unavailable: unavailable: provider corp's discovery (http://127.0.0.1:9/.well-known/openid-configuration) failed: "),
        "{said}"
    );
}

#[tokio::test]
async fn the_end_session_url_sends_the_person_to_the_provider_and_back() {
    let idp = Idp::start(&[TestKey::rsa_a()]).await;
    let p = idp.providers();
    let url = p.end_session_url("corp", "http://127.0.0.1:8080/signed-out").await.unwrap();
    expect!["http://127.0.0.1:PORT/session/end?client_id=lattice&post_logout_redirect_uri=http%3A%2F%2F127.0.0.1%3A8080%2Fsigned-out"]
        .assert_eq(&idp.unport(&url));
    assert_eq!(p.end_session_url("nope", "http://127.0.0.1:8080/").await, None);
    assert_eq!(p.end_session_url("corp", "not a url").await, None);

    let idp = Idp::start(&[TestKey::rsa_a()]).await;
    idp.end_session(false);
    assert_eq!(idp.providers().end_session_url("corp", "http://127.0.0.1:8080/").await, None, "a provider without one");
}

#[test]
fn what_the_api_awaits_can_be_sent_between_threads() {
    fn send<T: Send>(_: T) {}
    let p = Providers::new(&BTreeMap::new(), lattice_identity::ProvidersOptions::default()).unwrap();
    send(p.begin("corp", REDIRECT_URI));
    send(p.finish("corp", "c", "v", "n", REDIRECT_URI));
    send(p.verify_logout("corp", "t"));
    send(p.end_session_url("corp", REDIRECT_URI));
    send(lattice_core::identity::TokenIssuers::verify(&p, "t", lattice_core::identity::Audience::Api));
}

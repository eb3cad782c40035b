//! A provider's key set: fetched when first needed, fetched again for an
//! unknown kid at most once a minute (by the clock) and once for callers
//! that miss together, after an hour on its next use; keys that cannot be
//! the signer's are left out.

use std::time::Duration;

use expect_test::expect;
use jsonwebtoken::Algorithm;
use lattice_core::identity::{Audience, TokenIssuers};
use rand::Rng;
use serde_json::json;

use crate::bearer::said;
use crate::idp::{Idp, TestKey, forged};

fn random_kid() -> String {
    let n: u128 = rand::rng().random();
    format!("kid-{n:x}")
}

#[tokio::test]
async fn a_flood_of_unknown_kids_costs_at_most_one_fetch_a_minute() {
    let idp = Idp::start(&[TestKey::rsa_a()]).await;
    let p = idp.providers();
    assert_eq!(p.jwks_fetches("corp"), 0, "nothing is fetched before a token needs a key");
    let claims = idp.claims("ana");
    assert_eq!(said(&p, &TestKey::rsa_a().sign(&claims), Audience::Api).await, "ok: corp acme/ana member");
    assert_eq!(p.jwks_fetches("corp"), 1);

    // Within the minute after a fetch: no fetch at all.
    for _ in 0..50 {
        let token = forged(&json!({"alg": "RS256", "kid": random_kid()}), &claims, "c2lnbmF0dXJl");
        assert!(said(&p, &token, Audience::Api).await.starts_with("no key of provider corp has kid"));
    }
    assert_eq!(p.jwks_fetches("corp"), 1);

    // A minute later, fifty at once (the set slow to come): one fetch, shared.
    idp.advance(60);
    idp.delay_jwks(Duration::from_millis(300));
    let tasks: Vec<_> = (0..50)
        .map(|_| {
            let p = p.clone();
            let token = forged(&json!({"alg": "RS256", "kid": random_kid()}), &claims, "c2lnbmF0dXJl");
            tokio::spawn(async move { p.verify(&token, Audience::Api).await })
        })
        .collect();
    for task in tasks {
        assert!(task.await.unwrap().is_err());
    }
    assert_eq!(p.jwks_fetches("corp"), 2);
    idp.delay_jwks(Duration::ZERO);

    idp.advance(59);
    let token = forged(&json!({"alg": "RS256", "kid": random_kid()}), &claims, "c2lnbmF0dXJl");
    assert!(p.verify(&token, Audience::Api).await.is_err());
    assert_eq!(p.jwks_fetches("corp"), 2, "59 s after the last fetch");
    idp.advance(1);
    assert!(p.verify(&token, Audience::Api).await.is_err());
    assert_eq!(p.jwks_fetches("corp"), 3, "60 s after it");
}

#[tokio::test]
async fn a_rotated_key_is_followed_within_a_minute() {
    let idp = Idp::start(&[TestKey::rsa_a()]).await;
    let p = idp.providers();
    assert!(said(&p, &TestKey::rsa_a().sign(&idp.claims("ana")), Audience::Api).await.starts_with("ok"));
    idp.publish(&[TestKey::rsa_a(), TestKey::rsa_b()]);
    idp.advance(30);
    let by_b = TestKey::rsa_b().sign(&idp.claims("ana"));
    expect![[r#"no key of provider corp has kid "b""#]].assert_eq(&said(&p, &by_b, Audience::Api).await);
    idp.advance(30);
    assert_eq!(said(&p, &by_b, Audience::Api).await, "ok: corp acme/ana member");
    assert_eq!(p.jwks_fetches("corp"), 2);

    // A key the provider dropped is trusted until the set is an hour old.
    idp.publish(&[TestKey::rsa_b()]);
    idp.advance(3599);
    assert!(said(&p, &TestKey::rsa_a().sign(&idp.claims("ana")), Audience::Api).await.starts_with("ok"));
    idp.advance(1);
    expect![[r#"no key of provider corp has kid "a""#]].assert_eq(&said(&p, &TestKey::rsa_a().sign(&idp.claims("ana")), Audience::Api).await);
    assert_eq!(p.jwks_fetches("corp"), 3);
}

#[tokio::test]
async fn a_token_without_a_kid_needs_a_set_of_one_key_for_its_alg() {
    let idp = Idp::start(&[TestKey::rsa_a()]).await;
    let p = idp.providers();
    let claims = idp.claims("ana");
    let no_kid = TestKey::rsa_a().sign_with(&json!({"alg": "RS256"}), &claims);
    assert_eq!(said(&p, &no_kid, Audience::Api).await, "ok: corp acme/ana member");

    let idp = Idp::start(&[TestKey::rsa_a(), TestKey::rsa_b(), TestKey::ec()]).await;
    let p = idp.providers();
    let claims = idp.claims("ana");
    let no_kid = TestKey::rsa_a().sign_with(&json!({"alg": "RS256"}), &claims);
    expect!["the token names no kid, and provider corp has 2 keys for alg RS256: which one signed it is not said"]
        .assert_eq(&said(&p, &no_kid, Audience::Api).await);
    let ec_no_kid = TestKey::ec().sign_with(&json!({"alg": "ES256"}), &claims);
    assert_eq!(said(&p, &ec_no_kid, Audience::Api).await, "ok: corp acme/ana member", "one key for ES256");
}

#[tokio::test]
async fn a_key_checks_only_the_algorithms_it_is_for() {
    let rsa = TestKey::rsa_a();
    let ps = TestKey::rsa_b().with("ps", Algorithm::PS256);
    let mut ps_jwk_alg = ps.clone();
    ps_jwk_alg.jwk["alg"] = json!("PS256");
    let idp = Idp::start(&[rsa.clone(), ps_jwk_alg.clone(), TestKey::ec()]).await;
    let p = idp.providers();
    let claims = idp.claims("ana");
    // The JWK of `a` says alg RS256: a PS256 token under its kid is refused.
    let ps_under_a = rsa.with("a", Algorithm::PS256).sign(&claims);
    expect![[r#"provider corp's key "a" is for alg RS256, which cannot check alg PS256"#]].assert_eq(&said(&p, &ps_under_a, Audience::Api).await);
    assert_eq!(said(&p, &ps_jwk_alg.sign(&claims), Audience::Api).await, "ok: corp acme/ana member");
    let es_under_rsa = TestKey::ec().with("a", Algorithm::ES256).sign(&claims);
    expect![[r#"provider corp's key "a" is an RSA key, which cannot check alg ES256"#]].assert_eq(&said(&p, &es_under_rsa, Audience::Api).await);
    let rs_under_ec = rsa.with("ec", Algorithm::RS256).sign(&claims);
    expect![[r#"provider corp's key "ec" is an EC P-256 key, which cannot check alg RS256"#]].assert_eq(&said(&p, &rs_under_ec, Audience::Api).await);

    // Without an alg in the JWK, any algorithm of its type.
    let mut bare = TestKey::ec();
    bare.jwk.as_object_mut().unwrap().remove("alg");
    let idp = Idp::start(&[bare]).await;
    let p = idp.providers();
    assert_eq!(said(&p, &TestKey::ec().sign(&idp.claims("ana")), Audience::Api).await, "ok: corp acme/ana member");
}

#[tokio::test]
async fn keys_that_cannot_be_the_signers_are_left_out() {
    let short = TestKey::rsa_1024();
    let mut hmac = json!({"kty": "oct", "k": "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0", "kid": "h", "alg": "HS256"});
    hmac["use"] = json!("sig");
    let mut enc = TestKey::rsa_b().with("enc", Algorithm::RS256);
    enc.jwk["use"] = json!("enc");
    let idp = Idp::start(&[TestKey::rsa_a()]).await;
    idp.publish_raw(json!({"keys": [short.jwk, hmac, enc.jwk, TestKey::rsa_a().jwk]}));
    let p = idp.providers();
    let claims = idp.claims("ana");
    expect![[r#"no key of provider corp has kid "short""#]].assert_eq(&said(&p, &short.sign(&claims), Audience::Api).await);
    expect![[r#"no key of provider corp has kid "enc""#]].assert_eq(&said(&p, &enc.sign(&claims), Audience::Api).await);
    assert_eq!(said(&p, &TestKey::rsa_a().sign(&claims), Audience::Api).await, "ok: corp acme/ana member");
}

#[tokio::test]
async fn a_key_set_past_its_bounds_is_refused_whole() {
    let idp = Idp::start(&[TestKey::rsa_a()]).await;
    idp.publish_raw(json!({"keys": vec![TestKey::rsa_a().jwk; 101]}));
    let p = idp.providers();
    let token = TestKey::rsa_a().sign(&idp.claims("ana"));
    expect!["Unavailable: unavailable: provider corp's key set (http://127.0.0.1:PORT/jwks) holds 101 keys, over the limit 100"]
        .assert_eq(&idp.unport(&said(&p, &token, Audience::Api).await));

    idp.publish_raw(json!({"keys": [TestKey::rsa_a().jwk], "padding": "x".repeat(300 * 1024)}));
    let fetched = p.jwks_fetches("corp");
    expect!["Unavailable: unavailable: provider corp's key set (http://127.0.0.1:PORT/jwks): the answer is over 262144 bytes"]
        .assert_eq(&idp.unport(&said(&p, &token, Audience::Api).await));
    assert_eq!(p.jwks_fetches("corp"), fetched + 1, "with no set yet, each use tries again");

    idp.publish(&[TestKey::rsa_a()]);
    assert_eq!(said(&p, &token, Audience::Api).await, "ok: corp acme/ana member");
}

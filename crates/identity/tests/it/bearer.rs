//! A provider's tokens as bearer tokens (`TokenIssuers::verify`): each rule
//! of the one verifier at its edge. Every refusal is also checked not to
//! quote the token.

use expect_test::{Expect, expect};
use lattice_core::identity::{Audience, TokenIssuers};
use lattice_identity::Providers;
use serde_json::{Value, json};

use crate::idp::{CLIENT_ID, Idp, MCP_RESOURCE, TestKey, forged, hmac, reason};

/// What verifying `token` for `audience` says: the person it vouches for,
/// or the refusal's reason (which must not quote the token).
pub async fn said(providers: &Providers, token: &str, audience: Audience) -> String {
    let outcome = providers.verify(token, audience).await;
    if let Ok(v) = &outcome {
        return format!("ok: {} {}/{} {}", v.provider, v.tenant, v.user, v.role.as_str());
    }
    let reason = reason(outcome);
    for part in token.split('.').filter(|p| p.len() >= 8) {
        assert!(!reason.contains(part), "the refusal quotes the token: {reason}");
    }
    reason
}

/// Verifies, for the API, a token of `claims` changed by `change`, signed
/// by key `a`.
async fn check(idp: &Idp, providers: &Providers, change: impl FnOnce(&mut Value), expect: Expect) {
    let mut claims = idp.claims("ana");
    change(&mut claims);
    let token = TestKey::rsa_a().sign(&claims);
    expect.assert_eq(&said(providers, &token, Audience::Api).await);
}

fn remove(claims: &mut Value, name: &str) {
    claims.as_object_mut().expect("claims are an object").remove(name);
}

#[tokio::test]
async fn times_are_checked_at_the_edges_of_the_skew() {
    let idp = Idp::start(&[TestKey::rsa_a()]).await;
    let p = idp.providers();
    let now = idp.now();
    check(&idp, &p, |_| {}, expect!["ok: corp acme/ana member"]).await;
    check(&idp, &p, |c| c["exp"] = json!(now - 60), expect!["ok: corp acme/ana member"]).await;
    check(&idp, &p, |c| c["exp"] = json!(now - 61), expect!["the token has expired (61 s ago, beyond the allowed clock skew of 60 s)"]).await;
    check(&idp, &p, |c| c["nbf"] = json!(now + 60), expect!["ok: corp acme/ana member"]).await;
    check(&idp, &p, |c| c["nbf"] = json!(now + 61), expect!["the token is not valid yet (nbf is 61 s ahead, beyond the allowed clock skew of 60 s)"])
        .await;
    check(&idp, &p, |c| c["iat"] = json!(now + 60), expect!["ok: corp acme/ana member"]).await;
    check(
        &idp,
        &p,
        |c| c["iat"] = json!(now + 61),
        expect!["the token was issued in the future (61 s ahead, beyond the allowed clock skew of 60 s)"],
    )
    .await;
    check(&idp, &p, |c| remove(c, "exp"), expect!["the token has no exp"]).await;
    check(&idp, &p, |c| remove(c, "iat"), expect!["the token has no iat"]).await;
    check(&idp, &p, |c| c["exp"] = json!("tomorrow"), expect!["the token's exp is not a number"]).await;
    check(&idp, &p, |c| c["exp"] = json!(now as f64 + 0.5), expect!["ok: corp acme/ana member"]).await;
}

#[tokio::test]
async fn expiry_is_by_the_deployments_clock_and_the_configured_skew() {
    let idp = Idp::start(&[TestKey::rsa_a()]).await;
    let p = idp.providers();
    let token = TestKey::rsa_a().sign(&idp.claims("ana"));
    idp.advance(300 + 60);
    assert_eq!(said(&p, &token, Audience::Api).await, "ok: corp acme/ana member", "its five minutes and the skew");
    idp.advance(1);
    assert_eq!(said(&p, &token, Audience::Api).await, "the token has expired (61 s ago, beyond the allowed clock skew of 60 s)");

    let mut config = idp.config();
    config.clock_skew_secs = Some(0);
    let strict = idp.providers_with(config);
    let now = idp.now();
    check(&idp, &strict, |c| c["exp"] = json!(now), expect!["ok: corp acme/ana member"]).await;
    check(&idp, &strict, |c| c["exp"] = json!(now - 1), expect!["the token has expired (1 s ago, beyond the allowed clock skew of 0 s)"]).await;
}

#[tokio::test]
async fn only_the_allowed_public_key_algorithms_are_taken() {
    let rsa = TestKey::rsa_a();
    let idp = Idp::start(&[rsa.clone(), TestKey::ec(), TestKey::ed()]).await;
    let p = idp.providers();
    let claims = idp.claims("ana");

    let none = forged(&json!({"alg": "none", "kid": "a"}), &claims, "");
    expect!["alg none is never accepted"].assert_eq(&said(&p, &none, Audience::Api).await);
    let none_signed = forged(&json!({"alg": "none"}), &claims, "c2lnbmF0dXJl");
    expect!["alg none is never accepted"].assert_eq(&said(&p, &none_signed, Audience::Api).await);

    // The classic confusion: an HS256 token keyed by the provider's public
    // key, which anyone can fetch. Refused for its alg, before any key.
    let public_pem = include_str!("keys/rsa_a.pub.pem");
    for secret in [public_pem.as_bytes(), rsa.jwk.to_string().as_bytes()] {
        let token = hmac(&json!({"alg": "HS256", "kid": "a", "typ": "JWT"}), &claims, secret);
        expect!["alg HS256 is not accepted from provider corp (allowed: RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, EdDSA): an HMAC (shared-secret) signature is never accepted from a provider, whose keys are public"]
            .assert_eq(&said(&p, &token, Audience::Api).await);
    }
    let before = p.jwks_fetches("corp");
    let hs512 = forged(&json!({"alg": "HS512", "kid": "a"}), &claims, "c2lnbmF0dXJl");
    assert!(said(&p, &hs512, Audience::Api).await.starts_with("alg HS512 is not accepted from provider corp"));
    let unknown = forged(&json!({"alg": "ES512", "kid": "ec"}), &claims, "c2lnbmF0dXJl");
    expect![[r#"alg "ES512" is not accepted from provider corp (allowed: RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, EdDSA)"#]]
        .assert_eq(&said(&p, &unknown, Audience::Api).await);
    let no_alg = forged(&json!({"kid": "a"}), &claims, "c2lnbmF0dXJl");
    expect!["the token's header names no alg"].assert_eq(&said(&p, &no_alg, Audience::Api).await);
    assert_eq!(p.jwks_fetches("corp"), before, "a token refused by its header fetches no key");

    expect!["ok: corp acme/ana member"].assert_eq(&said(&p, &TestKey::ec().sign(&claims), Audience::Api).await);
    expect!["ok: corp acme/ana member"].assert_eq(&said(&p, &TestKey::ed().sign(&claims), Audience::Api).await);

    let mut config = idp.config();
    config.algorithms = Some(vec!["RS256".into()]);
    let rs256_only = idp.providers_with(config);
    expect!["alg ES256 is not accepted from provider corp (allowed: RS256)"]
        .assert_eq(&said(&rs256_only, &TestKey::ec().sign(&claims), Audience::Api).await);
    expect!["ok: corp acme/ana member"].assert_eq(&said(&rs256_only, &rsa.sign(&claims), Audience::Api).await);
}

#[tokio::test]
async fn the_header_may_not_carry_what_is_not_understood() {
    let idp = Idp::start(&[TestKey::rsa_a()]).await;
    let p = idp.providers();
    let key = TestKey::rsa_a();
    let claims = idp.claims("ana");
    let crit = key.sign_with(&json!({"alg": "RS256", "kid": "a", "crit": ["exp"], "exp": 1}), &claims);
    expect![[r#"the token's header lists critical extensions (["exp"]), and none is understood here"#]]
        .assert_eq(&said(&p, &crit, Audience::Api).await);
    let logout_typ = key.sign_with(&json!({"alg": "RS256", "kid": "a", "typ": "logout+jwt"}), &claims);
    expect!["a logout token is not accepted as a sign-in or a bearer token"].assert_eq(&said(&p, &logout_typ, Audience::Api).await);
    let mut logout_claims = claims.clone();
    logout_claims["events"] = json!({"http://schemas.openid.net/event/backchannel-logout": {}});
    expect!["a logout token is not accepted as a bearer token"].assert_eq(&said(&p, &key.sign(&logout_claims), Audience::Api).await);
    // A key named by the header itself is never used: the set's key checks it.
    let own_key = TestKey::rsa_b().sign_with(&json!({"alg": "RS256", "kid": "a", "jwk": TestKey::rsa_b().jwk}), &claims);
    expect![[r#"the token's signature does not verify with provider corp's key "a""#]].assert_eq(&said(&p, &own_key, Audience::Api).await);
}

#[tokio::test]
async fn issuers_match_exactly() {
    let idp = Idp::start(&[TestKey::rsa_a()]).await;
    let p = idp.providers();
    assert!(p.trusts(&idp.issuer));
    assert!(!p.trusts(&format!("{}/", idp.issuer)), "a trailing slash is another issuer");
    assert!(!p.trusts("https://evil.example"));
    check(
        &idp,
        &p,
        |c| c["iss"] = json!("https://evil.example"),
        expect![[r#"the token's issuer "https://evil.example" is not a configured provider"#]],
    )
    .await;
    let slash = format!("{}/", idp.issuer);
    let mut claims = idp.claims("ana");
    claims["iss"] = json!(slash);
    expect![[r#"the token's issuer "http://127.0.0.1:PORT/" is not a configured provider"#]]
        .assert_eq(&idp.unport(&said(&p, &TestKey::rsa_a().sign(&claims), Audience::Api).await));
    check(&idp, &p, |c| remove(c, "iss"), expect!["the token names no issuer"]).await;
}

#[tokio::test]
async fn the_audience_is_the_client_or_for_mcp_the_mcp_resource() {
    let idp = Idp::start(&[TestKey::rsa_a()]).await;
    let mut config = idp.config();
    config.mcp_audience = Some("https://corp.example/lattice-mcp".into());
    let p = idp.providers_with(config);
    let key = TestKey::rsa_a();
    let token = |aud: Value| {
        let mut claims = idp.claims("ana");
        claims["aud"] = aud;
        key.sign(&claims)
    };
    let cases = [
        (json!(CLIENT_ID), Audience::Api, "ok: corp acme/ana member"),
        (json!(CLIENT_ID), Audience::Mcp, "ok: corp acme/ana member"),
        (json!(["other", CLIENT_ID]), Audience::Api, "ok: corp acme/ana member"),
        (json!(MCP_RESOURCE), Audience::Mcp, "ok: corp acme/ana member"),
        (json!(MCP_RESOURCE), Audience::Api, "the token's audience is not this deployment's (expected lattice)"),
        (json!("https://corp.example/lattice-mcp"), Audience::Mcp, "ok: corp acme/ana member"),
        (json!("https://corp.example/lattice-mcp"), Audience::Api, "the token's audience is not this deployment's (expected lattice)"),
        (
            json!("https://elsewhere.example"),
            Audience::Mcp,
            "the token's audience is not this deployment's (expected lattice or https://corp.example/lattice-mcp or http://127.0.0.1:8080/mcp)",
        ),
        (json!([]), Audience::Api, "the token names no audience (expected lattice)"),
        (json!(7), Audience::Api, "the token's aud is not a string or an array of strings"),
        (json!(vec!["x"; 65]), Audience::Api, "the token names 65 audiences, over the limit 64"),
    ];
    for (aud, audience, expected) in cases {
        assert_eq!(said(&p, &token(aud.clone()), audience).await, expected, "aud {aud} for {audience:?}");
    }
    let mut claims = idp.claims("ana");
    remove(&mut claims, "aud");
    assert_eq!(said(&p, &key.sign(&claims), Audience::Api).await, "the token names no audience (expected lattice)");
}

#[tokio::test]
async fn signatures_are_the_keys_and_tokens_are_bounded() {
    let idp = Idp::start(&[TestKey::rsa_a()]).await;
    let p = idp.providers();
    let claims = idp.claims("ana");
    let by_b_as_a = TestKey::rsa_b().with("a", jsonwebtoken::Algorithm::RS256).sign(&claims);
    expect![[r#"the token's signature does not verify with provider corp's key "a""#]].assert_eq(&said(&p, &by_b_as_a, Audience::Api).await);

    let good = TestKey::rsa_a().sign(&claims);
    let mut other = claims.clone();
    other["preferred_username"] = json!("admin");
    let parts: Vec<&str> = good.split('.').collect();
    let swapped = format!("{}.{}.{}", parts[0], crate::idp::b64(&other), parts[2]);
    expect![[r#"the token's signature does not verify with provider corp's key "a""#]].assert_eq(&said(&p, &swapped, Audience::Api).await);

    let mut big = claims.clone();
    big["padding"] = json!("x".repeat(16 * 1024));
    let token = TestKey::rsa_a().sign(&big);
    assert_eq!(said(&p, &token, Audience::Api).await, format!("the token is {} bytes, over the limit 16384", token.len()));
    expect!["the token is not a signed JWT (three dot-separated parts)"].assert_eq(&said(&p, "not-a-token", Audience::Api).await);
    expect!["the token is encrypted (JWE): only signed tokens are accepted"].assert_eq(&said(&p, "a.b.c.d.e", Audience::Api).await);
}

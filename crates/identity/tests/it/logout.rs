//! Back-Channel Logout 1.0: a provider's logout token, each rule at its edge.

use expect_test::{Expect, expect};
use lattice_identity::{LogoutNotice, Providers};
use serde_json::{Value, json};

use crate::idp::{CLIENT_ID, Idp, TestKey, reason};

const EVENT: &str = "http://schemas.openid.net/event/backchannel-logout";

fn logout_claims(idp: &Idp, jti: &str) -> Value {
    json!({
        "iss": idp.issuer,
        "aud": CLIENT_ID,
        "iat": idp.now(),
        "exp": idp.now() + 120,
        "jti": jti,
        "sub": "sub-ana",
        "sid": "op-session-1",
        "events": {EVENT: {}},
    })
}

fn logout_header() -> Value {
    json!({"alg": "RS256", "kid": "a", "typ": "logout+jwt"})
}

async fn check(idp: &Idp, p: &Providers, jti: &str, change: impl FnOnce(&mut Value, &mut Value), expect: Expect) {
    let (mut header, mut claims) = (logout_header(), logout_claims(idp, jti));
    change(&mut header, &mut claims);
    let token = TestKey::rsa_a().sign_with(&header, &claims);
    expect.assert_eq(&idp.unport(&reason(p.verify_logout("corp", &token).await)));
}

fn remove(claims: &mut Value, name: &str) {
    claims.as_object_mut().expect("claims are an object").remove(name);
}

#[tokio::test]
async fn a_logout_token_names_who_signed_out_once() {
    let idp = Idp::start(&[TestKey::rsa_a()]).await;
    let p = idp.providers();
    let token = TestKey::rsa_a().sign_with(&logout_header(), &logout_claims(&idp, "jti-1"));
    assert_eq!(
        p.verify_logout("corp", &token).await.unwrap(),
        LogoutNotice { provider: "corp".into(), subject: Some("sub-ana".into()), sid: Some("op-session-1".into()) }
    );
    expect![[r#"the logout token "jti-1" was taken already"#]].assert_eq(&reason(p.verify_logout("corp", &token).await));
    idp.advance(100);
    expect![[r#"the logout token "jti-1" was taken already"#]].assert_eq(&reason(p.verify_logout("corp", &token).await));
    expect!["NotFound: not found"].assert_eq(&reason(p.verify_logout("nope", &token).await));
}

#[tokio::test]
async fn each_rule_of_a_logout_token() {
    let idp = Idp::start(&[TestKey::rsa_a()]).await;
    let p = idp.providers();
    let now = idp.now();
    check(
        &idp,
        &p,
        "ok-sid-only",
        |_, c| remove(c, "sub"),
        expect![[r#"accepted: LogoutNotice { provider: "corp", subject: None, sid: Some("op-session-1") }"#]],
    )
    .await;
    check(
        &idp,
        &p,
        "ok-sub-only",
        |_, c| remove(c, "sid"),
        expect![[r#"accepted: LogoutNotice { provider: "corp", subject: Some("sub-ana"), sid: None }"#]],
    )
    .await;
    check(
        &idp,
        &p,
        "ok-no-typ",
        |h, c| {
            remove(h, "typ");
            remove(c, "exp");
        },
        expect![[r#"accepted: LogoutNotice { provider: "corp", subject: Some("sub-ana"), sid: Some("op-session-1") }"#]],
    )
    .await;
    check(&idp, &p, "typ", |h, _| h["typ"] = json!("JWT"), expect![[r#"a logout token's typ must be logout+jwt, not "JWT""#]]).await;
    check(
        &idp,
        &p,
        "app-typ",
        |h, _| h["typ"] = json!("application/logout+jwt"),
        expect![[r#"accepted: LogoutNotice { provider: "corp", subject: Some("sub-ana"), sid: Some("op-session-1") }"#]],
    )
    .await;
    check(&idp, &p, "nonce", |_, c| c["nonce"] = json!("n"), expect!["a logout token must hold no nonce"]).await;
    check(
        &idp,
        &p,
        "no-events",
        |_, c| remove(c, "events"),
        expect!["the logout token's events do not hold http://schemas.openid.net/event/backchannel-logout"],
    )
    .await;
    check(
        &idp,
        &p,
        "other-event",
        |_, c| c["events"] = json!({"http://schemas.openid.net/event/other": {}}),
        expect!["the logout token's events do not hold http://schemas.openid.net/event/backchannel-logout"],
    )
    .await;
    check(
        &idp,
        &p,
        "event-not-object",
        |_, c| c["events"] = json!({EVENT: true}),
        expect!["the logout token's event http://schemas.openid.net/event/backchannel-logout is not a JSON object"],
    )
    .await;
    check(
        &idp,
        &p,
        "nobody",
        |_, c| {
            remove(c, "sub");
            remove(c, "sid");
        },
        expect!["the logout token names neither sub nor sid"],
    )
    .await;
    check(&idp, &p, "", |_, c| remove(c, "jti"), expect!["the logout token has no jti"]).await;
    check(&idp, &p, "aud", |_, c| c["aud"] = json!("someone-else"), expect!["the token's audience is not this deployment's (expected lattice)"])
        .await;
    check(
        &idp,
        &p,
        "iss",
        |_, c| c["iss"] = json!("https://evil.example"),
        expect![[r#"the token's issuer "https://evil.example" is not provider corp's (http://127.0.0.1:PORT)"#]],
    )
    .await;
    check(
        &idp,
        &p,
        "future",
        |_, c| c["iat"] = json!(now + 61),
        expect!["the token was issued in the future (61 s ahead, beyond the allowed clock skew of 60 s)"],
    )
    .await;
    check(&idp, &p, "no-iat", |_, c| remove(c, "iat"), expect!["the token has no iat"]).await;
    check(
        &idp,
        &p,
        "old",
        |_, c| {
            c["iat"] = json!(now - 361);
            remove(c, "exp");
        },
        expect!["the logout token was issued 361 s ago: one is taken for 300 s (and the clock skew of 60 s)"],
    )
    .await;
    check(
        &idp,
        &p,
        "old-edge",
        |_, c| {
            c["iat"] = json!(now - 360);
            remove(c, "exp");
        },
        expect![[r#"accepted: LogoutNotice { provider: "corp", subject: Some("sub-ana"), sid: Some("op-session-1") }"#]],
    )
    .await;
    check(&idp, &p, "expired", |_, c| c["exp"] = json!(now - 61), expect!["the token has expired (61 s ago, beyond the allowed clock skew of 60 s)"])
        .await;
    check(&idp, &p, "none", |h, _| h["alg"] = json!("none"), expect!["alg none is never accepted"]).await;
}

#[tokio::test]
async fn an_id_token_is_no_logout_token() {
    let idp = Idp::start(&[TestKey::rsa_a()]).await;
    let p = idp.providers();
    let mut id_claims = idp.claims("ana");
    id_claims["nonce"] = json!("n");
    let id_token = TestKey::rsa_a().sign(&id_claims);
    expect![[r#"a logout token's typ must be logout+jwt, not "JWT""#]].assert_eq(&reason(p.verify_logout("corp", &id_token).await));
    let untyped = TestKey::rsa_a().sign_with(&json!({"alg": "RS256", "kid": "a"}), &id_claims);
    expect!["a logout token must hold no nonce"].assert_eq(&reason(p.verify_logout("corp", &untyped).await));
}

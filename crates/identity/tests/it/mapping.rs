//! Claims mapped to a lattice person: tenant (fixed or by claim), user id
//! (checked, `key_` refused), groups (bounded) and the role their rules give.

use std::collections::BTreeMap;

use expect_test::{Expect, expect};
use lattice_core::identity::Audience;
use lattice_identity::Providers;
use serde_json::{Value, json};

use crate::bearer::said;
use crate::idp::{Idp, TestKey};

async fn check(idp: &Idp, p: &Providers, change: impl FnOnce(&mut Value), expect: Expect) {
    let mut claims = idp.claims("ana");
    change(&mut claims);
    expect.assert_eq(&said(p, &TestKey::rsa_a().sign(&claims), Audience::Api).await);
}

#[tokio::test]
async fn the_user_id_is_the_user_claim_checked() {
    let idp = Idp::start(&[TestKey::rsa_a()]).await;
    let p = idp.providers();
    check(&idp, &p, |c| c["preferred_username"] = json!("ana.lima@acme.example"), expect!["ok: corp acme/ana.lima@acme.example member"]).await;
    check(
        &idp,
        &p,
        |c| c["preferred_username"] = json!("key_01hx"),
        expect![[r#"the user id "key_01hx" is refused: the prefix key_ is reserved for API keys"#]],
    )
    .await;
    check(
        &idp,
        &p,
        |c| c["preferred_username"] = json!("KEY_01hx"),
        expect![[r#"the user id "KEY_01hx" is refused: the prefix key_ is reserved for API keys"#]],
    )
    .await;
    check(&idp, &p, |c| c["preferred_username"] = json!("keys"), expect!["ok: corp acme/keys member"]).await;
    check(
        &idp,
        &p,
        |c| c["preferred_username"] = json!("ana/lima"),
        expect![[r#"the token's preferred_username "ana/lima" is not a lattice user id: character '/' is not allowed"#]],
    )
    .await;
    check(&idp, &p, |c| c["preferred_username"] = json!(7), expect!["the token's preferred_username claim (the user id) is not a string"]).await;
    check(
        &idp,
        &p,
        |c| _ = c.as_object_mut().unwrap().remove("preferred_username"),
        expect!["the token has no preferred_username claim (provider corp's user id)"],
    )
    .await;

    let mut config = idp.config();
    config.user_claim = "email".into();
    let by_email = idp.providers_with(config);
    check(&idp, &by_email, |c| c["email"] = json!("ana@acme.example"), expect!["ok: corp acme/ana@acme.example member"]).await;
}

#[tokio::test]
async fn the_tenant_is_fixed_or_read_from_its_claim() {
    let idp = Idp::start(&[TestKey::rsa_a()]).await;
    let mut config = idp.config();
    config.tenant = None;
    config.tenant_claim = Some("org".into());
    config.roles = BTreeMap::from([("admins".to_owned(), "tenant_admin".to_owned())]);
    let p = idp.providers_with(config);
    check(&idp, &p, |c| c["org"] = json!("globex"), expect!["ok: corp globex/ana member"]).await;
    check(
        &idp,
        &p,
        |c| {
            c["org"] = json!("initech");
            c["groups"] = json!(["admins"]);
        },
        expect!["ok: corp initech/ana tenant_admin"],
    )
    .await;
    check(&idp, &p, |_| {}, expect!["the token has no org claim (provider corp's tenant)"]).await;
    check(&idp, &p, |c| c["org"] = json!("a.b"), expect![[r#"the token's org "a.b" is not a tenant id: character '.' is not allowed"#]]).await;
    check(&idp, &p, |c| c["org"] = json!(["acme"]), expect!["the token's org claim (provider corp's tenant) is not a string"]).await;
}

#[tokio::test]
async fn groups_are_bounded_and_give_roles_by_their_providers_rules() {
    let idp = Idp::start(&[TestKey::rsa_a()]).await;
    let p = idp.providers();
    check(&idp, &p, |c| c["groups"] = json!(["staff", "admins"]), expect!["ok: corp acme/ana tenant_admin"]).await;
    check(&idp, &p, |c| c["groups"] = json!(["Admins"]), expect!["ok: corp acme/ana member"]).await;
    check(&idp, &p, |c| c["groups"] = json!(null), expect!["ok: corp acme/ana member"]).await;
    let many = |n: usize| (0..n).map(|i| format!("g{i}")).collect::<Vec<_>>();
    check(&idp, &p, |c| c["groups"] = json!(many(256)), expect!["ok: corp acme/ana member"]).await;
    check(&idp, &p, |c| c["groups"] = json!(many(257)), expect!["the token's groups claim holds 257 groups, over the limit 256"]).await;
    check(&idp, &p, |c| c["groups"] = json!(["x".repeat(256)]), expect!["ok: corp acme/ana member"]).await;
    check(&idp, &p, |c| c["groups"] = json!(["x".repeat(257)]), expect!["a group in the token's groups claim is 257 bytes, over the limit 256"])
        .await;
    check(&idp, &p, |c| c["groups"] = json!("admins"), expect!["the token's groups claim (the groups) is not an array of strings"]).await;
    check(&idp, &p, |c| c["groups"] = json!(["admins", 1]), expect!["the token's groups claim (the groups) is not an array of strings"]).await;

    // Another provider's rules never apply: its `operators` would make a
    // deployment admin of anyone in that group, in any tenant.
    let mut corp = idp.config();
    corp.groups_claim = "roles".into();
    let mut other = idp.config();
    other.client_id = "other-client".into();
    other.tenant = None;
    other.tenant_claim = Some("org".into());
    other.roles = BTreeMap::from([("operators".to_owned(), "deployment_admin".to_owned())]);
    let both = Providers::new(&BTreeMap::from([("corp".to_owned(), corp), ("other".to_owned(), other)]), idp.options()).unwrap();
    check(&idp, &both, |c| c["roles"] = json!(["operators"]), expect!["ok: corp acme/ana member"]).await;
    check(
        &idp,
        &both,
        |c| {
            c["aud"] = json!("other-client");
            c["org"] = json!("acme");
            c["groups"] = json!(["operators"]);
        },
        expect!["ok: other acme/ana deployment_admin"],
    )
    .await;
}

//! The configuration's check: what starts, and every refusal, naming its key.

use std::collections::BTreeMap;
use std::time::Duration;

use expect_test::{Expect, expect};
use lattice_core::identity::RoleRule;
use lattice_core::{Error, TenantId, TenantRole};
use lattice_identity::{ProviderConfig, ProviderInfo, Providers, ProvidersOptions, WorkspaceRoleConfig};

use crate::idp::temp_file;

fn options(allow_http: bool) -> ProvidersOptions {
    ProvidersOptions { allow_http, mcp_audience: None, clock: lattice_core::clock::system(), timeout: Duration::from_secs(1) }
}

fn corp() -> ProviderConfig {
    let mut config = ProviderConfig::new("https://login.example.com/realms/corp", "lattice");
    config.tenant = Some("acme".into());
    config
}

/// What `Providers::new` says of `configs`: "ok", or each problem on a line.
fn outcome(configs: &[(&str, ProviderConfig)], allow_http: bool) -> String {
    let configs: BTreeMap<String, ProviderConfig> = configs.iter().map(|(n, c)| (n.to_string(), c.clone())).collect();
    match Providers::new(&configs, options(allow_http)) {
        Ok(_) => "ok".to_owned(),
        Err(Error::ValidationFailed { errors, more }) => {
            let mut lines: Vec<String> = errors.iter().map(|e| format!("{} ({}): {}", e.path, e.keyword, e.message)).collect();
            if more > 0 {
                lines.push(format!("and {more} more"));
            }
            lines.join("\n")
        }
        Err(other) => format!("{other:?}"),
    }
}

fn check(change: impl FnOnce(&mut ProviderConfig), expect: Expect) {
    let mut config = corp();
    change(&mut config);
    expect.assert_eq(&outcome(&[("corp", config)], false));
}

#[test]
fn a_minimal_provider_starts_and_lists_by_its_name() {
    let providers = Providers::new(&BTreeMap::from([("corp".to_owned(), corp())]), options(false)).unwrap();
    assert_eq!(providers.list(), vec![ProviderInfo { name: "corp".into(), title: "corp".into() }]);
    assert!(!providers.is_empty());
    assert_eq!(providers.issuers(), vec!["https://login.example.com/realms/corp".to_owned()]);
    let none = Providers::new(&BTreeMap::new(), options(false)).unwrap();
    assert!(none.is_empty() && none.list().is_empty() && none.issuers().is_empty());
}

#[test]
fn the_defaults_are_the_documented_ones() {
    let config: ProviderConfig =
        serde_json::from_value(serde_json::json!({"issuer": "https://idp.example", "client_id": "c", "tenant": "acme"})).unwrap();
    assert_eq!(config.user_claim, "preferred_username");
    assert_eq!(config.groups_claim, "groups");
    assert_eq!(config.scopes, ["openid", "profile", "email"]);
    assert_eq!((config.algorithms, config.clock_skew_secs, config.title), (None, None, None));
    let unknown =
        serde_json::from_value::<ProviderConfig>(serde_json::json!({"issuer": "https://i", "client_id": "c", "tenant": "t", "secret": "x"}));
    assert!(unknown.unwrap_err().to_string().starts_with("unknown field `secret`"), "unknown keys are refused");
}

#[test]
fn issuers() {
    check(|_| {}, expect!["ok"]);
    check(
        |c| c.issuer = "http://idp.example".into(),
        expect!["oidc_providers.corp.issuer (url): http:// is accepted only outside the production profile: use https://"],
    );
    check(|c| c.issuer = "https://idp.example/?tenant=1".into(), expect!["oidc_providers.corp.issuer (url): must have no query or fragment"]);
    check(|c| c.issuer = "https://idp.example/#x".into(), expect!["oidc_providers.corp.issuer (url): must have no query or fragment"]);
    check(|c| c.issuer = "https://user:pw@idp.example".into(), expect!["oidc_providers.corp.issuer (url): must hold no user name or password"]);
    check(|c| c.issuer = "idp.example".into(), expect!["oidc_providers.corp.issuer (url): is not an absolute URL: relative URL without a base"]);
    check(|c| c.issuer = "ftp://idp.example".into(), expect!["oidc_providers.corp.issuer (url): the scheme ftp: is not https:"]);
    let mut http = corp();
    http.issuer = "http://127.0.0.1:9000".into();
    assert_eq!(outcome(&[("corp", http)], true), "ok", "http where the deployment allows it");
}

#[test]
fn names_tenants_and_claims() {
    expect!["oidc_providers.Corp (name): a provider's name is 1 to 32 bytes of a-z, 0-9, _ and -"].assert_eq(&outcome(&[("Corp", corp())], false));
    expect!["oidc_providers.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa (name): a provider's name is 1 to 32 bytes of a-z, 0-9, _ and -"]
        .assert_eq(&outcome(&[(&"a".repeat(33), corp())], false));
    assert_eq!(outcome(&[(&"a".repeat(32), corp()), ("b_2-x", corp())], false).lines().count(), 1, "the twin, not the names");
    check(|c| c.tenant_claim = Some("org".into()), expect!["oidc_providers.corp.tenant (oneOf): give tenant or tenant_claim, not both"]);
    check(
        |c| c.tenant = None,
        expect!["oidc_providers.corp.tenant (oneOf): give tenant (the tenant everyone it signs in belongs to) or tenant_claim (the claim naming it)"],
    );
    check(|c| c.tenant = Some("a.b".into()), expect![[r#"oidc_providers.corp.tenant (id): is not a tenant id: character '.' is not allowed"#]]);
    check(
        |c| c.user_claim = String::new(),
        expect!["oidc_providers.corp.user_claim (claim): a claim's name is 1 to 128 bytes without control characters"],
    );
    check(
        |c| {
            c.tenant = None;
            c.tenant_claim = Some("x".repeat(129));
        },
        expect!["oidc_providers.corp.tenant_claim (claim): a claim's name is 1 to 128 bytes without control characters"],
    );
    check(
        |c| c.client_id = "two words".into(),
        expect!["oidc_providers.corp.client_id (client_id): must be 1 to 255 bytes without spaces or control characters"],
    );
    check(|c| c.title = Some(" ".into()), expect!["oidc_providers.corp.title (title): must be 1 to 100 characters without control characters"]);
}

#[test]
fn two_providers_of_one_issuer_need_two_clients() {
    let mut other_tenant = corp();
    other_tenant.tenant = Some("globex".into());
    expect![
        "oidc_providers.corp2.client_id (unique): provider corp has the same issuer and client_id: a token could not say which of the two issued it"
    ]
    .assert_eq(&outcome(&[("corp", corp()), ("corp2", other_tenant.clone())], false));
    other_tenant.client_id = "lattice-globex".into();
    assert_eq!(outcome(&[("corp", corp()), ("corp2", other_tenant)], false), "ok");
}

#[test]
fn roles_and_workspace_roles() {
    check(
        |c| {
            c.roles.insert("admins".into(), "admin".into());
            c.roles.insert(String::new(), "member".into());
            c.workspace_roles.push(WorkspaceRoleConfig { group: "ops".into(), workspace: "ws ops".into(), role: "owner".into() });
        },
        expect![[r#"
            oidc_providers.corp.roles. (group): a group's name is 1 to 256 bytes
            oidc_providers.corp.roles.admins (enum): "admin" is not a tenant role (member, tenant_admin, deployment_admin)
            oidc_providers.corp.workspace_roles.0.workspace (id): is not a workspace id: character ' ' is not allowed
            oidc_providers.corp.workspace_roles.0.role (enum): "owner" is not a workspace role (viewer, respondent, editor, admin)"#]],
    );
}

#[test]
fn algorithms_scopes_and_skew() {
    check(
        |c| c.algorithms = Some(vec!["RS256".into(), "HS256".into(), "none".into(), "ES512".into()]),
        expect![[r#"
            oidc_providers.corp.algorithms.1 (algorithm): HS256 is refused: an HMAC (shared-secret) signature is never accepted from a provider, whose keys are public
            oidc_providers.corp.algorithms.2 (algorithm): none is refused: alg none is never accepted
            oidc_providers.corp.algorithms.3 (algorithm): "ES512" is not an algorithm verified here (known: RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, EdDSA)"#]],
    );
    check(|c| c.algorithms = Some(vec![]), expect!["oidc_providers.corp.algorithms (minItems): lists no algorithm: leave it out for the default"]);
    check(|c| c.clock_skew_secs = Some(300), expect!["ok"]);
    check(|c| c.clock_skew_secs = Some(301), expect!["oidc_providers.corp.clock_skew_secs (maximum): 301 exceeds the limit 300"]);
    check(
        |c| c.scopes = vec!["openid".into(), "two words".into()],
        expect!["oidc_providers.corp.scopes.1 (scope): a scope is 1 to 128 printable ASCII characters without spaces, quotes or backslashes"],
    );
    check(
        |c| c.mcp_audience = Some(String::new()),
        expect!["oidc_providers.corp.mcp_audience (audience): must be 1 to 2048 bytes without control characters"],
    );
}

#[test]
fn the_client_secret_file_is_read_trimmed_and_never_shown() {
    let (padded, blank, long) = (temp_file("  the-secret-value \n"), temp_file(" \n"), temp_file(&"x".repeat(5000)));
    check(|c| c.client_secret_file = Some(padded.path()), expect!["ok"]);
    check_redacted(|c| c.client_secret_file = Some(blank.path()), expect!["oidc_providers.corp.client_secret_file (file): <file> is empty"]);
    check_redacted(
        |c| c.client_secret_file = Some(long.path()),
        expect!["oidc_providers.corp.client_secret_file (file): <file> is over 4096 bytes: a client secret file holds the secret alone"],
    );
    let missing = std::env::temp_dir().join("lattice-identity-it-no-such-file");
    let mut config = corp();
    config.client_secret_file = Some(missing.clone());
    let said = outcome(&[("corp", config)], false);
    assert!(said.starts_with(&format!("oidc_providers.corp.client_secret_file (file): {} cannot be read: ", missing.display())), "{said}");

    let mut config = corp();
    let secret = temp_file("the-secret-value");
    config.client_secret_file = Some(secret.path());
    let providers = Providers::new(&BTreeMap::from([("corp".to_owned(), config.clone())]), options(false)).unwrap();
    for shown in [format!("{providers:?}"), format!("{config:?}")] {
        assert!(!shown.contains("the-secret-value"), "{shown}");
    }
}

/// As [`check`], with the temporary file's path shown as `<file>`.
fn check_redacted(change: impl FnOnce(&mut ProviderConfig), expect: Expect) {
    let mut config = corp();
    change(&mut config);
    let tmp = std::env::temp_dir().display().to_string();
    let said = outcome(&[("corp", config)], false);
    let redacted: Vec<String> = said.split(' ').map(|word| if word.starts_with(&tmp) { "<file>".to_owned() } else { word.to_owned() }).collect();
    expect.assert_eq(&redacted.join(" "));
}

#[test]
fn rules_are_gathered_with_the_tenant_they_hold_in() {
    let mut bound = corp();
    bound.roles.insert("admins".into(), "tenant_admin".into());
    let mut open = corp();
    open.tenant = None;
    open.tenant_claim = Some("org".into());
    open.client_id = "other".into();
    open.roles.insert("operators".into(), "deployment_admin".into());
    open.workspace_roles.push(WorkspaceRoleConfig { group: "ops".into(), workspace: "ws_ops".into(), role: "editor".into() });
    let providers = Providers::new(&BTreeMap::from([("bound".to_owned(), bound), ("open".to_owned(), open)]), options(false)).unwrap();
    let rules = providers.rules();
    assert_eq!(
        rules.roles,
        vec![
            RoleRule { tenant: Some(TenantId::parse("t", "acme").unwrap()), group: "admins".into(), role: TenantRole::TenantAdmin },
            RoleRule { tenant: None, group: "operators".into(), role: TenantRole::DeploymentAdmin },
        ]
    );
    assert_eq!(rules.workspaces.len(), 1);
    assert_eq!(rules.workspaces[0].tenant, None);
}

#[test]
fn a_deployment_has_at_most_64_providers() {
    let configs: Vec<(String, ProviderConfig)> = (0..65)
        .map(|i| {
            let mut c = corp();
            c.client_id = format!("client-{i}");
            (format!("p{i}"), c)
        })
        .collect();
    let named: Vec<(&str, ProviderConfig)> = configs.iter().map(|(n, c)| (n.as_str(), c.clone())).collect();
    expect!["oidc_providers (maxProperties): 65 providers exceed the limit 64"].assert_eq(&outcome(&named, false));
    assert_eq!(outcome(&named[..64], false), "ok");
}

//! A provider's configuration as an operator writes it
//! (`[oidc_providers.<name>]` in lattice.toml), and its check into the
//! settings the relying party runs with. Every refusal names the key it is
//! about (`oidc_providers.corp.issuer`), so a deployment that starts has
//! providers that can work.

use std::collections::BTreeMap;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

use lattice_core::identity::{GroupRules, RoleRule, WorkspaceRule};
use lattice_core::{Error, FieldError, Role, TenantId, TenantRole, WorkspaceId};
use serde::{Deserialize, Serialize};

use crate::alg::{self, Alg};

/// The algorithms a provider may sign with when its configuration names none.
pub const DEFAULT_ALGORITHMS: [&str; 9] = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA"];

/// The clock skew allowed when none is configured, and the most that may be.
pub const DEFAULT_CLOCK_SKEW_SECS: u64 = 60;
pub const MAX_CLOCK_SKEW_SECS: u64 = 300;

/// A provider's name: what the sign-in's paths and the logs call it.
const NAME_MAX: usize = 32;
/// More providers than a sign-in page can list.
const PROVIDERS_MAX: usize = 64;
const URL_MAX: usize = 2048;
const CLIENT_ID_MAX: usize = 255;
/// A client secret file holds a line, not a document.
const SECRET_FILE_MAX: u64 = 4096;
const TITLE_MAX: usize = 100;
const CLAIM_NAME_MAX: usize = 128;
pub(crate) const GROUP_MAX: usize = 256;
const RULES_MAX: usize = 1000;
const SCOPES_MAX: usize = 32;
const SCOPE_MAX: usize = 128;

/// One OpenID Connect provider lattice signs people in with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// The provider's issuer identifier, exactly as its tokens' `iss` and its
    /// discovery document say it (`https://login.example.com/realms/corp`).
    /// Discovery is read from `<issuer>/.well-known/openid-configuration`.
    /// `http://` only where the deployment allows it (outside production).
    pub issuer: String,
    /// The client id lattice is registered with at the provider: the
    /// audience of the ID tokens and API tokens it issues for lattice.
    pub client_id: String,
    /// A file holding the client secret (read once at start, surrounding
    /// whitespace trimmed). None: a public client, which proves itself by
    /// PKCE alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret_file: Option<PathBuf>,
    /// What the sign-in button says; the provider's name when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tenant everyone this provider signs in belongs to. Exactly one of
    /// `tenant` and `tenant_claim` is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The claim whose value is the person's tenant id (a provider that
    /// serves several tenants). Exactly one of `tenant` and `tenant_claim`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant_claim: Option<String>,
    /// The claim that becomes the person's lattice user id. Its value must
    /// be a valid user id, and never start with `key_` (API keys' prefix).
    #[serde(default = "default_user_claim")]
    pub user_claim: String,
    /// The claim holding the person's groups: an array of strings.
    #[serde(default = "default_groups_claim")]
    pub groups_claim: String,
    /// Groups that give a tenant role: a group's name to `member`,
    /// `tenant_admin` or `deployment_admin`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub roles: BTreeMap<String, String>,
    /// Groups that give a role in one workspace.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workspace_roles: Vec<WorkspaceRoleConfig>,
    /// The scopes a sign-in asks for; `openid` is always asked for.
    #[serde(default = "default_scopes")]
    pub scopes: Vec<String>,
    /// The audience this provider's access tokens for lattice's MCP endpoint
    /// carry, when it is not the deployment's MCP resource URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_audience: Option<String>,
    /// The JWS algorithms accepted from this provider (default:
    /// [`DEFAULT_ALGORITHMS`]). `none` and HS256/384/512 are refused even if
    /// listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub algorithms: Option<Vec<String>>,
    /// How far the provider's clock may differ from lattice's, in seconds
    /// (default 60, at most 300): `exp`, `nbf` and `iat` are checked within it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_skew_secs: Option<u64>,
}

/// A group that gives a role in one workspace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceRoleConfig {
    /// The group's name, exactly as the groups claim holds it.
    pub group: String,
    /// The workspace's id (`ws_…`).
    pub workspace: String,
    /// `viewer`, `respondent`, `editor` or `admin`.
    pub role: String,
}

fn default_user_claim() -> String {
    "preferred_username".to_owned()
}

fn default_groups_claim() -> String {
    "groups".to_owned()
}

fn default_scopes() -> Vec<String> {
    ["openid", "profile", "email"].map(str::to_owned).to_vec()
}

impl ProviderConfig {
    /// A provider of `issuer` for the client `client_id`, every other key
    /// at its default (a tenant or tenant claim is still to be given).
    pub fn new(issuer: impl Into<String>, client_id: impl Into<String>) -> Self {
        Self {
            issuer: issuer.into(),
            client_id: client_id.into(),
            client_secret_file: None,
            title: None,
            tenant: None,
            tenant_claim: None,
            user_claim: default_user_claim(),
            groups_claim: default_groups_claim(),
            roles: BTreeMap::new(),
            workspace_roles: Vec::new(),
            scopes: default_scopes(),
            mcp_audience: None,
            algorithms: None,
            clock_skew_secs: None,
        }
    }
}

/// The client secret, as read from its file: never printed.
#[derive(Clone)]
pub(crate) struct Secret(String);

impl Secret {
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

/// Where a provider's people belong.
#[derive(Clone, Debug)]
pub(crate) enum Tenancy {
    Fixed(TenantId),
    /// The claim that names the tenant.
    Claim(String),
}

/// A provider's checked configuration: what the relying party runs with.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub name: String,
    /// Exactly as configured: `iss` must equal it byte for byte.
    pub issuer: String,
    pub client_id: String,
    pub client_secret: Option<Secret>,
    pub title: String,
    pub tenancy: Tenancy,
    pub user_claim: String,
    pub groups_claim: String,
    /// This provider's rules alone: a person it signs in gets roles by
    /// them, never by another provider's.
    pub rules: GroupRules,
    /// The scopes to ask for besides `openid` (which the flow always adds).
    pub scopes: Vec<String>,
    pub mcp_audience: Option<String>,
    pub algorithms: Vec<Alg>,
    pub skew_secs: i64,
}

/// Checks every provider's configuration: the settings, or every problem
/// found (a validation failure naming `oidc_providers.<name>.<key>`).
pub(crate) fn check_all(configs: &BTreeMap<String, ProviderConfig>, allow_http: bool) -> Result<Vec<Settings>, Error> {
    let mut problems = Vec::new();
    if configs.len() > PROVIDERS_MAX {
        problems.push(FieldError::new("oidc_providers", "maxProperties", format!("{} providers exceed the limit {PROVIDERS_MAX}", configs.len())));
    }
    let mut checked: Vec<Settings> = Vec::new();
    for (name, config) in configs.iter().take(PROVIDERS_MAX) {
        if let Some(settings) = check(name, config, allow_http, &mut problems) {
            if let Some(twin) = checked.iter().find(|s| s.issuer == settings.issuer && s.client_id == settings.client_id) {
                problems.push(FieldError::new(
                    key(name, "client_id"),
                    "unique",
                    format!("provider {} has the same issuer and client_id: a token could not say which of the two issued it", twin.name),
                ));
            }
            checked.push(settings);
        }
    }
    Error::invalid(problems)?;
    Ok(checked)
}

fn key(name: &str, key: &str) -> String {
    let name: String = name.chars().take(NAME_MAX + 8).collect();
    if key.is_empty() { format!("oidc_providers.{name}") } else { format!("oidc_providers.{name}.{key}") }
}

/// One provider's settings, or `None` with its problems pushed.
fn check(name: &str, c: &ProviderConfig, allow_http: bool, problems: &mut Vec<FieldError>) -> Option<Settings> {
    let before = problems.len();
    let mut problem = |k: &str, keyword: &str, message: String| problems.push(FieldError::new(key(name, k), keyword, message));

    if name.is_empty() || name.len() > NAME_MAX || !name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-') {
        problem("", "name", format!("a provider's name is 1 to {NAME_MAX} bytes of a-z, 0-9, _ and -"));
    }

    if let Err(message) = check_issuer(&c.issuer, allow_http) {
        problem("issuer", "url", message);
    }

    if c.client_id.is_empty() || c.client_id.len() > CLIENT_ID_MAX || c.client_id.chars().any(|ch| ch.is_control() || ch.is_whitespace()) {
        problem("client_id", "client_id", format!("must be 1 to {CLIENT_ID_MAX} bytes without spaces or control characters"));
    }

    let client_secret = match &c.client_secret_file {
        None => None,
        Some(path) => match read_secret(path) {
            Ok(secret) => Some(secret),
            Err(message) => {
                problem("client_secret_file", "file", message);
                None
            }
        },
    };

    let title = match &c.title {
        None => name.to_owned(),
        Some(t) if t.trim().is_empty() || t.chars().count() > TITLE_MAX || t.chars().any(char::is_control) => {
            problem("title", "title", format!("must be 1 to {TITLE_MAX} characters without control characters"));
            String::new()
        }
        Some(t) => t.clone(),
    };

    let tenancy = match (&c.tenant, &c.tenant_claim) {
        (Some(_), Some(_)) => {
            problem("tenant", "oneOf", "give tenant or tenant_claim, not both".to_owned());
            None
        }
        (None, None) => {
            problem("tenant", "oneOf", "give tenant (the tenant everyone it signs in belongs to) or tenant_claim (the claim naming it)".to_owned());
            None
        }
        (Some(t), None) => match TenantId::parse("tenant", t) {
            Ok(t) => Some(Tenancy::Fixed(t)),
            Err(e) => {
                problem("tenant", "id", format!("is not a tenant id: {}", field_message(&e)));
                None
            }
        },
        (None, Some(claim)) => match claim_name(claim) {
            Ok(()) => Some(Tenancy::Claim(claim.clone())),
            Err(message) => {
                problem("tenant_claim", "claim", message);
                None
            }
        },
    };

    for (k, claim) in [("user_claim", &c.user_claim), ("groups_claim", &c.groups_claim)] {
        if let Err(message) = claim_name(claim) {
            problem(k, "claim", message);
        }
    }

    let rule_tenant = match &tenancy {
        Some(Tenancy::Fixed(t)) => Some(t.clone()),
        _ => None,
    };
    let mut rules = GroupRules::default();
    if c.roles.len() > RULES_MAX {
        problem("roles", "maxProperties", format!("{} groups exceed the limit {RULES_MAX}", c.roles.len()));
    }
    for (group, role) in c.roles.iter().take(RULES_MAX) {
        if let Err(message) = group_name(group) {
            problem(&format!("roles.{group}"), "group", message);
            continue;
        }
        match tenant_role(role) {
            Some(role) => rules.roles.push(RoleRule { tenant: rule_tenant.clone(), group: group.clone(), role }),
            None => problem(&format!("roles.{group}"), "enum", format!("{role:?} is not a tenant role (member, tenant_admin, deployment_admin)")),
        }
    }
    if c.workspace_roles.len() > RULES_MAX {
        problem("workspace_roles", "maxItems", format!("{} rules exceed the limit {RULES_MAX}", c.workspace_roles.len()));
    }
    for (i, w) in c.workspace_roles.iter().enumerate().take(RULES_MAX) {
        let at = |k: &str| format!("workspace_roles.{i}.{k}");
        if let Err(message) = group_name(&w.group) {
            problem(&at("group"), "group", message);
        }
        let workspace = WorkspaceId::parse("workspace", &w.workspace);
        if let Err(e) = &workspace {
            problem(&at("workspace"), "id", format!("is not a workspace id: {}", field_message(e)));
        }
        let role = Role::parse(&w.role);
        if role.is_none() {
            problem(&at("role"), "enum", format!("{:?} is not a workspace role (viewer, respondent, editor, admin)", w.role));
        }
        if let (Ok(workspace), Some(role)) = (workspace, role) {
            rules.workspaces.push(WorkspaceRule { tenant: rule_tenant.clone(), group: w.group.clone(), workspace, role });
        }
    }

    let mut scopes: Vec<String> = Vec::new();
    if c.scopes.len() > SCOPES_MAX {
        problem("scopes", "maxItems", format!("{} scopes exceed the limit {SCOPES_MAX}", c.scopes.len()));
    }
    for (i, scope) in c.scopes.iter().enumerate().take(SCOPES_MAX) {
        // RFC 6749 3.3: a scope token is printable ASCII but for space, `"` and `\`.
        if scope.is_empty() || scope.len() > SCOPE_MAX || !scope.bytes().all(|b| (0x21..=0x7e).contains(&b) && b != b'"' && b != b'\\') {
            problem(
                &format!("scopes.{i}"),
                "scope",
                format!("a scope is 1 to {SCOPE_MAX} printable ASCII characters without spaces, quotes or backslashes"),
            );
        } else if scope != "openid" && !scopes.contains(scope) {
            scopes.push(scope.clone());
        }
    }

    if let Some(aud) = &c.mcp_audience
        && (aud.is_empty() || aud.len() > URL_MAX || aud.chars().any(char::is_control))
    {
        problem("mcp_audience", "audience", format!("must be 1 to {URL_MAX} bytes without control characters"));
    }

    let algorithms = match &c.algorithms {
        None => alg::ALL.to_vec(),
        Some(names) if names.is_empty() => {
            problem("algorithms", "minItems", "lists no algorithm: leave it out for the default".to_owned());
            Vec::new()
        }
        Some(names) => {
            let mut algs = Vec::new();
            for (i, n) in names.iter().enumerate().take(alg::ALL.len() * 2) {
                match (alg::never_accepted(n), Alg::from_name(n)) {
                    (Some(why), _) => problem(&format!("algorithms.{i}"), "algorithm", format!("{n} is refused: {why}")),
                    (None, None) => problem(
                        &format!("algorithms.{i}"),
                        "algorithm",
                        format!("{:?} is not an algorithm verified here (known: {})", cut(n, 32), DEFAULT_ALGORITHMS.join(", ")),
                    ),
                    (None, Some(a)) if !algs.contains(&a) => algs.push(a),
                    (None, Some(_)) => {}
                }
            }
            algs
        }
    };

    let skew = c.clock_skew_secs.unwrap_or(DEFAULT_CLOCK_SKEW_SECS);
    if skew > MAX_CLOCK_SKEW_SECS {
        problem("clock_skew_secs", "maximum", format!("{skew} exceeds the limit {MAX_CLOCK_SKEW_SECS}"));
    }

    if problems.len() > before {
        return None;
    }
    Some(Settings {
        name: name.to_owned(),
        issuer: c.issuer.clone(),
        client_id: c.client_id.clone(),
        client_secret,
        title,
        tenancy: tenancy?,
        user_claim: c.user_claim.clone(),
        groups_claim: c.groups_claim.clone(),
        rules,
        scopes,
        mcp_audience: c.mcp_audience.clone(),
        algorithms,
        skew_secs: i64::try_from(skew).unwrap_or(0),
    })
}

/// An issuer is an absolute https URL (http where allowed) with a host and
/// no query, fragment or credentials (OpenID Connect Discovery 1.0, 2).
fn check_issuer(issuer: &str, allow_http: bool) -> Result<(), String> {
    if issuer.len() > URL_MAX {
        return Err(format!("{} bytes exceed the limit {URL_MAX}", issuer.len()));
    }
    let url = url::Url::parse(issuer).map_err(|e| format!("is not an absolute URL: {e}"))?;
    match url.scheme() {
        "https" => {}
        "http" if allow_http => {}
        "http" => return Err("http:// is accepted only outside the production profile: use https://".to_owned()),
        other => return Err(format!("the scheme {other}: is not https:")),
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err("names no host".to_owned());
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err("must have no query or fragment".to_owned());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("must hold no user name or password".to_owned());
    }
    Ok(())
}

/// The secret in `path`, trimmed. The messages name the file, never what
/// it holds.
fn read_secret(path: &Path) -> Result<Secret, String> {
    let shown = path.display();
    let file = std::fs::File::open(path).map_err(|e| format!("{shown} cannot be read: {e}"))?;
    let mut bytes = Vec::new();
    file.take(SECRET_FILE_MAX + 1).read_to_end(&mut bytes).map_err(|e| format!("{shown} cannot be read: {e}"))?;
    if bytes.len() as u64 > SECRET_FILE_MAX {
        return Err(format!("{shown} is over {SECRET_FILE_MAX} bytes: a client secret file holds the secret alone"));
    }
    let text = String::from_utf8(bytes).map_err(|_| format!("{shown} is not UTF-8 text"))?;
    let secret = text.trim();
    if secret.is_empty() {
        return Err(format!("{shown} is empty"));
    }
    Ok(Secret(secret.to_owned()))
}

fn claim_name(claim: &str) -> Result<(), String> {
    if claim.is_empty() || claim.len() > CLAIM_NAME_MAX || claim.chars().any(char::is_control) {
        return Err(format!("a claim's name is 1 to {CLAIM_NAME_MAX} bytes without control characters"));
    }
    Ok(())
}

fn group_name(group: &str) -> Result<(), String> {
    if group.is_empty() || group.len() > GROUP_MAX {
        return Err(format!("a group's name is 1 to {GROUP_MAX} bytes"));
    }
    Ok(())
}

fn tenant_role(role: &str) -> Option<TenantRole> {
    [TenantRole::Member, TenantRole::TenantAdmin, TenantRole::DeploymentAdmin].into_iter().find(|r| r.as_str() == role)
}

/// What an id's check said, without its path (which names the id's own
/// field, not the configuration's key).
pub(crate) fn field_message(e: &Error) -> String {
    match e {
        Error::ValidationFailed { errors, .. } if !errors.is_empty() => errors.iter().map(|f| f.message.as_str()).collect::<Vec<_>>().join("; "),
        other => other.to_string(),
    }
}

/// `s` cut to at most `max` characters: for echoing what a token or a
/// configuration says without letting it fill a message.
pub(crate) fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max { s.to_owned() } else { format!("{}…", s.chars().take(max).collect::<String>()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_is_never_printed() {
        let s = Secret("hunter2".into());
        assert_eq!(format!("{s:?}"), "Secret([redacted])");
    }

    #[test]
    fn cut_counts_characters() {
        assert_eq!(cut("abc", 3), "abc");
        assert_eq!(cut("abcd", 3), "abc…");
        assert_eq!(cut("ééé", 2), "éé…");
    }
}

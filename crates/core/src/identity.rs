//! The identity port (REQUIREMENTS.md R6): tokens a company's identity
//! provider signs are verified by a part registered from outside
//! (`lattice-identity`), so the log service knows no OpenID Connect; and
//! the rules that turn a person's groups into roles, as data, so that the
//! sign-in, a provider's bearer token and a SCIM group change all decide a
//! role by the one function here.

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::ids::{TenantId, UserId, WorkspaceId};
use crate::role::{Role, TenantRole};

/// The surface a bearer token is presented to. A provider's token names its
/// audience: the API takes tokens issued to lattice's client, `/mcp` also
/// those issued for lattice's MCP resource (RFC 8707).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    Api,
    Mcp,
}

/// Who a provider's token vouches for, as the provider's configuration maps
/// its claims.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vouched {
    /// The configured provider's name.
    pub provider: String,
    pub tenant: TenantId,
    pub user: UserId,
    /// The role the token's groups give by the rules; the tenant's
    /// directory, when it holds the person, has the last word.
    pub role: TenantRole,
    /// The token's `iat`, in ms: a sign-out ends tokens issued before it.
    pub issued_ms: i64,
}

/// The providers a deployment trusts, as the log service asks them.
#[async_trait::async_trait]
pub trait TokenIssuers: Send + Sync {
    /// Whether `issuer` (a token's unverified `iss`) is a configured
    /// provider's: such a token is verified by [`TokenIssuers::verify`] and
    /// nothing else.
    fn trusts(&self, issuer: &str) -> bool;

    /// Verifies a token of a trusted issuer for `audience`: signature by the
    /// provider's published keys under an allowed algorithm, issuer,
    /// audience, expiry, within a bounded clock skew. A refusal is
    /// [`Error::Unauthorized`] saying why.
    async fn verify(&self, token: &str, audience: Audience) -> Result<Vouched, Error>;
}

/// A group that gives a tenant role: in `tenant` (any tenant the provider
/// signs people into when `None`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoleRule {
    pub tenant: Option<TenantId>,
    pub group: String,
    pub role: TenantRole,
}

/// A group that gives a role in one workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkspaceRule {
    pub tenant: Option<TenantId>,
    pub group: String,
    pub workspace: WorkspaceId,
    pub role: Role,
}

/// How groups become roles: every provider's rules, gathered.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupRules {
    pub roles: Vec<RoleRule>,
    pub workspaces: Vec<WorkspaceRule>,
}

/// Which of two tenant roles a person with both gets: the deployment's
/// admin over the tenant's, the tenant's over a member.
fn rank(role: TenantRole) -> u8 {
    match role {
        TenantRole::Member => 0,
        TenantRole::TenantAdmin => 1,
        TenantRole::DeploymentAdmin => 2,
    }
}

impl GroupRules {
    /// The tenant role `groups` give in `tenant`: the highest any rule
    /// gives, `member` when none does. Group names match exactly.
    pub fn tenant_role<S: AsRef<str>>(&self, tenant: &TenantId, groups: &[S]) -> TenantRole {
        self.roles
            .iter()
            .filter(|r| r.tenant.as_ref().is_none_or(|t| t == tenant) && groups.iter().any(|g| g.as_ref() == r.group))
            .map(|r| r.role)
            .max_by_key(|role| rank(*role))
            .unwrap_or_default()
    }

    /// Each workspace the rules name in `tenant`, with the role `groups`
    /// give there (`None`: no group of the person's gives one, so the
    /// rules take them out of it). Workspaces no rule names are not listed:
    /// their members are managed by hand.
    pub fn workspace_roles<S: AsRef<str>>(&self, tenant: &TenantId, groups: &[S]) -> Vec<(WorkspaceId, Option<Role>)> {
        let mut out: Vec<(WorkspaceId, Option<Role>)> = Vec::new();
        for rule in self.workspaces.iter().filter(|r| r.tenant.as_ref().is_none_or(|t| t == tenant)) {
            let given = groups.iter().any(|g| g.as_ref() == rule.group).then_some(rule.role);
            match out.iter_mut().find(|(w, _)| *w == rule.workspace) {
                Some((_, role)) => *role = (*role).max(given),
                None => out.push((rule.workspace.clone(), given)),
            }
        }
        out
    }

    /// Whether any rule names a group at all (a deployment without rules
    /// leaves roles to the tokens and the members lists).
    pub fn is_empty(&self) -> bool {
        self.roles.is_empty() && self.workspaces.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tenant(t: &str) -> TenantId {
        TenantId::parse("tenant", t).unwrap()
    }

    fn rules() -> GroupRules {
        GroupRules {
            roles: vec![
                RoleRule { tenant: Some(tenant("acme")), group: "admins".into(), role: TenantRole::TenantAdmin },
                RoleRule { tenant: None, group: "operators".into(), role: TenantRole::DeploymentAdmin },
            ],
            workspaces: vec![
                WorkspaceRule {
                    tenant: None,
                    group: "ops".into(),
                    workspace: WorkspaceId::parse("workspace", "ws_ops").unwrap(),
                    role: Role::Editor,
                },
                WorkspaceRule {
                    tenant: None,
                    group: "ops-leads".into(),
                    workspace: WorkspaceId::parse("workspace", "ws_ops").unwrap(),
                    role: Role::Admin,
                },
                WorkspaceRule {
                    tenant: Some(tenant("other")),
                    group: "ops".into(),
                    workspace: WorkspaceId::parse("workspace", "ws_theirs").unwrap(),
                    role: Role::Viewer,
                },
            ],
        }
    }

    #[test]
    fn the_highest_role_any_group_gives_in_the_tenant() {
        let r = rules();
        assert_eq!(r.tenant_role(&tenant("acme"), &["admins"]), TenantRole::TenantAdmin);
        assert_eq!(r.tenant_role(&tenant("globex"), &["admins"]), TenantRole::Member, "a rule of another tenant gives nothing");
        assert_eq!(r.tenant_role(&tenant("acme"), &["admins", "operators"]), TenantRole::DeploymentAdmin);
        assert_eq!(r.tenant_role::<&str>(&tenant("acme"), &[]), TenantRole::Member);
        assert_eq!(r.tenant_role(&tenant("acme"), &["Admins"]), TenantRole::Member, "names match exactly");
    }

    #[test]
    fn each_named_workspace_gets_the_highest_role_or_none() {
        let r = rules();
        let ws = |w: &str| WorkspaceId::parse("workspace", w).unwrap();
        assert_eq!(r.workspace_roles(&tenant("acme"), &["ops", "ops-leads"]), vec![(ws("ws_ops"), Some(Role::Admin))]);
        assert_eq!(r.workspace_roles(&tenant("acme"), &["ops"]), vec![(ws("ws_ops"), Some(Role::Editor))]);
        assert_eq!(r.workspace_roles::<&str>(&tenant("acme"), &[]), vec![(ws("ws_ops"), None)], "a named workspace without a group: out");
        assert_eq!(r.workspace_roles(&tenant("other"), &["ops"]), vec![(ws("ws_ops"), Some(Role::Editor)), (ws("ws_theirs"), Some(Role::Viewer))]);
    }
}

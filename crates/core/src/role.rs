//! Roles (REQUIREMENTS.md T3). A token carries a tenant-wide role; workspace roles come
//! from the workspace's members list.

use serde::{Deserialize, Serialize};

/// A member's role in one workspace. Ordered: each role can do what the ones
/// before it can.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Reads.
    Viewer,
    /// Reads, submits to forms and answers ask_form; nothing else (no
    /// messages, no edits, no runs).
    Respondent,
    /// Reads, posts, answers and submits.
    Editor,
    /// An editor who also changes any form's `closed` or schema, the members
    /// and the workspace's switch.
    Admin,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Viewer => "viewer",
            Self::Respondent => "respondent",
            Self::Editor => "editor",
            Self::Admin => "admin",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "viewer" => Some(Self::Viewer),
            "respondent" => Some(Self::Respondent),
            "editor" => Some(Self::Editor),
            "admin" => Some(Self::Admin),
            _ => None,
        }
    }
}

/// The tenant-wide role a token carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TenantRole {
    /// Acts in the workspaces it is a member of.
    #[default]
    Member,
    /// Admin of every workspace of the tenant, and of the tenant's switch.
    TenantAdmin,
    /// Admin of the deployment's switch; otherwise a member.
    DeploymentAdmin,
}

impl TenantRole {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Member => "member",
            Self::TenantAdmin => "tenant_admin",
            Self::DeploymentAdmin => "deployment_admin",
        }
    }
}

//! Request and response bodies of `/v1`. Requests refuse unknown fields.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DevTokenRequest {
    pub tenant: String,
    pub user: String,
    /// `member` (default), `tenant_admin` or `deployment_admin`.
    #[serde(default)]
    pub role: Option<String>,
    /// Mint an agent's token.
    #[serde(default)]
    pub agent: bool,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TokenResponse {
    pub token: String,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateWorkspace {
    pub name: String,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AddMember {
    pub user: String,
    /// `viewer`, `editor` or `admin`.
    pub role: String,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateThread {
    pub title: String,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PostMessage {
    pub text: String,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateArtifact {
    #[serde(default)]
    pub id: Option<String>,
    pub kind: String,
    #[schema(value_type = Object)]
    pub data: Value,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EditArtifact {
    pub expected_version: u64,
    /// RFC 6902 operations.
    #[schema(value_type = Vec<Object>)]
    pub patch: Value,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SetSwitch {
    /// `on`, `off` or `unset`.
    pub state: String,
    pub reason: String,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Created {
    pub id: String,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Posted {
    pub seq: i64,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Versioned {
    pub id: String,
    pub version: u64,
    pub digest: String,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Artifact {
    pub id: String,
    pub kind: String,
    pub thread: String,
    pub version: u64,
    #[schema(value_type = Object)]
    pub data: Value,
    pub author: String,
    pub archived: bool,
    pub digest: String,
    pub created_at: String,
    pub updated_at: String,
}

impl From<lattice_log::ArtifactRow> for Artifact {
    fn from(r: lattice_log::ArtifactRow) -> Self {
        Self {
            id: r.id,
            kind: r.kind,
            thread: r.thread,
            version: r.version,
            data: r.data,
            author: r.author,
            archived: r.archived,
            digest: r.digest,
            created_at: lattice_log::rfc3339(r.created_at),
            updated_at: lattice_log::rfc3339(r.updated_at),
        }
    }
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Workspace {
    pub id: String,
    pub name: String,
    /// The caller's role in it.
    pub role: String,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Thread {
    pub id: String,
    pub workspace: String,
    pub title: String,
    pub created_by: String,
    pub created_at: String,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct EventPage {
    #[schema(value_type = Vec<Object>)]
    pub events: Vec<Value>,
    /// Pass as `after` to read on.
    pub next_after: i64,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct EffectiveValue {
    pub enabled: bool,
    pub because: String,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AuditEntry {
    pub seq: i64,
    pub at: String,
    pub actor: String,
    pub level: String,
    pub key: String,
    pub old: String,
    pub new: String,
    pub reason: String,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Me {
    pub tenant: String,
    pub user: String,
    pub role: String,
    pub agent: bool,
}

/// `{"error": {"type": …}}`, as REQUIREMENTS.md L8 lists the types.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ErrorBody {
    #[schema(value_type = Object)]
    pub error: Value,
}

/// One level the caller administers, as the admin console shows it.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct LevelView {
    /// `deployment`, `tenant:{id}` or `workspace:{id}`: the path segment of
    /// `PUT /v1/integrations/{level}/{key}`.
    pub level: String,
    pub name: String,
    pub keys: Vec<KeyView>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct KeyView {
    pub key: String,
    /// What this level holds: `on`, `off` or `unset`.
    pub state: String,
    /// The value here, the levels below taken as unset.
    pub effective: EffectiveValue,
}

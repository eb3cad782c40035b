//! A tenant's directory as commands carry it (REQUIREMENTS.md R6): the
//! people and groups a company's SCIM client provisions or a sign-in
//! creates, and the credentials an admin issues (API keys for agents,
//! SCIM tokens). Plain data: the log service stores them, `lattice-scim`
//! says what a SCIM document may hold.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ids::{UserId, WorkspaceId};
use crate::role::{Role, TenantRole};

/// A person as a SCIM client provisions them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProvisionedPerson {
    /// The name they sign in with (unique in the tenant, whatever its case).
    pub user_name: String,
    pub display_name: Option<String>,
    pub email: Option<String>,
    pub external_id: Option<String>,
    /// Inactive: signed out everywhere and refused until made active again.
    pub active: bool,
    /// The SCIM resource as it is kept (what `GET /scim/v2/Users/{id}`
    /// reads back).
    pub document: Value,
}

/// A person as a provider's ID token describes them at a sign-in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SignedInPerson {
    /// The provider's name in the configuration.
    pub provider: String,
    /// The value of the provider's user claim.
    pub user_name: String,
    pub display_name: Option<String>,
    pub email: Option<String>,
    /// The groups the token named (at most [`MAX_GROUPS`]).
    pub groups: Vec<String>,
}

/// A group as a SCIM client provisions it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProvisionedGroup {
    pub display_name: String,
    pub external_id: Option<String>,
    /// Its members, people of the tenant's directory.
    pub members: Vec<UserId>,
    pub document: Value,
}

/// What an API key may do: a tenant role across the tenant, or a role in
/// one workspace and nothing outside it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "scope", rename_all = "snake_case")]
pub enum KeyScope {
    Tenant { role: TenantRole },
    Workspace { workspace: WorkspaceId, role: Role },
}

/// An API key for an agent, as the log keeps it: the key itself never
/// reaches the log, only its digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewApiKey {
    /// `key_…`: the key's id, which is also the agent's user id.
    pub id: UserId,
    pub name: String,
    pub scope: KeyScope,
    /// When it stops working (ms since the epoch), if ever.
    pub expires_at: Option<i64>,
    /// SHA-256 of the key, hex.
    pub digest: String,
}

/// The prefix of every API key's id (and its agent's user id): reserved,
/// so no person's id is ever one.
pub const KEY_ID_PREFIX: &str = "key_";

/// The groups one person may be in, as a token or SCIM names them.
pub const MAX_GROUPS: usize = 256;
/// The members one group may have.
pub const MAX_MEMBERS: usize = 10_000;
/// The people one tenant's directory may hold.
pub const MAX_PEOPLE: usize = 100_000;
/// The API keys (or SCIM tokens) one tenant may hold at once, unrevoked.
pub const MAX_CREDENTIALS: usize = 1_000;
/// The bytes of a name (an API key's, a person's user name, a group's).
pub const MAX_NAME_BYTES: usize = 256;

/// Whether `user` names an API key's agent rather than a person.
pub fn is_key_user(user: &str) -> bool {
    user.starts_with(KEY_ID_PREFIX)
}

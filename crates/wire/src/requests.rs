//! What clients send.

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct DevTokenRequest {
    pub tenant: String,
    pub user: String,
    /// `member` (default), `tenant_admin` or `deployment_admin`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Mint an agent's token.
    #[serde(default)]
    pub agent: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateWorkspace {
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct AddMember {
    pub user: String,
    /// `viewer`, `editor` or `admin`.
    pub role: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateThread {
    pub title: String,
    /// Visible only to the people listed on it and the workspace's admins.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub restricted: bool,
}

/// Lists a person on a thread: a member of a restricted thread, or someone
/// outside the workspace the thread is shared with.
/// How far the caller has read a thread: the `seq` of the last envelope
/// it had in view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ReadMark {
    pub seq: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ShareThread {
    pub user: String,
    /// `viewer`, `respondent` or `editor` (a workspace member only).
    pub role: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct PostMessage {
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateArtifact {
    /// Generated when left out; a submission left without one gets the id
    /// its form's policy derives, and one that is sent must be that id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub kind: String,
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub data: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct EditArtifact {
    pub expected_version: u64,
    /// RFC 6902 operations.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Object>))]
    pub patch: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct SetSwitch {
    /// `on`, `off` or `unset`.
    pub state: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct StartRun {
    pub prompt: String,
    /// `scripted:<name>` or a configured model; the default when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The chain of the event a rule starts this run for, as the bridge
    /// published it (its `chain`, or its `new_chain` when it has none):
    /// answers to the run join it. Only a chain lattice minted for the
    /// run's tenant is taken (422 on `chain` otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chain: Option<String>,
    /// A connected server's prompt run as a command (`/server:prompt`):
    /// its messages reach the model with the prompt, fenced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<RunCommand>,
    /// Connected servers' resources attached: their text reaches the
    /// model with the prompt, fenced, each within its server's bound.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<RunAttachment>,
}

/// A connected server's prompt, with its arguments (text, as MCP's
/// prompts take).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct RunCommand {
    pub server: String,
    pub prompt: String,
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub arguments: serde_json::Map<String, serde_json::Value>,
}

/// A connected server's resource, by its URI.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct RunAttachment {
    pub server: String,
    pub uri: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Answer {
    pub tool_call_id: String,
    /// The form's values for an ask_form; text for an ask_user;
    /// `{"approved": true}` or `{"approved": false}` for a call of a
    /// connected server's tool put to a person.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub answer: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct AppCall {
    /// `get_state`, `set_state` or `submit`.
    pub tool: String,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub arguments: Value,
    /// The capability the host was given for this app
    /// (`POST /v1/artifacts/{id}/capability`); a call without it is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capability: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Confirmation {
    /// Whether the person lets the call go ahead.
    pub accept: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct AppEventBody {
    /// Your application's namespace; `ui`, `log` and `audit` are lattice's own.
    pub namespace: String,
    pub name: String,
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub data: Value,
}

/// What an app tells the agent it shows (`PUT /v1/artifacts/{id}/context`):
/// at most 8 KiB of text and 8 KiB of structured content; the last one an
/// app sends is what the thread's next model call reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct AppContext {
    #[serde(default)]
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub structured: Option<Value>,
}

/// Erasing a file's bytes (`POST /v1/files/{id}/erase`): why, kept in the
/// audit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct EraseFile {
    pub reason: String,
}

/// `POST /v1/threads/{th}/uploads`: a resumable upload of a file's bytes,
/// sent in one part or several.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct BeginUpload {
    /// The file's name, as the person's device calls it.
    pub name: String,
    /// Its bytes, all of them: reserved of the tenant's room now.
    pub size: u64,
}

/// `POST /v1/api-keys`: an API key for an agent. Without `workspace`, the
/// key acts across the tenant with a tenant role (`member` or
/// `tenant_admin`); with one, in that workspace alone with a workspace role
/// (`viewer`, `respondent`, `editor` or `admin`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateApiKey {
    pub name: String,
    pub role: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Days until it stops working (1 to 3650); without it, it works until
    /// revoked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_in_days: Option<u32>,
}

/// `POST /v1/auth/session`: the one-time code a sign-in sent the browser
/// back with, and the secret the page that began it kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct RedeemSignIn {
    pub code: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binding: Option<String>,
}

/// `POST /v1/me/connections/{server}`: begins the caller's sign-in to a
/// connected server. `scope`: what a call was refused for beyond what they
/// granted (a request's `sign_in.scope`), asked for too.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct BeginConnection {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

/// `POST /v1/connections/finish`: what the server's authorization
/// server sent the person back with (the chat reads it from the address
/// the callback sends it to).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct FinishConnection {
    pub state: String,
    pub code: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iss: Option<String>,
}

/// What a server is asked to suggest for its prompt's argument, as typed
/// so far (`POST /v1/threads/{th}/offers/complete`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CompleteArgument {
    pub server: String,
    pub prompt: String,
    pub argument: String,
    #[serde(default)]
    pub value: String,
    /// The prompt's arguments chosen already.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub arguments: serde_json::Map<String, serde_json::Value>,
}

//! What an envelope says happened: one [`Event`] variant per envelope type,
//! one struct per payload. Writers build them, readers match on them; the
//! wire keeps `type` and `payload` side by side in the envelope.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::role::{Role, TenantRole};
use crate::run::{DeferredRequest, RunFailure, ToolCall};

macro_rules! events {
    ($($(#[$doc:meta])* $variant:ident => $name:literal,)*) => {
        /// One event: its variant is the envelope's `type`, its struct the
        /// envelope's `payload`.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "type", content = "payload", rename_all = "snake_case")]
        pub enum Event {
            $($(#[$doc])* $variant($variant),)*
        }

        impl Event {
            /// Every envelope `type`, in the order they are declared.
            pub const NAMES: &[&str] = &[$($name,)*];

            /// The envelope's `type`.
            pub fn name(&self) -> &'static str {
                match self {
                    $(Self::$variant(_) => $name,)*
                }
            }

            /// An event as stored: its type beside its payload's JSON text.
            pub fn decode(name: &str, payload: &str) -> Result<Self, serde_json::Error> {
                match name {
                    $($name => crate::json::from_str(payload).map(Self::$variant),)*
                    other => Err(serde::de::Error::custom(format!("unknown event type {other:?}"))),
                }
            }

            /// [`Event::decode`] of the types in `KINDS` (their `BIT`s
            /// added up); another known type is `None`, its payload
            /// unread. `KINDS` is known when compiling, so a reader of a
            /// few types carries the reading of those alone (the chat
            /// host's first load).
            pub fn decode_in<const KINDS: u64>(name: &str, payload: &str) -> Result<Option<Self>, serde_json::Error> {
                match name {
                    $($name if KINDS & $variant::BIT == 0 => Ok(None),
                    $name => crate::json::from_str(payload).map(|p| Some(Self::$variant(p))),)*
                    other => Err(serde::de::Error::custom(format!("unknown event type {other:?}"))),
                }
            }

            /// The payload's JSON text, as stored.
            pub fn payload_json(&self) -> String {
                match self {
                    $(Self::$variant(p) => serde_json::to_string(p),)*
                }
                .expect("an event payload serializes")
            }

            /// The payload as a JSON value.
            pub fn payload(&self) -> Value {
                match self {
                    $(Self::$variant(p) => serde_json::to_value(p),)*
                }
                .expect("an event payload serializes")
            }
        }

        /// Each type's place, for its bit in a set of types.
        #[repr(u64)]
        enum Place {
            $($variant,)*
        }

        $(impl $variant {
            /// The `type` of an envelope with this payload.
            pub const NAME: &'static str = $name;
            /// This type in a set of types ([`Event::decode_in`]).
            pub const BIT: u64 = 1 << Place::$variant as u64;
        }

        impl From<$variant> for Event {
            fn from(payload: $variant) -> Self {
                Self::$variant(payload)
            }
        })*
    };
}

events! {
    WorkspaceCreated => "workspace_created",
    MemberAdded => "member_added",
    /// A person taken out of a workspace, and off its threads.
    MemberRemoved => "member_removed",
    ThreadCreated => "thread_created",
    /// A person listed on a thread (a restricted thread's member, or an
    /// outsider it is shared with).
    ThreadShared => "thread_shared",
    /// A person's listing taken off a thread.
    ThreadUnshared => "thread_unshared",
    /// Every token and session of a person ended ("sign out everywhere").
    SessionsEnded => "sessions_ended",
    /// A person of a tenant's directory created or changed: provisioned
    /// over SCIM, or signed in through a provider.
    PersonSaved => "person_saved",
    /// A person taken out of a tenant's directory.
    PersonRemoved => "person_removed",
    /// A group of a tenant's directory created or changed.
    GroupSaved => "group_saved",
    GroupRemoved => "group_removed",
    /// An API key or a SCIM token issued (its digest is never in the log).
    CredentialIssued => "credential_issued",
    CredentialRevoked => "credential_revoked",
    MessagePosted => "message_posted",
    ArtifactCreated => "artifact_created",
    ArtifactChanged => "artifact_changed",
    ArtifactArchived => "artifact_archived",
    SwitchSet => "switch_set",
    RunStarted => "run_started",
    ModelReplied => "model_replied",
    ToolReturned => "tool_returned",
    RunPaused => "run_paused",
    /// A person is asked while the run goes on (a connected server's question).
    RunAsked => "run_asked",
    DeferredAnswered => "deferred_answered",
    RunResumed => "run_resumed",
    RunFinished => "run_finished",
    RunFailed => "run_failed",
    AppEvent => "app_event",
    /// What an app told the agent it shows (the last per app counts).
    AppContextSet => "app_context_set",
    /// A decision lattice records about something it did or refused (an
    /// app's tool call, allowed or not): bridged under the reserved `audit`
    /// namespace.
    AuditRecorded => "audit_recorded",
}

impl Event {
    /// The run an event of a run belongs to.
    pub fn run_id(&self) -> Option<&str> {
        match self {
            Self::RunStarted(e) => Some(&e.run_id),
            Self::ModelReplied(e) => Some(&e.run_id),
            Self::ToolReturned(e) => Some(&e.run_id),
            Self::RunPaused(e) => Some(&e.run_id),
            Self::RunAsked(e) => Some(&e.run_id),
            Self::DeferredAnswered(e) => Some(&e.run_id),
            Self::RunResumed(e) => Some(&e.run_id),
            Self::RunFinished(e) => Some(&e.run_id),
            Self::RunFailed(e) => Some(&e.run_id),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkspaceCreated {
    pub workspace: String,
    pub name: String,
    /// Who created it, its first admin.
    pub admin: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemberAdded {
    pub workspace: String,
    pub user: String,
    pub role: Role,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemberRemoved {
    pub workspace: String,
    pub user: String,
    /// The role they had.
    pub role: Role,
    /// How many of the workspace's threads they were listed on, listings
    /// that went with them.
    #[serde(default)]
    pub listings: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadUnshared {
    pub thread: String,
    pub user: String,
    /// The role they were listed with.
    pub role: Role,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionsEnded {
    pub user: String,
    /// When (ms since the epoch): a token issued at or before it is refused.
    pub at: i64,
    /// One sign-in session ended alone (the others stand).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

/// What a directory's change says of a person: no name, no address (those
/// stay in the directory, where they can be changed and erased).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PersonSaved {
    pub user: String,
    pub active: bool,
    /// The tenant role their groups give now.
    pub role: TenantRole,
    /// `scim` or `sign_in`.
    pub by: String,
    /// The directory entry's version (SCIM's `meta.version`).
    pub version: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PersonRemoved {
    pub user: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupSaved {
    pub group: String,
    pub display_name: String,
    pub members: u64,
    pub version: u64,
    /// The people whose tenant role the change changed: each of their
    /// streams decides again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roles_changed: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupRemoved {
    pub group: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roles_changed: Vec<String>,
}

/// `api_key` or `scim_token`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CredentialKind {
    ApiKey,
    ScimToken,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CredentialIssued {
    pub id: String,
    pub kind: CredentialKind,
    /// An API key's name and what it may do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<crate::directory::KeyScope>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CredentialRevoked {
    pub id: String,
    pub kind: CredentialKind,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadCreated {
    pub thread: String,
    pub title: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub restricted: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadShared {
    pub thread: String,
    pub user: String,
    pub role: Role,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessagePosted {
    pub thread: String,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArtifactCreated {
    pub id: String,
    pub kind: String,
    pub version: u64,
    pub data: Value,
    pub digest: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArtifactChanged {
    pub id: String,
    pub kind: String,
    pub version: u64,
    /// The RFC 6902 patch that made this version from the one before.
    pub patch: json_patch::Patch,
    pub digest: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArtifactArchived {
    pub id: String,
    pub kind: String,
    pub version: u64,
}

/// A switch's change: the event, and its audit trail's row
/// ([`crate::switch_audit::AuditEntry`], with where, when and by whom).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SwitchSet {
    /// `deployment`, `tenant:<id>` or `workspace:<id>`.
    pub level: String,
    pub key: String,
    pub old: String,
    pub new: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunStarted {
    pub run_id: String,
    pub prompt: String,
    pub model: String,
    pub started_by: String,
    /// The chain of the event a rule started the run for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chain: Option<String>,
    /// What the person brought from connected servers with the prompt.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<crate::run::RunContext>,
}

/// What the model answered: text, tool calls, or both.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelReplied {
    pub run_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
}

/// A tool's result, as the model will read it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolReturned {
    pub run_id: String,
    pub tool_call_id: String,
    pub tool_name: String,
    pub result: Value,
    pub is_error: bool,
}

/// The run waits for these requests to be answered by people.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunPaused {
    pub run_id: String,
    pub requests: Vec<DeferredRequest>,
}

/// A person is asked these requests while the run goes on: a connected
/// server waits, in the middle of a call, for their answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunAsked {
    pub run_id: String,
    pub requests: Vec<DeferredRequest>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeferredAnswered {
    pub run_id: String,
    /// The run again, under the name AG-UI clients know it by.
    pub turn_id: String,
    pub tool_call_id: String,
    pub tool_name: String,
    pub answer: Value,
    pub approved: bool,
    pub author: String,
    /// Nobody answered before the request's deadline: lattice answered
    /// `expired` for them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub expired: bool,
    /// The run's chain, when a rule started the run: the answer joins it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chain: Option<String>,
}

/// The run goes on, acting for whoever answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResumed {
    pub run_id: String,
    pub actor: String,
    pub role: TenantRole,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunFinished {
    pub run_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunFailed {
    pub run_id: String,
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<RunFailure>,
}

/// What an app told the agent it shows, to read as untrusted data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppContextSet {
    pub artifact_id: String,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured: Option<Value>,
}

/// An application's own event, bridged under its namespace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppEvent {
    pub namespace: String,
    pub name: String,
    pub data: Value,
}

/// What was decided, under a name of lattice's (`app_tool_call`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditRecorded {
    pub name: String,
    pub data: Value,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wire_keeps_type_beside_payload() {
        let event = Event::from(RunFailed { run_id: "run_1".into(), reason: "no model".into(), failure: None });
        let wire = serde_json::to_value(&event).unwrap();
        assert_eq!(wire, serde_json::json!({"type": "run_failed", "payload": {"run_id": "run_1", "reason": "no model"}}));
        assert_eq!(serde_json::from_value::<Event>(wire).unwrap(), event);
        assert_eq!(Event::decode(event.name(), &event.payload_json()).unwrap(), event);
    }

    #[test]
    fn a_renamed_field_fails_to_decode_instead_of_reading_empty() {
        let err = Event::decode("run_failed", r#"{"run":"run_1","reason":"x"}"#).unwrap_err();
        assert!(err.to_string().contains("run_id"), "{err}");
        assert!(Event::decode("run_exploded", "{}").is_err());
    }
}

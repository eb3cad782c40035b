//! Event types and their payloads: what an envelope says happened.

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub const WORKSPACE_CREATED: &str = "workspace_created";
pub const MEMBER_ADDED: &str = "member_added";
pub const THREAD_CREATED: &str = "thread_created";
pub const MESSAGE_POSTED: &str = "message_posted";
pub const ARTIFACT_CREATED: &str = "artifact_created";
pub const ARTIFACT_CHANGED: &str = "artifact_changed";
pub const ARTIFACT_ARCHIVED: &str = "artifact_archived";
pub const SWITCH_SET: &str = "switch_set";
pub const RUN_STARTED: &str = "run_started";
pub const MODEL_REPLIED: &str = "model_replied";
pub const TOOL_RETURNED: &str = "tool_returned";
pub const RUN_PAUSED: &str = "run_paused";
pub const DEFERRED_ANSWERED: &str = "deferred_answered";
pub const RUN_RESUMED: &str = "run_resumed";
pub const RUN_FINISHED: &str = "run_finished";
pub const RUN_FAILED: &str = "run_failed";
pub const APP_EVENT: &str = "app_event";
/// A decision lattice records about something it did or refused (an app's
/// tool call, allowed or not): bridged under the reserved `audit`
/// namespace.
pub const AUDIT_RECORDED: &str = "audit_recorded";

/// The payload of an `audit_recorded` envelope: what was decided, under a
/// name of lattice's (`app_tool_call`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditRecorded {
    pub name: String,
    pub data: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkspaceCreated {
    pub workspace: String,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemberAdded {
    pub workspace: String,
    pub user: String,
    pub role: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadCreated {
    pub thread: String,
    pub title: String,
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
    pub patch: Value,
    pub digest: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArtifactArchived {
    pub id: String,
    pub kind: String,
    pub version: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SwitchSet {
    pub level: String,
    pub key: String,
    pub old: String,
    pub new: String,
    pub reason: String,
}

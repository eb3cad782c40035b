//! Commands: every state change a client can ask for, as plain data. The
//! log service runs each through its one write path (REQUIREMENTS.md L1).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::directory::{NewApiKey, ProvisionedGroup, ProvisionedPerson, SignedInPerson};
use crate::ids::{ArtifactId, RunId, ThreadId, UserId, WorkspaceId};
use crate::integrations::{Level, SwitchKey, SwitchState};
use crate::role::Role;
use crate::run::RunStep;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Command {
    CreateWorkspace {
        name: String,
    },
    AddMember {
        workspace: WorkspaceId,
        user: UserId,
        role: Role,
    },
    /// Takes a person out of a workspace, with their listings on its threads.
    RemoveMember {
        workspace: WorkspaceId,
        user: UserId,
    },
    CreateThread {
        workspace: WorkspaceId,
        title: String,
        /// Visible only to the thread's members and the workspace's admins.
        #[serde(default)]
        restricted: bool,
    },
    /// Lists a person on a thread: a member of a restricted thread, or
    /// someone outside the workspace a thread is shared with.
    ShareThread {
        thread: ThreadId,
        user: UserId,
        role: Role,
    },
    /// Takes a person's listing off a thread (a restricted thread's member,
    /// or an outsider it was shared with).
    UnshareThread {
        thread: ThreadId,
        user: UserId,
    },
    /// Ends every token and session a person of the caller's tenant holds:
    /// what they present afterwards, minted before, is refused.
    EndSessions {
        user: UserId,
        /// One sign-in session alone (signing out in the chat), not all.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session: Option<String>,
    },
    /// Creates (`create`) or replaces a person of the caller's tenant's
    /// directory: a SCIM client's provisioning (tenant admins). A replace
    /// names the version it read, when it read one.
    ProvisionPerson {
        user: UserId,
        person: ProvisionedPerson,
        create: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expected_version: Option<u64>,
    },
    /// A person signed in through a provider: created at their first
    /// sign-in, their groups as the token names them. Refused for a person
    /// the directory made inactive.
    RecordSignIn {
        person: SignedInPerson,
    },
    /// Takes a person out of the tenant's directory: signed out everywhere,
    /// out of its groups.
    RemovePerson {
        user: UserId,
    },
    /// Creates (`create`) or replaces a group of the tenant's directory.
    ProvisionGroup {
        id: String,
        group: ProvisionedGroup,
        create: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expected_version: Option<u64>,
    },
    RemoveGroup {
        id: String,
    },
    /// An API key for an agent (a tenant admin, or a workspace's admin for
    /// a key of that workspace).
    CreateApiKey {
        key: NewApiKey,
    },
    RevokeApiKey {
        id: UserId,
    },
    /// A token a SCIM client provisions the tenant's directory with (tenant
    /// admins); its digest only.
    IssueScimToken {
        id: String,
        digest: String,
    },
    RevokeScimToken {
        id: String,
    },
    PostMessage {
        thread: ThreadId,
        text: String,
    },
    CreateArtifact {
        thread: ThreadId,
        /// Chosen by the client (derived submission ids), or generated.
        id: Option<ArtifactId>,
        kind: String,
        data: Value,
    },
    EditArtifact {
        id: ArtifactId,
        expected_version: u64,
        patch: json_patch::Patch,
    },
    ArchiveArtifact {
        id: ArtifactId,
    },
    SetSwitch {
        level: Level,
        key: SwitchKey,
        state: SwitchState,
        reason: String,
    },
    /// A person starts an agent turn in a thread.
    StartRun {
        thread: ThreadId,
        prompt: String,
        model: String,
        /// The chain of the event a rule started this run for: answers to
        /// the run join it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        chain: Option<String>,
        /// What the person brought from connected servers (a prompt run
        /// as a command, resources attached), read by the API.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        context: Vec<crate::run::RunContext>,
    },
    /// A person answers a paused run's request (L6).
    AnswerDeferred {
        run: RunId,
        tool_call_id: String,
        answer: Value,
        approved: bool,
    },
    /// An app tells the agent what it shows (MCP Apps'
    /// `ui/update-model-context`): kept per app, the last one wins, and the
    /// thread's next model call reads it as untrusted data.
    SetAppContext {
        artifact: ArtifactId,
        text: String,
        structured: Option<Value>,
    },
    /// A person stops a run that is running or waiting (editors of its thread).
    CancelRun {
        run: RunId,
    },
    /// The runner records a step of a run it drives (agents only, in their run).
    RecordRun {
        run: RunId,
        step: RunStep,
    },
    /// An application's own event, bridged to
    /// `lattice.<tenant>.<workspace>.<namespace>.<name>`. The `ui` and `log`
    /// namespaces are lattice's own and refused (REQUIREMENTS.md B4).
    AppEvent {
        workspace: WorkspaceId,
        namespace: String,
        name: String,
        data: Value,
    },
    /// An audit row alone: a decision that changed nothing else (a call
    /// refused, a state read). A row with an effect goes with its command
    /// (`LogService::execute_audited`), in one transaction.
    RecordAudit {
        thread: ThreadId,
        audit: Audit,
    },
}

/// An audit row: lattice's record of a decision, in the reserved `audit`
/// namespace. `once` makes it a key that can be used once: a second row
/// with the same key is refused, and whatever it came with is not written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Audit {
    pub name: String,
    pub data: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub once: Option<String>,
}

/// A command's type, without its data: the key of the checks hook (L5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CommandType {
    CreateWorkspace,
    AddMember,
    RemoveMember,
    CreateThread,
    ShareThread,
    UnshareThread,
    EndSessions,
    ProvisionPerson,
    RecordSignIn,
    RemovePerson,
    ProvisionGroup,
    RemoveGroup,
    CreateApiKey,
    RevokeApiKey,
    IssueScimToken,
    RevokeScimToken,
    PostMessage,
    CreateArtifact,
    EditArtifact,
    ArchiveArtifact,
    SetSwitch,
    StartRun,
    AnswerDeferred,
    SetAppContext,
    CancelRun,
    RecordRun,
    AppEvent,
    RecordAudit,
}

impl Command {
    pub fn command_type(&self) -> CommandType {
        match self {
            Self::CreateWorkspace { .. } => CommandType::CreateWorkspace,
            Self::AddMember { .. } => CommandType::AddMember,
            Self::RemoveMember { .. } => CommandType::RemoveMember,
            Self::UnshareThread { .. } => CommandType::UnshareThread,
            Self::EndSessions { .. } => CommandType::EndSessions,
            Self::ProvisionPerson { .. } => CommandType::ProvisionPerson,
            Self::RecordSignIn { .. } => CommandType::RecordSignIn,
            Self::RemovePerson { .. } => CommandType::RemovePerson,
            Self::ProvisionGroup { .. } => CommandType::ProvisionGroup,
            Self::RemoveGroup { .. } => CommandType::RemoveGroup,
            Self::CreateApiKey { .. } => CommandType::CreateApiKey,
            Self::RevokeApiKey { .. } => CommandType::RevokeApiKey,
            Self::IssueScimToken { .. } => CommandType::IssueScimToken,
            Self::RevokeScimToken { .. } => CommandType::RevokeScimToken,
            Self::CreateThread { .. } => CommandType::CreateThread,
            Self::ShareThread { .. } => CommandType::ShareThread,
            Self::PostMessage { .. } => CommandType::PostMessage,
            Self::CreateArtifact { .. } => CommandType::CreateArtifact,
            Self::EditArtifact { .. } => CommandType::EditArtifact,
            Self::ArchiveArtifact { .. } => CommandType::ArchiveArtifact,
            Self::SetSwitch { .. } => CommandType::SetSwitch,
            Self::StartRun { .. } => CommandType::StartRun,
            Self::AnswerDeferred { .. } => CommandType::AnswerDeferred,
            Self::CancelRun { .. } => CommandType::CancelRun,
            Self::SetAppContext { .. } => CommandType::SetAppContext,
            Self::RecordRun { .. } => CommandType::RecordRun,
            Self::AppEvent { .. } => CommandType::AppEvent,
            Self::RecordAudit { .. } => CommandType::RecordAudit,
        }
    }
}

impl Serialize for Level {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Level {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Level::parse(&s).map_err(serde::de::Error::custom)
    }
}

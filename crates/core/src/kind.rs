//! Extension points of the write path: artifact kinds and the checks hook
//! (REQUIREMENTS.md L4, L5). The log service runs them; crates such as the UI model
//! implement them without knowing anything of storage.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::actor::{Actor, Principal};
use crate::command::Command;
use crate::error::Error;
use crate::ids::{ArtifactId, RunId, TenantId, ThreadId, WorkspaceId};
use crate::integrations::SwitchKey;
use crate::role::Role;
use crate::run::DeferredRequest;

/// A kind of artifact, registered with the log service from outside it.
pub trait ArtifactKind: Send + Sync {
    /// The `kind` clients name (`form`, `dashboard`, …).
    fn name(&self) -> &str;

    /// The switch that governs creating and editing artifacts of this kind.
    fn switch(&self) -> Option<SwitchKey>;

    /// The largest payload accepted, in bytes of JSON.
    fn max_bytes(&self) -> usize;

    /// Checks the shape of a payload, at creation and after every edit.
    fn check(&self, data: &Value) -> Result<(), Error>;

    /// The artifact this one belongs to (a submission's form), which lets
    /// readers list an artifact's children.
    fn parent(&self, _data: &Value) -> Option<String> {
        None
    }

    /// Whether a respondent, who may write nothing else, may create one (a
    /// submission); the kind's checks say to what.
    fn respondents_create(&self) -> bool {
        false
    }

    /// Whether one may tell the agent what it shows (an app's model
    /// context, `SetAppContext`).
    fn tells_context(&self) -> bool {
        false
    }

    /// What an artifact of this kind asks people for, while it asks (a
    /// form taking submissions); `None` when it asks nothing (another
    /// kind, a closed form). The log keeps it beside the artifact at every
    /// version, so that what waits for a person's answer (`GET
    /// /v1/me/waiting`) is read without reading any document.
    fn asks(&self, _data: &Value) -> Option<Asking> {
        None
    }
}

/// What an artifact asks people for ([`ArtifactKind::asks`]): answered by
/// its children (a form's submissions, [`ArtifactKind::parent`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asking {
    /// What it is called, as shown (a form's title).
    pub title: String,
    /// Whose answer ends the asking for a person.
    pub answered_by: AnsweredBy,
    /// When it stops taking answers (ms since the epoch), if it does.
    pub closes_at_ms: Option<i64>,
}

/// Whose answer ends what an artifact asks of a person.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnsweredBy {
    /// The first answer, by anyone: it takes one in all.
    Anyone,
    /// The person's own: each person is asked until they answer.
    Each,
}

impl AnsweredBy {
    /// As the log stores it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Anyone => "anyone",
            Self::Each => "each",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "anyone" => Some(Self::Anyone),
            "each" => Some(Self::Each),
            _ => None,
        }
    }
}

/// An artifact as a check reads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArtifactView {
    pub id: ArtifactId,
    pub kind: String,
    pub thread: ThreadId,
    pub version: u64,
    pub data: Value,
    pub author: String,
    pub archived: bool,
    pub digest: String,
}

/// The workspace as the acting principal may read it: what a check (L5)
/// sees. Reads that the actor may not make answer `None` / `NotFound`.
#[async_trait::async_trait]
pub trait WorkspaceView: Send + Sync {
    fn tenant(&self) -> &TenantId;
    fn workspace(&self) -> &WorkspaceId;
    fn principal(&self) -> &Principal;
    /// The actor's role in this workspace.
    fn role(&self) -> Role;
    /// The head of an artifact, or a given version of it.
    async fn artifact(&self, id: &ArtifactId, version: Option<u64>) -> Result<Option<ArtifactView>, Error>;
    /// A paused run's request, as the run recorded it.
    async fn deferred_request(&self, run: &RunId, tool_call_id: &str) -> Result<Option<DeferredRequest>, Error>;
    /// The log's clock (ms since the epoch): what a deadline is checked
    /// against.
    fn now_ms(&self) -> i64;
    /// The thread the command acts in, when it acts in one.
    fn thread(&self) -> Option<&ThreadId> {
        None
    }
    /// A whole file of this workspace, in a thread the principal reads (an
    /// upload under way is nobody's yet).
    async fn file(&self, _id: &str) -> Result<Option<crate::FileView>, Error> {
        Ok(None)
    }
}

/// A check on a command, run after authorization and the integration gate
/// and before the commit. It may refuse with `ValidationFailed` or
/// `InvalidState`; any other error fails the command as well.
#[async_trait::async_trait]
pub trait Check: Send + Sync {
    async fn check(&self, view: &dyn WorkspaceView, actor: &Actor, command: &Command) -> Result<(), Error>;

    /// Fills in what the command left out and the rule derives (a
    /// submission's id from its form's policy), before any check runs:
    /// every check, this one included, then checks the completed command.
    /// What cannot be derived is left out, for the check to refuse.
    async fn complete(&self, _view: &dyn WorkspaceView, _actor: &Actor, _command: &mut Command) {}

    /// The switches that govern the command besides its artifact kind's
    /// (answering an ask_form is using a form). The gate asks every check
    /// before any check runs, and refuses the command while one is off.
    async fn switches(&self, _view: &dyn WorkspaceView, _command: &Command) -> Result<Vec<SwitchKey>, Error> {
        Ok(Vec::new())
    }
}

pub type SharedKind = Arc<dyn ArtifactKind>;
pub type SharedCheck = Arc<dyn Check>;

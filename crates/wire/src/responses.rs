//! What the server answers.

use std::collections::BTreeMap;

use lattice_core::FileRef;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `{"error": {"type": …, "code": …, "link": …, …}}`: every refusal, as
/// REQUIREMENTS.md L8 lists the types, with the `link` to its code's
/// documentation among the error's fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ErrorBody {
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub error: lattice_core::error::WithLink,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TokenResponse {
    pub token: String,
}

/// Who the token says the caller is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Me {
    pub tenant: String,
    pub user: String,
    /// `member`, `tenant_admin` or `deployment_admin`.
    pub role: String,
    pub agent: bool,
}

/// What was made: a workspace, a thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Created {
    pub id: String,
}

/// Where a command landed in the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Posted {
    pub seq: i64,
}

/// An application's event, appended: its place in the log and its id
/// (the `Nats-Msg-Id` it is bridged with).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Appended {
    pub seq: i64,
    pub id: String,
}

/// An artifact's version, as a create or an edit committed it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Versioned {
    pub id: String,
    pub version: u64,
    pub digest: String,
    /// The envelope that committed it: its sealed receipt is
    /// `GET /v1/receipts/{seq}` (docs/SEAL.md).
    pub seq: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Archived {
    pub id: String,
    pub version: u64,
    pub archived: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Artifact {
    pub id: String,
    pub kind: String,
    pub thread: String,
    pub version: u64,
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub data: Value,
    pub author: String,
    pub archived: bool,
    pub digest: String,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Workspace {
    pub id: String,
    pub name: String,
    /// The caller's role in it.
    pub role: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Thread {
    pub id: String,
    pub workspace: String,
    pub title: String,
    pub created_by: String,
    pub created_at: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub restricted: bool,
    /// The caller's role in the thread (`GET /v1/threads/{th}` and
    /// `GET /v1/threads` say it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Whether something is new there for the caller: a message or an
    /// artifact by anyone else after its read mark (the lists say it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unread: Option<bool>,
}

/// One page of a thread's or a workspace's envelopes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EventPage {
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Object>))]
    pub events: Vec<lattice_core::Envelope>,
    /// Pass as `after` to read on.
    pub next_after: i64,
}

/// A key's value where the caller looks, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EffectiveValue {
    pub enabled: bool,
    pub because: String,
}

/// Every key's effective value in a workspace (also each message of its
/// live stream).
pub type Effective = BTreeMap<String, EffectiveValue>;

/// One level the caller administers, as the admin console shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LevelView {
    /// `deployment`, `tenant:{id}` or `workspace:{id}`: the path segment of
    /// `PUT /v1/integrations/{level}/{key}`.
    pub level: String,
    pub name: String,
    /// How many workspaces a change at this level reaches.
    #[serde(default)]
    pub workspaces: u64,
    pub keys: Vec<KeyView>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct KeyView {
    pub key: String,
    /// What this level holds: `on`, `off` or `unset`.
    pub state: String,
    /// The value here, the levels below taken as unset.
    pub effective: EffectiveValue,
}

/// A file attached to an answer: the reference a form's file field takes
/// (`id`, `name`, `type`, `size`, `sha256`), and, once its bytes were
/// erased, when and by whom.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FileView {
    #[serde(flatten)]
    pub file: FileRef,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub erased_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub erased_by: Option<String>,
}

/// A resumable upload (`/v1/threads/{th}/uploads`, `/v1/uploads/{id}`):
/// where its stored bytes end (the next part starts there) of how many;
/// once whole, the file it made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UploadView {
    pub id: String,
    pub offset: u64,
    pub size: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<FileView>,
}

/// A link to a file's bytes (`POST /v1/files/{id}/link`): the path to open
/// on the apps origin, and for how long it works.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FileLink {
    pub path: String,
    pub expires_in_secs: u64,
}

/// A connected MCP server, as the console lists it
/// (`GET /v1/integrations/servers`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ConnectedServer {
    pub name: String,
    /// Its switch key, `mcp:<name>`.
    pub key: String,
    /// `http` (Streamable HTTP) or `stdio`.
    pub transport: String,
    /// Its host (HTTP) or its program (stdio): never its arguments or its token.
    pub address: String,
    /// How many tools it lists, when it answered within a few seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<usize>,
    /// Why it did not, when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreachable: Option<String>,
    /// Whether each person signs in to it with their own account.
    #[serde(default)]
    pub sign_in: bool,
    /// Whose its sessions are: `tenant` or `person`.
    #[serde(default)]
    pub isolation: String,
    /// How many people are signed in to it (of the caller's tenant, or of
    /// every one for a deployment admin), for a tenant or deployment admin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connected_people: Option<i64>,
    /// The origins the operator allows its apps to reach, by kind
    /// (`connect`, `resource`, `frame`, `base`), of those each app
    /// declares; none: no network.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub app_domains: std::collections::BTreeMap<String, Vec<String>>,
    /// Its recent calls in the workspaces the caller administers, newest first.
    pub calls: Vec<ServerCall>,
}

/// One decision about a call of a connected server's tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ServerCall {
    pub seq: i64,
    pub at: String,
    pub actor: String,
    pub workspace: String,
    pub tool: String,
    /// `allow`, `deny`, `ask`, `confirmed`, `declined`, `read_only`.
    pub decision: String,
    /// `agent` (a run's call) or `app` (one of the server's apps).
    pub caller: String,
    /// Why the call failed, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunStarted {
    pub run_id: String,
}

/// A run: where it stands, whom it acts for, and what it waits on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Run {
    pub id: String,
    pub workspace: String,
    pub thread: String,
    /// `running`, `paused`, `finished` or `failed`.
    pub status: String,
    pub model: String,
    pub started_by: String,
    pub acting_for: String,
    pub acting_role: String,
    pub requests: Vec<RunRequest>,
}

/// A request a run waits on (an ask_form, an ask_user).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunRequest {
    pub tool_call_id: String,
    pub tool_name: String,
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub args: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub answer: Option<Value>,
    /// When nobody may answer any more (RFC 3339), for a request with a deadline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// A connected server's call that waits for the person the run acts
    /// for to sign in to it (`POST /v1/me/connections/{server}`), then is
    /// answered `{"approved": true}` to go on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub sign_in: Option<lattice_core::SignInNeeded>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Answered {
    pub answered: bool,
    /// The answer's envelope: its sealed receipt is `GET /v1/receipts/{seq}`
    /// (docs/SEAL.md).
    pub seq: i64,
}

/// The capability to make an app's calls (`POST /v1/artifacts/{id}/capability`):
/// bound to the caller and the app, signed with a key of its own (never a
/// bearer token), for `expires_in_secs`. lattice's chat host keeps it for
/// the app it shows and sends it with each of that app's calls.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AppCapability {
    pub capability: String,
    pub expires_in_secs: u64,
}

/// What an app's tool call came through: recorded with each decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Via {
    /// lattice's chat host.
    Chat,
    /// An MCP host, through the exporter.
    Mcp,
}

/// What an app's tool call comes to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    /// Done: `result` in the contract's shape (`{"state"}`, `{"version"}`,
    /// `{"id"}`) and a line of text for the app.
    Done {
        #[cfg_attr(feature = "openapi", schema(value_type = Object))]
        result: Value,
        text: String,
    },
    /// Refused by the policy or by the person.
    Refused { reason: String },
    /// The person must confirm exactly these arguments first.
    Confirm {
        confirmation: String,
        app: String,
        title: String,
        tool: String,
        #[cfg_attr(feature = "openapi", schema(value_type = Object))]
        arguments: Value,
    },
}

/// One decision about an app's tool call, as the console lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CallRecord {
    pub seq: i64,
    pub at: String,
    pub actor: String,
    pub tool: String,
    /// `allow`, `deny`, `ask`, `confirmed`, `declined`, or `read_only` (a
    /// reader's call of a tool that changes the app, refused).
    pub decision: String,
    pub via: Via,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmation: Option<String>,
}

/// A model's text as it writes it: the `delta` event of a thread's live
/// stream. Not kept in the log (the finished reply is); the texts of one
/// run's deltas add up to its reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TextDelta {
    pub run_id: String,
    /// Which of the run's model calls wrote it, from 0: a client that has
    /// seen that call's `model_replied` has the whole text already (a
    /// stream that caught up from the log can hear a delta after it).
    pub model_call: usize,
    /// The text added since the last delta.
    pub text: String,
}

/// A tool call's arguments as far as the model has written them, made
/// whole JSON: the `tool_input` event of a thread's live stream. Not
/// validated until the call is complete; not kept in the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ToolInputDelta {
    pub run_id: String,
    /// As [`TextDelta::model_call`].
    pub model_call: usize,
    pub tool_call_id: String,
    pub name: String,
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub arguments: Value,
}

/// An app's context, kept: the sequence number of its envelope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AppContextKept {
    pub seq: i64,
}

/// A person on a workspace's members list, or listed on a thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Member {
    pub user: String,
    /// `viewer`, `respondent`, `editor` or `admin`.
    pub role: String,
}

/// The most items `GET /v1/me/waiting` answers (and each message of its
/// stream carries): the first [`WAITING_LIMIT`] in the list's order, the
/// rest cut. A list of exactly this many may have been cut.
pub const WAITING_LIMIT: usize = 200;

/// One thing waiting for the signed-in person's answer: an item of
/// `GET /v1/me/waiting` (a bare JSON array of these, at most
/// [`WAITING_LIMIT`]) and of each `waiting` message of
/// `GET /v1/me/waiting/stream` (`event: waiting`, `data:` the whole list,
/// sent again whenever something that could change it commits).
///
/// Listed: every open `ask_form` request of a paused run, and every form
/// taking submissions (not archived, not `closed`, its `closes_at` not
/// passed) that the person has not answered yet (a `once` form until anyone
/// has answered it, a `per_person` or `many` form until the person has), in
/// every thread the person reads and may answer in (the respondent role or
/// above there), across every workspace of theirs. Ordered by `closes_at`,
/// soonest first, those without one last; then newest `asked_at` first.
///
/// ```json
/// [{"waits": {"type": "ask_form", "run": "run_7", "tool_call_id": "call_1"},
///   "title": "Travel dates",
///   "thread": {"id": "th_2", "title": "Offsite"},
///   "workspace": {"id": "ws_1", "name": "Acme"},
///   "asked_by": "ana", "asked_by_agent": true,
///   "asked_at": "2025-03-01T09:00:00.000Z", "closes_at": "2025-03-02T09:00:00.000Z"},
///  {"waits": {"type": "form", "id": "art_9", "version": 2},
///   "title": "Lunch order",
///   "thread": {"id": "th_3", "title": "Friday"},
///   "workspace": {"id": "ws_4", "name": "Office"},
///   "asked_by": "bo", "asked_by_agent": false,
///   "asked_at": "2025-02-28T16:30:00.000Z"}]
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WaitingItem {
    pub waits: Waits,
    /// The form's title (an ask_form's `args.title`, a form's `title`).
    pub title: String,
    pub thread: WaitingThread,
    pub workspace: WaitingWorkspace,
    /// Who asked, as the asking envelope's actor names it (`Actor::name`):
    /// the user id of the person, or of the person an agent acted for.
    pub asked_by: String,
    /// Whether an agent asked (for `asked_by`).
    pub asked_by_agent: bool,
    /// When it was asked (RFC 3339, UTC, milliseconds): the run's pause, the
    /// form's last change.
    pub asked_at: String,
    /// When it stops taking answers (RFC 3339, UTC, milliseconds): a
    /// request's deadline, a form's `closes_at`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closes_at: Option<String>,
}

/// What waits, and how it is answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Waits {
    /// A paused run's `ask_form` request: answered by
    /// `POST /v1/runs/{run}/answers` (`GET /v1/runs/{run}` has its schema).
    AskForm { run: String, tool_call_id: String },
    /// A `form` artifact at its head `version`: answered by a submission
    /// (`POST /v1/threads/{th}/artifacts`, kind `submission`).
    Form { id: String, version: u64 },
}

/// The thread an item waits in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WaitingThread {
    pub id: String,
    pub title: String,
}

/// The workspace an item waits in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WaitingWorkspace {
    pub id: String,
    pub name: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON the web page reads, exactly.
    #[test]
    fn a_waiting_item_reads_as_documented() {
        let item = WaitingItem {
            waits: Waits::AskForm { run: "run_7".into(), tool_call_id: "call_1".into() },
            title: "Travel dates".into(),
            thread: WaitingThread { id: "th_2".into(), title: "Offsite".into() },
            workspace: WaitingWorkspace { id: "ws_1".into(), name: "Acme".into() },
            asked_by: "ana".into(),
            asked_by_agent: true,
            asked_at: "2025-03-01T09:00:00.000Z".into(),
            closes_at: Some("2025-03-02T09:00:00.000Z".into()),
        };
        let json = serde_json::json!({
            "waits": {"type": "ask_form", "run": "run_7", "tool_call_id": "call_1"},
            "title": "Travel dates",
            "thread": {"id": "th_2", "title": "Offsite"},
            "workspace": {"id": "ws_1", "name": "Acme"},
            "asked_by": "ana", "asked_by_agent": true,
            "asked_at": "2025-03-01T09:00:00.000Z", "closes_at": "2025-03-02T09:00:00.000Z"
        });
        assert_eq!(serde_json::to_value(&item).unwrap(), json);
        assert_eq!(serde_json::from_value::<WaitingItem>(json).unwrap(), item);
        let form = WaitingItem { waits: Waits::Form { id: "art_9".into(), version: 2 }, closes_at: None, ..item };
        let v = serde_json::to_value(&form).unwrap();
        assert_eq!(v["waits"], serde_json::json!({"type": "form", "id": "art_9", "version": 2}));
        assert!(v.get("closes_at").is_none());
    }

    /// A type that holds another's fields beside its own writes them flat,
    /// in the order it always did, and reads them back.
    #[test]
    fn a_file_and_an_audit_row_read_as_their_fields_flat() {
        let reference = FileRef { id: "fil_1".into(), name: "a.png".into(), media_type: "image/png".into(), size: 3, sha256: "ab".into() };
        let erased = FileView { file: reference.clone(), erased_at: Some("2026-01-01T00:00:00Z".into()), erased_by: Some("ana".into()) };
        let text = r#"{"id":"fil_1","name":"a.png","type":"image/png","size":3,"sha256":"ab","erased_at":"2026-01-01T00:00:00Z","erased_by":"ana"}"#;
        assert_eq!(serde_json::to_string(&erased).unwrap(), text);
        assert_eq!(serde_json::from_str::<FileView>(text).unwrap(), erased);
        let kept = FileView { file: reference, erased_at: None, erased_by: None };
        assert_eq!(serde_json::to_string(&kept).unwrap(), r#"{"id":"fil_1","name":"a.png","type":"image/png","size":3,"sha256":"ab"}"#);

        let change = lattice_core::event::SwitchSet {
            level: "deployment".into(),
            key: "ui:forms".into(),
            old: "unset".into(),
            new: "off".into(),
            reason: "r".into(),
        };
        let row = crate::AuditEntry { seq: 7, at: "2026-01-01T00:00:00Z".into(), actor: "cli:ops".into(), change };
        let text =
            r#"{"seq":7,"at":"2026-01-01T00:00:00Z","actor":"cli:ops","level":"deployment","key":"ui:forms","old":"unset","new":"off","reason":"r"}"#;
        assert_eq!(serde_json::to_string(&row).unwrap(), text);
        assert_eq!(serde_json::from_str::<crate::AuditEntry>(text).unwrap(), row);
    }
}

/// The key the log's checkpoints are signed with (`GET /v1/checkpoint-key`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SealKeyView {
    /// 16 hex digits: what each checkpoint names.
    pub key_id: String,
    /// The Ed25519 public key, 64 hex digits.
    pub public_key: String,
}

/// A provider a person signs in with (`GET /v1/auth/providers`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AuthProvider {
    pub name: String,
    /// What the sign-in button says ("Sign in with …").
    pub title: String,
    /// The path that begins a person's sign-in: it redirects to the provider.
    pub start: String,
}

/// A sign-in session's token (`POST /v1/auth/session`, `/v1/auth/renew`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SessionTokenView {
    pub token: String,
    /// Seconds the token lasts: renew it before then while the person is
    /// active (`POST /v1/auth/renew`).
    pub expires_in: u64,
    /// When the session ends however active its person (RFC 3339).
    pub session_ends_at: String,
}

/// What signing out of a sign-in session leaves to do
/// (`POST /v1/auth/sign-out`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SignedOut {
    /// The provider's end-session address, to end the provider's session
    /// too (RP-initiated logout), when it offers one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_session_url: Option<String>,
}

/// An API key just made: `key` is shown this once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ApiKeyCreated {
    pub id: String,
    pub key: String,
}

/// An API key as listed (never the key itself).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ApiKeyView {
    pub id: String,
    pub name: String,
    pub role: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    pub created_by: String,
    pub created_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_used_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<String>,
}

/// A SCIM token just issued: `token` is shown this once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ScimTokenCreated {
    pub id: String,
    pub token: String,
}

/// A SCIM token as listed (never the token itself).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ScimTokenView {
    pub id: String,
    pub created_by: String,
    pub created_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_used_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<String>,
}

/// A connected server the caller signs in to with their own account, and
/// whether they have (never the tokens).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ServerConnection {
    pub server: String,
    pub connected: bool,
    /// When they signed in (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connected_at: Option<String>,
    /// When their tokens were last renewed (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
}

/// A sign-in to a server begun: the address the person opens, at the
/// server's authorization server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ConnectionStarted {
    pub url: String,
}

/// A sign-in to a server finished: which server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ConnectionFinished {
    pub server: String,
}

/// What the connected servers on in a thread offer its person: prompts
/// to run as commands, resources to attach (`GET
/// /v1/threads/{th}/offers`), listed now.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ServerOffers {
    pub prompts: Vec<OfferedPrompt>,
    pub resources: Vec<OfferedResource>,
    /// Servers that could not be asked, and why.
    pub unavailable: Vec<Unavailable>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OfferedPrompt {
    pub server: String,
    pub name: String,
    /// How the composer names it: `/server:name`.
    pub command: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub description: String,
    pub arguments: Vec<OfferedArgument>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OfferedArgument {
    pub name: String,
    pub description: String,
    pub required: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OfferedResource {
    pub server: String,
    pub uri: String,
    pub name: String,
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Unavailable {
    pub server: String,
    pub reason: String,
}

/// A server's suggestions for a prompt's argument.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Completions {
    pub values: Vec<String>,
}

//! Projections (REQUIREMENTS.md B2, B3): which envelopes are bridged, on which
//! subject, with which payload. Per artifact kind and per deferred tool
//! name: an ask_form's answer and a form's submission both become
//! `ui.form_submitted`, a submission to an app `ui.app_submitted`; a mapped
//! event replaces the generic one; a submission's changes and archiving map
//! to nothing.

use lattice_core::event::{self, Event};
use lattice_core::{Actor, Envelope, Error};
use lattice_ui::asks::ASK_FORM;
use lattice_ui::submission::Submission;
use lattice_ui::{APP, SUBMISSION};
use lattice_log::LogReader;
use serde_json::Value;

use crate::payloads::{AppSubmitted, AuthorKind, FormRef, FormSubmitted, Origin};

/// The types the bridge publishes. `run_paused`, `run_resumed`,
/// `model_replied` and `tool_returned` are not bridged: rules react to what
/// people did, not to a run's inner steps.
pub const BRIDGED: &[&str] = &[
    event::WorkspaceCreated::NAME,
    event::MemberAdded::NAME,
    event::ThreadCreated::NAME,
    event::ThreadShared::NAME,
    event::MessagePosted::NAME,
    event::ArtifactCreated::NAME,
    event::ArtifactChanged::NAME,
    event::ArtifactArchived::NAME,
    event::SwitchSet::NAME,
    event::RunStarted::NAME,
    event::RunFinished::NAME,
    event::RunFailed::NAME,
    event::DeferredAnswered::NAME,
    event::AppEvent::NAME,
    event::AuditRecorded::NAME,
];

/// The types a projection may map: decoded before they are bridged.
const PROJECTED: &[&str] = &[
    event::DeferredAnswered::NAME,
    event::ArtifactCreated::NAME,
    event::ArtifactChanged::NAME,
    event::ArtifactArchived::NAME,
    event::AppEvent::NAME,
    event::AuditRecorded::NAME,
];

/// A message for JetStream.
#[derive(Debug, Clone, PartialEq)]
pub struct Outgoing {
    pub seq: i64,
    pub subject: String,
    /// `Nats-Msg-Id`: the envelope's id.
    pub msg_id: String,
    pub payload: Vec<u8>,
}

/// `lattice.<tenant>.<workspace>.<namespace>.<name>`; `_` stands for no
/// workspace (and for the deployment's own tenant).
pub fn subject(e: &Envelope, namespace: &str, name: &str) -> String {
    format!("lattice.{}.{}.{namespace}.{name}", e.tenant, e.workspace.as_deref().unwrap_or("_"))
}

/// A title in an artifact's data or a request's arguments.
fn title(v: &Value) -> String {
    v.get("title").and_then(Value::as_str).unwrap_or_default().to_owned()
}

async fn origin(e: &Envelope, author: String, chain: Option<String>, reader: &LogReader) -> Result<Origin, Error> {
    let (author_kind, run_id) = match &e.actor {
        Actor::Person { .. } => (AuthorKind::Person, None),
        Actor::Agent { run, .. } => (AuthorKind::Agent, run.as_ref().map(ToString::to_string)),
        Actor::System { .. } => (AuthorKind::System, None),
    };
    let restricted = match e.thread.as_deref() {
        Some(thread) => reader.thread_restricted(thread).await?,
        None => false,
    };
    Ok(Origin {
        author,
        author_kind,
        run_id,
        tenant: e.tenant.clone(),
        workspace: e.workspace.clone().unwrap_or_default(),
        thread: e.thread.clone().unwrap_or_default(),
        envelope_id: e.id.clone(),
        seq: e.seq,
        at: e.at.clone(),
        chain,
        restricted,
    })
}

/// Maps one stored envelope: decodes it only when a projection may apply
/// (answers, artifacts); the rest go out as stored.
pub async fn project_stored(e: &lattice_log::StoredEnvelope, reader: &LogReader) -> Result<Option<Outgoing>, Error> {
    if !BRIDGED.contains(&e.event_type.as_str()) {
        return Ok(None);
    }
    match e.event_type.as_str() {
        projected if PROJECTED.contains(&projected) => project(&e.decode()?, reader).await,
        _ => Ok(Some(Outgoing {
            seq: e.seq,
            subject: format!("lattice.{}.{}.log.{}", e.tenant, e.workspace.as_deref().unwrap_or("_"), e.event_type),
            msg_id: e.id.clone(),
            payload: e.to_json(),
        })),
    }
}

/// Maps one envelope; `None` when it is not bridged.
pub async fn project(e: &Envelope, reader: &LogReader) -> Result<Option<Outgoing>, Error> {
    if !BRIDGED.contains(&e.event_type()) {
        return Ok(None);
    }
    let projected: Option<(&str, Vec<u8>)> = match &e.event {
        Event::DeferredAnswered(answered) if answered.tool_name == ASK_FORM => {
            let args = reader.request_args(&e.tenant, &answered.run_id, &answered.tool_call_id).await?.unwrap_or(Value::Null);
            let body = FormSubmitted {
                form: FormRef::AskForm { run_id: answered.run_id.clone(), tool_call_id: answered.tool_call_id.clone(), title: title(&args) },
                values: if answered.expired { Value::Null } else { answered.answer.clone() },
                expired: answered.expired,
                origin: origin(e, answered.author.clone(), answered.chain.clone(), reader).await?,
            };
            Some(("form_submitted", serde_json::to_vec(&body).expect("a payload serializes")))
        }
        Event::ArtifactCreated(created) if created.kind == SUBMISSION => {
            // The log checked the shape when it committed the submission.
            let Ok(submission) = serde_json::from_value::<Submission>(created.data.clone()) else { return Ok(None) };
            let target = reader.artifact_data(&e.tenant, &submission.form_id, Some(submission.form_version)).await?;
            let (target_kind, target_data) = target.unwrap_or_default();
            let chain = reader.artifact_chain(&e.tenant, &submission.form_id).await?;
            let origin = origin(e, e.actor.name().to_owned(), chain, reader).await?;
            let submission_id = created.id.clone();
            if target_kind == APP {
                let body = AppSubmitted { app_id: submission.form_id, title: title(&target_data), submission_id, values: submission.values, origin };
                Some(("app_submitted", serde_json::to_vec(&body).expect("a payload serializes")))
            } else {
                let form = FormRef::Form { form_id: submission.form_id, form_version: submission.form_version, title: title(&target_data), submission_id };
                let body = FormSubmitted { form, values: submission.values, expired: false, origin };
                Some(("form_submitted", serde_json::to_vec(&body).expect("a payload serializes")))
            }
        }
        // An application's event goes out under its own namespace and name
        // (never ui or log: the log service refuses those).
        Event::AppEvent(app) => {
            if app.namespace.is_empty() || app.name.is_empty() || lattice_log::limits::RESERVED_NAMESPACES.contains(&app.namespace.as_str()) {
                return Ok(None);
            }
            return Ok(Some(as_is(e, subject(e, &app.namespace, &app.name))));
        }
        // lattice's own audit rows, under the namespace only the bridge
        // publishes in.
        Event::AuditRecorded(audit) => {
            if audit.name.is_empty() {
                return Ok(None);
            }
            return Ok(Some(as_is(e, subject(e, "audit", &audit.name))));
        }
        // A submission never changes; its archiving is nobody's event.
        Event::ArtifactChanged(event::ArtifactChanged { kind, .. }) | Event::ArtifactArchived(event::ArtifactArchived { kind, .. })
            if kind == SUBMISSION =>
        {
            return Ok(None);
        }
        _ => None,
    };
    Ok(Some(match projected {
        Some((name, payload)) => Outgoing { seq: e.seq, subject: subject(e, "ui", name), msg_id: e.id.clone(), payload },
        None => as_is(e, subject(e, "log", e.event_type())),
    }))
}

/// The envelope itself, on `subject`.
fn as_is(e: &Envelope, subject: String) -> Outgoing {
    Outgoing { seq: e.seq, subject, msg_id: e.id.clone(), payload: serde_json::to_vec(e).expect("an envelope serializes") }
}

//! Projections (REQUIREMENTS.md B2, B3): which envelopes are bridged, on which
//! subject, with which payload. Per artifact kind and per deferred tool
//! name: an ask_form's answer and a form's submission both become
//! `ui.form_submitted`, a submission to an app `ui.app_submitted`; a mapped
//! event replaces the generic one; a submission's changes and archiving map
//! to nothing.

use lattice_core::event;
use lattice_core::{Actor, Envelope, Error};
use lattice_log::LogReader;
use serde_json::Value;

use crate::payloads::{AppSubmitted, AuthorKind, FormRef, FormSubmitted, Origin};

/// The types the bridge publishes. `run_paused`, `run_resumed`,
/// `model_replied` and `tool_returned` are not bridged: rules react to what
/// people did, not to a run's inner steps.
pub const BRIDGED: &[&str] = &[
    event::WORKSPACE_CREATED,
    event::MEMBER_ADDED,
    event::THREAD_CREATED,
    event::MESSAGE_POSTED,
    event::ARTIFACT_CREATED,
    event::ARTIFACT_CHANGED,
    event::ARTIFACT_ARCHIVED,
    event::SWITCH_SET,
    event::RUN_STARTED,
    event::RUN_FINISHED,
    event::RUN_FAILED,
    event::DEFERRED_ANSWERED,
    event::APP_EVENT,
    event::AUDIT_RECORDED,
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

fn text(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or_default().to_owned()
}

fn origin(e: &Envelope, author: String) -> Origin {
    let (author_kind, run_id) = match &e.actor {
        Actor::Person { .. } => (AuthorKind::Person, None),
        Actor::Agent { run, .. } => (AuthorKind::Agent, run.as_ref().map(ToString::to_string)),
        Actor::System { .. } => (AuthorKind::System, None),
    };
    Origin {
        author,
        author_kind,
        run_id,
        tenant: e.tenant.clone(),
        workspace: e.workspace.clone().unwrap_or_default(),
        thread: e.thread.clone().unwrap_or_default(),
        envelope_id: e.id.clone(),
        seq: e.seq,
        at: e.at.clone(),
    }
}

/// Maps one stored envelope: decodes it only when a projection may apply
/// (answers, artifacts); the rest go out as stored.
pub async fn project_stored(e: &lattice_log::StoredEnvelope, reader: &LogReader) -> Result<Option<Outgoing>, Error> {
    if !BRIDGED.contains(&e.event_type.as_str()) {
        return Ok(None);
    }
    match e.event_type.as_str() {
        event::DEFERRED_ANSWERED
        | event::ARTIFACT_CREATED
        | event::ARTIFACT_CHANGED
        | event::ARTIFACT_ARCHIVED
        | event::APP_EVENT
        | event::AUDIT_RECORDED => {
            project(&e.decode()?, reader).await
        }
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
    if !BRIDGED.contains(&e.event_type.as_str()) {
        return Ok(None);
    }
    let p = &e.payload;
    let kind = text(p, "kind");
    let projected: Option<(&str, Vec<u8>)> = match e.event_type.as_str() {
        event::DEFERRED_ANSWERED if text(p, "tool_name") == "ask_form" => {
            let (run, call) = (text(p, "run_id"), text(p, "tool_call_id"));
            let args = reader.request_args(&e.tenant, &run, &call).await?.unwrap_or(Value::Null);
            let body = FormSubmitted {
                form: FormRef::AskForm { run_id: run, tool_call_id: call, title: text(&args, "title") },
                values: p.get("answer").cloned().unwrap_or(Value::Null),
                origin: origin(e, text(p, "author")),
            };
            Some(("form_submitted", serde_json::to_vec(&body).expect("a payload serializes")))
        }
        event::ARTIFACT_CREATED if kind == "submission" => {
            let data = p.get("data").cloned().unwrap_or(Value::Null);
            let form_id = text(&data, "form_id");
            let version = data.get("form_version").and_then(Value::as_u64);
            let target = reader.artifact_data(&e.tenant, &form_id, version).await?;
            let (target_kind, target_data) = target.unwrap_or_default();
            let values = data.get("values").cloned().unwrap_or(Value::Null);
            let submission_id = text(p, "id");
            let author = e.actor.name().to_owned();
            if target_kind == "app" {
                let body = AppSubmitted {
                    app_id: form_id,
                    title: text(&target_data, "title"),
                    submission_id,
                    values,
                    origin: origin(e, author),
                };
                Some(("app_submitted", serde_json::to_vec(&body).expect("a payload serializes")))
            } else {
                let body = FormSubmitted {
                    form: FormRef::Form {
                        form_id,
                        form_version: version.unwrap_or_default(),
                        title: text(&target_data, "title"),
                        submission_id,
                    },
                    values,
                    origin: origin(e, author),
                };
                Some(("form_submitted", serde_json::to_vec(&body).expect("a payload serializes")))
            }
        }
        // An application's event goes out under its own namespace and name
        // (never ui or log: the log service refuses those).
        event::APP_EVENT => {
            let (namespace, name) = (text(p, "namespace"), text(p, "name"));
            if namespace.is_empty() || name.is_empty() || lattice_log::limits::RESERVED_NAMESPACES.contains(&namespace.as_str()) {
                return Ok(None);
            }
            return Ok(Some(Outgoing {
                seq: e.seq,
                subject: subject(e, &namespace, &name),
                msg_id: e.id.clone(),
                payload: serde_json::to_vec(e).expect("an envelope serializes"),
            }));
        }
        // lattice's own audit rows, under the namespace only the bridge
        // publishes in.
        event::AUDIT_RECORDED => {
            let name = text(p, "name");
            if name.is_empty() {
                return Ok(None);
            }
            return Ok(Some(Outgoing {
                seq: e.seq,
                subject: subject(e, "audit", &name),
                msg_id: e.id.clone(),
                payload: serde_json::to_vec(e).expect("an envelope serializes"),
            }));
        }
        // A submission never changes; its archiving is nobody's event.
        event::ARTIFACT_CHANGED | event::ARTIFACT_ARCHIVED if kind == "submission" => return Ok(None),
        _ => None,
    };
    Ok(Some(match projected {
        Some((name, payload)) => Outgoing { seq: e.seq, subject: subject(e, "ui", name), msg_id: e.id.clone(), payload },
        None => Outgoing {
            seq: e.seq,
            subject: subject(e, "log", &e.event_type),
            msg_id: e.id.clone(),
            payload: serde_json::to_vec(e).expect("an envelope serializes"),
        },
    }))
}

//! Projections (REQUIREMENTS.md B2, B3): which envelopes are bridged, on which
//! subject, with which payload. Per artifact kind and per deferred tool
//! name: an ask_form's answer and a form's submission both become
//! `ui.form_submitted`, a submission to an app `ui.app_submitted`; a mapped
//! event replaces the generic one; a submission's changes and archiving map
//! to nothing.

use std::collections::HashMap;
use std::sync::Mutex;

use lattice_core::event::{self, Event};
use lattice_core::{Actor, Envelope, Error};
use lattice_log::chain::ChainKey;
use lattice_ui::asks::ASK_FORM;
use lattice_ui::submission::Submission;
use lattice_ui::{APP, SUBMISSION};
use serde::Deserialize;
use serde_json::Value;

use crate::found::Found;
use crate::lookups::Lookups;
use crate::payloads::{AppSubmitted, AuthorKind, FormRef, FormSubmitted, Marks, Origin};

/// The types the bridge publishes; [`NOT_BRIDGED`] are not: rules react to
/// what people did, not to a run's inner steps.
pub const BRIDGED: &[&str] = &[
    event::WorkspaceCreated::NAME,
    event::MemberAdded::NAME,
    event::MemberRemoved::NAME,
    event::ThreadCreated::NAME,
    event::ThreadShared::NAME,
    event::ThreadUnshared::NAME,
    event::SessionsEnded::NAME,
    event::PersonSaved::NAME,
    event::PersonRemoved::NAME,
    event::GroupSaved::NAME,
    event::GroupRemoved::NAME,
    event::CredentialIssued::NAME,
    event::CredentialRevoked::NAME,
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

/// The types the bridge leaves out: every type is in one list or the other.
/// What an app told the agent (`app_context_set`) is a run's input, like
/// its inner steps.
pub const NOT_BRIDGED: &[&str] = &[
    event::RunPaused::NAME,
    event::RunAsked::NAME,
    event::RunResumed::NAME,
    event::ModelReplied::NAME,
    event::ToolReturned::NAME,
    event::AppContextSet::NAME,
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
    /// What the message does to the tenant's files in the object store
    /// (docs/BRIDGE.md, "Files"), in log order with the message.
    pub files: FileCopies,
}

/// The object store's side of a message: files whose bytes go in before
/// it is published, or a file whose bytes go out after it.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum FileCopies {
    #[default]
    None,
    Put(Vec<lattice_core::FileRef>),
    Erase(String),
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

/// The chain recorded in a `run_started` payload, read without decoding
/// the rest.
#[derive(Deserialize)]
struct Chained {
    #[serde(default)]
    chain: Option<String>,
}

/// Threads remembered at most, before the memory starts over.
const THREADS_KEPT: usize = 65_536;

/// Maps envelopes to messages, with what it reads besides them: the log,
/// the key chains are minted under, and which threads are restricted.
pub struct Projector {
    reader: Lookups,
    chains: Option<ChainKey>,
    /// Whether each thread seen is restricted. A thread's `restricted` is
    /// fixed when it is created (no command changes it), so what was read
    /// once holds, and the hot path asks the database once per thread, not
    /// once per envelope.
    restricted: Mutex<HashMap<String, bool>>,
}

impl Projector {
    /// Without a key (a bridge nobody gave one: tests, benchmarks), chains
    /// go out as recorded and none is minted.
    pub(crate) fn new(reader: Lookups, chains: Option<ChainKey>) -> Self {
        Self { reader, chains, restricted: Mutex::default() }
    }

    /// Reads what `batch` needs to be published (docs/BRIDGE.md, "Reads"):
    /// a read for each kind of need, for the whole batch, and one for the
    /// threads it names that were not seen yet.
    pub(crate) async fn look_up(&self, batch: &[lattice_log::StoredEnvelope]) -> Result<Found, Error> {
        let unknown: Vec<&str> = {
            let known = self.restricted.lock().expect("never poisoned");
            let mut unknown: Vec<&str> = batch
                .iter()
                .filter(|e| BRIDGED.contains(&e.event_type.as_str()))
                .filter_map(|e| e.thread.as_deref())
                .filter(|thread| !known.contains_key(*thread))
                .collect();
            unknown.sort_unstable();
            unknown.dedup();
            unknown
        };
        let (found, restricted) = crate::found::look_up(&self.reader, batch, &unknown).await?;
        let mut known = self.restricted.lock().expect("never poisoned");
        if known.len() + unknown.len() > THREADS_KEPT {
            known.clear();
        }
        // A thread not found is not restricted, as a read of its own says.
        for thread in unknown {
            known.insert(thread.to_owned(), restricted.get(thread).copied().unwrap_or(false));
        }
        Ok(found)
    }

    /// Maps one stored envelope: decodes it only when a projection may
    /// apply (answers, artifacts); the rest go out as stored, with the
    /// bridge's marks. What it needs besides itself is in `found` (read
    /// for its batch), or read now.
    pub(crate) async fn project_stored(&self, e: &lattice_log::StoredEnvelope, found: &Found) -> Result<Option<Outgoing>, Error> {
        let event_type = e.event_type.as_str();
        if !BRIDGED.contains(&event_type) {
            return Ok(None);
        }
        if PROJECTED.contains(&event_type) {
            return self.project(&e.decode()?, found).await;
        }
        let recorded = match event_type {
            event::RunStarted::NAME => serde_json::from_str::<Chained>(&e.payload_json).ok().and_then(|c| c.chain),
            _ => None,
        };
        let marks = self.marks(&e.tenant, &e.id, e.thread.as_deref(), recorded).await?;
        Ok(Some(Outgoing {
            seq: e.seq,
            subject: format!("lattice.{}.{}.log.{event_type}", e.tenant, e.workspace.as_deref().unwrap_or("_")),
            msg_id: e.id.clone(),
            payload: marks.append_to(e.to_json()),
            files: FileCopies::None,
        }))
    }

    /// Maps one envelope; `None` when it is not bridged.
    pub(crate) async fn project(&self, e: &Envelope, found: &Found) -> Result<Option<Outgoing>, Error> {
        if !BRIDGED.contains(&e.event_type()) {
            return Ok(None);
        }
        let projected: Option<(&str, Vec<u8>, FileCopies)> = match &e.event {
            Event::DeferredAnswered(answered) if answered.tool_name == ASK_FORM => {
                let key = (e.tenant.clone(), answered.run_id.clone(), answered.tool_call_id.clone());
                let args = match found.requests.get(&key) {
                    Some(args) => args.clone(),
                    None => self.reader.request_args(&e.tenant, &answered.run_id, &answered.tool_call_id).await?,
                };
                let args = args.unwrap_or(Value::Null);
                let files = if answered.expired { Vec::new() } else { self.files_named(&e.tenant, &args, &answered.answer, found).await? };
                let body = FormSubmitted {
                    form: FormRef::AskForm { run_id: answered.run_id.clone(), tool_call_id: answered.tool_call_id.clone(), title: title(&args) },
                    values: if answered.expired { Value::Null } else { answered.answer.clone() },
                    expired: answered.expired,
                    files,
                    origin: self.origin(e, answered.author.clone(), answered.chain.clone()).await?,
                };
                Some(("form_submitted", serde_json::to_vec(&body).expect("a payload serializes"), FileCopies::Put(body.files)))
            }
            Event::ArtifactCreated(created) if created.kind == SUBMISSION => {
                // The log checked the shape when it committed the submission.
                let Ok(submission) = serde_json::from_value::<Submission>(created.data.clone()) else { return Ok(None) };
                let key = (e.tenant.clone(), submission.form_id.clone(), submission.form_version);
                let (target, chain) = match found.artifacts.get(&key) {
                    Some(Some(at)) => (at.data.clone().map(|data| (at.kind.clone(), data)), at.chain.clone()),
                    Some(None) => (None, None),
                    None => (
                        self.reader.artifact_data(&e.tenant, &submission.form_id, Some(submission.form_version)).await?,
                        self.reader.artifact_chain(&e.tenant, &submission.form_id).await?,
                    ),
                };
                let (target_kind, target_data) = target.unwrap_or_default();
                let origin = self.origin(e, e.actor.name().to_owned(), chain).await?;
                let submission_id = created.id.clone();
                if target_kind == APP {
                    let body =
                        AppSubmitted { app_id: submission.form_id, title: title(&target_data), submission_id, values: submission.values, origin };
                    Some(("app_submitted", serde_json::to_vec(&body).expect("a payload serializes"), FileCopies::None))
                } else {
                    let form = FormRef::Form {
                        form_id: submission.form_id,
                        form_version: submission.form_version,
                        title: title(&target_data),
                        submission_id,
                    };
                    let body = FormSubmitted { form, values: submission.values, expired: false, files: submission.files, origin };
                    let payload = serde_json::to_vec(&body).expect("a payload serializes");
                    Some(("form_submitted", payload, FileCopies::Put(body.files)))
                }
            }
            // An application's event goes out under its own namespace and name
            // (never ui or log: the log service refuses those).
            Event::AppEvent(app) => {
                if app.namespace.is_empty() || app.name.is_empty() || lattice_log::limits::RESERVED_NAMESPACES.contains(&app.namespace.as_str()) {
                    return Ok(None);
                }
                return Ok(Some(self.as_is(e, subject(e, &app.namespace, &app.name)).await?));
            }
            // lattice's own audit rows, under the namespace only the bridge
            // publishes in.
            Event::AuditRecorded(audit) => {
                if audit.name.is_empty() {
                    return Ok(None);
                }
                let mut out = self.as_is(e, subject(e, "audit", &audit.name)).await?;
                if audit.name == lattice_log::FILE_ERASED
                    && let Some(file) = audit.data.get("file").and_then(Value::as_str)
                {
                    out.files = FileCopies::Erase(file.to_owned());
                }
                return Ok(Some(out));
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
            Some((name, payload, files)) => Outgoing { seq: e.seq, subject: subject(e, "ui", name), msg_id: e.id.clone(), payload, files },
            None => self.as_is(e, subject(e, "log", e.event_type())).await?,
        }))
    }

    /// The references of the files an ask_form's answer names (a
    /// submission carries its own): read from the log's files, in the
    /// form's order; a file missing there is left out.
    async fn files_named(&self, tenant: &str, args: &Value, answer: &Value, found: &Found) -> Result<Vec<lattice_core::FileRef>, Error> {
        let Ok(form) = lattice_ui::schema::compile(args.get("schema").unwrap_or(&Value::Null)) else { return Ok(Vec::new()) };
        let mut files = Vec::new();
        for id in lattice_ui::attached::file_ids(&form, answer) {
            let row = match found.files.get(&(tenant.to_owned(), id.to_owned())) {
                Some(row) => row.clone(),
                None => self.reader.file(tenant, id).await?,
            };
            if let Some(row) = row {
                files.push(row.reference());
            }
        }
        Ok(files)
    }

    /// The envelope itself, on `subject`, with the bridge's marks.
    async fn as_is(&self, e: &Envelope, subject: String) -> Result<Outgoing, Error> {
        let recorded = match &e.event {
            Event::RunStarted(started) => started.chain.clone(),
            Event::DeferredAnswered(answered) => answered.chain.clone(),
            _ => None,
        };
        let marks = self.marks(&e.tenant, &e.id, e.thread.as_deref(), recorded).await?;
        let envelope = serde_json::to_vec(e).expect("an envelope serializes");
        Ok(Outgoing { seq: e.seq, subject, msg_id: e.id.clone(), payload: marks.append_to(envelope), files: FileCopies::None })
    }

    async fn origin(&self, e: &Envelope, author: String, recorded: Option<String>) -> Result<Origin, Error> {
        let (author_kind, run_id) = match &e.actor {
            Actor::Person { .. } => (AuthorKind::Person, None),
            Actor::Agent { run, .. } => (AuthorKind::Agent, run.as_ref().map(ToString::to_string)),
            Actor::System { .. } => (AuthorKind::System, None),
        };
        let Marks { restricted, chain, new_chain } = self.marks(&e.tenant, &e.id, e.thread.as_deref(), recorded).await?;
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
            new_chain,
            restricted,
        })
    }

    /// What the bridge says of envelope `id` beside it: whether its thread
    /// is restricted, the chain it joins (passable, and only one lattice
    /// recorded), and the chain that begins at it.
    async fn marks(&self, tenant: &str, id: &str, thread: Option<&str>, recorded: Option<String>) -> Result<Marks, Error> {
        let restricted = match thread {
            Some(thread) => self.restricted(thread).await?,
            None => false,
        };
        Ok(match &self.chains {
            Some(key) => Marks { restricted, chain: recorded.and_then(|chain| key.pass_on(tenant, &chain)), new_chain: Some(key.mint(tenant, id)) },
            None => Marks { restricted, chain: recorded, new_chain: None },
        })
    }

    async fn restricted(&self, thread: &str) -> Result<bool, Error> {
        if let Some(known) = self.restricted.lock().expect("never poisoned").get(thread) {
            return Ok(*known);
        }
        let restricted = self.reader.thread_restricted(thread).await?;
        let mut known = self.restricted.lock().expect("never poisoned");
        if known.len() >= THREADS_KEPT {
            known.clear();
        }
        known.insert(thread.to_owned(), restricted);
        Ok(restricted)
    }
}

#[cfg(test)]
mod tests {
    use super::{BRIDGED, NOT_BRIDGED};

    /// The backticked names of docs/BRIDGE.md's paragraph that starts with `lead`, up to `end`.
    fn listed<'a>(doc: &'a str, lead: &str, end: &str) -> Vec<&'a str> {
        let from = doc.find(lead).unwrap_or_else(|| panic!("docs/BRIDGE.md has no \"{lead}\"")) + lead.len();
        let text = &doc[from..];
        let text = &text[..text.find(end).unwrap_or(text.len())];
        let mut names: Vec<&str> = text.split('`').skip(1).step_by(2).collect();
        names.sort_unstable();
        names
    }

    #[test]
    fn every_event_type_is_bridged_or_left_out_and_the_docs_say_which() {
        for name in lattice_core::event::Event::NAMES {
            assert!(BRIDGED.contains(name) != NOT_BRIDGED.contains(name), "{name} must be in exactly one of BRIDGED and NOT_BRIDGED");
        }
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/BRIDGE.md")).unwrap();
        let mut bridged = BRIDGED.to_vec();
        bridged.sort_unstable();
        let mut left_out = NOT_BRIDGED.to_vec();
        left_out.sort_unstable();
        assert_eq!(listed(&doc, "Bridged types:", "Not bridged:"), bridged, "docs/BRIDGE.md's bridged types");
        assert_eq!(listed(&doc, "Not bridged:", "("), left_out, "docs/BRIDGE.md's types not bridged");
    }
}

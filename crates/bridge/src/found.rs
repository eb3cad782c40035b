//! What a batch of envelopes needs besides itself to be published, read
//! for the whole batch at once (docs/BRIDGE.md, "Reads"): the forms and
//! apps its submissions name, the requests its ask_form answers answer,
//! the files both attach. Each is one read for the batch; an envelope
//! whose need was not read here (what the batch's look could not tell)
//! reads it on its own, so what is published never depends on it.

use std::collections::{HashMap, HashSet};

use lattice_core::event;
use lattice_core::{Error, FileRef};
use lattice_log::{ArtifactAt, FileRow, StoredEnvelope};
use lattice_ui::SUBMISSION;
use lattice_ui::asks::ASK_FORM;
use serde::Deserialize;
use serde_json::Value;

use crate::lookups::Lookups;

/// What was read for a batch; a key read and not found maps to `None`.
#[derive(Debug, Default)]
pub(crate) struct Found {
    pub artifacts: HashMap<(String, String, u64), Option<ArtifactAt>>,
    pub requests: HashMap<(String, String, String), Option<Value>>,
    pub files: HashMap<(String, String), Option<FileRow>>,
}

/// The part of an `artifact_created` payload the look needs: a
/// submission's form and files. Any other artifact's data is skipped
/// unread (an app's document may be large).
#[derive(Deserialize)]
struct Created {
    kind: String,
    #[serde(default)]
    data: Submitted,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Submitted {
    form_id: Option<String>,
    form_version: Option<u64>,
    files: Vec<FileRef>,
}

/// The part of a `deferred_answered` payload the look needs.
#[derive(Deserialize)]
struct Answered {
    tool_name: String,
    run_id: String,
    tool_call_id: String,
    #[serde(default)]
    expired: bool,
    #[serde(default)]
    answer: Value,
}

/// Reads what `batch` needs, one read for each kind of need it has (the
/// files an answer names once its request is read), and whether each of
/// `unknown_threads` is restricted (one not found is missing).
pub(crate) async fn look_up(lookups: &Lookups, batch: &[StoredEnvelope], unknown_threads: &[&str]) -> Result<(Found, HashMap<String, bool>), Error> {
    // Sets: a batch's submissions mostly name a few forms.
    let mut forms: HashSet<(&str, String, u64)> = HashSet::new();
    let mut requests: HashSet<(&str, String, String)> = HashSet::new();
    let mut answers: Vec<(&str, (String, String, String), Value)> = Vec::new();
    let mut files: HashSet<(String, String)> = HashSet::new();
    for e in batch {
        match e.event_type.as_str() {
            event::ArtifactCreated::NAME => {
                let Ok(created) = serde_json::from_str::<Created>(&e.payload_json) else { continue };
                if created.kind != SUBMISSION {
                    continue;
                }
                let (Some(form), Some(version)) = (created.data.form_id, created.data.form_version) else { continue };
                forms.insert((&e.tenant, form, version));
                files.extend(created.data.files.into_iter().map(|f| (e.tenant.clone(), f.id)));
            }
            event::DeferredAnswered::NAME => {
                let Ok(answered) = serde_json::from_str::<Answered>(&e.payload_json) else { continue };
                if answered.tool_name != ASK_FORM {
                    continue;
                }
                let key = (e.tenant.clone(), answered.run_id, answered.tool_call_id);
                requests.insert((&e.tenant, key.1.clone(), key.2.clone()));
                if !answered.expired {
                    answers.push((&e.tenant, key, answered.answer));
                }
            }
            _ => {}
        }
    }
    let threads = async { if unknown_threads.is_empty() { Ok(HashMap::new()) } else { lookups.threads_restricted(unknown_threads).await } };
    let forms_read = async {
        if forms.is_empty() {
            return Ok(HashMap::new());
        }
        let wanted: Vec<(&str, &str, u64)> = forms.iter().map(|(t, f, v)| (*t, f.as_str(), *v)).collect();
        lookups.artifacts_at(&wanted).await
    };
    let requests_read = async {
        if requests.is_empty() {
            return Ok(HashMap::new());
        }
        let wanted: Vec<(&str, &str, &str)> = requests.iter().map(|(t, r, c)| (*t, r.as_str(), c.as_str())).collect();
        lookups.requests_args(&wanted).await
    };
    let (restricted, mut artifacts, mut args) = tokio::try_join!(threads, forms_read, requests_read)?;

    let mut found = Found::default();
    for (tenant, form, version) in forms {
        let key = (tenant.to_owned(), form, version);
        let at = artifacts.remove(&key);
        found.artifacts.insert(key, at);
    }
    for (tenant, run, call) in requests {
        let key = (tenant.to_owned(), run, call);
        let value = args.remove(&key);
        found.requests.insert(key, value);
    }
    // The files an answer names are known once its form's schema is.
    for (tenant, key, answer) in &answers {
        let args = found.requests.get(key).cloned().flatten().unwrap_or(Value::Null);
        let Ok(form) = lattice_ui::schema::compile(args.get("schema").unwrap_or(&Value::Null)) else { continue };
        files.extend(lattice_ui::attached::file_ids(&form, answer).into_iter().map(|id| ((*tenant).to_owned(), id.to_owned())));
    }
    if !files.is_empty() {
        let wanted: Vec<(&str, &str)> = files.iter().map(|(t, id)| (t.as_str(), id.as_str())).collect();
        let mut rows = lookups.files(&wanted).await?;
        for key in files {
            let row = rows.remove(&key);
            found.files.insert(key, row);
        }
    }
    Ok((found, restricted))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    use lattice_core::{Command, RunStatus, TenantRole, ThreadId, WorkspaceId};
    use lattice_log::LogReader;
    use serde_json::json;

    use super::Found;
    use crate::lookups::Lookups;
    use crate::projections::Projector;

    /// A log with what projections read besides the envelope: forms (one
    /// since changed), submissions with and without a file, an ask_form
    /// answered, a restricted thread and an open one.
    async fn a_log(backend: lattice_log::Backend) -> lattice_log::LogService {
        let log = lattice_testkit::service(backend).await;
        let alice = lattice_testkit::who("t1", "alice", TenantRole::Member);
        let ws = log.execute(&alice, Command::CreateWorkspace { name: "W".into() }).await.unwrap().id.unwrap();
        for restricted in [true, false] {
            let th = log
                .execute(&alice, Command::CreateThread { workspace: WorkspaceId::parse("w", &ws).unwrap(), title: "T".into(), restricted })
                .await
                .unwrap()
                .id
                .unwrap();
            let thread = ThreadId::parse("th", &th).unwrap();
            let schema = json!({"type": "object", "properties": {"choice": {"enum": ["a", "b"]},
                "shot": {"type": "string", "format": "file", "accept": ["text/plain"]}}, "required": ["choice"]});
            let data = json!({"title": "Poll", "submissions": "many", "schema": schema});
            let form = log.execute(&alice, Command::CreateArtifact { thread: thread.clone(), id: None, kind: "form".into(), data }).await.unwrap();
            let form = form.id.unwrap();
            for n in 0..3 {
                let mut upload = log.files().upload(&alice, &thread, "note.txt").await.unwrap();
                upload.push(format!("note {n}").as_bytes()).await.unwrap();
                let file = upload.finish().await.unwrap();
                let values = if n == 0 { json!({"choice": "a"}) } else { json!({"choice": "b", "shot": file.id}) };
                let nonce = format!("nonce-{restricted}-{n}");
                let id = lattice_ui::submission::submission_id(&form, lattice_ui::form::Submissions::Many, "alice", Some(&nonce));
                let id = Some(lattice_core::ArtifactId::parse("id", &id).unwrap());
                let data = json!({"form_id": form, "form_version": 1, "values": values, "nonce": nonce});
                log.execute(&alice, Command::CreateArtifact { thread: thread.clone(), id, kind: "submission".into(), data }).await.unwrap();
            }
            let runner = lattice_agent::Runner::new(lattice_testkit::trusted(&log), lattice_agent::Models::scripted());
            let run = runner.start(&alice, thread.clone(), "report".into(), Some("scripted:ask_form".into()), None).await.unwrap();
            let call = lattice_testkit::eventually("the run to pause", async || {
                let view = log.run(&alice, &run).await.unwrap();
                (view.run.status == RunStatus::Paused).then(|| view.requests[0].tool_call_id.clone())
            })
            .await;
            runner.answer(&alice, &run, call, json!({"date": "2026-11-29", "severity": "high"})).await.unwrap();
            // Its envelopes are all in the log before the last message.
            lattice_testkit::until("the run to finish", async || log.run(&alice, &run).await.unwrap().run.status == RunStatus::Finished).await;
            let last = log.execute(&alice, Command::PostMessage { thread, text: "after".into() }).await.unwrap();
            // Read below the horizon only: all of it, once it has passed the last.
            assert!(log.horizon().wait_for(last.seq, lattice_testkit::PATIENCE).await >= last.seq);
        }
        log
    }

    lattice_testkit::both_backends! {
        async fn what_a_batch_read_publishes_the_same_bytes_as_reads_of_each_envelope_own(backend: Backend) {
            let log = a_log(backend).await;
            let reader = LogReader::of(&log);
            let chains = log.authenticator().chains().clone();
            let batch = reader.read_stored(0, i64::MAX).await.unwrap();
            let alone_reads = Arc::new(AtomicU64::new(0));
            let each = Projector::new(Lookups::new(reader.clone(), alone_reads.clone()), Some(chains.clone()));
            let batch_reads = Arc::new(AtomicU64::new(0));
            let batched = Projector::new(Lookups::new(reader.clone(), batch_reads.clone()), Some(chains));
            let found = batched.look_up(&batch).await.unwrap();
            let (mut forms, mut answers) = (0, 0);
            for e in &batch {
                let by_itself = each.project_stored(e, &Found::default()).await.unwrap();
                let in_batch = batched.project_stored(e, &found).await.unwrap();
                assert_eq!(by_itself, in_batch, "{} ({})", e.id, e.event_type);
                if let Some(out) = in_batch.filter(|o| o.subject.ends_with(".ui.form_submitted")) {
                    let payload: serde_json::Value = serde_json::from_slice(&out.payload).unwrap();
                    forms += usize::from(payload["form"]["title"] == "Poll");
                    answers += usize::from(payload["form"]["title"] == "Report an incident");
                    if payload["values"]["shot"].is_string() {
                        assert_eq!(payload["files"][0]["id"], payload["values"]["shot"]);
                    }
                }
            }
            assert_eq!((forms, answers), (6, 2), "what the batch holds");
            // The batch: threads, forms, requests, files; each envelope on
            // its own: its form and chain, its request and its thread's.
            assert_eq!(batch_reads.load(Ordering::Relaxed), 4);
            assert_eq!(alone_reads.load(Ordering::Relaxed), 2 + 6 * 2 + 2);
        }
    }
}

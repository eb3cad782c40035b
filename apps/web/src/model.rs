//! A thread as the chat shows it, folded from its envelopes in log order.
//! Pure: the views render it, the live stream feeds it.

use std::collections::BTreeMap;

use lattice_core::{Actor, Envelope};
use serde_json::Value;

/// One entry of the timeline, in log order.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Message { seq: i64, author: String, agent: bool, text: String, at: String },
    RunStarted { seq: i64, run: String, prompt: String, started_by: String },
    /// A run waits for a person: ask_form shows a form, ask_user a question.
    Request { seq: i64, run: String, tool_call_id: String, tool_name: String, args: Value },
    /// A form, dashboard or app (submissions show under their form).
    Artifact { seq: i64, id: String },
}

impl Item {
    pub fn seq(&self) -> i64 {
        match self {
            Self::Message { seq, .. } | Self::RunStarted { seq, .. } | Self::Request { seq, .. } | Self::Artifact { seq, .. } => *seq,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ArtifactView {
    pub id: String,
    /// Where it was created: the order submissions are listed in.
    pub seq: i64,
    pub kind: String,
    pub version: u64,
    pub data: Value,
    pub author: String,
    pub archived: bool,
    /// Created by an agent (an app's label names its run).
    pub run: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Thread {
    pub workspace: Option<String>,
    pub title: String,
    pub items: Vec<Item>,
    /// Each run's status: running, paused, finished, or failed with why.
    pub runs: BTreeMap<String, String>,
    /// Who answered each request, by tool call id.
    pub answered: BTreeMap<String, String>,
    pub artifacts: BTreeMap<String, ArtifactView>,
    /// Artifacts whose data changed by a patch and must be read again.
    pub stale: Vec<String>,
    pub last_seq: i64,
}

fn text(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or_default().to_owned()
}

impl Thread {
    /// Takes one envelope; one already seen is ignored.
    pub fn apply(&mut self, e: &Envelope) {
        if e.seq <= self.last_seq {
            return;
        }
        self.last_seq = e.seq;
        if self.workspace.is_none() {
            self.workspace.clone_from(&e.workspace);
        }
        let p = &e.payload;
        let run = || text(p, "run_id");
        match e.event_type.as_str() {
            "thread_created" => self.title = text(p, "title"),
            "message_posted" => self.items.push(Item::Message {
                seq: e.seq,
                author: e.actor.name().to_owned(),
                agent: e.actor.is_agent(),
                text: text(p, "text"),
                at: e.at.clone(),
            }),
            "run_started" => {
                self.runs.insert(run(), "running".into());
                self.items.push(Item::RunStarted { seq: e.seq, run: run(), prompt: text(p, "prompt"), started_by: text(p, "started_by") });
            }
            "run_paused" => {
                let run = run_of(e);
                self.runs.insert(run.clone(), "paused".into());
                for r in p.get("requests").and_then(Value::as_array).into_iter().flatten() {
                    self.items.push(Item::Request {
                        seq: e.seq,
                        run: run.clone(),
                        tool_call_id: text(r, "tool_call_id"),
                        tool_name: text(r, "tool_name"),
                        args: r.get("args").cloned().unwrap_or(Value::Null),
                    });
                }
            }
            "deferred_answered" => {
                self.answered.insert(text(p, "tool_call_id"), text(p, "author"));
            }
            "run_resumed" => {
                self.runs.insert(run(), "running".into());
            }
            "run_finished" => {
                self.runs.insert(run(), "finished".into());
            }
            "run_failed" => {
                self.runs.insert(run(), format!("failed: {}", text(p, "reason")));
            }
            "artifact_created" => {
                let id = text(p, "id");
                let kind = text(p, "kind");
                if kind != "submission" {
                    self.items.push(Item::Artifact { seq: e.seq, id: id.clone() });
                }
                let run = match &e.actor {
                    Actor::Agent { run, .. } => run.as_ref().map(ToString::to_string),
                    _ => None,
                };
                self.artifacts.insert(
                    id.clone(),
                    ArtifactView {
                        id,
                        seq: e.seq,
                        kind,
                        version: p.get("version").and_then(Value::as_u64).unwrap_or(1),
                        data: p.get("data").cloned().unwrap_or(Value::Null),
                        author: e.actor.name().to_owned(),
                        archived: false,
                        run,
                    },
                );
            }
            "artifact_changed" => {
                let id = text(p, "id");
                if let Some(a) = self.artifacts.get_mut(&id) {
                    let version = p.get("version").and_then(Value::as_u64).unwrap_or(a.version);
                    let patch = p.get("patch").cloned().and_then(|v| serde_json::from_value::<json_patch::Patch>(v).ok());
                    // Versions arrive in order: the patch makes the next from this one.
                    // The server's own patcher: what it applied applies here alike.
                    let next = patch
                        .filter(|_| version == a.version + 1)
                        .and_then(|patch| lattice_core::patch::apply(&a.data, &patch, lattice_core::document::MAX_BYTES).ok());
                    match next {
                        Some(data) => {
                            a.data = data;
                            a.version = version;
                        }
                        None => self.stale.push(id),
                    }
                }
            }
            "artifact_archived" => {
                if let Some(a) = self.artifacts.get_mut(&text(p, "id")) {
                    a.archived = true;
                }
            }
            _ => {}
        }
    }

    /// The submissions to a form, oldest first.
    pub fn submissions_to(&self, form_id: &str) -> Vec<&ArtifactView> {
        let mut subs: Vec<&ArtifactView> = self
            .artifacts
            .values()
            .filter(|a| a.kind == "submission" && a.data.get("form_id").and_then(Value::as_str) == Some(form_id))
            .collect();
        subs.sort_by_key(|a| a.seq);
        subs
    }

}

fn run_of(e: &Envelope) -> String {
    match &e.actor {
        Actor::Agent { run: Some(run), .. } => run.to_string(),
        _ => text(&e.payload, "run_id"),
    }
}

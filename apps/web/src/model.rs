//! A thread as the chat shows it, folded from its envelopes in log order.
//! Pure: the views render it, the live stream feeds it.

use std::collections::BTreeMap;

use lattice_core::event::Event;
use lattice_core::{Actor, Envelope};
use lattice_ui::SUBMISSION;
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
        match &e.event {
            Event::ThreadCreated(created) => self.title.clone_from(&created.title),
            Event::MessagePosted(posted) => self.items.push(Item::Message {
                seq: e.seq,
                author: e.actor.name().to_owned(),
                agent: e.actor.is_agent(),
                text: posted.text.clone(),
                at: e.at.clone(),
            }),
            Event::RunStarted(started) => {
                self.runs.insert(started.run_id.clone(), "running".into());
                self.items.push(Item::RunStarted {
                    seq: e.seq,
                    run: started.run_id.clone(),
                    prompt: started.prompt.clone(),
                    started_by: started.started_by.clone(),
                });
            }
            Event::RunPaused(paused) => {
                self.runs.insert(paused.run_id.clone(), "paused".into());
                for r in &paused.requests {
                    self.items.push(Item::Request {
                        seq: e.seq,
                        run: paused.run_id.clone(),
                        tool_call_id: r.tool_call_id.clone(),
                        tool_name: r.tool_name.clone(),
                        args: r.args.clone(),
                    });
                }
            }
            Event::DeferredAnswered(answered) => {
                self.answered.insert(answered.tool_call_id.clone(), answered.author.clone());
            }
            Event::RunResumed(resumed) => {
                self.runs.insert(resumed.run_id.clone(), "running".into());
            }
            Event::RunFinished(finished) => {
                self.runs.insert(finished.run_id.clone(), "finished".into());
            }
            Event::RunFailed(failed) => {
                self.runs.insert(failed.run_id.clone(), format!("failed: {}", failed.reason));
            }
            Event::ArtifactCreated(created) => {
                if created.kind != SUBMISSION {
                    self.items.push(Item::Artifact { seq: e.seq, id: created.id.clone() });
                }
                let run = match &e.actor {
                    Actor::Agent { run, .. } => run.as_ref().map(ToString::to_string),
                    _ => None,
                };
                self.artifacts.insert(
                    created.id.clone(),
                    ArtifactView {
                        id: created.id.clone(),
                        seq: e.seq,
                        kind: created.kind.clone(),
                        version: created.version,
                        data: created.data.clone(),
                        author: e.actor.name().to_owned(),
                        archived: false,
                        run,
                    },
                );
            }
            Event::ArtifactChanged(changed) => {
                if let Some(a) = self.artifacts.get_mut(&changed.id) {
                    // Versions arrive in order: the patch makes the next from
                    // this one. The server's own patcher: what it applied
                    // applies here alike.
                    let next = Some(&changed.patch)
                        .filter(|_| changed.version == a.version + 1)
                        .and_then(|patch| lattice_core::patch::apply(&a.data, patch, lattice_core::document::MAX_BYTES).ok());
                    match next {
                        Some(data) => {
                            a.data = data;
                            a.version = changed.version;
                        }
                        None => self.stale.push(changed.id.clone()),
                    }
                }
            }
            Event::ArtifactArchived(archived) => {
                if let Some(a) = self.artifacts.get_mut(&archived.id) {
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
            .filter(|a| a.kind == SUBMISSION && a.data.get("form_id").and_then(Value::as_str) == Some(form_id))
            .collect();
        subs.sort_by_key(|a| a.seq);
        subs
    }

}


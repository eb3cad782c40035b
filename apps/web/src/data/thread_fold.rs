//! A thread as the chat shows it, folded from its envelopes in log order.
//! Pure: the views render it, the live stream feeds it.

use lattice_core::event::{
    ArtifactArchived, ArtifactChanged, ArtifactCreated, DeferredAnswered, Event, MessagePosted, ModelReplied, RunAsked, RunFailed, RunFinished,
    RunPaused, RunResumed, RunStarted, ThreadCreated, ToolReturned,
};
use lattice_core::run::ELICITATION;
use lattice_core::{Actor, DeferredRequest, Envelope, RunFailure, SignInNeeded};
use lattice_ui::SUBMISSION;
use lattice_ui::tool_names::ASK_FORM;
use lattice_wire::{TextDelta, ToolInputDelta};
use serde_json::Value;

/// One entry of the timeline, in log order.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Message {
        seq: i64,
        author: String,
        agent: bool,
        text: String,
        at: String,
    },
    RunStarted {
        seq: i64,
        run: String,
        prompt: String,
        started_by: String,
    },
    /// A run waits for a person: ask_form shows a form, ask_user a question,
    /// a connected server's call its arguments (or, with `sign_in`, that the
    /// person the run acts for signs in to the server first), a connected
    /// server's question (`elicitation`, asked while the run goes on) its
    /// form.
    Request {
        seq: i64,
        run: String,
        tool_call_id: String,
        tool_name: String,
        args: Value,
        expires_at: Option<String>,
        sign_in: Option<SignInNeeded>,
        /// Whom the run acted for when it paused or asked: the one a
        /// sign-in or a server's question waits for.
        acting_for: String,
    },
    /// A form, dashboard or app (submissions show under their form).
    Artifact {
        seq: i64,
        id: String,
    },
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
    /// Its latest version was made by an agent.
    pub changed_by_agent: bool,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Thread {
    pub workspace: Option<String>,
    pub title: String,
    pub items: Vec<Item>,
    /// Each run's status: running, paused, finished, or failed with why.
    pub runs: ById<String>,
    /// Whom each run acts for: its starter, then whoever's answer resumed
    /// it (`RunResumed`'s actor), as the server's runner has it.
    pub acting_for: ById<String>,
    /// Who answered each request, by tool call id.
    pub answered: ById<String>,
    /// The requests whose deadline passed unanswered.
    pub expired: ById<()>,
    /// The action each connected server's question was answered with
    /// (`accept`, `decline`, `cancel`; empty for an answer without one), by
    /// [`request_key`]: its card says how it closed, where other requests
    /// say only who answered. Strings, as [`Thread::answered`]'s are: a map
    /// of another value type costs the first load its own code.
    pub questions: ById<String>,
    pub artifacts: ById<ArtifactView>,
    /// Artifacts whose data changed by a patch and must be read again.
    pub stale: Vec<String>,
    pub last_seq: i64,
    /// What the model of each run is writing now, as it writes (not in
    /// the log: the finished reply is).
    pub writing: ById<Writing>,
    /// The model replies seen of each run: a delta of an earlier call is
    /// stale (its reply is here whole).
    pub replies: ById<usize>,
}

/// The event types a thread shows, the ones [`Thread::apply`] reads: the
/// live stream reads only these (`Envelope::from_json_in`), so the first
/// load carries no reading of the others (members, switches, audit, apps'
/// own events).
pub const SHOWN: u64 = ThreadCreated::BIT
    | MessagePosted::BIT
    | RunStarted::BIT
    | ModelReplied::BIT
    | ToolReturned::BIT
    | RunPaused::BIT
    | RunAsked::BIT
    | DeferredAnswered::BIT
    | RunResumed::BIT
    | RunFinished::BIT
    | RunFailed::BIT
    | ArtifactCreated::BIT
    | ArtifactChanged::BIT
    | ArtifactArchived::BIT;

/// A map by id, kept sorted in one vector: the B-tree it stands in for
/// cost the first load some kilobytes of code for each value type, and a
/// thread's runs, requests and artifacts are found by binary search alike.
#[derive(Debug, Clone, PartialEq)]
pub struct ById<V>(Vec<(String, V)>);

/// A request's key in [`Thread::answered`] and [`Thread::expired`]: its run
/// and its call, since a model may use a call's id again in another run.
pub fn request_key(run: &str, tool_call_id: &str) -> String {
    format!("{run}/{tool_call_id}")
}

impl<V> Default for ById<V> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<V> ById<V> {
    fn find(&self, key: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(k, _)| k.as_str().cmp(key))
    }

    pub fn get(&self, key: &str) -> Option<&V> {
        self.find(key).ok().map(|i| &self.0[i].1)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        self.find(key).ok().map(|i| &mut self.0[i].1)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.find(key).is_ok()
    }

    pub fn insert(&mut self, key: String, value: V) {
        match self.find(&key) {
            Ok(i) => self.0[i].1 = value,
            Err(i) => self.0.insert(i, (key, value)),
        }
    }

    pub fn remove(&mut self, key: &str) {
        if let Ok(i) = self.find(key) {
            self.0.remove(i);
        }
    }

    pub fn entry_or_default(&mut self, key: String) -> &mut V
    where
        V: Default,
    {
        let i = self.find(&key).unwrap_or_else(|i| {
            self.0.insert(i, (key, V::default()));
            i
        });
        &mut self.0[i].1
    }

    /// In the order of their ids.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &V)> {
        self.0.iter().map(|(k, v)| (k, v))
    }

    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.0.iter().map(|(_, v)| v)
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A model's reply while it is written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Writing {
    pub text: String,
    /// Each tool call's arguments as far as they came (tool call id →
    /// tool name, arguments), in the order they began.
    pub tools: Vec<(String, String, Value)>,
    /// The reply is complete: it is about to show as what it came to.
    pub done: bool,
}

/// Whether an event brings a form the thread may draw: an ask_form
/// request, a connected server's question, a form artifact.
pub fn brings_a_form(e: &Envelope) -> bool {
    match &e.event {
        Event::RunPaused(paused) => paused.requests.iter().any(|r| r.tool_name == ASK_FORM),
        Event::RunAsked(asked) => asked.requests.iter().any(|r| r.tool_name == ELICITATION),
        Event::ArtifactCreated(created) => created.kind == "form",
        _ => false,
    }
}

impl Thread {
    /// Text a run's model has just written.
    pub fn text_delta(&mut self, delta: TextDelta) {
        if self.stale(&delta.run_id, delta.model_call) {
            return;
        }
        let writing = self.writing.entry_or_default(delta.run_id);
        if !writing.done {
            writing.text.push_str(&delta.text);
        }
    }

    /// A tool call's arguments as far as they have come.
    pub fn tool_input(&mut self, delta: ToolInputDelta) {
        if self.stale(&delta.run_id, delta.model_call) {
            return;
        }
        let writing = self.writing.entry_or_default(delta.run_id);
        if writing.done {
            return;
        }
        match writing.tools.iter_mut().find(|(id, _, _)| *id == delta.tool_call_id) {
            Some(tool) => tool.2 = delta.arguments,
            None => writing.tools.push((delta.tool_call_id, delta.name, delta.arguments)),
        }
    }

    /// Whether a delta of a run's model call is already whole in the log
    /// (its reply seen), or its run no longer runs.
    fn stale(&self, run: &str, model_call: usize) -> bool {
        self.replies.get(run).is_some_and(|seen| model_call < *seen) || self.runs.get(run).is_some_and(|s| s != "running")
    }

    /// Takes one envelope; one already seen is ignored. Only the types in
    /// [`SHOWN`] change the thread.
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
                self.acting_for.insert(started.run_id.clone(), started.started_by.clone());
                self.items.push(Item::RunStarted {
                    seq: e.seq,
                    run: started.run_id.clone(),
                    prompt: started.prompt.clone(),
                    started_by: started.started_by.clone(),
                });
            }
            Event::ModelReplied(replied) => {
                *self.replies.entry_or_default(replied.run_id.clone()) += 1;
                if let Some(w) = self.writing.get_mut(&replied.run_id) {
                    w.done = true;
                }
            }
            Event::ToolReturned(returned) => {
                self.writing.remove(&returned.run_id);
            }
            Event::RunPaused(paused) => {
                self.writing.remove(&paused.run_id);
                self.runs.insert(paused.run_id.clone(), "paused".into());
                self.open(e.seq, &paused.run_id, &paused.requests);
            }
            // The run goes on while a server's call waits for the answer:
            // its status and what it is writing stay as they are.
            Event::RunAsked(asked) => self.open(e.seq, &asked.run_id, &asked.requests),
            Event::DeferredAnswered(answered) => {
                let key = request_key(&answered.run_id, &answered.tool_call_id);
                if answered.expired {
                    self.expired.insert(key.clone(), ());
                }
                if answered.tool_name == ELICITATION {
                    let action = answered.answer.get("action").and_then(Value::as_str).unwrap_or_default();
                    self.questions.insert(key.clone(), action.to_owned());
                }
                self.answered.insert(key, answered.author.clone());
            }
            Event::RunResumed(resumed) => {
                self.runs.insert(resumed.run_id.clone(), "running".into());
                self.acting_for.insert(resumed.run_id.clone(), resumed.actor.clone());
            }
            Event::RunFinished(finished) => {
                self.writing.remove(&finished.run_id);
                self.runs.insert(finished.run_id.clone(), "finished".into());
            }
            Event::RunFailed(failed) => {
                self.writing.remove(&failed.run_id);
                let status = match failed.failure {
                    Some(RunFailure::Cancelled) => "cancelled".to_owned(),
                    _ => format!("failed: {}", failed.reason),
                };
                self.runs.insert(failed.run_id.clone(), status);
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
                        changed_by_agent: e.actor.is_agent(),
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
                            a.changed_by_agent = e.actor.is_agent();
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

    /// A run's requests as cards that wait for their answer.
    fn open(&mut self, seq: i64, run_id: &str, requests: &[DeferredRequest]) {
        let acting_for = self.acting_for.get(run_id).cloned().unwrap_or_default();
        for r in requests {
            // The same call waiting again (a sign-in, then the policy's
            // question): one card, the newest, unanswered.
            let key = request_key(run_id, &r.tool_call_id);
            self.answered.remove(&key);
            self.expired.remove(&key);
            self.questions.remove(&key);
            self.items.retain(|i| !matches!(i, Item::Request { run, tool_call_id, .. } if run == run_id && *tool_call_id == r.tool_call_id));
            self.items.push(Item::Request {
                seq,
                run: run_id.to_owned(),
                tool_call_id: r.tool_call_id.clone(),
                tool_name: r.tool_name.clone(),
                args: r.args.clone(),
                expires_at: r.expires_at.clone(),
                sign_in: r.sign_in.clone(),
                acting_for: acting_for.clone(),
            });
        }
    }

    /// The server whose question a run waits on, unanswered, if any: the
    /// run is running, yet waits for a person all the same.
    pub fn asking_server(&self, run_id: &str) -> Option<&str> {
        self.items.iter().find_map(|i| match i {
            Item::Request { run, tool_call_id, tool_name, args, .. }
                if run == run_id && tool_name == ELICITATION && !self.answered.contains_key(&request_key(run, tool_call_id)) =>
            {
                Some(args.get("server").and_then(Value::as_str).unwrap_or_default())
            }
            _ => None,
        })
    }

    /// The submissions to a form, oldest first.
    pub fn submissions_to(&self, form_id: &str) -> Vec<&ArtifactView> {
        let mut subs: Vec<&ArtifactView> =
            self.artifacts.values().filter(|a| a.kind == SUBMISSION && a.data.get("form_id").and_then(Value::as_str) == Some(form_id)).collect();
        subs.sort_by_key(|a| a.seq);
        subs
    }
}

#[cfg(test)]
mod tests {
    use lattice_core::event::{DeferredAnswered, ModelReplied, RunAsked, RunFinished, RunStarted};
    use lattice_core::{DeferredRequest, TenantId, TenantRole, UserId};
    use serde_json::json;

    use super::*;

    fn envelope(seq: i64, event: Event) -> Envelope {
        Envelope {
            seq,
            id: format!("env_{seq}"),
            tenant: "t1".into(),
            workspace: Some("ws_1".into()),
            thread: Some("th_1".into()),
            actor: Actor::Person { tenant: TenantId::parse("t", "t1").unwrap(), user: UserId::parse("u", "alice").unwrap() },
            at: "2026-12-01T00:00:00.000Z".into(),
            event,
            traceparent: None,
        }
    }

    fn text(model_call: usize, text: &str) -> TextDelta {
        TextDelta { run_id: "run_1".into(), model_call, text: text.into() }
    }

    #[test]
    fn a_reply_grows_as_it_is_written_and_gives_way_to_what_it_came_to() {
        let mut t = Thread::default();
        t.apply(&envelope(
            1,
            RunStarted { run_id: "run_1".into(), prompt: "p".into(), model: "m".into(), started_by: "alice".into(), chain: None, context: vec![] }
                .into(),
        ));
        t.text_delta(text(0, "The figures "));
        t.text_delta(text(0, "are in."));
        t.tool_input(ToolInputDelta {
            run_id: "run_1".into(),
            model_call: 0,
            tool_call_id: "c1".into(),
            name: ASK_FORM.into(),
            arguments: json!({"title": "In"}),
        });
        t.tool_input(ToolInputDelta {
            run_id: "run_1".into(),
            model_call: 0,
            tool_call_id: "c1".into(),
            name: ASK_FORM.into(),
            arguments: json!({"title": "Incident"}),
        });
        let w = t.writing.get("run_1").unwrap();
        assert_eq!(w.text, "The figures are in.");
        assert_eq!(w.tools, vec![("c1".to_owned(), ASK_FORM.to_owned(), json!({"title": "Incident"}))]);

        t.apply(&envelope(
            2,
            ModelReplied { run_id: "run_1".into(), text: Some("The figures are in.".into()), tool_calls: vec![], tokens: None }.into(),
        ));
        assert!(t.writing.get("run_1").unwrap().done, "whole: no longer busy");
        // A delta of that call heard late (a stream catching up) is stale.
        t.text_delta(text(0, " again"));
        assert_eq!(t.writing.get("run_1").unwrap().text, "The figures are in.");
        t.apply(&envelope(3, RunFinished { run_id: "run_1".into(), text: None }.into()));
        assert!(t.writing.is_empty());
        t.text_delta(text(1, "late"));
        assert!(t.writing.is_empty(), "a finished run writes nothing more");
    }

    #[test]
    fn by_id_keeps_one_value_per_id_in_the_order_of_ids() {
        let mut m = super::ById::default();
        for (k, v) in [("b", 2), ("a", 1), ("c", 3), ("b", 20)] {
            m.insert(k.to_owned(), v);
        }
        assert_eq!(m.iter().map(|(k, v)| (k.as_str(), *v)).collect::<Vec<_>>(), vec![("a", 1), ("b", 20), ("c", 3)]);
        *m.entry_or_default("aa".to_owned()) += 5;
        *m.entry_or_default("a".to_owned()) += 5;
        m.remove("c");
        m.remove("missing");
        assert_eq!(m.values().copied().collect::<Vec<_>>(), vec![6, 5, 20]);
        assert!(m.contains_key("aa") && !m.contains_key("c"));
        assert_eq!(m.get_mut("b").map(|v| std::mem::replace(v, 0)), Some(20));
        assert_eq!(m.get("b"), Some(&0));
    }

    #[test]
    fn a_sign_in_request_waits_for_whom_the_run_acts_for_when_it_pauses() {
        let mut t = Thread::default();
        t.apply(&envelope(
            1,
            RunStarted { run_id: "run_1".into(), prompt: "p".into(), model: "m".into(), started_by: "alice".into(), chain: None, context: vec![] }
                .into(),
        ));
        let request = |id: &str, sign_in: Option<SignInNeeded>| DeferredRequest {
            tool_call_id: id.into(),
            tool_name: "mcp__github__list_issues".into(),
            args: json!({}),
            expires_in_secs: None,
            expires_at: None,
            sign_in,
        };
        t.apply(&envelope(2, RunPaused { run_id: "run_1".into(), requests: vec![request("c1", None)] }.into()));
        // Bob's answer resumed the run: it acts for him from then on.
        t.apply(&envelope(3, RunResumed { run_id: "run_1".into(), actor: "bob".into(), role: TenantRole::Member }.into()));
        let needed = SignInNeeded { server: "github".into(), scope: Some("repo".into()) };
        t.apply(&envelope(4, RunPaused { run_id: "run_1".into(), requests: vec![request("c2", Some(needed.clone()))] }.into()));
        let requests: Vec<_> = t
            .items
            .iter()
            .filter_map(|i| match i {
                Item::Request { tool_call_id, sign_in, acting_for, .. } => Some((tool_call_id.as_str(), sign_in.clone(), acting_for.as_str())),
                _ => None,
            })
            .collect();
        assert_eq!(requests, vec![("c1", None, "alice"), ("c2", Some(needed), "bob")]);
    }

    #[test]
    fn an_answer_is_the_requests_of_its_run_though_another_run_uses_the_call_id_again() {
        let mut t = Thread::default();
        let answered = DeferredAnswered {
            run_id: "run_1".into(),
            turn_id: "run_1".into(),
            tool_call_id: "call_1".into(),
            tool_name: "ask_user".into(),
            answer: json!("yes"),
            approved: true,
            author: "alice".into(),
            expired: false,
            chain: None,
        };
        t.apply(&envelope(1, answered.into()));
        assert_eq!(t.answered.get(&request_key("run_1", "call_1")).map(String::as_str), Some("alice"));
        assert_eq!(t.answered.get(&request_key("run_2", "call_1")), None, "run_2's call_1 waits still");

        // The same call waiting again in run_1: one request, unanswered.
        let request = DeferredRequest {
            tool_call_id: "call_1".into(),
            tool_name: "notes__write_note".into(),
            args: json!({}),
            expires_in_secs: None,
            expires_at: None,
            sign_in: None,
        };
        t.apply(&envelope(2, RunPaused { run_id: "run_1".into(), requests: vec![request] }.into()));
        assert_eq!(t.answered.get(&request_key("run_1", "call_1")), None);
        assert_eq!(t.items.iter().filter(|i| matches!(i, Item::Request { .. })).count(), 1);
    }

    #[test]
    fn a_servers_question_waits_while_its_run_goes_on_and_closes_with_its_answer() {
        let mut t = Thread::default();
        t.apply(&envelope(
            1,
            RunStarted { run_id: "run_1".into(), prompt: "p".into(), model: "m".into(), started_by: "alice".into(), chain: None, context: vec![] }
                .into(),
        ));
        let question = |id: &str| DeferredRequest {
            tool_call_id: format!("call_1:elicit:{id}"),
            tool_name: ELICITATION.into(),
            args: json!({
                "server": "everything", "tool": "trigger-elicitation-request", "call": "call_1", "mode": "form",
                "message": "Please provide inputs for the following fields:",
                "schema": {"type": "object", "properties": {"name": {"type": "string"}}},
            }),
            expires_in_secs: None,
            expires_at: Some("2026-12-01T00:10:00.000Z".into()),
            sign_in: None,
        };
        let asked = |seq, id| envelope(seq, RunAsked { run_id: "run_1".into(), requests: vec![question(id)] }.into());
        let first = serde_json::to_string(&asked(2, "01A")).unwrap();
        let heard = Envelope::from_json_in::<SHOWN>(&first).unwrap().expect("the live stream reads run_asked");
        t.apply(&heard);
        assert!(matches!(&t.items[1], Item::Request { tool_name, acting_for, .. } if tool_name == ELICITATION && acting_for == "alice"));
        assert_eq!(t.runs.get("run_1").map(String::as_str), Some("running"), "asked, not paused");
        assert_eq!(t.asking_server("run_1"), Some("everything"));
        let brings = asked(3, "01B");
        assert!(brings_a_form(&brings), "its form's chunk is fetched as it arrives");
        t.apply(&brings);

        let closed = |seq, id: &str, answer: Value, author: &str, expired: bool| {
            envelope(
                seq,
                DeferredAnswered {
                    run_id: "run_1".into(),
                    turn_id: "run_1".into(),
                    tool_call_id: format!("call_1:elicit:{id}"),
                    tool_name: ELICITATION.into(),
                    answer,
                    approved: false,
                    author: author.into(),
                    expired,
                    chain: None,
                }
                .into(),
            )
        };
        t.apply(&closed(4, "01A", json!({"action": "decline"}), "alice", false));
        t.apply(&closed(5, "01B", json!({"action": "cancel", "reason": "the call ended"}), "lattice", true));
        let key = |id: &str| request_key("run_1", &format!("call_1:elicit:{id}"));
        assert_eq!(t.answered.get(&key("01A")).map(String::as_str), Some("alice"));
        assert_eq!(t.questions.get(&key("01A")).map(String::as_str), Some("decline"));
        assert!(!t.expired.contains_key(&key("01A")));
        // Lattice's cancel, not the person's: the card reads it as expired.
        assert_eq!(t.questions.get(&key("01B")).map(String::as_str), Some("cancel"));
        assert_eq!(t.answered.get(&key("01B")).map(String::as_str), Some("lattice"));
        assert!(t.expired.contains_key(&key("01B")));
        assert_eq!(t.asking_server("run_1"), None);
        assert_eq!(t.runs.get("run_1").map(String::as_str), Some("running"));
        assert_eq!(t.items.iter().filter(|i| matches!(i, Item::Request { .. })).count(), 2, "closed cards stay, saying how");
    }
}

//! What a run may spend (model calls, tokens, time running), cancelling
//! one, and a streaming model's deltas on the thread's live stream.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use lattice_agent::{Budget, Delta, Deltas, Model, ModelError, ModelReply, ModelRequest, Models, Runner};
use lattice_core::event::Event;
use lattice_core::{Command, Error, Role, RunId, RunStatus, TenantRole, ThreadId, ToolCall, UserId, WorkspaceId};
use lattice_log::{Authenticated, Follow, Live, LogService};
use lattice_testkit::who;
use serde_json::{Value, json};

use crate::{Script, wait_for};

async fn thread(log: &LogService) -> ThreadId {
    let alice = who("t1", "alice", TenantRole::Member);
    let ws = log.execute(&alice, Command::CreateWorkspace { name: "W".into() }).await.unwrap().id.unwrap();
    let ws = WorkspaceId::parse("ws", &ws).unwrap();
    log.execute(&alice, Command::AddMember { workspace: ws.clone(), user: UserId::parse("u", "vera").unwrap(), role: Role::Viewer }).await.unwrap();
    let th = log.execute(&alice, Command::CreateThread { workspace: ws, title: "T".into(), restricted: false }).await.unwrap().id.unwrap();
    ThreadId::parse("th", &th).unwrap()
}

fn runner(log: &LogService, model: Arc<dyn Model>, budget: Budget) -> Runner {
    Runner::new(lattice_testkit::trusted(log), Models::default().with("m", model, true)).with_budget(budget)
}

/// A reply that calls a tool nobody offers: the run goes on to its next
/// model call at once.
fn busy(tokens: Option<u64>) -> ModelReply {
    ModelReply { text: None, tool_calls: vec![ToolCall { id: "c".into(), name: "no_such_tool".into(), arguments: json!({}) }], tokens }
}

/// How the run ended: its `run_failed` payload.
async fn failure(log: &LogService, who: &Authenticated, run: &RunId) -> Value {
    let events = lattice_testkit::trusted(log).run_log(&who.principal().tenant, run).await.unwrap();
    events.iter().rev().find(|e| e.event_type() == "run_failed").expect("the run failed").event.payload()
}

/// Answers after `delay`, or streams `pieces` first.
struct Slow {
    delay: Duration,
    pieces: Vec<Delta>,
    reply: ModelReply,
    calls: Arc<Calls>,
}

/// What became of a model's calls: started, and ended (answered, or
/// dropped under way), of which answered.
#[derive(Default)]
struct Calls {
    started: AtomicUsize,
    ended: AtomicUsize,
    answered: AtomicUsize,
}

impl Calls {
    /// Waits until `counter` reaches `n` (10 s at most).
    async fn reach(&self, counter: impl Fn(&Self) -> &AtomicUsize, n: usize, what: &str) {
        lattice_testkit::until(&format!("{n} {what}"), async || counter(self).load(Ordering::SeqCst) >= n).await;
    }
}

/// Counts a call as ended when its future ends, however it ends.
struct Ends<'a>(&'a AtomicUsize);

impl Drop for Ends<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[async_trait::async_trait]
impl Model for Slow {
    async fn reply(&self, request: ModelRequest) -> Result<ModelReply, ModelError> {
        self.stream(request, &|_| {}).await
    }

    async fn stream(&self, _: ModelRequest, deltas: &Deltas) -> Result<ModelReply, ModelError> {
        self.calls.started.fetch_add(1, Ordering::SeqCst);
        let _ends = Ends(&self.calls.ended);
        for piece in &self.pieces {
            deltas(piece.clone());
            // A stub model's pace, not a wait of the test: each delta leaves
            // before the next, and the reply after them all.
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // A model that takes its time (30 s: never, for the tests that drop it).
        tokio::time::sleep(self.delay).await;
        self.calls.answered.fetch_add(1, Ordering::SeqCst);
        Ok(self.reply.clone())
    }
}

lattice_testkit::both_backends! {
    async fn a_run_ends_at_each_budget_with_its_typed_reason(backend: Backend) {
        let log = lattice_testkit::service(backend).await;
        let th = thread(&log).await;
        let alice = who("t1", "alice", TenantRole::Member);
        let generous = Budget::default();

        // Tokens: 60 a call, 100 allowed: the third call is not made.
        let script = Script::new(vec![busy(Some(60))]);
        let run = runner(&log, Arc::new(script.clone()), Budget { tokens: 100, ..generous }).start(&alice, th.clone(), "go".into(), None, None).await.unwrap();
        wait_for(&log, &alice, &run, RunStatus::Failed).await;
        assert_eq!(failure(&log, &alice, &run).await["failure"], "tokens");
        assert_eq!(script.seen.lock().unwrap().len(), 2);

        // At the edge: 100 tokens used of 100 is spent; 99 is not.
        let script = Script::new(vec![busy(Some(33))]);
        let run = runner(&log, Arc::new(script.clone()), Budget { tokens: 99, ..generous }).start(&alice, th.clone(), "go".into(), None, None).await.unwrap();
        wait_for(&log, &alice, &run, RunStatus::Failed).await;
        assert_eq!(script.seen.lock().unwrap().len(), 3, "33 × 3 = 99 reaches a budget of 99");

        // Model calls: three allowed, three made.
        let script = Script::new(vec![busy(None)]);
        let run = runner(&log, Arc::new(script.clone()), Budget { model_calls: 3, ..generous }).start(&alice, th.clone(), "go".into(), None, None).await.unwrap();
        wait_for(&log, &alice, &run, RunStatus::Failed).await;
        let failed = failure(&log, &alice, &run).await;
        assert_eq!(failed["failure"], "model_calls");
        assert_eq!(failed["reason"], "stopped after 3 model calls");
        assert_eq!(script.seen.lock().unwrap().len(), 3);

        // Time running: a model call under way when it runs out is dropped.
        let slow = Slow { delay: Duration::from_secs(30), pieces: vec![], reply: busy(None), calls: Arc::default() };
        let started = Instant::now();
        let run = runner(&log, Arc::new(slow), Budget { wall_time: Duration::from_millis(400), ..generous }).start(&alice, th.clone(), "go".into(), None, None).await.unwrap();
        wait_for(&log, &alice, &run, RunStatus::Failed).await;
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
        assert_eq!(failure(&log, &alice, &run).await["failure"], "wall_time");
    }
}

lattice_testkit::both_backends! {
    async fn a_cancel_drops_the_model_call_under_way_and_ends_a_waiting_run(backend: Backend) {
        let log = lattice_testkit::service(backend).await;
        let th = thread(&log).await;
        let alice = who("t1", "alice", TenantRole::Member);
        let vera = who("t1", "vera", TenantRole::Member);
        let calls = Arc::new(Calls::default());
        let slow = Slow { delay: Duration::from_secs(30), pieces: vec![], reply: busy(None), calls: calls.clone() };
        let runner = runner(&log, Arc::new(slow), Budget::default());
        let run = runner.start(&alice, th.clone(), "go".into(), None, None).await.unwrap();
        calls.reach(|c| &c.started, 1, "model calls under way").await;
        // A viewer may not.
        assert!(matches!(runner.cancel(&vera, &run).await, Err(Error::Forbidden { .. })));
        let asked = Instant::now();
        runner.cancel(&alice, &run).await.unwrap();
        wait_for(&log, &alice, &run, RunStatus::Failed).await;
        assert!(asked.elapsed() < Duration::from_secs(2));
        let failed = failure(&log, &alice, &run).await;
        assert_eq!(failed["failure"], "cancelled");
        let events = lattice_testkit::trusted(&log).run_log(&alice.principal().tenant, &run).await.unwrap();
        let cancelled_by = events.iter().rev().find(|e| e.event_type() == "run_failed").unwrap().actor.name().to_owned();
        assert_eq!(cancelled_by, "alice", "the cancel is the person's command");
        // The call under way was dropped, unanswered: nothing is left that
        // could record its reply.
        calls.reach(|c| &c.ended, 1, "model calls ended").await;
        assert_eq!(calls.answered.load(Ordering::SeqCst), 0, "the call was dropped, not answered");
        let events = lattice_testkit::trusted(&log).run_log(&alice.principal().tenant, &run).await.unwrap();
        assert!(!events.iter().any(|e| e.event_type() == "model_replied"), "the dropped call recorded nothing");
        assert!(matches!(runner.cancel(&alice, &run).await, Err(Error::InvalidState { .. })), "a run ends once");

        // A run waiting for a person is cancelled too; its request is then closed.
        let script = Script::new(vec![ModelReply {
            text: None,
            tool_calls: vec![ToolCall { id: "q1".into(), name: lattice_agent::tools::ASK_USER.into(), arguments: json!({"question": "Which?"}) }],
            tokens: None,
        }]);
        let runner = self::runner(&log, Arc::new(script), Budget::default());
        let run = runner.start(&alice, th.clone(), "go".into(), None, None).await.unwrap();
        wait_for(&log, &alice, &run, RunStatus::Paused).await;
        runner.cancel(&alice, &run).await.unwrap();
        wait_for(&log, &alice, &run, RunStatus::Failed).await;
        assert!(matches!(runner.answer(&alice, &run, "q1".into(), json!("eu")).await, Err(Error::InvalidState { .. })));
    }
}

lattice_testkit::both_backends! {
    async fn deltas_reach_the_threads_live_stream_and_only_the_reply_is_kept(backend: Backend) {
        let log = lattice_testkit::service(backend).await;
        let th = thread(&log).await;
        let alice = who("t1", "alice", TenantRole::Member);
        let mut live = log.follow(&alice, Follow::Thread(th.clone()), 0).await.unwrap();
        // Caught up before the run starts: what comes next comes as it happens.
        let last = log.events(&alice, &Follow::Thread(th.clone()), 0, 500).await.unwrap().last().unwrap().seq;
        while live.next_committed().await.unwrap().seq < last {}
        let pieces = ["The figures ", "are in: ", "up 4 %."];
        let slow = Slow {
            delay: Duration::ZERO,
            pieces: pieces.iter().map(|p| Delta::Text((*p).into())).collect(),
            reply: ModelReply { text: Some(pieces.concat()), tool_calls: vec![], tokens: Some(10) },
            calls: Arc::default(),
        };
        let run = runner(&log, Arc::new(slow), Budget::default()).start(&alice, th.clone(), "go".into(), None, None).await.unwrap();
        let mut told = String::new();
        let mut kept_message = None;
        let mut first_committed = None;
        loop {
            let next = tokio::time::timeout(Duration::from_secs(10), live.next()).await.expect("the stream speaks").expect("still following");
            if let Live::Committed(d) = &next {
                first_committed.get_or_insert_with(|| d.event_type.clone());
            }
            match next {
                Live::Passing(p) => {
                    assert_eq!(p.name, "delta");
                    let d: lattice_wire::TextDelta = serde_json::from_str(&p.json).unwrap();
                    assert_eq!((d.run_id.as_str(), d.model_call), (run.as_str(), 0));
                    assert!(kept_message.is_none(), "a delta after the reply was kept");
                    told.push_str(&d.text);
                }
                Live::Committed(d) if d.event_type == "message_posted" => kept_message = Some(d.json.clone()),
                Live::Committed(d) if d.event_type == "run_finished" => break,
                Live::Committed(_) => {}
                Live::AccessLost => panic!("alice lost access to her own thread"),
            }
        }
        // The stream was caught up to `last`, and hands on in log order:
        // what came next was the run's start, so nothing came before it.
        assert_eq!(first_committed.as_deref(), Some("run_started"), "the first thing after the caught-up stream is the run");
        assert_eq!(told, pieces.concat(), "the deltas add up to the reply");
        assert!(kept_message.unwrap().contains(&pieces.concat()));
        // The log holds the reply once, and no delta.
        let events = log.events(&alice, &Follow::Thread(th), 0, 500).await.unwrap();
        assert!(events.iter().all(|e| e.event_type() != "delta"));
        let posted: Vec<_> = events.iter().filter(|e| matches!(&e.event, Event::MessagePosted(_))).collect();
        assert_eq!(posted.len(), 1);
    }
}

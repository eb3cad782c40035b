//! Runs are driven under a lease in the database: one runner at a time,
//! a crashed runner's runs taken over once its lease expires, a paused
//! run left to wait. Two runners on two log services share one database,
//! as two replicas do, and one clock, which the test moves: a lease lapses
//! when the clock says so, not after a real wait.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use lattice_agent::{Model, ModelError, ModelReply, ModelRequest, Models, Runner};
use lattice_core::clock::{ManualClock, SharedClock};
use lattice_core::{Command, RunId, RunStatus, TenantRole, ThreadId, WorkspaceId};
use lattice_log::{Db, LogService};
use lattice_testkit::{builder_on, fresh_url, who};

use crate::wait_for;

/// Answers once its gate opens (never, unless told), counting its calls.
#[derive(Clone)]
struct Gated {
    calls: Arc<AtomicUsize>,
    open: Arc<tokio::sync::Semaphore>,
}

impl Default for Gated {
    fn default() -> Self {
        Self { calls: Arc::default(), open: Arc::new(tokio::sync::Semaphore::new(0)) }
    }
}

#[async_trait::async_trait]
impl Model for Gated {
    async fn reply(&self, _: ModelRequest) -> Result<ModelReply, ModelError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let _permit = self.open.acquire().await.expect("the gate stays");
        Ok(ModelReply { text: Some("done".into()), tool_calls: vec![], tokens: None })
    }
}

/// A log service on the shared database, reading time from `clock`.
async fn replica(url: &str, clock: SharedClock) -> LogService {
    let db = Db::connect(url, 4).await.unwrap();
    db.migrate().await.unwrap();
    builder_on(db).clock(clock).start()
}

fn runner(log: &LogService, model: &Gated, lease: Duration) -> Runner {
    let models = Models::scripted().with("gated", Arc::new(model.clone()), true);
    Runner::with_lease(lattice_testkit::trusted(log), models, lease)
}

async fn thread(log: &LogService) -> ThreadId {
    let alice = who("t1", "alice", TenantRole::Member);
    let ws = log.execute(&alice, Command::CreateWorkspace { name: "W".into() }).await.unwrap().id.unwrap();
    let ws = WorkspaceId::parse("ws", &ws).unwrap();
    let th = log.execute(&alice, Command::CreateThread { workspace: ws, title: "T".into(), restricted: false }).await.unwrap().id.unwrap();
    ThreadId::parse("th", &th).unwrap()
}

lattice_testkit::both_backends! {
    async fn a_crashed_runners_run_is_taken_over_once_its_lease_expires(backend: Backend) {
        let url = fresh_url(backend).await;
        let alice = who("t1", "alice", TenantRole::Member);
        let (model_a, model_b) = (Gated::default(), Gated::default());
        let lease = Duration::from_secs(30);
        let clock = ManualClock::new();

        // Replica A on a runtime of its own, so that it can crash: its
        // model is called and never answers.
        let (a_url, a_model, a_clock) = (url.clone(), model_a.clone(), clock.clone());
        let run: RunId = std::thread::spawn(move || {
            let runtime = tokio::runtime::Runtime::new().unwrap();
            let run = runtime.block_on(async {
                let log = replica(&a_url, a_clock).await;
                let th = thread(&log).await;
                let a = runner(&log, &a_model, lease);
                let run = a.start(&who("t1", "alice", TenantRole::Member), th, "Report".into(), Some("gated".into()), None).await.unwrap();
                lattice_testkit::until("A's model call", async || a_model.calls.load(Ordering::SeqCst) > 0).await;
                run
            });
            // The crash: every task of replica A stops where it is.
            runtime.shutdown_background();
            run
        })
        .join()
        .unwrap();

        let log = replica(&url, clock.clone()).await;
        let b = runner(&log, &model_b, lease);
        assert_eq!(b.recover().await.unwrap(), 0, "A's lease has not expired yet");
        clock.advance(lease - Duration::from_millis(1));
        assert_eq!(b.recover().await.unwrap(), 0, "nor a millisecond before it does");
        model_b.open.add_permits(1);
        clock.advance(Duration::from_millis(2));
        assert_eq!(b.recover().await.unwrap(), 1, "B takes the run over once the clock says A's lease lapsed");
        let done = wait_for(&log, &alice, &run, RunStatus::Finished).await;
        assert_eq!(done.run.status, RunStatus::Finished);
        assert_eq!(model_a.calls.load(Ordering::SeqCst), 1);
        assert_eq!(model_b.calls.load(Ordering::SeqCst), 1, "B drove the run once");
        let replies = lattice_testkit::trusted(&log).run_log(&alice.principal().tenant, &run).await.unwrap();
        let replies = replies.iter().filter(|e| e.event_type() == "model_replied").count();
        assert_eq!(replies, 1, "one model reply is recorded, B's");
    }
}

lattice_testkit::both_backends! {
    async fn a_run_is_driven_by_one_runner_while_another_looks(backend: Backend) {
        let url = fresh_url(backend).await;
        let alice = who("t1", "alice", TenantRole::Member);
        let clock: SharedClock = ManualClock::new();
        let (log_a, log_b) = (replica(&url, clock.clone()).await, replica(&url, clock).await);
        let (model_a, model_b) = (Gated::default(), Gated::default());
        let a = runner(&log_a, &model_a, Duration::from_secs(30));
        let b = runner(&log_b, &model_b, Duration::from_secs(30));
        let th = thread(&log_a).await;
        let run = a.start(&alice, th, "Report".into(), Some("gated".into()), None).await.unwrap();
        lattice_testkit::until("A's model call", async || model_a.calls.load(Ordering::SeqCst) > 0).await;
        // B starts, as a replica does in a rolling update, while A drives.
        assert_eq!(b.recover().await.unwrap(), 0, "B leaves A's run alone");
        model_a.open.add_permits(1);
        wait_for(&log_b, &alice, &run, RunStatus::Finished).await;
        assert_eq!(b.recover().await.unwrap(), 0);
        assert_eq!((model_a.calls.load(Ordering::SeqCst), model_b.calls.load(Ordering::SeqCst)), (1, 0));
    }
}

//! The deadline scheduler: a request whose deadline passed is answered
//! `expired` by lattice itself, as the system actor [`DEADLINE_ACTOR`],
//! through the write path's commit (one envelope, the request's row, the
//! fan-out and the bridge, like any answer). Deadlines live in the
//! database, never in a timer in memory, so they outlive a restart of any
//! service; on PostgreSQL one replica at a time keeps them (a transaction
//! advisory lock), and the answer's conditional write refuses a second
//! answer anyway. What is due is decided by the log's clock, so a test
//! moves the clock and looks ([`Deadlines::expire_due`]) instead of waiting.

use std::sync::{Arc, Weak};
use std::time::Duration;

use lattice_core::clock::SharedClock;
use lattice_core::{Actor, Error, Principal, Role, RunId, TenantId, ThreadId, UserId, WorkspaceId};
use serde_json::Value;
use tokio::sync::broadcast;

use crate::access::Access;
use crate::commit::Committer;
use crate::effect::Effect;
use crate::scope::{LoadedRun, Scope};
use crate::store::Answering;
use crate::store::Db;
use crate::store::deadlines::{Due, due, take_turn};
use crate::store::runs::{load_requests, load_run};

/// The system actor that answers a request nobody answered in time.
pub const DEADLINE_ACTOR: &str = "deadline";
/// The answer it gives.
pub const EXPIRED: &str = "expired";
/// How often the database is asked for deadlines that passed: a deadline
/// is kept within this of its time.
const EVERY: Duration = Duration::from_millis(500);
/// Requests expired per look, at most.
const BATCH: i64 = 64;

/// A run one of whose requests the scheduler answered: the runner resumes
/// it once nothing else is open.
#[derive(Debug, Clone, PartialEq)]
pub struct Expired {
    pub tenant: TenantId,
    pub run: RunId,
}

/// Reads the store, the clock, and commits through the [`Committer`]:
/// never the whole service.
#[derive(Clone)]
pub(crate) struct Deadlines {
    inner: Arc<Inner>,
}

struct Inner {
    db: Db,
    clock: SharedClock,
    committer: Committer,
    /// Runs the scheduler answered a request of.
    expirations: broadcast::Sender<Expired>,
}

impl Deadlines {
    pub fn new(db: Db, clock: SharedClock, committer: Committer) -> Self {
        Self { inner: Arc::new(Inner { db, clock, committer, expirations: broadcast::channel(256).0 }) }
    }

    /// Looks every [`EVERY`] for as long as a handle on these deadlines
    /// (the service's, a trusted part's) lives.
    pub fn start(&self) {
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(EVERY).await;
                let Some(inner) = weak.upgrade() else { return };
                if let Err(e) = (Deadlines { inner }).look(false).await {
                    tracing::warn!(error = %e, "cannot look for deadlines that passed; trying again");
                }
            }
        });
    }

    /// The runs the scheduler answers a request of, from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Expired> {
        self.inner.expirations.subscribe()
    }

    /// Answers `expired` to every open request whose deadline passed by
    /// the log's clock, once another replica's look (if any) is done;
    /// answers how many this look answered.
    pub async fn expire_due(&self) -> Result<usize, Error> {
        self.look(true).await
    }

    /// One look; `wait` for another replica's look to end rather than
    /// leave this one to it.
    async fn look(&self, wait: bool) -> Result<usize, Error> {
        let inner = &self.inner;
        // Held until this look ends: another replica's look waits its turn.
        let Some(_turn) = take_turn(&inner.db, wait).await? else { return Ok(0) };
        let mut expired = 0;
        for Due { tenant, run, tool_call_id } in due(&inner.db, inner.clock.now_ms(), BATCH).await? {
            match self.expire(&tenant, &run, &tool_call_id).await {
                Ok(()) => {
                    expired += 1;
                    // Nobody listening is fine: the runner's recovery finds it.
                    let _ = inner.expirations.send(Expired { tenant, run });
                }
                // Answered, or the run moved on, a moment ago.
                Err(Error::InvalidState { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(expired)
    }

    /// Commits the answer `expired` to one request, for nobody: the
    /// deadline is lattice's, so it is not authorized as a person's answer
    /// is, but it is written as every answer is.
    async fn expire(&self, tenant: &TenantId, run: &RunId, tool_call_id: &str) -> Result<(), Error> {
        self.close(tenant, run, tool_call_id, Value::String(EXPIRED.to_owned()), DEADLINE_ACTOR).await?;
        tracing::info!(run = %run, tool_call_id, "a request's deadline passed: answered expired");
        Ok(())
    }

    /// Commits `answer` to one open request for nobody, as `actor`: a
    /// deadline passed, or what a question waited on ended (lattice's
    /// runner says why in `answer`).
    pub(crate) async fn close(&self, tenant: &TenantId, run: &RunId, tool_call_id: &str, answer: Value, actor: &str) -> Result<(), Error> {
        let db = &self.inner.db;
        let Some(row) = load_run(db, tenant, run).await? else { return Ok(()) };
        let requests = load_requests(db, tenant, &row.id).await?;
        let Some(request) = requests.iter().find(|r| r.tool_call_id == tool_call_id) else { return Ok(()) };
        let effect = Effect::Answered(Answering {
            run: row.id.clone(),
            tool_call_id: request.tool_call_id.clone(),
            tool_name: request.tool_name.clone(),
            answer,
            approved: false,
            expired: true,
            chain: row.chain.clone(),
        });
        let principal = Principal {
            tenant: tenant.clone(),
            user: UserId::from_trusted(row.started_by.clone()),
            role: row.started_role,
            agent: false,
            run: None,
            within: None,
            scope: None,
        };
        let scope = Scope {
            access: Some(Access { tenant: tenant.clone(), workspace: WorkspaceId::from_trusted(row.workspace.clone()), role: Role::Admin }),
            thread: Some(ThreadId::from_trusted(row.thread.clone())),
            artifact: None,
            run: Some(Arc::new(LoadedRun { run: row, requests })),
            standing: None,
        };
        let actor = Actor::System { name: actor.to_owned() };
        let committer = &self.inner.committer;
        // Nothing was authorized from a standing: the commit writes.
        let committed = committer
            .commit(&principal, &actor, &scope, effect, None)
            .await?
            .ok_or_else(|| Error::unavailable("an expiry's commit found a standing it never named"))?;
        committer.told(committed.seq);
        Ok(())
    }
}

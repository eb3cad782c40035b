//! The deadline scheduler: a request whose deadline passed is answered
//! `expired` by lattice itself, as the system actor [`DEADLINE_ACTOR`],
//! through the write path's commit (one envelope, the request's row, the
//! fan-out and the bridge, like any answer). Deadlines live in the
//! database, never in a timer in memory, so they outlive a restart of any
//! service; on PostgreSQL one replica at a time keeps them (a transaction
//! advisory lock), and the answer's conditional write refuses a second
//! answer anyway.

use std::sync::{Arc, Weak};
use std::time::Duration;

use lattice_core::{Actor, Error, Principal, Role, RunId, TenantId, ThreadId, UserId, WorkspaceId};
use serde_json::Value;
use sqlx::Row;

use crate::access::Access;
use crate::authorize::{LoadedRun, Scope};
use crate::db::{Backend, db_error};
use crate::effect::Effect;
use crate::runs::{load_requests, load_run};
use crate::service::{Inner, LogService};
use crate::store::Answering;

/// The system actor that answers a request nobody answered in time.
pub const DEADLINE_ACTOR: &str = "deadline";
/// The answer it gives.
pub const EXPIRED: &str = "expired";
/// How often the database is asked for deadlines that passed: a deadline
/// is kept within this of its time.
const EVERY: Duration = Duration::from_millis(500);
/// Requests expired per look, at most.
const BATCH: i64 = 64;
/// The advisory lock only the replica keeping deadlines holds.
const LOCK: i64 = 0x6c61_7474_6963_0001;

/// A run one of whose requests the scheduler answered: the runner resumes
/// it once nothing else is open.
#[derive(Debug, Clone, PartialEq)]
pub struct Expired {
    pub tenant: TenantId,
    pub run: RunId,
}

pub(crate) fn start(inner: Weak<Inner>) {
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(EVERY).await;
            let Some(inner) = inner.upgrade() else { return };
            let log = LogService { inner };
            if let Err(e) = log.expire_due().await {
                tracing::warn!(error = %e, "cannot look for deadlines that passed; trying again");
            }
        }
    });
}

impl LogService {
    /// Answers `expired` to every open request whose deadline passed;
    /// answers how many.
    pub(crate) async fn expire_due(&self) -> Result<usize, Error> {
        let db = &self.inner.db;
        // Held until this look ends: another replica's look waits its turn.
        let _lock = match db.backend {
            Backend::Postgres => {
                let mut tx = db.pool.begin().await.map_err(db_error)?;
                let held: bool = sqlx::query("SELECT pg_try_advisory_xact_lock($1)")
                    .bind(LOCK)
                    .fetch_one(&mut *tx)
                    .await
                    .map_err(db_error)?
                    .try_get(0)
                    .map_err(db_error)?;
                if !held {
                    return Ok(0);
                }
                Some(tx)
            }
            Backend::Sqlite => None,
        };
        let due = sqlx::query(
            "SELECT r.tenant, r.run, r.tool_call_id FROM run_requests r JOIN runs u ON u.tenant = r.tenant AND u.id = r.run \
             WHERE r.expires_at <= $1 AND r.answered_by IS NULL AND u.status = 'paused' ORDER BY r.expires_at LIMIT $2",
        )
        .bind(crate::clock::now_ms())
        .bind(BATCH)
        .fetch_all(&db.pool)
        .await
        .map_err(db_error)?;
        let mut expired = 0;
        for row in &due {
            let tenant = TenantId::from_trusted(row.try_get::<String, _>(0).map_err(db_error)?);
            let run = RunId::from_trusted(row.try_get::<String, _>(1).map_err(db_error)?);
            let tool_call_id: String = row.try_get(2).map_err(db_error)?;
            match self.expire(&tenant, &run, &tool_call_id).await {
                Ok(()) => {
                    expired += 1;
                    // Nobody listening is fine: the runner's recovery finds it.
                    let _ = self.inner.expirations.send(Expired { tenant, run });
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
        let db = &self.inner.db;
        let Some(row) = load_run(db, tenant, run).await? else { return Ok(()) };
        let requests = load_requests(db, tenant, &row.id).await?;
        let Some(request) = requests.iter().find(|r| r.tool_call_id == tool_call_id) else { return Ok(()) };
        let effect = Effect::Answered(Answering {
            run: row.id.clone(),
            tool_call_id: request.tool_call_id.clone(),
            tool_name: request.tool_name.clone(),
            answer: Value::String(EXPIRED.to_owned()),
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
        };
        let scope = Scope {
            access: Some(Access { tenant: tenant.clone(), workspace: WorkspaceId::from_trusted(row.workspace.clone()), role: Role::Admin }),
            thread: Some(ThreadId::from_trusted(row.thread.clone())),
            artifact: None,
            run: Some(Arc::new(LoadedRun { run: row, requests })),
        };
        let actor = Actor::System { name: DEADLINE_ACTOR.to_owned() };
        let committed = self.commit(&principal, &actor, &scope, effect, None).await?;
        self.inner.horizon.committed(committed.seq);
        tracing::info!(run = %run, tool_call_id, "a request's deadline passed: answered expired");
        Ok(())
    }
}

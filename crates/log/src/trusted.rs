//! What lattice's own in-process parts may do that no request may: act as
//! a principal without a token, and read runs without an access check.
//! Handed out by the log's builder ([`crate::Builder::start_trusted`]) to
//! whoever starts the service, which gives it to the runner and to the
//! demo's seed; no other crate can make one.

use lattice_core::event::{AppContextSet, Event};
use lattice_core::{Error, Level, Principal, RunId, TenantId, WorkspaceId};
use sqlx::Row;

use crate::auth::Authenticated;
use crate::db::{Db, db_error};
use crate::read::LevelStates;
use crate::runs::{RUN_COLUMNS, RunRow, load_run, run_from_row};
use crate::service::LogService;
use crate::store::{ENVELOPE_COLUMNS, envelope_from_row};

/// The apps of a thread whose context a model call reads, at most.
pub const APP_CONTEXTS: i64 = 8;

/// The log service's trust in its own process.
#[derive(Clone)]
pub struct Trusted {
    log: LogService,
}

impl Trusted {
    pub(crate) fn new(log: LogService) -> Self {
        Self { log }
    }

    /// For lattice's own tests, which act as anyone.
    #[cfg(feature = "testing")]
    pub fn for_tests(log: &LogService) -> Self {
        Self::new(log.clone())
    }

    pub fn log(&self) -> &LogService {
        &self.log
    }

    /// Vouches for a principal without a token: an agent's run acting as
    /// its agent, the demo's seed as its people.
    pub fn vouch(&self, principal: Principal) -> Authenticated {
        Authenticated::trusted(principal)
    }

    /// A part of lattice named `name` (an operator's command line), acting
    /// with `principal`'s rights: its envelopes name it as a system actor.
    pub fn operator(&self, name: String, principal: Principal) -> Authenticated {
        Authenticated::system(name, principal)
    }

    /// The runs the deadline scheduler answers a request of, from now on.
    pub fn expirations(&self) -> tokio::sync::broadcast::Receiver<crate::Expired> {
        self.log.inner.expirations.subscribe()
    }

    /// Paused runs whose every request is answered: the resume that should
    /// have followed the last answer was lost (a stop between the two, or
    /// a deadline's answer no runner heard). Each with who answered last
    /// (`None` for the deadline scheduler).
    pub async fn answered_paused_runs(&self) -> Result<Vec<(TenantId, RunRow, Option<String>)>, Error> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {RUN_COLUMNS}, tenant FROM runs u WHERE status = 'paused' \
             AND EXISTS (SELECT 1 FROM run_requests r WHERE r.tenant = u.tenant AND r.run = u.id) \
             AND NOT EXISTS (SELECT 1 FROM run_requests r WHERE r.tenant = u.tenant AND r.run = u.id AND r.answered_by IS NULL) \
             ORDER BY created_at"
        )))
        .fetch_all(&self.log.inner.db.pool)
        .await
        .map_err(db_error)?;
        let mut out = Vec::new();
        for (tenant, run) in tenant_runs(&rows)? {
            // The last answer's actor: a person, or lattice itself.
            let last = sqlx::query(sqlx::AssertSqlSafe(format!(
                "SELECT {ENVELOPE_COLUMNS} FROM envelopes WHERE run = $1 AND tenant = $2 AND type = $3 ORDER BY seq DESC LIMIT 1"
            )))
            .bind(&run.id)
            .bind(tenant.as_str())
            .bind(lattice_core::event::DeferredAnswered::NAME)
            .fetch_optional(&self.log.inner.db.pool)
            .await
            .map_err(db_error)?;
            let by = match last.as_ref().map(envelope_from_row).transpose()?.map(|e| e.actor) {
                Some(lattice_core::Actor::Person { user, .. } | lattice_core::Actor::Agent { user, .. }) => Some(user.to_string()),
                _ => None,
            };
            out.push((tenant, run, by));
        }
        Ok(out)
    }

    /// Puts something the log does not keep on the live streams of a
    /// thread (a model's reply as it is written): the runner's, for the
    /// threads of the runs it drives.
    pub fn pass(&self, thread: &lattice_core::ThreadId, passing: crate::fanout::Passing) {
        self.log.inner.fanout.pass(thread.as_str(), passing);
    }

    /// The tenant a workspace belongs to, if it exists.
    pub async fn workspace_tenant(&self, workspace: &WorkspaceId) -> Result<Option<TenantId>, Error> {
        workspace_tenant(&self.log.inner.db, workspace).await
    }

    /// Each level that holds a state for some key, the deployment first,
    /// with what it holds and the effective values there.
    pub async fn switch_levels(&self, only: Option<Level>) -> Result<Vec<LevelStates>, Error> {
        let levels = match only {
            Some(level) => vec![level],
            None => {
                let rows =
                    sqlx::query("SELECT DISTINCT level FROM switches ORDER BY level").fetch_all(&self.log.inner.db.pool).await.map_err(db_error)?;
                let mut levels = vec![Level::Deployment];
                for row in rows {
                    let level: String = row.try_get(0).map_err(db_error)?;
                    match Level::parse(&level) {
                        Ok(Level::Deployment) | Err(_) => {}
                        Ok(other) => levels.push(other),
                    }
                }
                levels
            }
        };
        let mut out = Vec::with_capacity(levels.len());
        for level in levels {
            let name = level.to_string();
            out.push(self.log.level_states(level, name).await?);
        }
        Ok(out)
    }

    /// Every envelope of a run, in order: what the runner rebuilds a
    /// conversation from.
    pub async fn run_log(&self, tenant: &TenantId, run: &RunId) -> Result<Vec<lattice_core::Envelope>, Error> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT {ENVELOPE_COLUMNS} FROM envelopes WHERE tenant = $1 AND run = $2 ORDER BY seq")))
            .bind(tenant.as_str())
            .bind(run.as_str())
            .fetch_all(&self.log.inner.db.pool)
            .await
            .map_err(db_error)?;
        rows.iter().map(envelope_from_row).collect()
    }

    /// What the apps of a thread last told the agent, one per app (the
    /// newest), oldest first; apps archived since are left out. At most
    /// [`APP_CONTEXTS`] apps: the thread's newest.
    pub async fn app_contexts(&self, tenant: &TenantId, thread: &str) -> Result<Vec<AppContextSet>, Error> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {ENVELOPE_COLUMNS} FROM envelopes WHERE tenant = $1 AND thread = $2 AND type = $3 ORDER BY seq DESC LIMIT $4"
        )))
        .bind(tenant.as_str())
        .bind(thread)
        .bind(AppContextSet::NAME)
        .bind(APP_CONTEXTS * 4)
        .fetch_all(&self.log.inner.db.pool)
        .await
        .map_err(db_error)?;
        let mut newest: Vec<AppContextSet> = Vec::new();
        for row in &rows {
            if let Event::AppContextSet(said) = envelope_from_row(row)?.event
                && !newest.iter().any(|n| n.artifact_id == said.artifact_id)
                && newest.len() < APP_CONTEXTS as usize
            {
                newest.push(said);
            }
        }
        let mut kept = Vec::with_capacity(newest.len());
        for said in newest.into_iter().rev() {
            let Ok(id) = lattice_core::ArtifactId::parse("artifact", &said.artifact_id) else { continue };
            if crate::store::load_artifact(&self.log.inner.db, tenant, &id, None).await?.is_some_and(|a| !a.archived) {
                kept.push(said);
            }
        }
        Ok(kept)
    }

    /// A run's read model, without an access check.
    pub async fn run_state(&self, tenant: &TenantId, run: &RunId) -> Result<Option<RunRow>, Error> {
        load_run(&self.log.inner.db, tenant, run).await
    }

    /// Running runs that no runner drives: their lease is free or has
    /// expired (a stop, a crash, a replica gone).
    pub async fn orphaned_runs(&self) -> Result<Vec<(TenantId, RunRow)>, Error> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {RUN_COLUMNS}, tenant FROM runs WHERE status = 'running' \
             AND (lease_holder IS NULL OR lease_until < $1) ORDER BY created_at"
        )))
        .bind(crate::clock::now_ms())
        .fetch_all(&self.log.inner.db.pool)
        .await
        .map_err(db_error)?;
        tenant_runs(&rows)
    }

    /// Takes, or renews, the lease on driving a running run for `ttl`:
    /// granted while the run is running and its lease is free, expired or
    /// already `holder`'s. A runner drives a run only while it holds this.
    pub async fn lease_run(&self, tenant: &TenantId, run: &RunId, holder: &str, ttl: std::time::Duration) -> Result<bool, Error> {
        let _writer = self.log.inner.db.writer().await;
        let now = crate::clock::now_ms();
        let done = sqlx::query(
            "UPDATE runs SET lease_holder = $3, lease_until = $4 WHERE tenant = $1 AND id = $2 AND status = 'running' \
             AND (lease_holder IS NULL OR lease_holder = $3 OR lease_until < $5)",
        )
        .bind(tenant.as_str())
        .bind(run.as_str())
        .bind(holder)
        .bind(now + ttl.as_millis() as i64)
        .bind(now)
        .execute(&self.log.inner.db.pool)
        .await
        .map_err(db_error)?;
        Ok(done.rows_affected() == 1)
    }

    /// Gives a run's lease back, if `holder` has it.
    pub async fn release_run(&self, tenant: &TenantId, run: &RunId, holder: &str) -> Result<(), Error> {
        let _writer = self.log.inner.db.writer().await;
        sqlx::query("UPDATE runs SET lease_holder = NULL, lease_until = NULL WHERE tenant = $1 AND id = $2 AND lease_holder = $3")
            .bind(tenant.as_str())
            .bind(run.as_str())
            .bind(holder)
            .execute(&self.log.inner.db.pool)
            .await
            .map_err(db_error)?;
        Ok(())
    }

    /// The principal a run's current segment acts as: the agent, for the
    /// person it acts for, in that run, within what the run's starter may
    /// do (an admin's answer lends the run no admin's rights). For
    /// lattice's runner.
    pub fn principal_for(&self, tenant: &TenantId, run: &RunRow) -> Principal {
        let within = (run.acting_for != run.started_by)
            .then(|| lattice_core::Within { user: lattice_core::UserId::from_trusted(run.started_by.clone()), role: run.started_role });
        Principal {
            tenant: tenant.clone(),
            user: lattice_core::UserId::from_trusted(run.acting_for.clone()),
            role: run.acting_role,
            agent: true,
            run: Some(RunId::from_trusted(run.id.clone())),
            within,
        }
    }
}

/// Runs read with their tenant (`{RUN_COLUMNS}, tenant`).
fn tenant_runs(rows: &[sqlx::any::AnyRow]) -> Result<Vec<(TenantId, RunRow)>, Error> {
    rows.iter().map(|row| Ok((TenantId::from_trusted(row.try_get::<String, _>("tenant").map_err(db_error)?), run_from_row(row)?))).collect()
}

/// The tenant a workspace belongs to, if it exists.
pub(crate) async fn workspace_tenant(db: &Db, workspace: &WorkspaceId) -> Result<Option<TenantId>, Error> {
    let row = sqlx::query("SELECT tenant FROM workspaces WHERE id = $1").bind(workspace.as_str()).fetch_optional(&db.pool).await.map_err(db_error)?;
    row.map(|row| row.try_get::<String, _>(0).map(TenantId::from_trusted).map_err(db_error)).transpose()
}

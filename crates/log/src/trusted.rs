//! What lattice's own in-process parts may do that no request may: act as
//! a principal without a token, and read runs without an access check.
//! Handed out by the log's builder ([`crate::Builder::start_trusted`]) to
//! whoever starts the service, which gives it to the runner and to the
//! demo's seed; no other crate can make one.

use lattice_core::{Error, Principal, RunId, TenantId};
use sqlx::Row;

use crate::auth::Authenticated;
use crate::db::db_error;
use crate::runs::{RUN_COLUMNS, RunRow, load_run, run_from_row};
use crate::service::LogService;
use crate::store::{ENVELOPE_COLUMNS, envelope_from_row};

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

    /// Every envelope of a run, in order: what the runner rebuilds a
    /// conversation from.
    pub async fn run_log(&self, tenant: &TenantId, run: &RunId) -> Result<Vec<lattice_core::Envelope>, Error> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {ENVELOPE_COLUMNS} FROM envelopes WHERE tenant = $1 AND run = $2 ORDER BY seq"
        )))
        .bind(tenant.as_str())
        .bind(run.as_str())
        .fetch_all(&self.log.inner.db.pool)
        .await
        .map_err(db_error)?;
        rows.iter().map(envelope_from_row).collect()
    }

    /// A run's read model, without an access check.
    pub async fn run_state(&self, tenant: &TenantId, run: &RunId) -> Result<Option<RunRow>, Error> {
        load_run(&self.log.inner.db, tenant, run).await
    }

    /// Runs that were running when the service stopped, to drive again.
    ///
    pub async fn interrupted_runs(&self) -> Result<Vec<(TenantId, RunRow)>, Error> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {RUN_COLUMNS}, tenant FROM runs WHERE status = 'running' ORDER BY created_at"
        )))
        .fetch_all(&self.log.inner.db.pool)
        .await
        .map_err(db_error)?;
        rows.iter()
            .map(|row| Ok((TenantId::from_trusted(row.try_get::<String, _>(8).map_err(db_error)?), run_from_row(row)?)))
            .collect()
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

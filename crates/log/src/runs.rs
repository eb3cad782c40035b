//! Runs and their deferred requests as stored (L6), and the reads the
//! API makes of them (the runner's own are in src/trusted.rs).

use lattice_core::{Error, RunId, RunStatus, TenantId, TenantRole, ThreadId};
use serde::Serialize;
use serde_json::Value;
use sqlx::Row;
use sqlx::any::AnyRow;

use crate::access::thread_access;
use crate::auth::Authenticated;
use crate::db::{Db, db_error};
use crate::service::LogService;

/// A run's read model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRow {
    pub id: String,
    pub workspace: String,
    pub thread: String,
    pub status: RunStatus,
    pub model: String,
    pub started_by: String,
    /// The starter's tenant role: what bounds the run's rights.
    #[serde(skip)]
    pub started_role: TenantRole,
    /// Whom the current segment acts for, and that person's tenant role.
    pub acting_for: String,
    pub acting_role: TenantRole,
    /// The chain of the event a rule started the run for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chain: Option<String>,
}

/// A deferred request of a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RequestRow {
    pub tool_call_id: String,
    pub tool_name: String,
    pub args: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answered_by: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<Value>,
    /// When nobody may answer any more (ms since the epoch).
    #[serde(skip)]
    pub expires_at: Option<i64>,
}

impl RequestRow {
    /// Its deadline as RFC 3339, if it has one.
    pub fn expires(&self) -> Option<String> {
        self.expires_at.map(crate::clock::rfc3339)
    }
}

/// A run with its requests, as `GET /v1/runs/{run}` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunView {
    #[serde(flatten)]
    pub run: RunRow,
    pub requests: Vec<RequestRow>,
}

fn role_from(s: &str) -> TenantRole {
    match s {
        "tenant_admin" => TenantRole::TenantAdmin,
        "deployment_admin" => TenantRole::DeploymentAdmin,
        _ => TenantRole::Member,
    }
}

pub(crate) fn run_from_row(row: &AnyRow) -> Result<RunRow, Error> {
    let status: String = row.try_get(3).map_err(db_error)?;
    let role: String = row.try_get(7).map_err(db_error)?;
    let started_role: String = row.try_get(8).map_err(db_error)?;
    Ok(RunRow {
        id: row.try_get(0).map_err(db_error)?,
        workspace: row.try_get(1).map_err(db_error)?,
        thread: row.try_get(2).map_err(db_error)?,
        status: RunStatus::parse(&status).ok_or_else(|| Error::unavailable(format!("stored run status {status:?}")))?,
        model: row.try_get(4).map_err(db_error)?,
        started_by: row.try_get(5).map_err(db_error)?,
        acting_for: row.try_get(6).map_err(db_error)?,
        acting_role: role_from(&role),
        started_role: role_from(&started_role),
        chain: row.try_get(9).map_err(db_error)?,
    })
}

pub(crate) const RUN_COLUMNS: &str = "id, workspace, thread, status, model, started_by, acting_for, acting_role, started_role, chain";

pub(crate) async fn load_run(db: &Db, tenant: &TenantId, run: &RunId) -> Result<Option<RunRow>, Error> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT {RUN_COLUMNS} FROM runs WHERE tenant = $1 AND id = $2")))
        .bind(tenant.as_str())
        .bind(run.as_str())
        .fetch_optional(&db.pool)
        .await
        .map_err(db_error)?;
    row.as_ref().map(run_from_row).transpose()
}

pub(crate) async fn load_requests(db: &Db, tenant: &TenantId, run: &str) -> Result<Vec<RequestRow>, Error> {
    let rows = sqlx::query(
        "SELECT tool_call_id, tool_name, args, answered_by, answer, expires_at FROM run_requests WHERE tenant = $1 AND run = $2 ORDER BY tool_call_id",
    )
    .bind(tenant.as_str())
    .bind(run)
    .fetch_all(&db.pool)
    .await
    .map_err(db_error)?;
    rows.iter()
        .map(|row| {
            let args: String = row.try_get(2).map_err(db_error)?;
            let answer: Option<String> = row.try_get(4).map_err(db_error)?;
            Ok(RequestRow {
                tool_call_id: row.try_get(0).map_err(db_error)?,
                tool_name: row.try_get(1).map_err(db_error)?,
                args: serde_json::from_str(&args).unwrap_or(Value::Null),
                answered_by: row.try_get(3).map_err(db_error)?,
                answer: answer.and_then(|a| serde_json::from_str(&a).ok()),
                expires_at: row.try_get(5).map_err(db_error)?,
            })
        })
        .collect()
}

impl LogService {
    /// A run and its requests, for a caller who can read its thread.
    pub async fn run(&self, who: &Authenticated, run: &RunId) -> Result<RunView, Error> {
        let p = who.principal();
        let Some(row) = load_run(&self.inner.db, &p.tenant, run).await? else { return Err(Error::NotFound) };
        thread_access(&self.inner.db, p, &ThreadId::from_trusted(row.thread.clone())).await?;
        let requests = load_requests(&self.inner.db, &p.tenant, &row.id).await?;
        Ok(RunView { run: row, requests })
    }

    /// The runs of a thread that wait for an answer.
    pub async fn paused_runs(&self, who: &Authenticated, thread: &ThreadId) -> Result<Vec<RunView>, Error> {
        let p = who.principal();
        thread_access(&self.inner.db, p, thread).await?;
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {RUN_COLUMNS} FROM runs WHERE tenant = $1 AND thread = $2 AND status = 'paused' ORDER BY created_at"
        )))
        .bind(p.tenant.as_str())
        .bind(thread.as_str())
        .fetch_all(&self.inner.db.pool)
        .await
        .map_err(db_error)?;
        let mut out = Vec::new();
        for row in &rows {
            let run = run_from_row(row)?;
            let requests = load_requests(&self.inner.db, &p.tenant, &run.id).await?;
            out.push(RunView { run, requests });
        }
        Ok(out)
    }
}

//! Runs and their deferred requests as stored (L6): the rows, their
//! reads, the runner's lease, and the writers (started, a request
//! answered, a step recorded). Every status change is conditional on the
//! status the write path read, so two writers racing (to resume, say)
//! cannot both succeed.

use lattice_core::event::{DeferredAnswered, Event, ModelReplied, RunAsked, RunFailed, RunFinished, RunPaused, RunResumed, RunStarted, ToolReturned};
use lattice_core::{Error, RunId, RunStatus, RunStep, TenantId, TenantRole, ThreadId};
use serde::Serialize;
use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::db::{Db, db_error};
use super::writing::Writing;

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
    /// The server the person must sign in to first, for a call that waits on it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sign_in: Option<lattice_core::SignInNeeded>,
}

impl RequestRow {
    /// Its deadline as RFC 3339, if it has one.
    pub fn expires(&self) -> Option<String> {
        self.expires_at.map(crate::clock::rfc3339)
    }
}

fn role_from(s: &str) -> TenantRole {
    match s {
        "tenant_admin" => TenantRole::TenantAdmin,
        "deployment_admin" => TenantRole::DeploymentAdmin,
        _ => TenantRole::Member,
    }
}

fn run_from_row(row: &AnyRow) -> Result<RunRow, Error> {
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

const RUN_COLUMNS: &str = "id, workspace, thread, status, model, started_by, acting_for, acting_role, started_role, chain";

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
        "SELECT tool_call_id, tool_name, args, answered_by, answer, expires_at, sign_in FROM run_requests WHERE tenant = $1 AND run = $2 \
         ORDER BY position, tool_call_id",
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
            let sign_in: Option<String> = row.try_get(6).map_err(db_error)?;
            Ok(RequestRow {
                tool_call_id: row.try_get(0).map_err(db_error)?,
                tool_name: row.try_get(1).map_err(db_error)?,
                args: serde_json::from_str(&args).unwrap_or(Value::Null),
                answered_by: row.try_get(3).map_err(db_error)?,
                answer: answer.and_then(|a| serde_json::from_str(&a).ok()),
                expires_at: row.try_get(5).map_err(db_error)?,
                sign_in: sign_in.and_then(|s| serde_json::from_str(&s).ok()),
            })
        })
        .collect()
}

/// The runs of a thread that wait for an answer, oldest first.
pub(crate) async fn paused_in(db: &Db, tenant: &TenantId, thread: &ThreadId) -> Result<Vec<RunRow>, Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {RUN_COLUMNS} FROM runs WHERE tenant = $1 AND thread = $2 AND status = 'paused' ORDER BY created_at"
    )))
    .bind(tenant.as_str())
    .bind(thread.as_str())
    .fetch_all(&db.pool)
    .await
    .map_err(db_error)?;
    rows.iter().map(run_from_row).collect()
}

/// Paused runs, of any tenant, whose every request is answered.
pub(crate) async fn answered_paused(db: &Db) -> Result<Vec<(TenantId, RunRow)>, Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {RUN_COLUMNS}, tenant FROM runs u WHERE status = 'paused' \
         AND EXISTS (SELECT 1 FROM run_requests r WHERE r.tenant = u.tenant AND r.run = u.id) \
         AND NOT EXISTS (SELECT 1 FROM run_requests r WHERE r.tenant = u.tenant AND r.run = u.id AND r.answered_by IS NULL) \
         ORDER BY created_at"
    )))
    .fetch_all(&db.pool)
    .await
    .map_err(db_error)?;
    tenant_runs(&rows)
}

/// Running runs, of any tenant, whose lease is free or ended before `now`.
pub(crate) async fn orphaned(db: &Db, now: i64) -> Result<Vec<(TenantId, RunRow)>, Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {RUN_COLUMNS}, tenant FROM runs WHERE status = 'running' \
         AND (lease_holder IS NULL OR lease_until < $1) ORDER BY created_at"
    )))
    .bind(now)
    .fetch_all(&db.pool)
    .await
    .map_err(db_error)?;
    tenant_runs(&rows)
}

/// Runs read with their tenant (`{RUN_COLUMNS}, tenant`).
fn tenant_runs(rows: &[AnyRow]) -> Result<Vec<(TenantId, RunRow)>, Error> {
    rows.iter().map(|row| Ok((TenantId::from_trusted(row.try_get::<String, _>("tenant").map_err(db_error)?), run_from_row(row)?))).collect()
}

/// Takes or renews a running run's lease for `holder` until `until`, if it
/// is free, ended before `now`, or `holder`'s already; answers whether it
/// was granted.
pub(crate) async fn lease(db: &Db, tenant: &TenantId, run: &RunId, holder: &str, now: i64, until: i64) -> Result<bool, Error> {
    let _writer = db.writer().await;
    let done = sqlx::query(
        "UPDATE runs SET lease_holder = $3, lease_until = $4 WHERE tenant = $1 AND id = $2 AND status = 'running' \
         AND (lease_holder IS NULL OR lease_holder = $3 OR lease_until < $5)",
    )
    .bind(tenant.as_str())
    .bind(run.as_str())
    .bind(holder)
    .bind(until)
    .bind(now)
    .execute(&db.pool)
    .await
    .map_err(db_error)?;
    Ok(done.rows_affected() == 1)
}

/// Frees a run's lease, if `holder` has it.
pub(crate) async fn release(db: &Db, tenant: &TenantId, run: &RunId, holder: &str) -> Result<(), Error> {
    let _writer = db.writer().await;
    sqlx::query("UPDATE runs SET lease_holder = NULL, lease_until = NULL WHERE tenant = $1 AND id = $2 AND lease_holder = $3")
        .bind(tenant.as_str())
        .bind(run.as_str())
        .bind(holder)
        .execute(&db.pool)
        .await
        .map_err(db_error)?;
    Ok(())
}

/// A run in the writing's thread, acting for its starter.
pub(crate) async fn start_run(
    conn: &mut AnyConnection,
    w: &Writing<'_>,
    id: &RunId,
    prompt: &str,
    model: &str,
    chain: Option<String>,
    context: Vec<lattice_core::RunContext>,
) -> Result<Event, Error> {
    sqlx::query(
        "INSERT INTO runs (tenant, id, workspace, thread, status, model, started_by, acting_for, acting_role, \
         started_role, created_at, updated_at, chain) VALUES ($1, $2, $3, $4, 'running', $5, $6, $6, $7, $7, $8, $8, $9)",
    )
    .bind(w.tenant)
    .bind(id.as_str())
    .bind(w.workspace)
    .bind(w.thread)
    .bind(model)
    .bind(w.user)
    .bind(w.role.as_str())
    .bind(w.at)
    .bind(chain.as_deref())
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    Ok(RunStarted { run_id: id.to_string(), prompt: prompt.to_owned(), model: model.to_owned(), started_by: w.user.to_owned(), chain, context }
        .into())
}

/// What answers a request.
pub(crate) struct Answering {
    pub run: String,
    pub tool_call_id: String,
    pub tool_name: String,
    pub answer: Value,
    pub approved: bool,
    /// Its deadline passed: lattice answers for nobody.
    pub expired: bool,
    pub chain: Option<String>,
}

/// A request's answer, if nobody answered it first.
pub(crate) async fn answer_request(conn: &mut AnyConnection, w: &Writing<'_>, a: Answering) -> Result<Event, Error> {
    let Answering { run, tool_call_id, tool_name, answer, approved, expired, chain } = a;
    let (run, tool_call_id, tool_name, answer) = (run.as_str(), tool_call_id.as_str(), tool_name.as_str(), &answer);
    let updated = sqlx::query(
        "UPDATE run_requests SET answered_by = $1, answer = $2 \
         WHERE tenant = $3 AND run = $4 AND tool_call_id = $5 AND answered_by IS NULL",
    )
    .bind(w.author)
    .bind(answer.to_string())
    .bind(w.tenant)
    .bind(run)
    .bind(tool_call_id)
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    if updated.rows_affected() == 0 {
        let by: Option<String> = sqlx::query("SELECT answered_by FROM run_requests WHERE tenant = $1 AND run = $2 AND tool_call_id = $3")
            .bind(w.tenant)
            .bind(run)
            .bind(tool_call_id)
            .fetch_one(&mut *conn)
            .await
            .map_err(db_error)?
            .try_get(0)
            .map_err(db_error)?;
        return Err(Error::InvalidState {
            code: lattice_core::Code::AlreadyAnswered,
            reason: format!("already answered by {}", by.as_deref().unwrap_or("someone")),
            answered_by: by,
        });
    }
    Ok(DeferredAnswered {
        run_id: run.to_owned(),
        turn_id: run.to_owned(),
        tool_call_id: tool_call_id.to_owned(),
        tool_name: tool_name.to_owned(),
        answer: answer.clone(),
        approved,
        author: w.author.to_owned(),
        expired,
        chain,
    }
    .into())
}

/// A step of a run: its status moved (from the one read), the requests it
/// pauses on stored.
pub(crate) async fn record_step(conn: &mut AnyConnection, w: &Writing<'_>, run: &str, step: RunStep) -> Result<Event, Error> {
    let transition = match &step {
        RunStep::Paused { .. } => Some(("paused", "running")),
        RunStep::Resumed { .. } => Some(("running", "paused")),
        RunStep::Finished { .. } => Some(("finished", "running")),
        RunStep::Failed { .. } => Some(("failed", "")),
        // A question asked while the run goes on moves no status: the run
        // is running, and stays so (prepare.rs allows it only then).
        RunStep::ModelReplied { .. } | RunStep::ToolReturned { .. } | RunStep::Asked { .. } => None,
    };
    if let Some((to, from)) = transition {
        let (acting_for, acting_role) = match &step {
            RunStep::Resumed { actor, role } => (Some(actor.clone()), Some(role.as_str())),
            _ => (None, None),
        };
        let updated = sqlx::query(
            "UPDATE runs SET status = $1, updated_at = $2, acting_for = COALESCE($3, acting_for), \
             acting_role = COALESCE($4, acting_role) \
             WHERE tenant = $5 AND id = $6 AND ($7 = '' OR status = $7) AND status NOT IN ('finished', 'failed')",
        )
        .bind(to)
        .bind(w.at)
        .bind(acting_for)
        .bind(acting_role)
        .bind(w.tenant)
        .bind(run)
        .bind(from)
        .execute(&mut *conn)
        .await
        .map_err(db_error)?;
        if updated.rows_affected() == 0 {
            return Err(Error::invalid_state(lattice_core::Code::RunEnded, "the run moved on before this step"));
        }
    }
    let mut step = step;
    if let RunStep::Paused { requests } | RunStep::Asked { requests } = &mut step {
        for (position, r) in requests.iter_mut().enumerate() {
            // A deadline counts from the pause, by the log's clock.
            let expires_at = r.expires_in_secs.map(|secs| w.at + secs.min(lattice_core::run::MAX_EXPIRES_IN_SECS) as i64 * 1000);
            r.expires_at = expires_at.map(crate::clock::rfc3339);
            // The same call can wait again in one run (a sign-in, then the
            // policy's question; a step-up): the request begins anew.
            sqlx::query(
                "INSERT INTO run_requests (tenant, run, tool_call_id, tool_name, args, expires_at, sign_in, position) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
                 ON CONFLICT (tenant, run, tool_call_id) DO UPDATE SET tool_name = excluded.tool_name, args = excluded.args, \
                 expires_at = excluded.expires_at, sign_in = excluded.sign_in, position = excluded.position, answered_by = NULL, answer = NULL",
            )
            .bind(w.tenant)
            .bind(run)
            .bind(&r.tool_call_id)
            .bind(&r.tool_name)
            .bind(r.args.to_string())
            .bind(expires_at)
            .bind(r.sign_in.as_ref().map(|s| serde_json::to_string(s).unwrap_or_default()))
            .bind(position as i64)
            .execute(&mut *conn)
            .await
            .map_err(db_error)?;
        }
    }
    Ok(step_event(run.to_owned(), step))
}

/// The event a step records.
fn step_event(run_id: String, step: RunStep) -> Event {
    match step {
        RunStep::ModelReplied { text, tool_calls, tokens } => ModelReplied { run_id, text, tool_calls, tokens }.into(),
        RunStep::ToolReturned { tool_call_id, tool_name, result, is_error } => {
            ToolReturned { run_id, tool_call_id, tool_name, result, is_error }.into()
        }
        RunStep::Paused { requests } => RunPaused { run_id, requests }.into(),
        RunStep::Asked { requests } => RunAsked { run_id, requests }.into(),
        RunStep::Resumed { actor, role } => RunResumed { run_id, actor, role }.into(),
        RunStep::Finished { text } => RunFinished { run_id, text }.into(),
        RunStep::Failed { reason, failure } => RunFailed { run_id, reason, failure }.into(),
    }
}

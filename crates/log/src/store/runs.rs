//! Writers of runs: started, a request answered, a step recorded. Every
//! status change is conditional on the status the write path read, so two
//! writers racing (to resume, say) cannot both succeed.

use lattice_core::event::{DeferredAnswered, Event, ModelReplied, RunFailed, RunFinished, RunPaused, RunResumed, RunStarted, ToolReturned};
use lattice_core::{Error, RunId, RunStep};
use serde_json::Value;
use sqlx::{AnyConnection, Row};

use super::Writing;
use crate::db::db_error;

/// A run in the writing's thread, acting for its starter.
pub(crate) async fn start_run(
    conn: &mut AnyConnection,
    w: &Writing<'_>,
    id: &RunId,
    prompt: &str,
    model: &str,
    chain: Option<String>,
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
    Ok(RunStarted { run_id: id.to_string(), prompt: prompt.to_owned(), model: model.to_owned(), started_by: w.user.to_owned(), chain }.into())
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
        return Err(Error::InvalidState { reason: format!("already answered by {}", by.as_deref().unwrap_or("someone")), answered_by: by });
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
        RunStep::ModelReplied { .. } | RunStep::ToolReturned { .. } => None,
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
            return Err(Error::invalid_state("the run moved on before this step"));
        }
    }
    let mut step = step;
    if let RunStep::Paused { requests } = &mut step {
        for r in requests {
            // A deadline counts from the pause, by the log's clock.
            let expires_at = r.expires_in_secs.map(|secs| w.at + secs.min(lattice_core::run::MAX_EXPIRES_IN_SECS) as i64 * 1000);
            r.expires_at = expires_at.map(crate::clock::rfc3339);
            sqlx::query("INSERT INTO run_requests (tenant, run, tool_call_id, tool_name, args, expires_at) VALUES ($1, $2, $3, $4, $5, $6)")
                .bind(w.tenant)
                .bind(run)
                .bind(&r.tool_call_id)
                .bind(&r.tool_name)
                .bind(r.args.to_string())
                .bind(expires_at)
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
        RunStep::Resumed { actor, role } => RunResumed { run_id, actor, role }.into(),
        RunStep::Finished { text } => RunFinished { run_id, text }.into(),
        RunStep::Failed { reason, failure } => RunFailed { run_id, reason, failure }.into(),
    }
}

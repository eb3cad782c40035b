//! Agent runs: start one, read its status and open requests, answer.

use axum::Json;
use axum::extract::{Path, State};
use lattice_core::{Error, RunId, ThreadId};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use super::path_id;
use crate::dto::ErrorBody;
use crate::error::ApiResult;
use crate::extract::{Body, Caller};
use crate::state::AppState;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StartRun {
    pub prompt: String,
    /// `scripted:<name>` or a configured model; the default when absent.
    #[serde(default)]
    pub model: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct RunStarted {
    pub run_id: String,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Answer {
    pub tool_call_id: String,
    /// The form's values for an ask_form; text for an ask_user.
    #[schema(value_type = Object)]
    pub answer: Value,
}

/// Starts an agent turn in a thread.
#[utoipa::path(post, path = "/v1/threads/{th}/runs", request_body = StartRun,
    responses((status = 200, body = RunStarted), (status = 403, body = ErrorBody), (status = 422, body = ErrorBody)),
    params(("th" = String, Path)), security(("bearer" = [])))]
pub async fn start(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(th): Path<String>,
    Body(req): Body<StartRun>,
) -> ApiResult<Json<RunStarted>> {
    let thread = path_id(ThreadId::parse, &th)?;
    let run = state.runner.start(&who, thread, req.prompt, req.model).await?;
    Ok(Json(RunStarted { run_id: run.to_string() }))
}

/// A run's status and its requests (answered ones say by whom).
#[utoipa::path(get, path = "/v1/runs/{run}", responses((status = 200, description = "the run"), (status = 404, body = ErrorBody)),
    params(("run" = String, Path)), security(("bearer" = [])))]
pub async fn get(State(state): State<AppState>, Caller(who): Caller, Path(run): Path<String>) -> ApiResult<Json<Value>> {
    let run = path_id(RunId::parse, &run)?;
    let view = state.log.run(&who, &run).await?;
    Ok(Json(serde_json::to_value(view).map_err(|e| Error::unavailable(e.to_string()))?))
}

/// Answers a paused run's request; the run resumes acting for the answerer.
#[utoipa::path(post, path = "/v1/runs/{run}/answers", request_body = Answer,
    responses((status = 200, description = "answered"), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody),
        (status = 423, body = ErrorBody)),
    params(("run" = String, Path)), security(("bearer" = [])))]
pub async fn answer(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(run): Path<String>,
    Body(req): Body<Answer>,
) -> ApiResult<Json<Value>> {
    let run = path_id(RunId::parse, &run)?;
    state.runner.answer(&who, &run, req.tool_call_id, req.answer).await?;
    Ok(Json(serde_json::json!({"answered": true})))
}

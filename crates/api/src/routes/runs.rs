//! Agent runs: start one, read its status and open requests, answer.

use axum::Json;
use axum::extract::{Path, State};
use lattice_core::{RunId, ThreadId};
use lattice_log::RunView;
use lattice_wire::{Answer, Answered, CompleteArgument, Completions, ErrorBody, Run, RunRequest, RunStarted, ServerOffers, StartRun};

use super::path_id;
use crate::error::ApiResult;
use crate::extract::{Body, Caller};
use crate::state::AppState;

/// Starts an agent turn in a thread. A rule names the chain the bridge
/// minted for its event; the write path refuses any other (422 on `chain`).
/// A connected server's prompt run as a command, and its resources
/// attached, are read now, in the caller's session, each within its
/// server's bound (422 naming the field and the bound, else).
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
    let runner = &state.runner;
    let context = lattice_agent::context::read(runner.connections(), &state.log, &who, &thread, req.command.as_ref(), &req.attachments).await?;
    let run = runner.start_with(&who, thread, req.prompt, req.model, req.chain, context).await?;
    Ok(Json(RunStarted { run_id: run.to_string() }))
}

/// What the connected servers on in a thread offer the caller now: their
/// prompts, to run as commands with a run, and their resources, to attach
/// to one (listed afresh each time: a server that changed them is heard).
#[utoipa::path(get, path = "/v1/threads/{th}/offers", responses((status = 200, body = ServerOffers), (status = 403, body = ErrorBody),
    (status = 404, body = ErrorBody)), params(("th" = String, Path)), security(("bearer" = [])))]
pub async fn offers(State(state): State<AppState>, Caller(who): Caller, Path(th): Path<String>) -> ApiResult<Json<ServerOffers>> {
    let thread = path_id(ThreadId::parse, &th)?;
    Ok(Json(lattice_agent::context::offers(state.runner.connections(), &state.log, &who, &thread).await?))
}

/// A run's status and its requests (answered ones say by whom).
#[utoipa::path(get, path = "/v1/runs/{run}", responses((status = 200, body = Run), (status = 404, body = ErrorBody)),
    params(("run" = String, Path)), security(("bearer" = [])))]
pub async fn get(State(state): State<AppState>, Caller(who): Caller, Path(run): Path<String>) -> ApiResult<Json<Run>> {
    let run = path_id(RunId::parse, &run)?;
    Ok(Json(run_of(state.log.run(&who, &run).await?)))
}

fn run_of(view: RunView) -> Run {
    let RunView { run, requests } = view;
    Run {
        id: run.id,
        workspace: run.workspace,
        thread: run.thread,
        status: run.status.as_str().to_owned(),
        model: run.model,
        started_by: run.started_by,
        acting_for: run.acting_for,
        acting_role: run.acting_role.as_str().to_owned(),
        requests: requests
            .into_iter()
            .map(|r| RunRequest {
                expires_at: r.expires(),
                tool_call_id: r.tool_call_id,
                tool_name: r.tool_name,
                args: r.args,
                answered_by: r.answered_by,
                answer: r.answer,
                sign_in: r.sign_in,
            })
            .collect(),
    }
}

/// Cancels a run that is running or waiting: it fails as `cancelled`, a
/// model call under way is dropped, and apps it made are told.
#[utoipa::path(post, path = "/v1/runs/{run}/cancel",
    responses((status = 200, body = Run), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    params(("run" = String, Path)), security(("bearer" = [])))]
pub async fn cancel(State(state): State<AppState>, Caller(who): Caller, Path(run): Path<String>) -> ApiResult<Json<Run>> {
    let run = path_id(RunId::parse, &run)?;
    state.runner.cancel(&who, &run).await?;
    Ok(Json(run_of(state.log.run(&who, &run).await?)))
}

/// Answers a paused run's request; the run resumes acting for the answerer,
/// or, when the answerer may not act in a run (a respondent's ask_form),
/// for whom it acted for: the answer is kept and the run goes on either way.
#[utoipa::path(post, path = "/v1/runs/{run}/answers", request_body = Answer,
    responses((status = 200, body = Answered), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody),
        (status = 423, body = ErrorBody)),
    params(("run" = String, Path)), security(("bearer" = [])))]
pub async fn answer(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(run): Path<String>,
    Body(req): Body<Answer>,
) -> ApiResult<Json<Answered>> {
    let run = path_id(RunId::parse, &run)?;
    let seq = state.runner.answer(&who, &run, req.tool_call_id, req.answer).await?;
    Ok(Json(Answered { answered: true, seq }))
}

/// What a connected server suggests for its prompt's argument as typed so
/// far (MCP `completion/complete`): none when it offers no completion.
#[utoipa::path(post, path = "/v1/threads/{th}/offers/complete", request_body = CompleteArgument,
    responses((status = 200, body = Completions), (status = 403, body = ErrorBody), (status = 422, body = ErrorBody)),
    params(("th" = String, Path)), security(("bearer" = [])))]
pub async fn complete(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(th): Path<String>,
    Body(req): Body<CompleteArgument>,
) -> ApiResult<Json<Completions>> {
    let thread = path_id(ThreadId::parse, &th)?;
    let values = lattice_agent::context::complete(state.runner.connections(), &state.log, &who, &thread, &req).await?;
    Ok(Json(Completions { values }))
}

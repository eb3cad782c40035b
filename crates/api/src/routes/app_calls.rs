//! An app's tool calls, made by lattice's chat host for the app it runs:
//! decided, audited and carried out here (`lattice-app-calls`), never in the
//! browser, by the same rule as an MCP host's: each call carries the
//! capability its host was given for the app.

use axum::Json;
use axum::extract::{Path, State};
use lattice_core::ArtifactId;

use super::path_id;
use crate::error::ApiResult;
use crate::extract::{Body, Caller};
use crate::state::AppState;
use lattice_wire::{AppCall, AppCapability, CallRecord, Confirmation, ErrorBody, Outcome, Via};

/// The capability the chat host sends with the calls of an app it shows,
/// bound to the person and the app: what an MCP host's view gets in its
/// tool result. A person's session only (an agent's token is refused).
#[utoipa::path(post, path = "/v1/artifacts/{id}/capability",
    responses((status = 200, body = AppCapability), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 423, body = ErrorBody)),
    params(("id" = String, Path)), security(("bearer" = [])))]
pub async fn capability(State(state): State<AppState>, Caller(who): Caller, Path(id): Path<String>) -> ApiResult<Json<AppCapability>> {
    let app = path_id(ArtifactId::parse, &id)?;
    Ok(Json(state.apps.host_capability(&who, &app).await?))
}

/// An app's call of one of its tools, as the person viewing it, with the
/// app's capability. Answers `{"status": "done", "result"}`,
/// `{"status": "refused", "reason"}`, or `{"status": "confirm",
/// "confirmation", "tool", "arguments"}` when the person must confirm first
/// (`POST /v1/app-calls/{confirmation}`). Every refusal of a call to a
/// known app, whatever its status, is an audit row (`lattice_app_calls`'
/// one place that records them).
#[utoipa::path(post, path = "/v1/artifacts/{id}/calls", request_body = AppCall,
    responses((status = 200, description = "done, refused, or to confirm"), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 413, body = ErrorBody), (status = 422, body = ErrorBody), (status = 423, body = ErrorBody),
        (status = 503, body = ErrorBody)),
    params(("id" = String, Path)), security(("bearer" = [])))]
pub async fn call(State(state): State<AppState>, Caller(who): Caller, Path(id): Path<String>, Body(req): Body<AppCall>) -> ApiResult<Json<Outcome>> {
    let app = path_id(ArtifactId::parse, &id)?;
    let arguments = if req.arguments.is_null() { serde_json::json!({}) } else { req.arguments };
    Ok(Json(state.apps.call(&who, req.capability.as_deref(), Some(app.as_str()), &req.tool, &arguments, Via::Chat).await?))
}

/// The person's answer to a call that asked: the recorded arguments, once.
/// Only with the person's own bearer token, which an app's frame never
/// holds (`lattice_app_calls::AppCalls::confirm` says why that makes it theirs).
#[utoipa::path(post, path = "/v1/app-calls/{confirmation}", request_body = Confirmation,
    responses((status = 200, description = "done or refused"), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody), (status = 423, body = ErrorBody), (status = 503, body = ErrorBody)),
    params(("confirmation" = String, Path)), security(("bearer" = [])))]
pub async fn confirm(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(confirmation): Path<String>,
    Body(req): Body<Confirmation>,
) -> ApiResult<Json<Outcome>> {
    Ok(Json(state.apps.confirm(&who, &confirmation, req.accept, Via::Chat).await?))
}

/// An app's calls and their decisions, newest first (the workspace's admins).
#[utoipa::path(get, path = "/v1/artifacts/{id}/calls", responses((status = 200, description = "the audit rows"), (status = 403, body = ErrorBody),
    (status = 404, body = ErrorBody)), params(("id" = String, Path)), security(("bearer" = [])))]
pub async fn list(State(state): State<AppState>, Caller(who): Caller, Path(id): Path<String>) -> ApiResult<Json<Vec<CallRecord>>> {
    let app = path_id(ArtifactId::parse, &id)?;
    Ok(Json(state.apps.calls_of(&who, &app).await?))
}

//! Taking access away (R1): members removed, listings taken off threads,
//! a person's tokens and sessions ended. Each is a command in the log, and
//! every open stream of the person it names decides again at once.

use axum::Json;
use axum::extract::{Path, State};
use lattice_core::{Command, ThreadId, UserId, WorkspaceId};

use super::path_id;
use crate::error::ApiResult;
use crate::extract::Caller;
use crate::state::AppState;
use lattice_wire::{ErrorBody, Member, Posted};

/// The workspace's members (its admins).
#[utoipa::path(get, path = "/v1/workspaces/{ws}/members", responses((status = 200, body = Vec<Member>), (status = 403, body = ErrorBody),
    (status = 404, body = ErrorBody)), params(("ws" = String, Path)), security(("bearer" = [])))]
pub async fn members(State(state): State<AppState>, Caller(who): Caller, Path(ws): Path<String>) -> ApiResult<Json<Vec<Member>>> {
    let workspace = path_id(WorkspaceId::parse, &ws)?;
    let list = state.log.members(&who, workspace.as_str()).await?;
    Ok(Json(list.into_iter().map(|m| Member { user: m.user, role: m.role.as_str().to_owned() }).collect()))
}

/// Takes a member out of the workspace and off its threads (its admins).
#[utoipa::path(delete, path = "/v1/workspaces/{ws}/members/{user}", responses((status = 200, body = Posted), (status = 403, body = ErrorBody),
    (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)), params(("ws" = String, Path), ("user" = String, Path)), security(("bearer" = [])))]
pub async fn remove_member(State(state): State<AppState>, Caller(who): Caller, Path((ws, user)): Path<(String, String)>) -> ApiResult<Json<Posted>> {
    let workspace = path_id(WorkspaceId::parse, &ws)?;
    let user = UserId::parse("user", &user)?;
    let done = state.log.execute(&who, Command::RemoveMember { workspace, user }).await?;
    Ok(Json(Posted { seq: done.seq }))
}

/// The people listed on a thread (its admins).
#[utoipa::path(get, path = "/v1/threads/{th}/members", responses((status = 200, body = Vec<Member>), (status = 403, body = ErrorBody),
    (status = 404, body = ErrorBody)), params(("th" = String, Path)), security(("bearer" = [])))]
pub async fn thread_members(State(state): State<AppState>, Caller(who): Caller, Path(th): Path<String>) -> ApiResult<Json<Vec<Member>>> {
    let thread = path_id(ThreadId::parse, &th)?;
    let list = state.log.thread_members(&who, &thread).await?;
    Ok(Json(list.into_iter().map(|m| Member { user: m.user, role: m.role.as_str().to_owned() }).collect()))
}

/// Takes a person's listing off a thread (the workspace's admins).
#[utoipa::path(delete, path = "/v1/threads/{th}/members/{user}", responses((status = 200, body = Posted), (status = 403, body = ErrorBody),
    (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)), params(("th" = String, Path), ("user" = String, Path)), security(("bearer" = [])))]
pub async fn unshare(State(state): State<AppState>, Caller(who): Caller, Path((th, user)): Path<(String, String)>) -> ApiResult<Json<Posted>> {
    let thread = path_id(ThreadId::parse, &th)?;
    let user = UserId::parse("user", &user)?;
    let done = state.log.execute(&who, Command::UnshareThread { thread, user }).await?;
    Ok(Json(Posted { seq: done.seq }))
}

/// Ends every token and session of a person of the caller's tenant ("sign
/// out everywhere"): a tenant admin for anyone, anyone for themself. What
/// they present afterwards, issued before, answers 401.
#[utoipa::path(post, path = "/v1/people/{user}/sign-out", responses((status = 200, body = Posted), (status = 403, body = ErrorBody),
    (status = 422, body = ErrorBody)), params(("user" = String, Path)), security(("bearer" = [])))]
pub async fn sign_out(State(state): State<AppState>, Caller(who): Caller, Path(user): Path<String>) -> ApiResult<Json<Posted>> {
    let user = UserId::parse("user", &user)?;
    let done = state.log.execute(&who, Command::EndSessions { user, session: None }).await?;
    Ok(Json(Posted { seq: done.seq }))
}

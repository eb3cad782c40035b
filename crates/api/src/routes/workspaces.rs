//! Workspaces, members, threads and messages.

use axum::Json;
use axum::extract::{Path, State};
use lattice_core::{Command, Error, Role, ThreadId, UserId, WorkspaceId};

use super::path_id;
use crate::error::ApiResult;
use crate::extract::{Body, Caller};
use crate::state::AppState;
use lattice_wire::{AddMember, CreateThread, CreateWorkspace, Created, ErrorBody, PostMessage, Posted, ReadMark, ShareThread, Thread, Workspace};

/// The caller's workspaces.
#[utoipa::path(get, path = "/v1/workspaces", responses((status = 200, body = Vec<Workspace>)), security(("bearer" = [])))]
pub async fn list(State(state): State<AppState>, Caller(who): Caller) -> ApiResult<Json<Vec<Workspace>>> {
    let list = state.log.workspaces(&who).await?;
    Ok(Json(list.into_iter().map(|w| Workspace { id: w.id, name: w.name, role: w.role.as_str().into() }).collect()))
}

/// Creates a workspace in the caller's tenant; the caller is its admin.
#[utoipa::path(post, path = "/v1/workspaces", request_body = CreateWorkspace,
    responses((status = 200, body = Created), (status = 422, body = ErrorBody)), security(("bearer" = [])))]
pub async fn create(State(state): State<AppState>, Caller(who): Caller, Body(req): Body<CreateWorkspace>) -> ApiResult<Json<Created>> {
    let done = state.log.execute(&who, Command::CreateWorkspace { name: req.name }).await?;
    Ok(Json(Created { id: done.id.unwrap_or_default() }))
}

/// Adds a member, or changes a member's role.
#[utoipa::path(post, path = "/v1/workspaces/{ws}/members", request_body = AddMember,
    responses((status = 200, body = Posted), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)),
    params(("ws" = String, Path)), security(("bearer" = [])))]
pub async fn add_member(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(ws): Path<String>,
    Body(req): Body<AddMember>,
) -> ApiResult<Json<Posted>> {
    let workspace = path_id(WorkspaceId::parse, &ws)?;
    let user = UserId::parse("user", &req.user)?;
    let role =
        Role::parse(&req.role).ok_or_else(|| Error::field("role", "enum", format!("{:?} is not viewer, respondent, editor or admin", req.role)))?;
    let done = state.log.execute(&who, Command::AddMember { workspace, user, role }).await?;
    Ok(Json(Posted { seq: done.seq }))
}

/// The workspace's threads the caller can read, newest first: the newest
/// 500 (`lattice_log::THREADS_LISTED_MAX`).
#[utoipa::path(get, path = "/v1/workspaces/{ws}/threads", responses((status = 200, body = Vec<Thread>)),
    params(("ws" = String, Path)), security(("bearer" = [])))]
pub async fn threads(State(state): State<AppState>, Caller(who): Caller, Path(ws): Path<String>) -> ApiResult<Json<Vec<Thread>>> {
    let list = state.log.threads(&who, &ws).await?;
    Ok(Json(list.into_iter().map(|t| thread_of(t, None)).collect()))
}

/// Starts a thread.
#[utoipa::path(post, path = "/v1/workspaces/{ws}/threads", request_body = CreateThread,
    responses((status = 200, body = Created), (status = 403, body = ErrorBody)), params(("ws" = String, Path)), security(("bearer" = [])))]
pub async fn create_thread(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(ws): Path<String>,
    Body(req): Body<CreateThread>,
) -> ApiResult<Json<Created>> {
    let workspace = path_id(WorkspaceId::parse, &ws)?;
    let done = state.log.execute(&who, Command::CreateThread { workspace, title: req.title, restricted: req.restricted }).await?;
    Ok(Json(Created { id: done.id.unwrap_or_default() }))
}

fn thread_of(t: lattice_log::ThreadSummary, role: Option<Role>) -> Thread {
    Thread {
        id: t.id,
        workspace: t.workspace,
        title: t.title,
        created_by: t.created_by,
        created_at: t.created_at,
        restricted: t.restricted,
        role: role.map(|r| r.as_str().to_owned()),
        unread: t.unread,
    }
}

/// Marks the thread read by the caller as far as `seq` (the last envelope
/// it had in view): never back, never past the thread's last envelope.
/// Answers the mark as it now stands. Reading commands nothing: the mark is
/// kept beside the log, not in it.
#[utoipa::path(put, path = "/v1/threads/{th}/read", request_body = ReadMark,
    responses((status = 200, body = ReadMark), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)),
    params(("th" = String, Path)), security(("bearer" = [])))]
pub async fn mark_read(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(th): Path<String>,
    Body(req): Body<ReadMark>,
) -> ApiResult<Json<ReadMark>> {
    let thread = path_id(ThreadId::parse, &th)?;
    let seq = state.log.mark_read(&who, &thread, req.seq).await?;
    Ok(Json(ReadMark { seq }))
}

/// A thread the caller can read, with the caller's role in it.
#[utoipa::path(get, path = "/v1/threads/{th}", responses((status = 200, body = Thread), (status = 404, body = ErrorBody)),
    params(("th" = String, Path)), security(("bearer" = [])))]
pub async fn thread(State(state): State<AppState>, Caller(who): Caller, Path(th): Path<String>) -> ApiResult<Json<Thread>> {
    let thread = path_id(ThreadId::parse, &th)?;
    let found = state.log.thread(&who, &thread).await?;
    Ok(Json(thread_of(found.thread, Some(found.role))))
}

/// The threads the caller is listed on: shared with it from outside its
/// workspaces, or restricted threads it is a member of.
#[utoipa::path(get, path = "/v1/threads", responses((status = 200, body = Vec<Thread>)), security(("bearer" = [])))]
pub async fn listed(State(state): State<AppState>, Caller(who): Caller) -> ApiResult<Json<Vec<Thread>>> {
    let list = state.log.listed_threads(&who).await?;
    Ok(Json(list.into_iter().map(|t| thread_of(t.thread, Some(t.role))).collect()))
}

/// Lists a person on a thread (workspace admins): on a restricted thread,
/// who sees it and as what; on any thread, someone outside the workspace
/// it is shared with, as viewer or respondent.
#[utoipa::path(post, path = "/v1/threads/{th}/members", request_body = ShareThread,
    responses((status = 200, body = Posted), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)),
    params(("th" = String, Path)), security(("bearer" = [])))]
pub async fn share(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(th): Path<String>,
    Body(req): Body<ShareThread>,
) -> ApiResult<Json<Posted>> {
    let thread = path_id(ThreadId::parse, &th)?;
    let user = UserId::parse("user", &req.user)?;
    let role = Role::parse(&req.role)
        .filter(|r| *r != Role::Admin)
        .ok_or_else(|| Error::field("role", "enum", format!("{:?} is not viewer, respondent or editor", req.role)))?;
    let done = state.log.execute(&who, Command::ShareThread { thread, user, role }).await?;
    Ok(Json(Posted { seq: done.seq }))
}

/// Posts a message; answers with its sequence number in the log.
#[utoipa::path(post, path = "/v1/threads/{th}/messages", request_body = PostMessage,
    responses((status = 200, body = Posted), (status = 403, body = ErrorBody)), params(("th" = String, Path)), security(("bearer" = [])))]
pub async fn post_message(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(th): Path<String>,
    Body(req): Body<PostMessage>,
) -> ApiResult<Json<Posted>> {
    let thread = path_id(ThreadId::parse, &th)?;
    let done = state.log.execute(&who, Command::PostMessage { thread: thread.clone(), text: req.text.clone() }).await?;
    // A message answers the thread's waiting ask_user requests (never an ask_form).
    state.runner.message_posted(&who, &thread, &req.text).await?;
    Ok(Json(Posted { seq: done.seq }))
}

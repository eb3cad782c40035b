//! Artifacts: create, read any version, edit by JSON Patch, archive, list.

use axum::Json;
use axum::extract::{Path, State};
use lattice_core::{ArtifactId, Command, Error, ThreadId};
use serde::Deserialize;

use super::path_id;
use crate::error::ApiResult;
use crate::extract::{Body, Caller, Query};
use crate::state::AppState;
use lattice_wire::{AppContext, AppContextKept, Archived, Artifact, CreateArtifact, EditArtifact, ErrorBody, Versioned};

/// Creates an artifact in a thread. An id that exists is refused (409).
#[utoipa::path(post, path = "/v1/threads/{th}/artifacts", request_body = CreateArtifact,
    responses((status = 200, body = Versioned), (status = 409, body = ErrorBody), (status = 413, body = ErrorBody),
        (status = 422, body = ErrorBody), (status = 423, body = ErrorBody)),
    params(("th" = String, Path)), security(("bearer" = [])))]
pub async fn create(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(th): Path<String>,
    Body(req): Body<CreateArtifact>,
) -> ApiResult<Json<Versioned>> {
    let thread = path_id(ThreadId::parse, &th)?;
    let id = req.id.as_deref().map(|id| ArtifactId::parse("id", id)).transpose()?;
    let done = state.log.execute(&who, Command::CreateArtifact { thread, id, kind: req.kind, data: req.data }).await?;
    Ok(Json(Versioned {
        id: done.id.unwrap_or_default(),
        version: done.version.unwrap_or(1),
        digest: done.digest.unwrap_or_default(),
        seq: done.seq,
    }))
}

#[derive(Debug, Deserialize)]
pub struct VersionQuery {
    version: Option<u64>,
}

/// An artifact's head, or `?version=N`.
#[utoipa::path(get, path = "/v1/artifacts/{id}", responses((status = 200, body = Artifact), (status = 404, body = ErrorBody)),
    params(("id" = String, Path), ("version" = Option<u64>, Query)), security(("bearer" = [])))]
pub async fn get(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(id): Path<String>,
    Query(q): Query<VersionQuery>,
) -> ApiResult<Json<Artifact>> {
    let id = path_id(ArtifactId::parse, &id)?;
    Ok(Json(artifact_of(state.log.artifact(&who, &id, q.version).await?)))
}

/// Edits an artifact with a JSON Patch against `expected_version`.
#[utoipa::path(patch, path = "/v1/artifacts/{id}", request_body = EditArtifact,
    responses((status = 200, body = Versioned), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)),
    params(("id" = String, Path)), security(("bearer" = [])))]
pub async fn edit(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(id): Path<String>,
    Body(req): Body<EditArtifact>,
) -> ApiResult<Json<Versioned>> {
    let id = path_id(ArtifactId::parse, &id)?;
    let patch: json_patch::Patch = serde_json::from_value(req.patch)
        .map_err(|e| Error::field("patch", "type", format!("not an RFC 6902 patch: {}", e.to_string().split(" at line ").next().unwrap_or(""))))?;
    let done = state.log.execute(&who, Command::EditArtifact { id, expected_version: req.expected_version, patch }).await?;
    Ok(Json(Versioned {
        id: done.id.unwrap_or_default(),
        version: done.version.unwrap_or_default(),
        digest: done.digest.unwrap_or_default(),
        seq: done.seq,
    }))
}

/// Archives an artifact (its author or a workspace admin).
#[utoipa::path(post, path = "/v1/artifacts/{id}/archive", responses((status = 200, body = Archived), (status = 403, body = ErrorBody)),
    params(("id" = String, Path)), security(("bearer" = [])))]
pub async fn archive(State(state): State<AppState>, Caller(who): Caller, Path(id): Path<String>) -> ApiResult<Json<Archived>> {
    let id = path_id(ArtifactId::parse, &id)?;
    let done = state.log.execute(&who, Command::ArchiveArtifact { id }).await?;
    Ok(Json(Archived { id: done.id.unwrap_or_default(), version: done.version.unwrap_or_default(), archived: true }))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    kind: Option<String>,
    form_id: Option<String>,
}

/// A thread's artifacts, optionally of one kind or submitted to one form.
#[utoipa::path(get, path = "/v1/threads/{th}/artifacts", responses((status = 200, body = Vec<Artifact>)),
    params(("th" = String, Path), ("kind" = Option<String>, Query), ("form_id" = Option<String>, Query)), security(("bearer" = [])))]
pub async fn list(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(th): Path<String>,
    Query(q): Query<ListQuery>,
) -> ApiResult<Json<Vec<Artifact>>> {
    let thread = path_id(ThreadId::parse, &th)?;
    let rows = state.log.artifacts(&who, &thread, q.kind.as_deref(), q.form_id.as_deref()).await?;
    Ok(Json(rows.into_iter().map(artifact_of).collect()))
}

fn artifact_of(r: lattice_log::ArtifactRow) -> Artifact {
    Artifact {
        id: r.id,
        kind: r.kind,
        thread: r.thread,
        version: r.version,
        data: r.data,
        author: r.author,
        archived: r.archived,
        digest: r.digest,
        created_at: lattice_log::rfc3339(r.created_at),
        updated_at: lattice_log::rfc3339(r.updated_at),
    }
}

/// An app tells the agent what it shows (MCP Apps' `ui/update-model-context`):
/// the last one per app is what the thread's next model call reads, fenced
/// as untrusted data. Editors only; governed by the mini-apps switch.
#[utoipa::path(put, path = "/v1/artifacts/{id}/context", request_body = AppContext,
    responses((status = 200, body = AppContextKept), (status = 403, body = ErrorBody), (status = 422, body = ErrorBody), (status = 423, body = ErrorBody)),
    params(("id" = String, Path)), security(("bearer" = [])))]
pub async fn set_context(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(id): Path<String>,
    Body(req): Body<AppContext>,
) -> ApiResult<Json<AppContextKept>> {
    let artifact = path_id(ArtifactId::parse, &id)?;
    let done = state.log.execute(&who, Command::SetAppContext { artifact, text: req.text, structured: req.structured }).await?;
    Ok(Json(AppContextKept { seq: done.seq }))
}

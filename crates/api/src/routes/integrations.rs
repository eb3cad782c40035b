//! The Integrations switch: effective values, setting a level, the audit.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::{Path, State};
use lattice_core::{Command, Error, Level, SwitchKey, SwitchState};
use serde::Deserialize;

use crate::dto::{AuditEntry, EffectiveValue, ErrorBody, SetSwitch};
use crate::error::ApiResult;
use crate::extract::{Body, Caller, Query};
use crate::state::AppState;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceQuery {
    workspace: String,
}

/// Each key's effective value in a workspace, and why.
#[utoipa::path(get, path = "/v1/integrations/effective", responses((status = 200, body = BTreeMap<String, EffectiveValue>)),
    params(("workspace" = String, Query)), security(("bearer" = [])))]
pub async fn effective(
    State(state): State<AppState>,
    Caller(who): Caller,
    Query(q): Query<WorkspaceQuery>,
) -> ApiResult<Json<BTreeMap<String, EffectiveValue>>> {
    let map = state.log.effective(&who, &q.workspace).await?;
    Ok(Json(
        map.into_iter()
            .map(|(k, e)| (k.as_str().to_owned(), EffectiveValue { enabled: e.enabled, because: e.because }))
            .collect(),
    ))
}

/// Sets one level's state for one key, with a reason (an admin of that level).
#[utoipa::path(put, path = "/v1/integrations/{level}/{key}", request_body = SetSwitch,
    responses((status = 200, description = "set"), (status = 403, body = ErrorBody), (status = 422, body = ErrorBody)),
    params(("level" = String, Path, description = "deployment | tenant:{id} | workspace:{id}"), ("key" = String, Path)),
    security(("bearer" = [])))]
pub async fn set(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path((level, key)): Path<(String, String)>,
    Body(req): Body<SetSwitch>,
) -> ApiResult<Json<serde_json::Value>> {
    let level = Level::parse(&level).map_err(|_| Error::NotFound)?;
    let key = SwitchKey::parse(&key).ok_or(Error::NotFound)?;
    let state_value = SwitchState::parse(&req.state)
        .ok_or_else(|| Error::field("state", "enum", format!("{:?} is not on, off or unset", req.state)))?;
    let done = state
        .log
        .execute(&who, Command::SetSwitch { level, key, state: state_value, reason: req.reason })
        .await?;
    Ok(Json(serde_json::json!({"seq": done.seq})))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditQuery {
    tenant: Option<String>,
    workspace: Option<String>,
}

/// The switch changes the caller administers, oldest first.
#[utoipa::path(get, path = "/v1/integrations/audit", responses((status = 200, body = Vec<AuditEntry>)),
    params(("tenant" = Option<String>, Query), ("workspace" = Option<String>, Query)), security(("bearer" = [])))]
pub async fn audit(
    State(state): State<AppState>,
    Caller(who): Caller,
    Query(q): Query<AuditQuery>,
) -> ApiResult<Json<Vec<AuditEntry>>> {
    let rows = state.log.audit(&who, q.tenant.as_deref(), q.workspace.as_deref()).await?;
    Ok(Json(
        rows.into_iter()
            .map(|r| AuditEntry {
                seq: r.seq,
                at: r.at,
                actor: r.actor,
                level: r.level,
                key: r.key,
                old: r.old,
                new: r.new,
                reason: r.reason,
            })
            .collect(),
    ))
}

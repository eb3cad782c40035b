//! The log's seal over HTTP (docs/SEAL.md): the deployment's public key,
//! which a verifier is given, and the receipt of an envelope.

use axum::Json;
use axum::extract::{Path, State};
use serde_json::Value;

use crate::error::ApiResult;
use crate::extract::Caller;
use crate::state::AppState;
use lattice_wire::{ErrorBody, SealKeyView};

/// The key the log's checkpoints are signed with: public, for anyone who
/// verifies an export or a receipt (`lattice verify --key`).
#[utoipa::path(get, path = "/v1/checkpoint-key", responses((status = 200, body = SealKeyView)))]
pub async fn key(State(state): State<AppState>) -> Json<SealKeyView> {
    let key = state.log.authenticator().seal_key();
    Json(SealKeyView { key_id: key.id(), public_key: key.public_hex() })
}

/// The receipt of the envelope `seq`, for whoever may read where it was
/// written: `{envelope, seal, checkpoint}`, which `lattice verify EXPORT
/// --receipt FILE --key KEY` checks offline. 409 until it is sealed (a
/// moment after its commit).
#[utoipa::path(get, path = "/v1/receipts/{seq}", responses((status = 200, body = Object), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    params(("seq" = i64, Path)), security(("bearer" = [])))]
pub async fn receipt(State(state): State<AppState>, Caller(who): Caller, Path(seq): Path<i64>) -> ApiResult<Json<Value>> {
    let receipt = state.log.receipt(&who, seq).await?;
    Ok(Json(serde_json::to_value(receipt).expect("a receipt serializes")))
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointsQuery {
    /// Those after the chain's `after`th envelope.
    #[serde(default)]
    after: i64,
}

/// A workspace's signed checkpoints (docs/SEAL.md), oldest first, at most
/// 1000 after its chain's `after`th envelope, for whoever may read the
/// workspace: what a copy held elsewhere keeps, to witness them.
#[utoipa::path(get, path = "/v1/workspaces/{ws}/checkpoints", responses((status = 200, body = Object), (status = 404, body = ErrorBody)),
    params(("ws" = String, Path), ("after" = Option<i64>, Query)), security(("bearer" = [])))]
pub async fn checkpoints(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(ws): Path<String>,
    crate::extract::Query(q): crate::extract::Query<CheckpointsQuery>,
) -> ApiResult<Json<Value>> {
    let listed = state.log.checkpoints(&who, &ws, q.after).await?;
    Ok(Json(serde_json::to_value(listed).expect("checkpoints serialize")))
}

/// A workspace's newest signed checkpoint, for whoever may read the
/// workspace; 409 while nothing of it is sealed yet.
#[utoipa::path(get, path = "/v1/workspaces/{ws}/checkpoints/latest", responses((status = 200, body = Object), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    params(("ws" = String, Path)), security(("bearer" = [])))]
pub async fn latest(State(state): State<AppState>, Caller(who): Caller, Path(ws): Path<String>) -> ApiResult<Json<Value>> {
    let latest = state.log.latest_checkpoint(&who, &ws).await?;
    Ok(Json(serde_json::to_value(latest).expect("a checkpoint serializes")))
}

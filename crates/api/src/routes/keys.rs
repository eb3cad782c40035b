//! Credentials an admin issues (R6): API keys for agents (a tenant's
//! admins, or a workspace's for a key of that workspace) and the tokens a
//! SCIM client provisions the tenant's directory with (its admins). Each
//! is shown once when made; only its digest is kept; revoked at once.

use axum::Json;
use axum::extract::{Path, State};
use lattice_core::directory::KeyScope;
use lattice_core::{Command, Error, Role, TenantRole, UserId, WorkspaceId};
use lattice_log::CredentialRow;

use crate::error::ApiResult;
use crate::extract::{Body, Caller};
use crate::state::AppState;
use lattice_wire::{ApiKeyCreated, ApiKeyView, CreateApiKey, ErrorBody, Posted, ScimTokenCreated, ScimTokenView};

/// The longest an API key may be made to last.
const MAX_KEY_DAYS: u32 = 3650;

/// Makes an API key for an agent: shown once in the answer.
#[utoipa::path(post, path = "/v1/api-keys", request_body = CreateApiKey, responses((status = 200, body = ApiKeyCreated),
    (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn create(State(state): State<AppState>, Caller(who): Caller, Body(req): Body<CreateApiKey>) -> ApiResult<Json<ApiKeyCreated>> {
    let scope = match &req.workspace {
        None => KeyScope::Tenant {
            role: match req.role.as_str() {
                "member" => TenantRole::Member,
                "tenant_admin" => TenantRole::TenantAdmin,
                other => {
                    return Err(Error::field("role", "enum", format!("{other:?}: a key of the whole tenant is a member or a tenant_admin")).into());
                }
            },
        },
        Some(ws) => KeyScope::Workspace {
            workspace: WorkspaceId::parse("workspace", ws)?,
            role: Role::parse(&req.role).ok_or_else(|| {
                Error::field("role", "enum", format!("{:?}: a key of a workspace is a viewer, respondent, editor or admin there", req.role))
            })?,
        },
    };
    let expires_at = match req.expires_in_days {
        None => None,
        Some(days) if (1..=MAX_KEY_DAYS).contains(&days) => Some(state.log.clock().now_ms() + i64::from(days) * 86_400_000),
        Some(days) => return Err(Error::field("expires_in_days", "maximum", format!("{days}: a key lasts 1 to {MAX_KEY_DAYS} days")).into()),
    };
    let (id, key) = state.log.create_api_key(&who, req.name, scope, expires_at).await?;
    Ok(Json(ApiKeyCreated { id, key }))
}

fn time(ms: Option<i64>) -> Option<String> {
    ms.map(lattice_log::rfc3339)
}

fn key_view(row: CredentialRow) -> ApiKeyView {
    let (role, workspace) = match &row.scope {
        Some(KeyScope::Tenant { role }) => (role.as_str().to_owned(), None),
        Some(KeyScope::Workspace { workspace, role }) => (role.as_str().to_owned(), Some(workspace.to_string())),
        None => (String::new(), None),
    };
    ApiKeyView {
        id: row.id,
        name: row.name,
        role,
        workspace,
        created_by: row.created_by,
        created_at: lattice_log::rfc3339(row.created_at),
        expires_at: time(row.expires_at),
        last_used_at: time(row.last_used_at),
        revoked_at: time(row.revoked_at),
    }
}

/// The API keys the caller may see: the tenant's for its admins, a
/// workspace's for its admins.
#[utoipa::path(get, path = "/v1/api-keys", responses((status = 200, body = Vec<ApiKeyView>), (status = 403, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn list(State(state): State<AppState>, Caller(who): Caller) -> ApiResult<Json<Vec<ApiKeyView>>> {
    Ok(Json(state.log.api_keys(&who).await?.into_iter().map(key_view).collect()))
}

/// Revokes an API key: the next request with it answers 401.
#[utoipa::path(delete, path = "/v1/api-keys/{id}", responses((status = 200, body = Posted), (status = 403, body = ErrorBody),
    (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)), params(("id" = String, Path)), security(("bearer" = [])))]
pub async fn revoke(State(state): State<AppState>, Caller(who): Caller, Path(id): Path<String>) -> ApiResult<Json<Posted>> {
    let id = UserId::parse("id", &id).map_err(|_| Error::NotFound)?;
    let done = state.log.execute(&who, Command::RevokeApiKey { id }).await?;
    Ok(Json(Posted { seq: done.seq }))
}

/// Issues a token for the tenant's SCIM client: shown once in the answer.
#[utoipa::path(post, path = "/v1/scim-tokens", responses((status = 200, body = ScimTokenCreated), (status = 403, body = ErrorBody),
    (status = 409, body = ErrorBody)), security(("bearer" = [])))]
pub async fn create_scim_token(State(state): State<AppState>, Caller(who): Caller) -> ApiResult<Json<ScimTokenCreated>> {
    let (id, token) = state.log.issue_scim_token(&who).await?;
    Ok(Json(ScimTokenCreated { id, token }))
}

/// The tenant's SCIM tokens (its admins).
#[utoipa::path(get, path = "/v1/scim-tokens", responses((status = 200, body = Vec<ScimTokenView>), (status = 403, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn list_scim_tokens(State(state): State<AppState>, Caller(who): Caller) -> ApiResult<Json<Vec<ScimTokenView>>> {
    let rows = state.log.scim_tokens(&who).await?;
    Ok(Json(
        rows.into_iter()
            .map(|row| ScimTokenView {
                id: row.id,
                created_by: row.created_by,
                created_at: lattice_log::rfc3339(row.created_at),
                last_used_at: time(row.last_used_at),
                revoked_at: time(row.revoked_at),
            })
            .collect(),
    ))
}

/// Revokes a SCIM token: the client's next request answers 401.
#[utoipa::path(delete, path = "/v1/scim-tokens/{id}", responses((status = 200, body = Posted), (status = 403, body = ErrorBody),
    (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)), params(("id" = String, Path)), security(("bearer" = [])))]
pub async fn revoke_scim_token(State(state): State<AppState>, Caller(who): Caller, Path(id): Path<String>) -> ApiResult<Json<Posted>> {
    if id.len() > 64 {
        return Err(Error::NotFound.into());
    }
    let done = state.log.execute(&who, Command::RevokeScimToken { id }).await?;
    Ok(Json(Posted { seq: done.seq }))
}

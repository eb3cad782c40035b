//! Health, readiness, the caller, and dev sign-in.

use axum::Json;
use axum::extract::State;
use lattice_core::{Error, Principal, TenantId, TenantRole, UserId};

use crate::error::ApiResult;
use crate::extract::{Body, Caller};
use crate::state::AppState;
use lattice_wire::{DevTokenRequest, ErrorBody, Me, TokenResponse};

/// Alive.
#[utoipa::path(get, path = "/healthz", responses((status = 200, description = "alive")))]
pub async fn healthz() -> &'static str {
    "ok"
}

/// Ready: the database answers, and the log has been looked at since the
/// process started (a read before would see none of it).
#[utoipa::path(get, path = "/readyz", responses((status = 200, description = "ready"), (status = 503, body = ErrorBody)))]
pub async fn readyz(State(state): State<AppState>) -> ApiResult<&'static str> {
    state.log.ping().await?;
    if !state.log.horizon().has_looked(std::time::Duration::from_secs(1)).await {
        return Err(Error::unavailable("the log has not been read yet").into());
    }
    if let Some(ready) = &state.readiness {
        ready().map_err(Error::unavailable)?;
    }
    Ok("ready")
}

/// Mints a token (embedded and local profiles only; 404 in production).
#[utoipa::path(post, path = "/v1/dev/token", request_body = DevTokenRequest,
    responses((status = 200, body = TokenResponse), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn dev_token(State(state): State<AppState>, Body(req): Body<DevTokenRequest>) -> ApiResult<Json<TokenResponse>> {
    if !state.dev_sign_in {
        return Err(Error::NotFound.into());
    }
    let role = match req.role.as_deref() {
        None | Some("member") => TenantRole::Member,
        Some("tenant_admin") => TenantRole::TenantAdmin,
        Some("deployment_admin") => TenantRole::DeploymentAdmin,
        Some(other) => {
            return Err(Error::field("role", "enum", format!("{other:?} is not member, tenant_admin or deployment_admin")).into());
        }
    };
    let principal = Principal {
        tenant: TenantId::parse("tenant", &req.tenant)?,
        user: UserId::parse("user", &req.user)?,
        role,
        agent: req.agent,
        run: None,
        within: None,
        scope: None,
    };
    Ok(Json(TokenResponse { token: state.log.authenticator().mint(&principal) }))
}

/// Who the token says the caller is.
#[utoipa::path(get, path = "/v1/me", responses((status = 200, body = Me), (status = 401, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn me(Caller(who): Caller) -> Json<Me> {
    let p = who.principal();
    Json(Me { tenant: p.tenant.to_string(), user: p.user.to_string(), role: p.role.as_str().into(), agent: p.agent })
}

/// Any path `/v1` does not have (404 `NotFound`), and a path it has asked
/// with a method it does not serve there (405 `MethodNotAllowed`, with
/// `Allow`): the fallbacks every HTTP surface refuses with.
pub use lattice_http::error::{method_not_allowed, not_found};

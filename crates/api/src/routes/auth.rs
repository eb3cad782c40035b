//! Signing in with the company's identity provider (R6): the providers a
//! person may pick, the authorization code flow with PKCE (the server
//! holds the verifier, the nonce and the client secret; the browser only
//! travels), the one-time code the chat trades for a short-lived token,
//! its renewal while the person is active, signing out here and at the
//! provider, and the provider's back-channel logout. The flow is
//! `lattice-identity`'s; who the person is in lattice, the log's.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use lattice_core::Error;
use lattice_core::directory::SignedInPerson;
use lattice_identity::Providers;
use serde::Deserialize;

use crate::error::{ApiError, ApiResult};
use crate::extract::{Body, Caller, Query};
use crate::state::AppState;
use lattice_wire::{AuthProvider, ErrorBody, RedeemSignIn, SessionTokenView, SignedOut};

/// The bytes of a back-channel logout request read at most.
const LOGOUT_BODY_MAX: usize = 16 * 1024;

fn providers(state: &AppState) -> Result<&Providers, Error> {
    state.identity.as_ref().filter(|p| !p.is_empty()).ok_or(Error::NotFound)
}

/// Where a provider sends the person back: registered with the provider
/// as the client's redirect URI.
pub fn callback_uri(portal_origin: &str, provider: &str) -> String {
    format!("{}/v1/auth/oidc/{provider}/callback", portal_origin.trim_end_matches('/'))
}

fn start_path(provider: &str) -> String {
    format!("/v1/auth/oidc/{provider}/start")
}

/// The identity providers a person may sign in with (no token needed).
#[utoipa::path(get, path = "/v1/auth/providers", responses((status = 200, body = Vec<AuthProvider>)))]
pub async fn list(State(state): State<AppState>) -> Json<Vec<AuthProvider>> {
    let list = state.identity.as_ref().map(Providers::list).unwrap_or_default();
    Json(list.into_iter().map(|p| AuthProvider { start: start_path(&p.name), name: p.name, title: p.title }).collect())
}

/// What a page that begins a sign-in may say: the digest (SHA-256, hex) of
/// a secret it keeps, which the code the sign-in ends with is traded
/// with, so only the page that began it signs in.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StartQuery {
    #[serde(default)]
    binding: Option<String>,
}

/// Begins a person's sign-in: redirects (303) to the provider.
#[utoipa::path(get, path = "/v1/auth/oidc/{name}/start", params(("name" = String, Path), ("binding" = Option<String>, Query)),
    responses((status = 303, description = "to the provider's authorization endpoint"), (status = 404, body = ErrorBody),
    (status = 422, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn start(State(state): State<AppState>, Path(name): Path<String>, Query(q): Query<StartQuery>) -> ApiResult<Response> {
    let providers = providers(&state)?;
    if let Some(binding) = &q.binding
        && (binding.len() != 64 || !binding.bytes().all(|b| b.is_ascii_hexdigit()))
    {
        return Err(Error::field("binding", "pattern", "the digest of the page's secret: 64 hex digits").into());
    }
    let begun = providers.begin(&name, &callback_uri(&state.portal_origin, &name)).await?;
    state.log.begin_sign_in(begun.state.clone(), &name, begun.nonce.clone(), begun.pkce_verifier.clone(), q.binding).await?;
    Ok(redirect(&begun.authorize_url))
}

fn redirect(to: &str) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    if let Ok(location) = HeaderValue::from_str(to) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    no_store(response)
}

fn no_store(mut response: Response) -> Response {
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response.headers_mut().insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

/// What a provider sends the person back with.
#[derive(Debug, Deserialize)]
pub struct CallbackQuery {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
    /// RFC 9207: the issuer that answered, where the provider says it.
    iss: Option<String>,
}

/// Where a provider sends the person back: the code exchanged, the ID
/// token verified, the person signed in; the browser goes on to the chat
/// with a one-time code (`/#signin=…`), or the reason it did not
/// (`/#signin_error=…`).
#[utoipa::path(get, path = "/v1/auth/oidc/{name}/callback", params(("name" = String, Path)),
    responses((status = 303, description = "to the chat, with a one-time code or the reason the sign-in failed")))]
pub async fn callback(State(state): State<AppState>, Path(name): Path<String>, axum::extract::RawQuery(raw): axum::extract::RawQuery) -> Response {
    let back = |fragment: String| redirect(&format!("{}/#{fragment}", state.portal_origin.trim_end_matches('/')));
    match finish(&state, &name, raw.as_deref().unwrap_or_default()).await {
        Ok(code) => back(format!("signin={code}")),
        Err(e) => {
            tracing::info!(provider = %name, reason = %e, "a sign-in did not finish");
            // What the chat shows the person.
            let reason = match e {
                Error::Unauthorized { reason, .. } => reason,
                other => other.to_string(),
            };
            back(format!("signin_error={}", url::form_urlencoded::byte_serialize(reason.as_bytes()).collect::<String>()))
        }
    }
}

async fn finish(state: &AppState, name: &str, raw: &str) -> Result<String, Error> {
    if raw.len() > 8 * 1024 {
        return Err(Error::malformed(lattice_core::Code::MalformedCallback, "the provider's answer is too long"));
    }
    let q: CallbackQuery = serde_urlencoded_from(raw)?;
    if let Some(error) = q.error {
        let detail = q.error_description.unwrap_or_default();
        return Err(Error::unauthorized(
            lattice_core::Code::SignInFailed,
            format!("the provider refused the sign-in: {} {}", cut(&error), cut(&detail)),
        ));
    }
    let (Some(code), Some(sign_in)) = (q.code, q.state) else {
        return Err(Error::malformed(lattice_core::Code::MalformedCallback, "the provider's answer has no code or no state"));
    };
    let providers = providers(state)?;
    // A mix-up: another provider's answer brought to this one's callback.
    if let Some(iss) = &q.iss
        && providers.issuer(name) != Some(iss.as_str())
    {
        return Err(Error::unauthorized(lattice_core::Code::SignInFailed, format!("the answer came from another issuer than provider {name}'s")));
    }
    let attempt = state.log.take_sign_in(&sign_in).await?;
    if attempt.provider != name {
        return Err(Error::unauthorized(lattice_core::Code::SignInFailed, "the sign-in was begun with another provider"));
    }
    let signed = providers.finish(name, &code, &attempt.verifier, &attempt.nonce, &callback_uri(&state.portal_origin, name)).await?;
    let person = SignedInPerson {
        provider: signed.provider.clone(),
        user_name: signed.user.to_string(),
        display_name: signed.name.clone(),
        email: signed.email.clone(),
        groups: signed.groups.clone(),
    };
    state.log.sign_in(&signed.tenant, person, &signed.subject, signed.provider_sid.as_deref(), attempt.binding.as_deref()).await
}

/// A query string read as pairs: the provider's, which may carry more
/// than lattice reads (`iss`, `session_state`).
fn serde_urlencoded_from(raw: &str) -> Result<CallbackQuery, Error> {
    let mut q = CallbackQuery { code: None, state: None, error: None, error_description: None, iss: None };
    for (key, value) in url::form_urlencoded::parse(raw.as_bytes()) {
        let slot = match key.as_ref() {
            "code" => &mut q.code,
            "state" => &mut q.state,
            "error" => &mut q.error,
            "error_description" => &mut q.error_description,
            "iss" => &mut q.iss,
            _ => continue,
        };
        *slot = Some(value.into_owned());
    }
    Ok(q)
}

fn cut(value: &str) -> String {
    value.chars().filter(|c| !c.is_control()).take(200).collect()
}

fn session_view(t: lattice_log::SessionToken) -> SessionTokenView {
    SessionTokenView { token: t.token, expires_in: t.expires_in, session_ends_at: lattice_log::rfc3339(t.session_ends_at) }
}

/// Trades a sign-in's one-time code (and the secret of the page that began
/// it) for the session's first token. Once; within a minute.
#[utoipa::path(post, path = "/v1/auth/session", request_body = RedeemSignIn, responses((status = 200, body = SessionTokenView),
    (status = 401, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn session(State(state): State<AppState>, Body(req): Body<RedeemSignIn>) -> ApiResult<Response> {
    let token = state.log.redeem_sign_in(&req.code, req.binding.as_deref()).await?;
    Ok(no_store(Json(session_view(token)).into_response()))
}

/// A new token for the caller's sign-in session, while it stands: the chat
/// asks before its token runs out while the person is active.
#[utoipa::path(post, path = "/v1/auth/renew", responses((status = 200, body = SessionTokenView), (status = 401, body = ErrorBody),
    (status = 409, body = ErrorBody)), security(("bearer" = [])))]
pub async fn renew(State(state): State<AppState>, Caller(who): Caller) -> ApiResult<Response> {
    let token = state.log.renew_session(&who).await?;
    Ok(no_store(Json(session_view(token)).into_response()))
}

/// Signs the caller's sign-in session out: its tokens refused and its
/// streams ended at once. Answers where to send the browser so the
/// provider ends its own session too (RP-initiated logout).
#[utoipa::path(post, path = "/v1/auth/sign-out", responses((status = 200, body = SignedOut), (status = 401, body = ErrorBody),
    (status = 409, body = ErrorBody)), security(("bearer" = [])))]
pub async fn sign_out(State(state): State<AppState>, Caller(who): Caller) -> ApiResult<Json<SignedOut>> {
    let provider = state.log.end_session(&who).await?;
    let end_session_url = match (provider, state.identity.as_ref()) {
        (Some(name), Some(providers)) => providers.end_session_url(&name, &format!("{}/", state.portal_origin.trim_end_matches('/'))).await,
        _ => None,
    };
    Ok(Json(SignedOut { end_session_url }))
}

/// A provider's back-channel logout (OpenID Connect Back-Channel Logout
/// 1.0): a `logout_token` form field, verified; the people its session
/// signed in are signed out everywhere at once. 200 with no body; 400 with
/// the spec's `{error, error_description}` when the token does not verify.
#[utoipa::path(post, path = "/v1/auth/oidc/{name}/backchannel-logout", params(("name" = String, Path)),
    responses((status = 200, description = "signed out"), (status = 400, description = "the logout token was refused"), (status = 404, body = ErrorBody)))]
pub async fn backchannel_logout(State(state): State<AppState>, Path(name): Path<String>, req: axum::extract::Request) -> Response {
    let headers = req.headers().clone();
    let declared = lattice_http::error::declared_length(&headers);
    let body = match lattice_http::error::read_within(req.into_body(), declared, LOGOUT_BODY_MAX).await {
        Ok(body) => body,
        Err(e) => return ApiError(e).into_response(),
    };
    match logout(&state, &name, &headers, &body).await {
        Ok(_) => no_store(StatusCode::OK.into_response()),
        Err(Error::NotFound) => ApiError(Error::NotFound).into_response(),
        Err(e @ (Error::Unauthorized { .. } | Error::Malformed { .. })) => {
            let body = serde_json::json!({"error": "invalid_request", "error_description": e.to_string()});
            no_store((StatusCode::BAD_REQUEST, Json(body)).into_response())
        }
        Err(e) => ApiError(e).into_response(),
    }
}

async fn logout(state: &AppState, name: &str, headers: &HeaderMap, body: &[u8]) -> Result<usize, Error> {
    let providers = providers(state)?;
    let form = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
    if !form {
        return Err(Error::malformed(lattice_core::Code::MalformedBody, "a logout token comes as application/x-www-form-urlencoded"));
    }
    let token = url::form_urlencoded::parse(body)
        .find(|(k, _)| k == "logout_token")
        .map(|(_, v)| v.into_owned())
        .ok_or_else(|| Error::malformed(lattice_core::Code::MalformedBody, "no logout_token"))?;
    let notice = providers.verify_logout(name, &token).await?;
    state.log.provider_signed_out(&notice.provider, notice.subject.as_deref(), notice.sid.as_deref()).await
}

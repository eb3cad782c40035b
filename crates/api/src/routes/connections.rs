//! Each person's own sign-ins to connected servers (R7, docs/MCP.md,
//! "Signing in to a server"): the ones they have, beginning one, the
//! callback their browser comes back to, finishing it with their own
//! token, and ending one. The flow is `lattice-connect`'s; where the
//! tokens are kept, the log's. Nothing here ever answers a token.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use lattice_connect::{Behalf, CallError, Owner, Server};
use lattice_core::Error;
use lattice_log::Authenticated;
use serde_json::json;

use crate::error::ApiResult;
use crate::extract::{Body, Caller};
use crate::state::AppState;
use lattice_wire::{BeginConnection, ConnectionFinished, ConnectionStarted, ErrorBody, FinishConnection, ServerConnection};

/// Where servers' authorization servers send people back.
pub const CALLBACK_PATH: &str = "/v1/connections/callback";
/// lattice's Client ID Metadata Document, served where the portal is https.
pub const CLIENT_METADATA_PATH: &str = "/v1/mcp-client-metadata.json";
/// The chat's page the callback hands the answer to (in the fragment, so
/// the code reaches no server's log on the way).
pub const CHAT_PAGE: &str = "/settings/connections";

/// The longest a state, a code or an issuer may be.
const FIELD_MAX: usize = 2048;

fn behalf(who: &Authenticated) -> Behalf<'_> {
    Behalf::of(who.principal())
}

fn owner(who: &Authenticated) -> Owner {
    let p = who.principal();
    Owner { tenant: p.tenant.to_string(), user: p.user.to_string() }
}

/// A server the caller's tenant is offered that each person signs in to.
fn server_of<'a>(state: &'a AppState, who: &Authenticated, name: &str) -> Result<&'a Server, Error> {
    let connections = state.runner.connections();
    connections
        .get(name)
        .filter(|s| s.signs_in() && connections.connected().offers(s.key(), &who.principal().tenant))
        .map(|s| s.as_ref())
        .ok_or(Error::NotFound)
}

/// [`server_of`], while its key is on for the caller's tenant: a sign-in
/// is neither begun nor finished for a server turned off there.
async fn switched_on<'a>(state: &'a AppState, who: &Authenticated, name: &str) -> Result<&'a Server, Error> {
    let server = server_of(state, who, name)?;
    let key = lattice_core::SwitchKey::Server(server.key());
    match state.log.tenant_effective(who).await?.get(&key) {
        Some(e) if e.enabled => Ok(server),
        _ => Err(Error::NotEnabled { key: key.to_string() }),
    }
}

/// A sign-in's failure, as the person reads it.
fn refused(e: CallError) -> Error {
    match e {
        CallError::SignIn(why) => Error::invalid_state(lattice_core::Code::ServerSignInFailed, format!("signing in to the server failed: {why}")),
        CallError::Unreachable(why) => Error::unavailable(format!("the server cannot be reached: {why}")),
        other => Error::unavailable(other.to_string()),
    }
}

/// The servers offered to the caller that each person signs in to, and
/// whether they have; servers they signed in to that are no longer
/// offered are listed too, so that they can end those.
#[utoipa::path(get, path = "/v1/me/connections", responses((status = 200, body = Vec<ServerConnection>), (status = 401, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn list(State(state): State<AppState>, Caller(who): Caller) -> ApiResult<Json<Vec<ServerConnection>>> {
    let rows = state.log.server_connections(&who).await?;
    let connections = state.runner.connections();
    let mut out: Vec<ServerConnection> =
        connections.offered_to(&who.principal().tenant).filter(|s| s.signs_in()).map(|s| ServerConnection::none(s.name())).collect();
    for row in rows {
        let at = |ms| Some(lattice_log::rfc3339(ms));
        let seen =
            ServerConnection { server: row.server.clone(), connected: true, connected_at: at(row.connected_at), updated_at: at(row.updated_at) };
        match out.iter_mut().find(|c| c.server == row.server) {
            Some(listed) => *listed = seen,
            None => out.push(seen),
        }
    }
    Ok(Json(out))
}

trait NotConnected {
    fn none(server: &str) -> Self;
}

impl NotConnected for ServerConnection {
    fn none(server: &str) -> Self {
        ServerConnection { server: server.to_owned(), connected: false, connected_at: None, updated_at: None }
    }
}

/// Begins the caller's sign-in to `server`: answers the address their
/// browser opens at its authorization server. Refused while the server's
/// key is off for their tenant.
#[utoipa::path(post, path = "/v1/me/connections/{server}", params(("server" = String, Path)), request_body = BeginConnection,
    responses((status = 200, body = ConnectionStarted), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
    (status = 422, body = ErrorBody), (status = 423, body = ErrorBody), (status = 503, body = ErrorBody)), security(("bearer" = [])))]
pub async fn begin(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(name): Path<String>,
    Body(req): Body<BeginConnection>,
) -> ApiResult<Json<ConnectionStarted>> {
    let server = switched_on(&state, &who, &name).await?;
    let more: Vec<String> = match &req.scope {
        None => Vec::new(),
        Some(scope) => {
            let scopes: Vec<String> = scope.split(' ').filter(|s| !s.is_empty()).map(str::to_owned).collect();
            if scope.len() > FIELD_MAX || scopes.len() > 32 || !scopes.iter().all(|s| lattice_connect::scope_is_valid(s)) {
                return Err(Error::field("scope", "pattern", "scopes (RFC 6749 §3.3) separated by spaces: at most 32, each at most 128 bytes").into());
            }
            scopes
        }
    };
    let url = server.begin_sign_in(behalf(&who), &more).await.map_err(refused)?;
    Ok(Json(ConnectionStarted { url }))
}

/// Where a server's authorization server sends the person back: handed on
/// to the chat's page in the fragment, which finishes it with the
/// person's own token (`POST /v1/connections/finish`).
#[utoipa::path(get, path = "/v1/connections/callback",
    responses((status = 303, description = "to the chat's connections page, the answer in the fragment")))]
pub async fn callback(State(state): State<AppState>, axum::extract::RawQuery(raw): axum::extract::RawQuery) -> Response {
    let raw = raw.unwrap_or_default();
    let mut fragment = url::form_urlencoded::Serializer::new(String::new());
    if raw.len() > 4 * FIELD_MAX {
        fragment.append_pair("error", "the authorization server's answer is too long");
    } else {
        for (key, value) in url::form_urlencoded::parse(raw.as_bytes()) {
            if matches!(key.as_ref(), "code" | "state" | "iss" | "error" | "error_description") {
                let value: String = value.chars().filter(|c| !c.is_control()).take(FIELD_MAX).collect();
                fragment.append_pair(&key, &value);
            }
        }
    }
    let to = format!("{}{CHAT_PAGE}#{}", state.portal_origin.trim_end_matches('/'), fragment.finish());
    let mut response = StatusCode::SEE_OTHER.into_response();
    if let Ok(location) = HeaderValue::from_str(&to) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response.headers_mut().insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

/// Finishes the caller's sign-in: the code exchanged at the server's
/// authorization server, what it gave kept for them alone, their session
/// with the server begun again. A sign-in someone else began is refused
/// (and used up) as one finished already.
#[utoipa::path(post, path = "/v1/connections/finish", request_body = FinishConnection,
    responses((status = 200, body = ConnectionFinished), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
    (status = 409, body = ErrorBody), (status = 422, body = ErrorBody), (status = 423, body = ErrorBody)), security(("bearer" = [])))]
pub async fn finish(State(state): State<AppState>, Caller(who): Caller, Body(req): Body<FinishConnection>) -> ApiResult<Json<ConnectionFinished>> {
    for (field, value) in [("state", Some(&req.state)), ("code", Some(&req.code)), ("iss", req.iss.as_ref())] {
        if value.is_some_and(|v| v.is_empty() || v.len() > FIELD_MAX) {
            return Err(Error::field(field, "maxLength", format!("1 to {FIELD_MAX} bytes")).into());
        }
    }
    let connections = state.runner.connections();
    let me = owner(&who);
    // Another person's sign-in answers as one that is not there: nothing
    // tells the caller it exists.
    let gone = || Error::invalid_state(lattice_core::Code::SignInExpired, "this sign-in was finished already or took too long: start again");
    let server = match connections.sign_in_of(&req.state).await.map_err(refused)? {
        None => return Err(gone().into()),
        Some((begun_by, _)) if begun_by != me => {
            // Used up (finishing it as the caller refuses it), so the one
            // who began it cannot finish it either.
            let _ = connections.finish_sign_in(&me, &req.state, &req.code, None).await;
            tracing::warn!(server_sign_in = "refused", "a sign-in to a server was brought back by another person than began it");
            return Err(gone().into());
        }
        Some((_, server)) => server,
    };
    // Turned off, or no longer offered, since it was begun.
    switched_on(&state, &who, &server).await?;
    let server = connections.finish_sign_in(&me, &req.state, &req.code, req.iss.as_deref()).await.map_err(refused)?;
    tracing::info!(server = %server, "a person signed in to a connected server");
    Ok(Json(ConnectionFinished { server }))
}

/// Ends the caller's sign-in to `server`: its tokens are forgotten and
/// their session with it ends; their next call asks them to sign in again.
#[utoipa::path(delete, path = "/v1/me/connections/{server}", params(("server" = String, Path)),
    responses((status = 204), (status = 404, body = ErrorBody)), security(("bearer" = [])))]
pub async fn disconnect(State(state): State<AppState>, Caller(who): Caller, Path(name): Path<String>) -> ApiResult<StatusCode> {
    state.log.disconnect_server(&who, &name).await?;
    if let Some(server) = state.runner.connections().get(&name) {
        server.end_session_of(behalf(&who)).await;
    }
    Ok(StatusCode::NO_CONTENT)
}

/// lattice as a client of servers' authorization servers (a Client ID
/// Metadata Document): a web application with no secret, sending people
/// back to one address.
#[utoipa::path(get, path = "/v1/mcp-client-metadata.json", responses((status = 200, description = "lattice's client metadata")))]
pub async fn client_metadata(State(state): State<AppState>) -> Response {
    let portal = state.portal_origin.trim_end_matches('/');
    let document = json!({
        "client_id": format!("{portal}{CLIENT_METADATA_PATH}"),
        "client_name": "lattice",
        "client_uri": portal,
        "redirect_uris": [format!("{portal}{CALLBACK_PATH}")],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "application_type": "web",
    });
    let mut response = Json(document).into_response();
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=3600"));
    response
}

//! `/mcp`: the exporter over streamable HTTP. Every request carries a
//! bearer token, verified once here (the exporter reads the caller from the
//! request); every message a client posts counts against the caller's
//! write rate, and its event stream and every tool call (which may wait)
//! against its open streams;
//! browser-based hosts on the allowed origins get CORS.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use http_body_util::BodyExt;
use lattice_core::Error;
use lattice_http::ApiError;
use lattice_http::forwarded::{Origin, TrustedProxies, peer_of};
use lattice_http::guard::{Guard, StreamPermit};
use lattice_log::LogService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::Exporter;
use crate::sessions::Served;

/// The largest message a client may post (rmcp's own default, read here
/// first to tell a request from an answer).
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// The `/mcp` routes, serving `exporter` to every session: the app state
/// writes it merges are per app, whichever session they come from.
/// `trusted`: the proxies (the edge) whose word on the name and scheme a
/// request came by is believed.
pub fn router(exporter: Exporter, guard: Arc<Guard>, allowed_origins: Vec<String>, trusted: TrustedProxies) -> axum::Router {
    let table = exporter.log.sessions();
    let log = exporter.log.clone();
    // The Host check is every service's, in one place (lattice-http's guard).
    let mut config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .with_allowed_origins(allowed_origins.clone())
        .enforce_origin_validation()
        .with_max_request_body_bytes(MAX_MESSAGE_BYTES);
    // Any replica serves any session (crate::sessions says why).
    config.session_store = Some(Arc::new(crate::sessions::SharedSessions(table.clone())));
    let manager = Arc::new(LocalSessionManager::default());
    let served = Served::start(table, manager.clone());
    let service = StreamableHttpService::new(move || Ok(exporter.for_a_session()), manager, config);
    // rmcp's own HTTP-level refusals (a method it does not take, an Accept
    // or Content-Type it does not, a session it cannot find) are plain
    // text: written through the one mapping like every other. Its
    // JSON-RPC errors stay JSON-RPC.
    let router = axum::Router::new().nest_service("/mcp", service).layer(axum::middleware::from_fn(lattice_http::error::typed_refusals)).layer(
        axum::middleware::from_fn(move |req: Request, next: Next| admit(log.clone(), guard.clone(), served.clone(), trusted.clone(), req, next)),
    );
    if allowed_origins.is_empty() {
        return router;
    }
    // The preflight is answered before the token check, which it carries
    // no token for.
    let allowed: Vec<HeaderValue> = allowed_origins.iter().filter_map(|o| o.parse().ok()).collect();
    let cors = tower_http::cors::CorsLayer::new()
        .allow_origin(allowed)
        .allow_methods([Method::GET, Method::POST, Method::DELETE])
        .allow_headers([
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            header::ACCEPT,
            HeaderName::from_static("mcp-session-id"),
            HeaderName::from_static("mcp-protocol-version"),
            HeaderName::from_static("last-event-id"),
        ])
        .expose_headers([HeaderName::from_static("mcp-session-id")]);
    router.layer(cors)
}

/// Where `/mcp`'s protected-resource metadata is (RFC 9728: the
/// well-known prefix before the resource's path).
pub const RESOURCE_METADATA: &str = "/.well-known/oauth-protected-resource/mcp";

/// The protected-resource metadata of `/mcp` (RFC 9728): the resource, the
/// authorization servers configured to issue its tokens, the scopes a
/// client asks them for, and that a token goes in the `Authorization`
/// header. lattice is not an authorization server: it verifies the tokens
/// it is configured to trust.
pub fn protected_resource(authorization_servers: Vec<String>, scopes: Vec<String>, trusted: TrustedProxies) -> axum::Router {
    axum::Router::new()
        .route(
            RESOURCE_METADATA,
            axum::routing::get(move |req: Request| {
                let (servers, scopes) = (authorization_servers.clone(), scopes.clone());
                let origin = origin(&trusted, &req);
                async move {
                    let mut metadata = serde_json::json!({
                        "resource": format!("{}/mcp", origin.url()),
                        "authorization_servers": servers,
                        "bearer_methods_supported": ["header"],
                        "resource_name": "lattice",
                    });
                    if !scopes.is_empty() {
                        metadata["scopes_supported"] = serde_json::json!(scopes);
                    }
                    axum::Json(metadata)
                }
            }),
        )
        .method_not_allowed_fallback(lattice_http::error::method_not_allowed)
}

/// The origin a request was addressed to: what the edge in front says it
/// received it by, when the request came from a trusted proxy, else its
/// own Host (which the guard has checked against the configured names)
/// and plain HTTP. Only ever written back to the same caller.
fn origin(trusted: &TrustedProxies, req: &Request) -> Origin {
    trusted.origin_of(req.headers(), peer_of(req.extensions()))
}

/// The origin a request was addressed to (`origin`), for the exporter's
/// handlers: in the request's extensions.
#[derive(Clone, Debug)]
pub(crate) struct RequestOrigin(pub String);

/// One of the caller's open streams, held by what keeps it open: the
/// response's body, and the tool call while it runs (in the request's
/// extensions, which rmcp hands the handler) and explicitly while it waits
/// (`form_submissions`, an elicitation), so that a client that leaves a
/// wait behind does not free its place before the wait ends.
#[derive(Clone)]
pub(crate) struct HeldStream {
    _permit: Arc<StreamPermit>,
}

/// The stream place of the request `context` answers, if it holds one
/// (over stdio there is one caller and no limit).
pub(crate) fn held_stream(extensions: &rmcp::model::Extensions) -> Option<HeldStream> {
    extensions.get::<axum::http::request::Parts>().and_then(|p| p.extensions.get::<HeldStream>()).cloned()
}

/// The `traceparent` header of the request `extensions` came with, over HTTP.
pub(crate) fn request_traceparent(extensions: &rmcp::model::Extensions) -> Option<String> {
    let parts = extensions.get::<axum::http::request::Parts>()?;
    parts.headers.get("traceparent").and_then(|v| v.to_str().ok()).map(str::to_owned)
}

/// Where the log stood when a request came (its horizon), over HTTP.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Arrived(pub i64);

/// Where the log stood when the request `extensions` came with arrived.
pub(crate) fn request_position(extensions: &rmcp::model::Extensions) -> Option<i64> {
    extensions.get::<axum::http::request::Parts>().and_then(|p| p.extensions.get::<Arrived>()).map(|a| a.0)
}

/// The origin of the request `extensions` came with, over HTTP.
pub(crate) fn request_origin(extensions: &rmcp::model::Extensions) -> Option<String> {
    extensions.get::<axum::http::request::Parts>().and_then(|p| p.extensions.get::<RequestOrigin>()).map(|o| o.0.clone())
}

/// A 401 that tells an MCP client where to find how to get a token.
fn unauthorized(code: lattice_core::Code, reason: String, origin: &Origin) -> Response {
    let mut response = ApiError(Error::unauthorized(code, reason)).into_response();
    let challenge = format!("Bearer resource_metadata=\"{}{RESOURCE_METADATA}\"", origin.url());
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// The header naming a request's session.
const SESSION: &str = "mcp-session-id";

/// What a session that is not there answers, to everyone alike: 404
/// `NotFound`, as every HTTP surface answers it (MCP asks for a 404, and
/// its clients start a new session on one).
fn session_not_found() -> Response {
    ApiError(Error::NotFound).into_response()
}

async fn admit(log: LogService, guard: Arc<Guard>, served: Arc<Served>, trusted: TrustedProxies, mut req: Request, next: Next) -> Response {
    let origin = origin(&trusted, &req);
    // A page of the origin the request was addressed by (a name the Host
    // check let through) is no rebinding: it goes on as a request with no
    // `Origin`, and rmcp refuses every other one not configured.
    if req.headers().get(header::ORIGIN).is_some_and(|o| o.as_bytes() == origin.url().as_bytes()) {
        req.headers_mut().remove(header::ORIGIN);
    }
    let header = req.headers().get(header::AUTHORIZATION).map(HeaderValue::as_bytes);
    // The token verified and not ended by a sign-out, as on every surface.
    let who = match log.authenticate_for(header, lattice_core::identity::Audience::Mcp).await {
        Ok(who) => who,
        Err(Error::Unauthorized { code, reason }) => return unauthorized(code, format!("MCP needs a bearer token: {reason}"), &origin),
        Err(e) => return ApiError(e).into_response(),
    };
    if req.method() == Method::POST
        && let Err(e) = guard.admit_write(who.principal())
    {
        return ApiError(e).into_response();
    }
    // A session is its opener's for its whole life, and lives while its
    // row does: another caller naming it finds nothing, and so does anyone
    // once the row is gone.
    let session = req.headers().get(SESSION).and_then(|v| v.to_str().ok()).map(str::to_owned);
    if let Some(id) = &session {
        match served.table.owned_by(id, who.principal()).await {
            Ok(Some(true)) => served.confirm(id),
            Ok(Some(false)) => return session_not_found(),
            Ok(None) => {
                // Ended everywhere (or never opened): here too.
                served.end(id).await;
                return session_not_found();
            }
            Err(e) => return ApiError(e).into_response(),
        }
    }
    let (mut req, Waits { opens, listens }) = match opens_stream(req).await {
        Ok(read) => read,
        Err(e) => return ApiError(e).into_response(),
    };
    let held = if opens {
        match guard.open_stream(who.principal()) {
            Ok(permit) => Some(HeldStream { _permit: Arc::new(permit) }),
            Err(e) => return ApiError(e).into_response(),
        }
    } else {
        None
    };
    let principal = who.principal().clone();
    let ends_session = req.method() == Method::DELETE;
    // A stream that stays open ends when its caller's access changes (a
    // removal, a lowered role, a sign-out): the client's next request is
    // decided afresh. Watched from before the handler runs, so no change
    // falls between.
    let watch = held.as_ref().map(|_| log.watch_access(&who));
    req.extensions_mut().insert(who);
    req.extensions_mut().insert(RequestOrigin(origin.url()));
    // Before anything is answered, and past this process's own commits: a
    // listen follows from here.
    if listens {
        req.extensions_mut().insert(Arrived(log.horizon().caught_up().await));
    }
    if let Some(held) = &held {
        req.extensions_mut().insert(held.clone());
    }
    let mut response = next.run(req).await;
    // rmcp answers a session's end 202; the SDKs take 200 or 204 as done
    // and report anything else as a failure to end it.
    if ends_session && response.status() == axum::http::StatusCode::ACCEPTED {
        *response.status_mut() = axum::http::StatusCode::NO_CONTENT;
    }
    // A session this request made is its caller's from now on; the ones
    // opening it forgot (the caller's oldest) end here and now, and on
    // other replicas at their next request or sweep.
    if session.is_none()
        && let Some(id) = response.headers().get(SESSION).and_then(|v| v.to_str().ok()).map(str::to_owned)
    {
        match served.table.open(&id, &principal).await {
            Ok(forgotten) => {
                served.confirm(&id);
                for ended in forgotten {
                    served.end(&ended).await;
                }
            }
            Err(e) => {
                // No session lives without its owner's row.
                served.end(&id).await;
                if let Err(e) = served.table.close(&id).await {
                    tracing::warn!(error = %e, session = %id, "an MCP session without its owner stays in the table (nobody may use it)");
                }
                return ApiError(e).into_response();
            }
        }
    }
    match held {
        // The place is the stream's until its body is dropped (read to the
        // end, or the client gone), and the handler's while it waits.
        Some(held) => {
            let (parts, body) = response.into_parts();
            let body = body.map_frame(move |frame| {
                let _held = &held;
                frame
            });
            let Some(mut watch) = watch else { return Response::from_parts(parts, Body::new(body)) };
            let changed = Box::pin(async move { watch.changed().await });
            Response::from_parts(parts, Body::from_stream(body.into_data_stream().take_until(changed)))
        }
        None => response,
    }
}

/// Whether `req` opens a stream that may stay open: the GET event stream,
/// a posted tool call (which may wait: `form_submissions`, a person
/// asked through elicitation), or a `subscriptions/listen` (open for as
/// long as the client follows). What else is posted is answered at once, and
/// an answer to the server's own request must pass even when the caller's
/// places are taken, or the wait it answers would never end. A posted body
/// is read here, within [`MAX_MESSAGE_BYTES`], and handed on whole.
async fn opens_stream(req: Request) -> Result<(Request, Waits), Error> {
    match *req.method() {
        Method::GET => return Ok((req, Waits { opens: true, listens: false })),
        Method::POST => {}
        _ => return Ok((req, Waits::default())),
    }
    let (parts, body) = req.into_parts();
    // Over the limit: `TooLarge` with the body's real size, as the edge
    // says it.
    let bytes = lattice_http::error::read_within(body, lattice_http::error::declared_length(&parts.headers), MAX_MESSAGE_BYTES).await?;
    let waits = may_wait(&bytes);
    Ok((Request::from_parts(parts, Body::from(bytes)), waits))
}

/// What a posted body asks that may wait.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Waits {
    /// A request that may stay open (`tools/call`, `subscriptions/listen`).
    opens: bool,
    /// A `subscriptions/listen` among them, which follows from where the
    /// log stood when it came.
    listens: bool,
}

/// Whether a posted body holds a request that may wait (`tools/call`,
/// `subscriptions/listen`: the method and an id), alone or in a batch. What
/// does not parse is rmcp's to refuse.
fn may_wait(body: &[u8]) -> Waits {
    #[derive(serde::Deserialize)]
    struct Message {
        #[serde(default)]
        method: Option<String>,
        #[serde(default)]
        id: Option<serde::de::IgnoredAny>,
    }
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Posted {
        One(Message),
        Batch(Vec<Message>),
    }
    let all = match serde_json::from_slice::<Posted>(body) {
        Ok(Posted::One(m)) => vec![m],
        Ok(Posted::Batch(all)) => all,
        Err(_) => return Waits::default(),
    };
    let asks = |method: &str| all.iter().any(|m| m.method.as_deref() == Some(method) && m.id.is_some());
    let listens = asks("subscriptions/listen");
    Waits { opens: listens || asks("tools/call"), listens }
}

#[cfg(test)]
mod tests {
    #[test]
    fn what_may_wait_is_told_from_what_is_answered_at_once() {
        for (body, call) in [
            (r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#, true),
            (r#"{"jsonrpc":"2.0","id":"a","method":"initialize"}"#, false),
            (r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#, false),
            (r#"{"jsonrpc":"2.0","id":3,"method":"subscriptions/listen","params":{}}"#, true),
            (r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, false),
            (r#"{"jsonrpc":"2.0","id":1,"result":{"action":"accept"}}"#, false),
            (r#"{"jsonrpc":"2.0","id":null,"method":"tools/call"}"#, false),
            (r#"[{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":2,"method":"tools/call"}]"#, true),
            (r#"not json"#, false),
        ] {
            assert_eq!(super::may_wait(body.as_bytes()).opens, call, "{body}");
            assert_eq!(super::may_wait(body.as_bytes()).listens, body.contains("subscriptions/listen"), "{body}");
        }
    }
}

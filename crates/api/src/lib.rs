//! The log service's HTTP API (REQUIREMENTS.md L9): `/v1` as JSON, typed errors (L8),
//! the live stream (L7), health and readiness, and an OpenAPI document
//! generated from the code. Handlers translate HTTP to commands and reads of
//! `lattice-log`; they decide nothing themselves.

pub mod extract;
pub mod openapi;
pub mod routes;
pub mod state;
pub mod thumbnails;

use axum::Router;
use axum::routing::{delete, get, post, put};
use utoipa::OpenApi;

// The error mapping and the guard are every HTTP service's (the MCP
// exporter's too), so they live in `lattice-http`; these paths stay.
pub use lattice_http::error::{self, ApiError, status_of};
pub use lattice_http::guard;
pub use state::AppState;

use routes::{agui, app_calls, artifacts, auth, connections, events, files, integrations, keys, me, people, runs, seal, system, workspaces};

/// The whole API, with its state.
pub fn router(state: AppState) -> Router {
    let timeout = state.guard.limits().request_timeout;
    let v1 = Router::new()
        .route("/dev/token", post(system::dev_token))
        .route("/auth/providers", get(auth::list))
        .route("/auth/oidc/{name}/start", get(auth::start))
        .route("/auth/oidc/{name}/callback", get(auth::callback))
        .route("/auth/oidc/{name}/backchannel-logout", post(auth::backchannel_logout))
        .route("/auth/session", post(auth::session))
        .route("/auth/renew", post(auth::renew))
        .route("/auth/sign-out", post(auth::sign_out))
        .route("/api-keys", get(keys::list).post(keys::create))
        .route("/api-keys/{id}", delete(keys::revoke))
        .route("/scim-tokens", get(keys::list_scim_tokens).post(keys::create_scim_token))
        .route("/scim-tokens/{id}", delete(keys::revoke_scim_token))
        .route("/me", get(system::me))
        .route("/me/waiting", get(me::waiting))
        .route("/me/waiting/stream", get(me::waiting_stream))
        .route("/me/connections", get(connections::list))
        .route("/connections/callback", get(connections::callback))
        .route("/connections/finish", post(connections::finish))
        .route("/me/connections/{server}", post(connections::begin).delete(connections::disconnect))
        .route("/mcp-client-metadata.json", get(connections::client_metadata))
        .route("/workspaces", get(workspaces::list).post(workspaces::create))
        .route("/workspaces/{ws}/members", get(people::members).post(workspaces::add_member))
        .route("/workspaces/{ws}/members/{user}", delete(people::remove_member))
        .route("/people/{user}/sign-out", post(people::sign_out))
        .route("/workspaces/{ws}/threads", get(workspaces::threads).post(workspaces::create_thread))
        .route("/workspaces/{ws}/events", get(events::workspace).post(events::append))
        .route("/threads", get(workspaces::listed))
        .route("/threads/{th}", get(workspaces::thread))
        .route("/threads/{th}/members", get(people::thread_members).post(workspaces::share))
        .route("/threads/{th}/members/{user}", delete(people::unshare))
        .route("/threads/{th}/messages", post(workspaces::post_message))
        .route("/threads/{th}/read", put(workspaces::mark_read))
        .route("/threads/{th}/artifacts", get(artifacts::list).post(artifacts::create))
        .route("/threads/{th}/events", get(events::thread))
        .route("/threads/{th}/files", post(files::upload))
        .route("/threads/{th}/uploads", post(files::begin_upload))
        .route("/uploads/{id}", get(files::upload_state).put(files::upload_part))
        .route("/files/{id}", get(files::get))
        .route("/checkpoint-key", get(seal::key))
        .route("/receipts/{seq}", get(seal::receipt))
        .route("/workspaces/{ws}/checkpoints", get(seal::checkpoints))
        .route("/workspaces/{ws}/checkpoints/latest", get(seal::latest))
        .route("/files/{id}/erase", post(files::erase))
        .route("/files/{id}/link", post(files::link))
        .route("/files/{id}/thumbnail", get(files::thumbnail))
        .route("/threads/{th}/runs", post(runs::start))
        .route("/threads/{th}/offers", get(runs::offers))
        .route("/threads/{th}/offers/complete", post(runs::complete))
        .route("/runs/{run}", get(runs::get))
        .route("/runs/{run}/answers", post(runs::answer))
        .route("/runs/{run}/cancel", post(runs::cancel))
        .route("/agui/threads/{th}", post(agui::run))
        .route("/artifacts/{id}", get(artifacts::get).patch(artifacts::edit))
        .route("/artifacts/{id}/archive", post(artifacts::archive))
        .route("/artifacts/{id}/context", put(artifacts::set_context))
        .route("/artifacts/{id}/capability", post(app_calls::capability))
        .route("/artifacts/{id}/calls", get(app_calls::list).post(app_calls::call))
        .route("/app-calls/{confirmation}", post(app_calls::confirm))
        .route("/integrations/effective", get(integrations::effective))
        .route("/integrations/effective/stream", get(integrations::effective_stream))
        .route("/integrations/audit", get(integrations::audit))
        .route("/integrations/levels", get(integrations::levels))
        .route("/integrations/servers", get(integrations::servers))
        .route("/integrations/levels/stream", get(integrations::levels_stream))
        .route("/integrations/{level}/{key}", put(integrations::set))
        .fallback(system::not_found)
        .method_not_allowed_fallback(system::method_not_allowed)
        .layer(axum::middleware::from_fn(move |req, next| guard::deadline(timeout, req, next)));
    Router::new()
        .route("/healthz", get(system::healthz))
        .route("/readyz", get(system::readyz))
        .route("/openapi.json", get(|| async { axum::Json(openapi::ApiDoc::openapi()) }))
        // What every error body's `link` points at: the table of codes.
        .route(lattice_http::ERRORS_PATH, get(|| async { axum::response::Html(lattice_http::error_docs::errors_page()) }))
        .nest("/v1", v1)
        .merge(routes::scim::router().layer(axum::middleware::from_fn(move |req, next| guard::deadline(timeout, req, next))))
        // What axum answers by itself (a 405 or 404 outside `/v1`, a path
        // it cannot read) is written through the one mapping too.
        .layer(axum::middleware::from_fn(lattice_http::error::typed_refusals))
        .layer(axum::middleware::from_fn(trace_context))
        .with_state(state)
}

/// What the apps origin serves of the log: files' bytes, by the links
/// `POST /v1/files/{id}/link` gives (`/files/{id}?link=…`). The apps origin
/// holds nothing else of the log's, and the chat's origin serves no file.
pub fn downloads(state: AppState) -> Router {
    let timeout = state.guard.limits().request_timeout;
    Router::new()
        .route("/files/{id}", get(files::download))
        .layer(axum::middleware::from_fn(move |req, next| guard::deadline(timeout, req, next)))
        .with_state(state)
}

/// Carries the request's `traceparent` to the commands it runs.
async fn trace_context(req: axum::extract::Request, next: axum::middleware::Next) -> axum::response::Response {
    let traceparent = req.headers().get("traceparent").and_then(|v| v.to_str().ok()).map(str::to_owned);
    lattice_log::with_traceparent(traceparent, next.run(req)).await
}

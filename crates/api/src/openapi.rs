//! The OpenAPI document, generated from the handlers' annotations.

use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::routes::{agui, app_calls, artifacts, auth, connections, events, files, integrations, keys, me, people, runs, seal, system, workspaces};

#[derive(OpenApi)]
#[openapi(
    info(title = "lattice", description = "The log service's HTTP API: every change is one command in an append-only log."),
    paths(
        system::healthz, system::readyz, system::dev_token, system::me, me::waiting, me::waiting_stream,
        workspaces::list, workspaces::create, workspaces::add_member, workspaces::threads, workspaces::create_thread,
        workspaces::post_message, workspaces::thread, workspaces::listed, workspaces::share, workspaces::mark_read,
        people::members, people::remove_member, people::thread_members, people::unshare, people::sign_out,
        artifacts::create, artifacts::get, artifacts::edit, artifacts::archive, artifacts::list, artifacts::set_context,
        events::thread, events::workspace, events::append,
        seal::key, seal::receipt, seal::checkpoints, seal::latest, files::upload, files::begin_upload, files::upload_state, files::upload_part, files::get, files::erase, files::link, files::thumbnail,
        integrations::effective, integrations::effective_stream, integrations::set, integrations::audit, integrations::levels, integrations::levels_stream, integrations::servers,
        runs::start, runs::offers, runs::complete, runs::get, runs::answer, runs::cancel, agui::run,
        app_calls::capability, app_calls::call, app_calls::confirm, app_calls::list,
        auth::list, auth::start, auth::callback, auth::backchannel_logout, auth::session, auth::renew, auth::sign_out,
        keys::create, keys::list, keys::revoke, keys::create_scim_token, keys::list_scim_tokens, keys::revoke_scim_token,
        connections::list, connections::begin, connections::callback, connections::finish, connections::disconnect, connections::client_metadata,
    ),
    modifiers(&BearerAuth, &ErrorCodes)
)]
pub struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components
            .add_security_scheme("bearer", SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).bearer_format("JWT").build()));
    }
}

/// The error body's schema, with every `code` (and what it means) as an
/// enum written from the one table of codes (`lattice_core::Code`).
struct ErrorCodes;

impl Modify for ErrorCodes {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        for (name, schema) in error_schemas() {
            match serde_json::from_value(schema) {
                Ok(schema) => {
                    components.schemas.insert(name.to_owned(), schema);
                }
                Err(e) => tracing::error!(error = %e, name, "an error schema does not read as OpenAPI"),
            }
        }
    }
}

/// `ErrorCode` and `ErrorBody`, as JSON Schema.
fn error_schemas() -> [(&'static str, serde_json::Value); 2] {
    use lattice_core::Code;
    let codes: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
    let mut types: Vec<&str> = Code::ALL.iter().map(|c| c.type_name()).collect();
    types.dedup();
    let table = Code::ALL
        .iter()
        .map(|c| format!("- `{}` ({}, {}): {}", c.as_str(), c.type_name(), lattice_http::status_of(&c.example()).as_u16(), c.doc()))
        .collect::<Vec<_>>()
        .join("\n");
    let descriptions: serde_json::Map<String, serde_json::Value> = Code::ALL.iter().map(|c| (c.as_str().to_owned(), c.doc().into())).collect();
    let code = serde_json::json!({
        "type": "string",
        "enum": codes,
        "description": format!("Why the request was refused: stable across versions, so a client branches on it (docs/ERRORS.md, `/docs/errors`). A code not listed here (from a newer server) is read as its type's generic code.\n\n{table}"),
        "x-enum-descriptions": descriptions,
    });
    let text = serde_json::json!({ "type": "string" });
    let count = serde_json::json!({ "type": "integer", "format": "int64", "minimum": 0 });
    let body = serde_json::json!({
        "type": "object",
        "required": ["error"],
        "properties": { "error": {
            "type": "object",
            "required": ["type", "code", "link"],
            "properties": {
                "type": { "type": "string", "enum": types, "description": "The coarse kind of refusal; it fixes the HTTP status." },
                "code": { "$ref": "#/components/schemas/ErrorCode" },
                "link": { "type": "string", "description": "The code's documentation on the serving origin: `/docs/errors#<code>`." },
                "reason": text, "key": text, "answered_by": text, "host": text, "method": text,
                "errors": { "type": "array", "items": { "type": "object", "required": ["path", "keyword", "message"],
                    "properties": { "path": text, "keyword": text, "message": text } } },
                "more": count, "expected": count, "actual": count, "limit": count, "size": count, "retry_after_secs": count,
            },
        } },
    });
    [("ErrorCode", code), ("ErrorBody", body)]
}

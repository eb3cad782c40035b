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
        runs::start, runs::get, runs::answer, runs::cancel, agui::run,
        app_calls::capability, app_calls::call, app_calls::confirm, app_calls::list,
        auth::list, auth::start, auth::callback, auth::backchannel_logout, auth::session, auth::renew, auth::sign_out,
        keys::create, keys::list, keys::revoke, keys::create_scim_token, keys::list_scim_tokens, keys::revoke_scim_token,
        connections::list, connections::begin, connections::callback, connections::finish, connections::disconnect, connections::client_metadata,
    ),
    modifiers(&BearerAuth)
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

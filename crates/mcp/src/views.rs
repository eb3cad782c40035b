//! The `ui://` resources (REQUIREMENTS.md M3): lattice's generated views for forms and
//! dashboards, fed by the tool's input and result, and each app's own HTML
//! with its policy, read as the caller.

use std::sync::LazyLock;

use lattice_core::{ArtifactId, SwitchKey};
use lattice_log::{Authenticated, LogService};
use rmcp::ErrorData as McpError;
use rmcp::model::{ReadResourceResult, Resource, ResourceContents, ResourceTemplate};
use serde_json::{Value, json};

use crate::meta;

pub const UI_MIME: &str = "text/html;profile=mcp-app";
pub const FORM_VIEW: &str = "ui://lattice/views/form";
pub const DASHBOARD_VIEW: &str = "ui://lattice/views/dashboard";
/// The view create_app and update_app declare: it becomes the app their
/// result carries.
pub const APP_VIEW: &str = "ui://lattice/views/app";
/// An app's resource is this and its artifact id.
pub const APP_VIEWS: &str = "ui://lattice/apps/";

/// A view's page: one shell (its policy closes the network), the shared
/// lifecycle (`view.js`) and styles, and the view's own script.
fn page(title: &str, waiting: &str, script: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title>\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
         connect-src 'none'; frame-src 'none'; base-uri 'none'; form-action 'none'\">\n<style>{css}</style>\n</head><body>\
         <main id=\"root\"><p role=\"status\">{waiting}</p></main>\n<script>\n{lifecycle}\n{script}</script></body></html>",
        css = include_str!("views/view.css"),
        lifecycle = include_str!("views/view.js"),
    )
}

static FORM_PAGE: LazyLock<String> = LazyLock::new(|| page("lattice form", "Waiting for the form…", include_str!("views/form.js")));
static APP_PAGE: LazyLock<String> = LazyLock::new(|| page("lattice app", "Waiting for the app…", include_str!("views/app.js")));
static DASHBOARD_PAGE: LazyLock<String> =
    LazyLock::new(|| page("lattice dashboard", "Waiting for the dashboard…", include_str!("views/dashboard.js")));

/// No network, no frames, no base URL: what every lattice view and app gets.
fn closed() -> Value {
    json!({"ui": {"csp": {"connectDomains": [], "resourceDomains": [], "frameDomains": [], "baseUriDomains": []}, "prefersBorder": true}})
}

pub fn listed() -> Vec<Resource> {
    vec![
        Resource::new(FORM_VIEW, "form-view")
            .with_title("A lattice form")
            .with_description("Draws a form from ask_form's or create_form's result and sends it with submit_form.")
            .with_mime_type(UI_MIME)
            .with_meta(meta(closed())),
        Resource::new(APP_VIEW, "app-view")
            .with_title("A lattice mini app")
            .with_description("Becomes the app create_app or update_app made, as their result carries it.")
            .with_mime_type(UI_MIME)
            .with_meta(meta(closed())),
        Resource::new(DASHBOARD_VIEW, "dashboard-view")
            .with_title("A lattice dashboard")
            .with_description("Shows show_dashboard's or update_dashboard's figures.")
            .with_mime_type(UI_MIME)
            .with_meta(meta(closed())),
    ]
}

pub fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(format!("{APP_VIEWS}{{id}}"), "app")
            .with_title("A lattice mini app")
            .with_description("An app's own HTML at its head version, while mini apps are on where it lives.")
            .with_mime_type(UI_MIME),
    ]
}

pub async fn read(log: &LogService, who: &Authenticated, uri: &str, sdk: Option<&str>) -> Result<ReadResourceResult, McpError> {
    let (text, extra) = match uri {
        FORM_VIEW => (FORM_PAGE.clone(), Value::Null),
        DASHBOARD_VIEW => (DASHBOARD_PAGE.clone(), Value::Null),
        APP_VIEW => (APP_PAGE.clone(), Value::Null),
        _ => match uri.strip_prefix(APP_VIEWS) {
            Some(id) => app_document(log, who, id, sdk).await?,
            None => return Err(McpError::resource_not_found(format!("no resource {uri}"), None)),
        },
    };
    let mut m = closed();
    if let Value::Object(more) = extra {
        m["lattice"] = Value::Object(more);
    }
    Ok(ReadResourceResult::new(vec![ResourceContents::text(text, uri).with_mime_type(UI_MIME).with_meta(meta(m))]))
}

/// An app the caller can read, at its head, while mini apps are on in its
/// workspace: refused otherwise, as lattice's own chat refuses to run it.
async fn app_document(log: &LogService, who: &Authenticated, id: &str, sdk: Option<&str>) -> Result<(String, Value), McpError> {
    let missing = || McpError::resource_not_found(format!("no app {id}"), None);
    let id = ArtifactId::parse("app", id).map_err(|_| missing())?;
    let app = log.artifact(who, &id, None).await.map_err(|_| missing())?;
    if app.kind != "app" || app.archived {
        return Err(missing());
    }
    let effective = log.effective(who, &app.workspace).await.map_err(crate::scope::refused)?;
    if let Some(off) = effective.get(&SwitchKey::MiniApps).filter(|e| !e.enabled) {
        return Err(McpError::invalid_request(format!("mini apps are off here: {}", off.because), None));
    }
    // A connected server's app needs its server's key on as well (fail
    // closed: a server no longer connected is off).
    if let Some(server) = app.data.pointer("/server/name").and_then(Value::as_str) {
        let key = format!("{}{server}", lattice_core::ServerKey::PREFIX);
        let on = effective.iter().any(|(k, e)| k.as_str() == key && e.enabled);
        if !on {
            return Err(McpError::invalid_request(format!("{key} is off here"), None));
        }
    }
    let html = app.data.get("html").and_then(Value::as_str).unwrap_or_default();
    let receipt = json!({"id": app.id, "version": app.version, "digest": app.digest,
        "title": app.data.get("title"), "summary": app.data.get("summary")});
    Ok((lattice_ui::app::document(html, sdk), receipt))
}

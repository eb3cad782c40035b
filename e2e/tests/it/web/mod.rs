//! The chat host in real headless Chromium (REQUIREMENTS.md W1–W3, W7, W8): what a
//! person sees and does, through the page.

mod a11y;
mod ask_form;
mod chat;
mod console;
mod dashboard;
mod files;
mod governance;
mod harness;
mod revocation;
mod roles;
mod server_sign_in;
mod sign_in;
pub mod small_screens;
mod states;
pub mod streaming;
mod submissions;
mod waiting;

use lattice_e2e::{Client, UpProcess};
use serde_json::{Value, json};

/// The demo's workspace and thread (the scripted agent waits on a form).
pub async fn demo_thread(up: &UpProcess) -> (Client, String, String) {
    let demo = Client::sign_in_as(&up.base, json!({"tenant": "demo", "user": "demo", "role": "tenant_admin"})).await;
    let workspaces = demo.ok("GET", "/v1/workspaces", Value::Null).await;
    let ws = workspaces[0]["id"].as_str().expect("the demo workspace").to_owned();
    let threads = demo.ok("GET", &format!("/v1/workspaces/{ws}/threads"), Value::Null).await;
    let th = threads[0]["id"].as_str().expect("the demo thread").to_owned();
    (demo, ws, th)
}

/// A fresh workspace with a thread, made by `admin`.
pub async fn workspace_with_thread(admin: &Client, name: &str) -> (String, String) {
    let ws = admin.ok("POST", "/v1/workspaces", json!({"name": name})).await["id"].as_str().unwrap().to_owned();
    let th = admin.ok("POST", &format!("/v1/workspaces/{ws}/threads"), json!({"title": name})).await["id"].as_str().unwrap().to_owned();
    (ws, th)
}

/// The cells of the first dashboard tables' rows, as shown, with the
/// spaces a locale writes inside a figure (no-break, narrow) read as one.
pub const TABLE_CELLS: &str =
    "() => [...document.querySelectorAll('.table-panel tbody tr')].map(r => [...r.cells].map(c => c.textContent.replace(/[\\u00a0\\u202f]/g, ' ')))";

/// A dashboard with every panel type; its action presses `action_form`.
pub fn every_panel(action_form: &str) -> Value {
    json!({
        "title": "Service health",
        "as_of": "2026-11-29T12:00:00Z",
        "panels": [
            {"type": "metric", "label": "Error rate", "value": 1.5, "unit": "%", "delta": -0.25},
            {"type": "line", "title": "Requests per minute", "x": ["10:00", "10:05", "10:10"],
             "series": [{"name": "api", "values": [120, 180, 150]}, {"name": "web", "values": [80, 95, 70]}]},
            {"type": "bar", "title": "Errors by service", "x": ["api", "web", "db"],
             "series": [{"name": "errors", "values": [7, 3, 11]}]},
            {"type": "table", "title": "Slowest endpoints",
             "columns": ["endpoint", {"label": "p99", "format": "number", "unit": "ms"}, {"label": "errors", "format": "percent"},
                         {"label": "cost", "format": "currency", "unit": "EUR"}],
             "rows": [["/v1/search", 840, 0.012, 1234.5], ["/v1/export", 1200, 0.07, 99]]},
            {"type": "text", "markdown": "**Note:** the database was *restarted* at 10:07.\n\n- api recovered\n- web recovered"},
            {"type": "action", "label": "Acknowledge", "form_id": action_form}
        ]
    })
}

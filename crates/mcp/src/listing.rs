//! The tools an MCP caller is offered: the agent toolset as the runner has
//! it (ask_user aside: an MCP host asks its own user), `form_submissions` to
//! read or wait for answers, and the tools only a view or an app calls
//! (`_meta.ui.visibility: ["app"]`), each offered while its switch is on.

use std::collections::BTreeMap;
use std::sync::Arc;

use lattice_agent::tools;
use lattice_core::SwitchKey;
use rmcp::model::Tool;
use serde_json::{Value, json};

use crate::views::{APP_VIEW, DASHBOARD_VIEW, FORM_VIEW};
use crate::{meta, view_meta};

pub const FORM_SUBMISSIONS: &str = "form_submissions";
pub const SUBMIT_FORM: &str = "submit_form";
pub use lattice_ui::app_policy::{GET_STATE, SET_STATE, SUBMIT};

/// The longest `form_submissions` waits.
pub const MAX_WAIT_SECONDS: u64 = 600;

/// Tools called by a view or an app, never by the model.
pub fn is_app_tool(name: &str) -> bool {
    matches!(name, SUBMIT_FORM | GET_STATE | SET_STATE | SUBMIT)
}

/// The switch an MCP-only tool needs.
pub fn switch_of(name: &str) -> Option<SwitchKey> {
    match name {
        FORM_SUBMISSIONS | SUBMIT_FORM => Some(SwitchKey::Forms),
        GET_STATE | SET_STATE | SUBMIT => Some(SwitchKey::MiniApps),
        other => tools::switch_of(other),
    }
}

/// Whether `name` is offered where `enabled` holds.
pub fn offered(name: &str, enabled: &BTreeMap<SwitchKey, bool>) -> bool {
    let known = tools::all_tools().iter().any(|t| t.name == name && t.name != tools::ASK_USER) || extra().iter().any(|(n, ..)| *n == name);
    known && switch_of(name).is_none_or(|key| enabled.get(&key).copied().unwrap_or(false))
}

const THREAD: &str = "A thread id; the caller's most recent thread when left out.";
const APP: &str = "The app's artifact id (the receipt's id); the app the capability was given for when left out.";
const CAPABILITY: &str = "The capability the view was given in its tool result's _meta.lattice.capability: app-only \
     tools are refused without it, so only the view, never a model, makes these calls.";

/// The MCP-only tools: name, description, parameters, app-only.
fn extra() -> Vec<(&'static str, &'static str, Value, bool)> {
    vec![
        (
            FORM_SUBMISSIONS,
            "Read the submissions to a form made by ask_form or create_form, or wait for the next: returns as soon as \
             the form has more than `after` submissions, or after `wait_seconds` (at most 600) with status pending. \
             Progress notifications are sent while waiting.",
            json!({"type": "object", "properties": {
                "id": {"type": "string", "description": "The form's artifact id."},
                "after": {"type": "integer", "minimum": 0, "default": 0, "description": "Submissions already seen."},
                "wait_seconds": {"type": "integer", "minimum": 0, "maximum": MAX_WAIT_SECONDS, "default": 0}},
                "required": ["id"], "additionalProperties": false}),
            false,
        ),
        (
            SUBMIT_FORM,
            "Send values to a form, as the caller (called by the form's view).",
            json!({"type": "object", "properties": {
                "form": {"type": "string"}, "form_version": {"type": "integer", "minimum": 1},
                "values": {"type": "object"}, "capability": {"type": "string", "description": CAPABILITY}},
                "required": ["form", "form_version", "values", "capability"], "additionalProperties": false}),
            true,
        ),
        (
            GET_STATE,
            "An app reads its own state.",
            json!({"type": "object", "properties": {"app": {"type": "string", "description": APP}, "thread": {"type": "string", "description": THREAD},
                "capability": {"type": "string", "description": CAPABILITY}},
                "required": ["capability"], "additionalProperties": false}),
            true,
        ),
        (
            SET_STATE,
            "An app changes its own state with a JSON Patch (RFC 6902) whose paths are inside the state.",
            json!({"type": "object", "properties": {"app": {"type": "string", "description": APP}, "thread": {"type": "string", "description": THREAD},
                "patch": {"type": "array", "items": {"type": "object"}}, "capability": {"type": "string", "description": CAPABILITY}},
                "required": ["patch", "capability"], "additionalProperties": false}),
            true,
        ),
        (
            SUBMIT,
            "An app sends values as a submission, after the policy (and perhaps the person) allows it.",
            json!({"type": "object", "properties": {"app": {"type": "string", "description": APP}, "thread": {"type": "string", "description": THREAD},
                "values": {"type": "object"}, "capability": {"type": "string", "description": CAPABILITY}},
                "required": ["values", "capability"], "additionalProperties": false}),
            true,
        ),
    ]
}

fn schema(value: Value) -> Arc<serde_json::Map<String, Value>> {
    Arc::new(value.as_object().cloned().unwrap_or_default())
}

/// The tools offered where `enabled` holds.
pub fn tools(enabled: &BTreeMap<SwitchKey, bool>) -> Vec<Tool> {
    let mut out: Vec<Tool> = tools::toolset(enabled)
        .into_iter()
        .filter(|t| t.name != tools::ASK_USER)
        .map(|t| {
            let mut parameters = t.parameters.clone();
            if let Some(Value::Object(props)) = parameters.get_mut("properties") {
                props.insert("thread".into(), json!({"type": "string", "description": THREAD}));
            }
            let tool = Tool::new(t.name.clone(), t.description.clone(), schema(parameters));
            match t.name.as_str() {
                tools::ASK_FORM | tools::CREATE_FORM => tool.with_meta(view_meta(FORM_VIEW)),
                tools::SHOW_DASHBOARD | tools::UPDATE_DASHBOARD => tool.with_meta(view_meta(DASHBOARD_VIEW)),
                // The app view becomes the app the result carries.
                tools::CREATE_APP | tools::UPDATE_APP => tool.with_meta(view_meta(APP_VIEW)),
                _ => tool,
            }
        })
        .collect();
    for (name, description, parameters, app_only) in extra() {
        if !offered(name, enabled) {
            continue;
        }
        let tool = Tool::new(name, description, schema(parameters));
        out.push(if app_only { tool.with_meta(meta(json!({"ui": {"visibility": ["app"]}}))) } else { tool });
    }
    out
}

/// Tells `tell` whenever the toolset `who` is offered changes, until
/// nobody hears. Woken only by the flips that concern `who`'s tenant
/// (`crate::flips`).
pub(crate) async fn watch(log: lattice_log::LogService, flips: crate::flips::Flips, who: lattice_log::Authenticated, tell: crate::tell::Tell) {
    let names = |enabled: &BTreeMap<SwitchKey, bool>| tools(enabled).into_iter().map(|t| t.name.to_string()).collect::<Vec<_>>();
    let offered = || async {
        let scope = crate::scope::Scope::find(&log, &who, None).await.ok()?;
        scope.switches(&log, &who).await.ok().map(|enabled| names(&enabled))
    };
    let mut changes = flips.watch(&who.principal().tenant);
    let mut last = offered().await;
    loop {
        tokio::select! {
            changed = changes.changed() => if changed.is_err() { return },
            // A session that went away is noticed even when nothing flips.
            _ = tokio::time::sleep(std::time::Duration::from_secs(30)) => {
                if tell.gone() { return }
                continue;
            }
        }
        if tell.gone() {
            return;
        }
        let now = offered().await;
        if now.is_some() && now != last {
            last = now;
            if !tell.tools_changed().await {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use lattice_core::SwitchKey;

    /// What models and MCP clients are offered names a type wherever a
    /// value may be anything: no bare `true` where a schema goes.
    #[test]
    fn every_tool_schema_lattice_offers_is_portable() {
        let all = [SwitchKey::Forms, SwitchKey::Dashboards, SwitchKey::MiniApps].into_iter().map(|k| (k, true)).collect();
        let offered = super::tools(&all);
        assert!(offered.len() >= 10, "{}", offered.len());
        for tool in offered {
            let schema = serde_json::Value::Object((*tool.input_schema).clone());
            assert_eq!(lattice_ui::wire::boolean_subschemas(&schema), Vec::<String>::new(), "{}", tool.name);
        }
        for tool in lattice_agent::tools::all_tools() {
            assert_eq!(lattice_ui::wire::boolean_subschemas(&tool.parameters), Vec::<String>::new(), "{}", tool.name);
        }
    }
}

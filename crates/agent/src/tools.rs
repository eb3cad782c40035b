//! The agent's toolset (REQUIREMENTS.md A1–A5), defined once: name, description, and
//! the JSON Schema of the arguments. The runner offers them to its models
//! and the MCP exporter to outside agents, each time only those whose
//! switch is on in the workspace.

use std::collections::BTreeMap;

use lattice_core::SwitchKey;
use lattice_ui::dashboard::Panel;
use lattice_ui::hints::UiHints;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: Value,
}

pub use lattice_ui::tool_names::{ASK_FORM, ASK_USER, CREATE_APP, CREATE_FORM, SHOW_DASHBOARD, UPDATE_APP, UPDATE_DASHBOARD};

/// The switch a tool needs, if any.
pub fn switch_of(tool: &str) -> Option<SwitchKey> {
    match tool {
        ASK_FORM | CREATE_FORM => Some(SwitchKey::Forms),
        SHOW_DASHBOARD | UPDATE_DASHBOARD => Some(SwitchKey::Dashboards),
        CREATE_APP | UPDATE_APP => Some(SwitchKey::MiniApps),
        _ => None,
    }
}

/// Whether calling the tool pauses the run until a person answers.
pub fn is_deferred(tool: &str) -> bool {
    matches!(tool, ASK_FORM | ASK_USER)
}

fn inline_schema<T: JsonSchema>() -> Value {
    let mut settings = SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    let mut schema = settings.into_generator().into_root_schema_for::<T>().to_value();
    if let Some(map) = schema.as_object_mut() {
        map.remove("$schema");
        map.remove("title");
    }
    schema
}

const SCHEMA_HELP: &str = "A JSON Schema 2020-12 object: {\"type\": \"object\", \"properties\": {...}, \"required\": [...]}. \
Allowed in a property: type (string, number, integer, boolean, or array of enumerated strings for multi-choice), enum, \
const, default, title, description, examples, minLength, maxLength, minimum, maximum, exclusiveMinimum, exclusiveMaximum, \
multipleOf, minItems, maxItems, uniqueItems, items ({\"enum\": [...]}) and format (date, time, date-time, email, uri). \
Refused: $ref, $defs, nested objects, pattern, if/then/else, allOf, anyOf, oneOf, not, format password. \
At most 50 properties, 64 choices each, 32 KB.";

/// Every tool, whatever the switches say.
pub fn all_tools() -> Vec<ToolDefinition> {
    let ui = inline_schema::<UiHints>();
    let panels = inline_schema::<Vec<Panel>>();
    vec![
        ToolDefinition {
            name: ASK_FORM.into(),
            description: "Ask the person a form and wait for the answer: use it instead of several questions when you \
                need structured input (dates, choices, numbers, a note). The run pauses until someone sends the form; \
                the tool's result is the checked values. A schema outside the allowed subset comes back as an error \
                to fix. With expires_in_secs, nobody may answer once that long has passed and the result is \
                \"expired\"."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "title": {"type": "string", "description": "What the form is for, shown above it."},
                    "schema": {"type": "object", "description": SCHEMA_HELP},
                    "ui": ui.clone(),
                    "expires_in_secs": {"type": "integer", "minimum": 1, "maximum": lattice_core::run::MAX_EXPIRES_IN_SECS,
                        "description": "How long the person has to answer, in seconds (at most a week)."},
                },
                "required": ["title", "schema"],
                "additionalProperties": false
            }),
        },
        ToolDefinition {
            name: CREATE_FORM.into(),
            description: "Put a form in the thread that takes submissions without the run waiting: a poll, a sign-up, \
                a form that outlives this turn. Returns its id; submissions are artifacts of kind submission."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "schema": {"type": "object", "description": SCHEMA_HELP},
                    "ui": ui,
                    "submissions": {"enum": ["once", "per_person", "many"], "default": "once",
                        "description": "once: one submission in all; per_person: one each; many: any number."}
                },
                "required": ["title", "schema"],
                "additionalProperties": false
            }),
        },
        ToolDefinition {
            name: SHOW_DASHBOARD.into(),
            description: "Show a dashboard of figures in the thread: metrics, line and bar charts, tables, text and \
                action buttons. Every chart carries its figures. Returns its id."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {"title": {"type": "string"}, "panels": panels.clone()},
                "required": ["title", "panels"],
                "additionalProperties": false
            }),
        },
        ToolDefinition {
            name: UPDATE_DASHBOARD.into(),
            description: "Replace a dashboard's panels with new figures (a new version).".into(),
            parameters: json!({
                "type": "object",
                "properties": {"id": {"type": "string"}, "panels": panels},
                "required": ["id", "panels"],
                "additionalProperties": false
            }),
        },
        ToolDefinition {
            name: CREATE_APP.into(),
            description: "Make a mini app: one self-contained HTML file (at most 256 KB) that runs sandboxed in the \
                chat with no network at all: no external URL anywhere (scripts, styles, images, fonts, links are \
                inline or data: URLs). It talks to the host with MCP Apps JSON-RPC over postMessage and may call only \
                get_state, set_state (a JSON Patch on its state) and submit. To use the official MCP Apps SDK's App \
                class, include <script data-lattice-sdk=\"ext-apps\"></script> before your own script; the host inlines \
                the SDK (about 600 KB, not counted in the 256 KB) and it defines ExtApps: write \
                `const app = new ExtApps.App({name, version}); await app.connect();` then \
                `app.callServerTool({name: 'get_state', arguments: {}})`. A submit is confirmed by the person before \
                it is sent. The summary is shown beside the app, always."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "summary": {"type": "string", "description": "What the app does, in words."},
                    "html": {"type": "string"}
                },
                "required": ["title", "summary", "html"],
                "additionalProperties": false
            }),
        },
        ToolDefinition {
            name: UPDATE_APP.into(),
            description: "Replace a mini app's HTML (and optionally its summary).".into(),
            parameters: json!({
                "type": "object",
                "properties": {"id": {"type": "string"}, "html": {"type": "string"}, "summary": {"type": "string"}},
                "required": ["id", "html"],
                "additionalProperties": false
            }),
        },
        ToolDefinition {
            name: ASK_USER.into(),
            description: "Ask the person one plain question and wait for the reply in the chat.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "question": {"type": "string"},
                    "suggestions": {"type": "array", "items": {"type": "string"}, "maxItems": 8}
                },
                "required": ["question"],
                "additionalProperties": false
            }),
        },
    ]
}

/// The tools offered where `enabled` says which switches are on.
pub fn toolset(enabled: &BTreeMap<SwitchKey, bool>) -> Vec<ToolDefinition> {
    all_tools().into_iter().filter(|t| switch_of(&t.name).is_none_or(|key| enabled.get(&key).copied().unwrap_or(false))).collect()
}

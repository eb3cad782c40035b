//! A dashboard artifact (REQUIREMENTS.md U6): a snapshot of figures, `as_of` a time.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub const DASHBOARD_MAX_BYTES: usize = 256 * 1024;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
/// The `data` of a `dashboard` artifact.
pub struct Dashboard {
    pub title: String,
    /// When the figures were true (RFC 3339).
    pub as_of: String,
    pub panels: Vec<Panel>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Panel {
    Metric {
        label: String,
        value: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unit: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        delta: Option<Value>,
    },
    Line(Chart),
    Bar(Chart),
    Table {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        columns: Vec<String>,
        rows: Vec<Vec<Value>>,
    },
    Text {
        markdown: String,
    },
    /// A button: pressing it submits to a form with no fields.
    Action {
        label: String,
        form_id: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Chart {
    pub title: String,
    pub x: Vec<String>,
    pub series: Vec<Series>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Series {
    pub name: String,
    pub values: Vec<f64>,
}

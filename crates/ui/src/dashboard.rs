//! A dashboard artifact (REQUIREMENTS.md U6): a snapshot of figures, `as_of` a time.

use schemars::JsonSchema;
use serde::de::{self, MapAccess, Visitor, value::MapAccessDeserializer};
use serde::{Deserialize, Deserializer, Serialize};
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
        #[schemars(schema_with = "crate::wire::figure")]
        value: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unit: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(schema_with = "crate::wire::any_value")]
        delta: Option<Value>,
    },
    Line(Chart),
    Bar(Chart),
    Table {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        columns: Vec<Column>,
        #[schemars(schema_with = "crate::wire::cells")]
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

/// A table's column: a heading alone (`"endpoint"`: its cells shown as they
/// came, as a year or an id is no amount), or a heading with the kind of
/// figure its cells hold (`{"label": "p99", "format": "number", "unit":
/// "ms"}`), which a reader writes in their own way of writing numbers.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Column {
    Heading(String),
    Figures(Figures),
}

/// A column of figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Figures {
    pub label: String,
    #[serde(default, skip_serializing_if = "CellFormat::is_text")]
    pub format: CellFormat,
    /// After a `number` (`ms`, `req/s`); the ISO 4217 code of a `currency`
    /// (`EUR`); none for the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
}

/// How a column's cells read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CellFormat {
    /// As they came.
    #[default]
    Text,
    /// An amount (`1234.5`), with its unit after it when it has one.
    Number,
    /// A share (`0.25` is 25 %).
    Percent,
    /// An amount of money in `unit`.
    Currency,
}

impl CellFormat {
    fn is_text(&self) -> bool {
        *self == Self::Text
    }
}

impl Column {
    pub fn label(&self) -> &str {
        match self {
            Self::Heading(label) | Self::Figures(Figures { label, .. }) => label,
        }
    }

    pub fn format(&self) -> CellFormat {
        match self {
            Self::Heading(_) => CellFormat::Text,
            Self::Figures(f) => f.format,
        }
    }

    pub fn unit(&self) -> Option<&str> {
        match self {
            Self::Heading(_) => None,
            Self::Figures(f) => f.unit.as_deref(),
        }
    }

    /// A cell of this column as text in no one's locale (`1234.5 ms`,
    /// `25%`, `1234.5 EUR`): what a reader without a browser is shown (the
    /// MCP exporter's text); the browser writes it in the person's own way.
    pub fn plain(&self, cell: &Value) -> String {
        let n = match cell {
            Value::Number(n) => n.as_f64(),
            _ => None,
        };
        match (self.format(), n) {
            (CellFormat::Text, _) | (_, None) => match cell {
                Value::String(s) => s.clone(),
                Value::Null => String::new(),
                other => other.to_string(),
            },
            (CellFormat::Number, Some(n)) => self.unit().map_or_else(|| number(n), |u| format!("{} {u}", number(n))),
            (CellFormat::Percent, Some(n)) => format!("{}%", number(n * 100.0)),
            (CellFormat::Currency, Some(n)) => format!("{} {}", number(n), self.unit().unwrap_or_default()),
        }
    }
}

/// The shortest decimal that reads back as `n`, without a float's noise
/// from a share's multiplication (`0.07 * 100` is `7.000000000000001`).
fn number(n: f64) -> String {
    let rounded = (n * 1e9).round() / 1e9;
    serde_json::Number::from_f64(rounded).map_or_else(|| n.to_string(), |n| n.to_string().trim_end_matches(".0").to_owned())
}

/// A heading alone is a string, a column of figures an object: said apart
/// by their first token, so an object's mistake is named (an unknown
/// `format`, a misspelt key) rather than "matched no variant".
impl<'de> Deserialize<'de> for Column {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Either;
        impl<'de> Visitor<'de> for Either {
            type Value = Column;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a column's heading, or an object with its label, format and unit")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Column, E> {
                Ok(Column::Heading(s.to_owned()))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Column, E> {
                Ok(Column::Heading(s))
            }
            fn visit_map<M: MapAccess<'de>>(self, map: M) -> Result<Column, M::Error> {
                Figures::deserialize(MapAccessDeserializer::new(map)).map(Column::Figures)
            }
        }
        deserializer.deserialize_any(Either)
    }
}

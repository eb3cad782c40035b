//! The UI model's artifact kinds, as the log service registers them.

use std::sync::Arc;

use lattice_core::kind::SharedKind;
use lattice_core::{ArtifactKind, Error, FieldError, SwitchKey};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::dashboard::{DASHBOARD_MAX_BYTES, Dashboard, Panel};
use crate::form::{FORM_MAX_BYTES, Form};

pub struct FormKind;
pub struct DashboardKind;

/// Every kind this crate defines.
pub fn kinds() -> Vec<SharedKind> {
    vec![Arc::new(FormKind), Arc::new(DashboardKind)]
}

impl ArtifactKind for FormKind {
    fn name(&self) -> &str {
        "form"
    }

    fn switch(&self) -> Option<SwitchKey> {
        Some(SwitchKey::Forms)
    }

    fn max_bytes(&self) -> usize {
        FORM_MAX_BYTES
    }

    fn check(&self, data: &Value) -> Result<(), Error> {
        let form: Form = shape(data)?;
        if form.title.trim().is_empty() {
            return Err(Error::field("data.title", "minLength", "must not be empty"));
        }
        if !form.schema.is_object() {
            return Err(Error::field("data.schema", "type", "must be a JSON Schema object"));
        }
        Ok(())
    }
}

impl ArtifactKind for DashboardKind {
    fn name(&self) -> &str {
        "dashboard"
    }

    fn switch(&self) -> Option<SwitchKey> {
        Some(SwitchKey::Dashboards)
    }

    fn max_bytes(&self) -> usize {
        DASHBOARD_MAX_BYTES
    }

    fn check(&self, data: &Value) -> Result<(), Error> {
        let dashboard: Dashboard = shape(data)?;
        let mut errors = Vec::new();
        for (i, panel) in dashboard.panels.iter().enumerate() {
            if let Panel::Line(chart) | Panel::Bar(chart) = panel {
                for (j, series) in chart.series.iter().enumerate() {
                    if series.values.len() != chart.x.len() {
                        errors.push(FieldError::new(
                            format!("data.panels.{i}.series.{j}.values"),
                            "length",
                            format!("{} values for {} x labels", series.values.len(), chart.x.len()),
                        ));
                    }
                }
            }
        }
        if errors.is_empty() { Ok(()) } else { Err(Error::ValidationFailed { errors }) }
    }
}

/// Reads `data` as `T`, naming where the shape is wrong.
fn shape<T: DeserializeOwned>(data: &Value) -> Result<T, Error> {
    serde_json::from_value(data.clone()).map_err(|e| Error::field("data", "shape", e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dashboards_take_the_contract_panels_and_refuse_ragged_series() {
        let ok = json!({"title": "Ops", "as_of": "2026-11-29T12:00:00Z", "panels": [
            {"type": "metric", "label": "Open", "value": 3},
            {"type": "line", "title": "Load", "x": ["a", "b"], "series": [{"name": "cpu", "values": [1, 2]}]},
            {"type": "table", "columns": ["k"], "rows": [["v"]]},
            {"type": "text", "markdown": "*hi*"},
            {"type": "action", "label": "Restart", "form_id": "f1"}
        ]});
        DashboardKind.check(&ok).unwrap();
        let ragged = json!({"title": "Ops", "as_of": "now", "panels": [
            {"type": "bar", "title": "B", "x": ["a"], "series": [{"name": "s", "values": [1, 2]}]}]});
        assert!(matches!(DashboardKind.check(&ragged), Err(Error::ValidationFailed { .. })));
        assert!(DashboardKind.check(&json!({"title": "x", "as_of": "y", "panels": [{"type": "pie"}]})).is_err());
    }

    #[test]
    fn forms_need_a_title_and_a_schema_object() {
        FormKind.check(&json!({"title": "T", "schema": {"type": "object"}})).unwrap();
        assert!(FormKind.check(&json!({"title": " ", "schema": {}})).is_err());
        assert!(FormKind.check(&json!({"title": "T", "schema": []})).is_err());
        assert!(FormKind.check(&json!({"title": "T", "schema": {}, "colour": "red"})).is_err());
    }
}

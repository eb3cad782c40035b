//! The UI model's artifact kinds, as the log service registers them.

use std::sync::Arc;

use lattice_core::kind::SharedKind;
use lattice_core::{AnsweredBy, ArtifactKind, Asking, Error, FieldError, SwitchKey};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::app::{App, SERVER_CALL_MAX_BYTES, SERVER_HTML_MAX_BYTES, STATE_MAX_BYTES};
use crate::dashboard::{CellFormat, Column, DASHBOARD_MAX_BYTES, Dashboard, Panel};
use crate::form::{FORM_MAX_BYTES, Form, Submissions};
use crate::schema::{self, format::is_date_time, limits};
use crate::submission::Submission;

/// The kinds' names, as clients and envelopes give them.
pub const FORM: &str = "form";
pub const DASHBOARD: &str = "dashboard";
pub const SUBMISSION: &str = "submission";
pub const APP: &str = "app";

pub struct FormKind;
pub struct DashboardKind;
pub struct SubmissionKind;
pub struct AppKind;

/// Every kind this crate defines.
pub fn kinds() -> Vec<SharedKind> {
    vec![Arc::new(FormKind), Arc::new(DashboardKind), Arc::new(SubmissionKind), Arc::new(AppKind)]
}

const TITLE_CHARS: usize = 200;

impl ArtifactKind for FormKind {
    fn name(&self) -> &str {
        FORM
    }

    fn switch(&self) -> Option<SwitchKey> {
        Some(SwitchKey::Forms)
    }

    fn max_bytes(&self) -> usize {
        FORM_MAX_BYTES
    }

    fn check(&self, data: &Value) -> Result<(), Error> {
        let form: Form = shape(data)?;
        title(&form.title)?;
        let compiled = schema::compile(&form.schema).map_err(|e| prefixed("schema", e))?;
        if let Some(ui) = &form.ui {
            ui.check(&compiled).map_err(|e| prefixed("ui", e))?;
        }
        Ok(())
    }

    /// A form asks while it is not `closed`, until its `closes_at`: a
    /// `once` form anyone's answer, a `per_person` or `many` form each
    /// person's own (one answer of theirs is enough to be asked no more).
    fn asks(&self, data: &Value) -> Option<Asking> {
        /// The fields that say it, read without the rest of the form.
        #[derive(serde::Deserialize)]
        struct Asked {
            title: String,
            #[serde(default)]
            submissions: Submissions,
            #[serde(default)]
            closed: bool,
            #[serde(default)]
            closes_at: Option<String>,
        }
        let form = Asked::deserialize(data).ok()?;
        if form.closed {
            return None;
        }
        let answered_by = if form.submissions == Submissions::Once { AnsweredBy::Anyone } else { AnsweredBy::Each };
        Some(Asking { title: form.title, answered_by, closes_at_ms: form.closes_at.as_deref().and_then(lattice_core::rfc3339::date_time_ms) })
    }
}

impl ArtifactKind for DashboardKind {
    fn name(&self) -> &str {
        DASHBOARD
    }

    fn switch(&self) -> Option<SwitchKey> {
        Some(SwitchKey::Dashboards)
    }

    fn max_bytes(&self) -> usize {
        DASHBOARD_MAX_BYTES
    }

    fn check(&self, data: &Value) -> Result<(), Error> {
        let dashboard: Dashboard = shape(data)?;
        title(&dashboard.title)?;
        let mut errors = Vec::new();
        if !is_date_time(&dashboard.as_of) {
            errors.push(FieldError::new("as_of", "format", "must be an RFC 3339 date-time such as 2026-11-29T12:00:00Z"));
        }
        for (i, panel) in dashboard.panels.iter().enumerate() {
            match panel {
                Panel::Line(chart) | Panel::Bar(chart) => {
                    for (j, series) in chart.series.iter().enumerate() {
                        if series.values.len() != chart.x.len() {
                            errors.push(FieldError::new(
                                format!("panels.{i}.series.{j}.values"),
                                "length",
                                format!("{} values for {} x labels", series.values.len(), chart.x.len()),
                            ));
                        }
                    }
                }
                Panel::Table { columns, rows, .. } => {
                    for (c, column) in columns.iter().enumerate() {
                        if let Err(why) = column_unit(column) {
                            errors.push(FieldError::new(format!("panels.{i}.columns.{c}.unit"), "format", why));
                        }
                    }
                    for (r, row) in rows.iter().enumerate() {
                        if row.len() != columns.len() {
                            errors.push(FieldError::new(
                                format!("panels.{i}.rows.{r}"),
                                "length",
                                format!("{} cells for {} columns", row.len(), columns.len()),
                            ));
                        }
                    }
                }
                Panel::Metric { value, .. } if !matches!(value, Value::Number(_) | Value::String(_)) => {
                    errors.push(FieldError::new(format!("panels.{i}.value"), "type", "a metric's value is a number or a string"));
                }
                Panel::Action { form_id, .. } if form_id.trim().is_empty() => {
                    errors.push(FieldError::new(format!("panels.{i}.form_id"), "minLength", "an action names its form"));
                }
                _ => {}
            }
        }
        Error::invalid(errors)
    }
}

impl ArtifactKind for SubmissionKind {
    fn name(&self) -> &str {
        SUBMISSION
    }

    fn switch(&self) -> Option<SwitchKey> {
        Some(SwitchKey::Forms)
    }

    fn max_bytes(&self) -> usize {
        limits::VALUES_BYTES + 1024
    }

    fn check(&self, data: &Value) -> Result<(), Error> {
        let submission: Submission = shape(data)?;
        if !submission.values.is_object() {
            return Err(Error::field("values", "type", "the values must be an object of the form's fields"));
        }
        Ok(())
    }

    fn parent(&self, data: &Value) -> Option<String> {
        data.get("form_id").and_then(Value::as_str).map(str::to_owned)
    }

    fn respondents_create(&self) -> bool {
        true
    }
}

impl ArtifactKind for AppKind {
    fn name(&self) -> &str {
        APP
    }

    fn switch(&self) -> Option<SwitchKey> {
        Some(SwitchKey::MiniApps)
    }

    fn max_bytes(&self) -> usize {
        // A connected server's app is the largest an app may be; App::check
        // holds lattice's own to their tighter bound.
        SERVER_HTML_MAX_BYTES + SERVER_CALL_MAX_BYTES + STATE_MAX_BYTES + 4096
    }

    fn check(&self, data: &Value) -> Result<(), Error> {
        let app: App = shape(data)?;
        title(&app.title)?;
        app.check()
    }

    fn tells_context(&self) -> bool {
        true
    }
}

fn title(title: &str) -> Result<(), Error> {
    if let Err(e) = lattice_core::name::check("title", title) {
        return Err(Error::field(e.path, e.keyword, e.message));
    }
    if title.trim().is_empty() {
        Err(Error::field("title", "minLength", "must not be empty"))
    } else if title.chars().count() > TITLE_CHARS {
        Err(Error::field("title", "maxLength", format!("{} characters exceed the limit {TITLE_CHARS}", title.chars().count())))
    } else {
        Ok(())
    }
}

/// Reads `data` as `T`, naming where the shape is wrong.
/// The most characters of a number's unit (`ms`, `req/s`).
const UNIT_CHARS: usize = 32;

/// A column's unit is one its format reads: a currency's the ISO 4217 code
/// a browser's `Intl.NumberFormat` takes, a number's short, none else.
fn column_unit(column: &Column) -> Result<(), &'static str> {
    match (column.format(), column.unit()) {
        (CellFormat::Currency, Some(code)) if code.len() == 3 && code.bytes().all(|b| b.is_ascii_uppercase()) => Ok(()),
        (CellFormat::Currency, _) => Err("a currency column names its currency by its ISO 4217 code, such as EUR"),
        (CellFormat::Number, Some(unit)) if unit.chars().count() > UNIT_CHARS || unit.trim().is_empty() => {
            Err("a number's unit is 1 to 32 characters, such as ms")
        }
        (CellFormat::Text | CellFormat::Percent, Some(_)) => Err("only a number or a currency column has a unit"),
        _ => Ok(()),
    }
}

pub(crate) fn shape<T: DeserializeOwned>(data: &Value) -> Result<T, Error> {
    serde_path_to_error::deserialize(data).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { path };
        Error::field(path, "shape", e.into_inner().to_string())
    })
}

/// Puts field errors under `prefix` (`schema.properties.x…`).
pub(crate) fn prefixed(prefix: &str, e: Error) -> Error {
    match e {
        Error::ValidationFailed { errors, more } => Error::ValidationFailed {
            errors: errors
                .into_iter()
                .map(|mut f| {
                    f.path = if f.path.is_empty() { prefix.to_owned() } else { format!("{prefix}.{}", f.path) };
                    f.bounded()
                })
                .collect(),
            more,
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn dashboard_with(columns: Value, row: Value) -> Value {
        json!({"title": "Costs", "as_of": "2026-12-05T09:00:00Z",
            "panels": [{"type": "table", "columns": columns, "rows": [row]}]})
    }

    fn refused_at(data: Value) -> Vec<(String, String)> {
        match DashboardKind.check(&data) {
            Err(Error::ValidationFailed { errors, .. }) => errors.into_iter().map(|f| (f.path, f.message)).collect(),
            other => panic!("refused, not {other:?}"),
        }
    }

    /// A table's columns are headings or columns of figures, each read
    /// back as it was written; a figure column's unit is one its format
    /// reads, and a mistake in one is named where it stands.
    #[test]
    fn a_tables_columns_say_how_their_figures_read() {
        let columns = json!(["service", {"label": "p99", "format": "number", "unit": "ms"}, {"label": "share", "format": "percent"},
            {"label": "cost", "format": "currency", "unit": "EUR"}, {"label": "year"}]);
        let data = dashboard_with(columns.clone(), json!(["api", 412.5, 0.07, 1234.5, 2026]));
        DashboardKind.check(&data).expect("well-formed");
        let dashboard: Dashboard = shape(&data).unwrap();
        assert_eq!(serde_json::to_value(&dashboard).unwrap()["panels"][0]["columns"], columns, "read back as written");
        let Panel::Table { columns, rows, .. } = &dashboard.panels[0] else { panic!("a table") };
        let plain: Vec<String> = columns.iter().zip(&rows[0]).map(|(c, v)| c.plain(v)).collect();
        assert_eq!(plain, ["api", "412.5 ms", "7%", "1234.5 EUR", "2026"]);
        assert_eq!(columns[4].format(), CellFormat::Text, "a label alone is text");

        // A unit at its edge passes, one character over is refused.
        let unit = |u: &str| dashboard_with(json!([{"label": "x", "format": "number", "unit": u}]), json!([1]));
        DashboardKind.check(&unit(&"u".repeat(32))).expect("32 characters");
        assert_eq!(
            refused_at(unit(&"u".repeat(33))),
            [("panels.0.columns.0.unit".to_owned(), "a number's unit is 1 to 32 characters, such as ms".to_owned())]
        );
        for (column, said) in [
            (json!({"label": "cost", "format": "currency"}), "ISO 4217"),
            (json!({"label": "cost", "format": "currency", "unit": "euro"}), "ISO 4217"),
            (json!({"label": "share", "format": "percent", "unit": "%"}), "only a number or a currency"),
        ] {
            let refused = refused_at(dashboard_with(json!([column]), json!([1])));
            assert!(refused.len() == 1 && refused[0].0 == "panels.0.columns.0.unit" && refused[0].1.contains(said), "{refused:?}");
        }
        for (column, said) in [
            (json!({"label": "x", "format": "money"}), "unknown variant `money`"),
            (json!({"label": "x", "units": "ms"}), "unknown field `units`"),
            (json!(7), "a column's heading"),
        ] {
            let refused = refused_at(dashboard_with(json!([column]), json!([1])));
            assert!(refused.len() == 1 && refused[0].0 == "panels[0]" && refused[0].1.contains(said), "{refused:?}");
        }
    }

    /// What a form asks, as the log keeps it: a closed form asks nothing,
    /// a deadline is read as the log reads one, and other kinds ask nothing.
    #[test]
    fn a_form_asks_until_it_closes() {
        let form = |extra: Value| {
            let mut data = json!({"title": "Lunch", "schema": {"type": "object", "properties": {}}});
            data.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            data
        };
        let once = FormKind.asks(&form(json!({}))).unwrap();
        assert_eq!(once, Asking { title: "Lunch".into(), answered_by: AnsweredBy::Anyone, closes_at_ms: None });
        let each = FormKind.asks(&form(json!({"submissions": "per_person", "closes_at": "1970-01-01T00:00:01.500Z"}))).unwrap();
        assert_eq!((each.answered_by, each.closes_at_ms), (AnsweredBy::Each, Some(1500)));
        assert_eq!(FormKind.asks(&form(json!({"submissions": "many"}))).unwrap().answered_by, AnsweredBy::Each);
        assert_eq!(FormKind.asks(&form(json!({"closed": true}))), None);
        assert_eq!(FormKind.asks(&form(json!({"closes_at": "soon"}))).unwrap().closes_at_ms, None);
        assert_eq!(DashboardKind.asks(&json!({"title": "x", "as_of": "2026-01-01T00:00:00Z", "panels": []})), None);
        assert_eq!(SubmissionKind.asks(&json!({"form_id": "f", "form_version": 1, "values": {}})), None);
    }
}

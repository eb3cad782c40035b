//! DashboardView (REQUIREMENTS.md W3): a snapshot's panels, with its `as_of`.

use lattice_ui::dashboard::{CellFormat, Column, Dashboard, Panel};
use leptos::prelude::*;
use serde_json::Value;
use wasm_bindgen::JsValue;

use super::chart::{ChartView, Kind};
use super::time::time;
use crate::data::times::options;

/// A metric's figure: a number as the person's language writes numbers
/// (a table's cells as their column says: [`cell`]).
fn amount(v: &Value) -> String {
    match v {
        Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), crate::data::text::local),
        other => figure(other),
    }
}

fn figure(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A table's cell as its column reads: a figure as the person's language
/// writes it (`1,234.5 ms`; `7 %` in German; `€1,234.50`), anything else,
/// and every cell of a column of headings, as it came.
fn cell(column: &Column, v: &Value) -> String {
    let Some(n) = v.as_f64() else { return figure(v) };
    let options = match column.format() {
        CellFormat::Text => return figure(v),
        CellFormat::Number => return column.unit().map_or_else(|| amount(v), |u| format!("{} {u}", amount(v))),
        CellFormat::Percent => options(&[("style", "percent"), ("maximumFractionDigits", "1")]),
        CellFormat::Currency => options(&[("style", "currency"), ("currency", column.unit().unwrap_or("XXX"))]),
    };
    let format = js_sys::Intl::NumberFormat::new(&js_sys::Array::new(), &options).format();
    format.call1(&JsValue::NULL, &JsValue::from_f64(n)).ok().and_then(|s| s.as_string()).unwrap_or_else(|| figure(v))
}

/// `on_action` presses an action panel's button: a submission to its form.
#[component]
pub fn DashboardView(id: String, dashboard: Dashboard, #[prop(into)] on_action: Callback<String>) -> impl IntoView {
    let title_id = format!("{id}-title");
    let panels = dashboard
        .panels
        .into_iter()
        .enumerate()
        .map(|(i, panel)| {
            let pid = format!("{id}-p{i}");
            match panel {
                Panel::Metric { label, value, unit, delta } => view! {
                    <div class="panel metric">
                        <p class="metric-label">{label}</p>
                        <p class="metric-value">{amount(&value)}{unit.map(|u| format!(" {u}"))}</p>
                        {delta.map(|d| view! { <p class="metric-delta">"Change: " {amount(&d)}</p> })}
                    </div>
                }
                .into_any(),
                Panel::Line(chart) => view! { <div class="panel"><ChartView chart kind=Kind::Line id=pid/></div> }.into_any(),
                Panel::Bar(chart) => view! { <div class="panel"><ChartView chart kind=Kind::Bar id=pid/></div> }.into_any(),
                Panel::Table { title, columns, rows } => {
                    let head = columns
                        .iter()
                        .map(|c| view! { <th scope="col" class:num=c.format() != CellFormat::Text>{c.label().to_owned()}</th> })
                        .collect_view();
                    let text = Column::Heading(String::new());
                    let body = rows
                        .into_iter()
                        .map(|r| {
                            let cells = r
                                .iter()
                                .enumerate()
                                .map(|(i, v)| {
                                    let column = columns.get(i).unwrap_or(&text);
                                    view! { <td class:num=column.format() != CellFormat::Text>{cell(column, v)}</td> }
                                })
                                .collect_view();
                            view! { <tr>{cells}</tr> }
                        })
                        .collect_view();
                    view! {
                        <div class="panel table-panel">
                            <table>
                                {title.map(|t| view! { <caption>{t}</caption> })}
                                <thead><tr>{head}</tr></thead>
                                <tbody>{body}</tbody>
                            </table>
                        </div>
                    }
                    .into_any()
                }
                Panel::Text { markdown } => view! { <div class="panel text">{super::markdown::render(&markdown)}</div> }.into_any(),
                Panel::Action { label, form_id } => view! {
                    <div class="panel action">
                        <button type="button" on:click=move |_| on_action.run(form_id.clone())>{label}</button>
                    </div>
                }
                .into_any(),
            }
        })
        .collect_view();
    let labelled = title_id.clone();
    // An article, not a section: a thread may hold two dashboards of one
    // title, and named sections are landmarks, which must differ.
    view! {
        <article class="dashboard" aria-labelledby=labelled>
            <h2 id=title_id>{dashboard.title}</h2>
            {(!dashboard.as_of.is_empty()).then(|| view! { <p class="as-of">"Figures as of " {time(dashboard.as_of.clone())}</p> })}
            <div class="panels">{panels}</div>
        </article>
    }
}

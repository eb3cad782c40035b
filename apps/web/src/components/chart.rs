//! Line and bar charts as SVG (REQUIREMENTS.md W3). Colours come from the theme's
//! tokens through classes (`series-1`…); the SVG writes no colour of its
//! own, so the scheme and colour-blind mode (`data-cvd`) restyle it. Every
//! chart has its figures under "Show the figures", a real table, and lines
//! differ by dash as well as by colour.

use lattice_ui::dashboard::Chart;
use leptos::prelude::*;

const W: f64 = 480.0;
const H: f64 = 220.0;
const LEFT: f64 = 48.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 32.0;

#[derive(Clone, Copy, PartialEq)]
pub enum Kind {
    Line,
    Bar,
}

/// The range drawn: every figure, and zero for bars.
fn range(chart: &Chart, kind: Kind) -> (f64, f64) {
    let figures = chart.series.iter().flat_map(|s| s.values.iter().copied()).filter(|v| v.is_finite());
    let (mut lo, mut hi) = figures.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if !lo.is_finite() {
        (lo, hi) = (0.0, 1.0);
    }
    if kind == Kind::Bar {
        lo = lo.min(0.0);
        hi = hi.max(0.0);
    }
    if (hi - lo).abs() < f64::EPSILON {
        hi = lo + 1.0;
    }
    (lo, hi)
}

/// A figure as the person's language writes numbers.
fn format_figure(v: f64) -> String {
    crate::data::text::local(v)
}

#[component]
pub fn ChartView(chart: Chart, kind: Kind, id: String) -> impl IntoView {
    let (lo, hi) = range(&chart, kind);
    let plot_w = W - LEFT - RIGHT;
    let plot_h = H - TOP - BOTTOM;
    let y = move |v: f64| TOP + plot_h - (v - lo) / (hi - lo) * plot_h;
    let n = chart.x.len().max(1);
    let slot = plot_w / n as f64;
    let x_center = move |i: usize| LEFT + slot * (i as f64 + 0.5);
    let title_id = format!("{id}-title");
    let desc_id = format!("{id}-desc");
    let description = format!(
        "{} chart of {} over {}. The figures are in the table below.",
        if kind == Kind::Line { "Line" } else { "Bar" },
        chart.series.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(", "),
        chart.x.join(", ")
    );
    let desc_ref = desc_id.clone();
    let ticks: Vec<f64> = (0..=4).map(|i| lo + (hi - lo) * i as f64 / 4.0).collect();
    let grid = ticks
        .iter()
        .map(|t| {
            let ty = y(*t);
            view! {
                <line class="grid" x1=LEFT x2=W - RIGHT y1=ty y2=ty/>
                <text class="axis-label" x=LEFT - 6.0 y=ty + 4.0 text-anchor="end">{format_figure(*t)}</text>
            }
        })
        .collect_view();
    let x_labels = chart
        .x
        .iter()
        .enumerate()
        .map(|(i, label)| view! { <text class="axis-label" x=x_center(i) y=H - 10.0 text-anchor="middle">{label.clone()}</text> })
        .collect_view();
    let series_count = chart.series.len().max(1);
    let marks = chart
        .series
        .iter()
        .enumerate()
        .map(|(s, series)| {
            let class = format!("series series-{}", s % 6 + 1);
            match kind {
                Kind::Line => {
                    let points = series
                        .values
                        .iter()
                        .enumerate()
                        .filter(|(_, v)| v.is_finite())
                        .map(|(i, v)| format!("{},{}", crate::data::text::fixed(x_center(i), 1), crate::data::text::fixed(y(*v), 1)))
                        .collect::<Vec<_>>()
                        .join(" ");
                    let dots = series
                        .values
                        .iter()
                        .enumerate()
                        .filter(|(_, v)| v.is_finite())
                        .map(|(i, v)| view! { <circle class="dot" cx=x_center(i) cy=y(*v) r="3"/> })
                        .collect_view();
                    view! { <g class=class><polyline class="line" points=points/>{dots}</g> }.into_any()
                }
                Kind::Bar => {
                    let band = slot * 0.8 / series_count as f64;
                    let zero = y(0.0_f64.clamp(lo, hi));
                    let bars = series
                        .values
                        .iter()
                        .enumerate()
                        .filter(|(_, v)| v.is_finite())
                        .map(|(i, v)| {
                            let x = LEFT + slot * i as f64 + slot * 0.1 + band * s as f64;
                            let top = y(*v).min(zero);
                            let height = (y(*v) - zero).abs().max(1.0);
                            view! { <rect class="bar" x=x y=top width=band.max(1.0) height=height/> }
                        })
                        .collect_view();
                    view! { <g class=class>{bars}</g> }.into_any()
                }
            }
        })
        .collect_view();
    let legend = chart
        .series
        .iter()
        .enumerate()
        .map(|(s, series)| {
            let class = format!("legend-item series-{}", s % 6 + 1);
            view! { <li class=class><span class="swatch" aria-hidden="true"></span>{series.name.clone()}</li> }
        })
        .collect_view();
    let header = chart.series.iter().map(|s| view! { <th scope="col">{s.name.clone()}</th> }).collect_view();
    let rows = chart
        .x
        .iter()
        .enumerate()
        .map(|(i, label)| {
            let cells =
                chart.series.iter().map(|s| view! { <td>{s.values.get(i).map(|v| format_figure(*v)).unwrap_or_default()}</td> }).collect_view();
            view! { <tr><th scope="row">{label.clone()}</th>{cells}</tr> }
        })
        .collect_view();
    view! {
        <figure class="chart" data-kind=if kind == Kind::Line { "line" } else { "bar" }>
            <figcaption id=title_id.clone()>{chart.title.clone()}</figcaption>
            <svg viewBox=format!("0 0 {W} {H}") role="img" aria-labelledby=title_id aria-describedby=desc_ref>
                <desc id=desc_id>{description}</desc>
                {grid}
                {marks}
                {x_labels}
            </svg>
            <ul class="legend">{legend}</ul>
            <details class="figures">
                <summary>"Show the figures"</summary>
                <table>
                    <caption>{chart.title.clone()}</caption>
                    <thead><tr><th scope="col">"Label"</th>{header}</tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            </details>
        </figure>
    }
}

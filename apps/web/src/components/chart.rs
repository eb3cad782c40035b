//! Line and bar charts as SVG (REQUIREMENTS.md W3). Colours come from the theme's
//! tokens through classes (`series-1`…); the SVG writes no colour of its
//! own, so the scheme and colour-blind mode (`data-cvd`) restyle it. Every
//! chart has its figures under "Show the figures", a real table, and lines
//! differ by dash as well as by colour.
//!
//! A chart is drawn at the width it has (measured, and again when it
//! changes), one unit of the drawing to a pixel, so its labels are read at
//! their own size on a phone as on a wide screen; labels along the bottom
//! that would run into each other are thinned out. Each figure is named on
//! hover (and its mark's tooltip), and by keyboard: the chart takes the
//! focus and the arrow keys go from one figure to the next, each said
//! under the chart.

use lattice_ui::dashboard::Chart;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;

const H: f64 = 240.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 36.0;
/// The width drawn until the chart's place is measured, and the narrowest.
const FIRST_W: f64 = 480.0;
const MIN_W: f64 = 200.0;
/// About how much room a label along the bottom takes, per character.
const CHAR_W: f64 = 7.5;

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

/// Every figure in reading order (by label, then by series): its series,
/// its place along the bottom, its value.
fn points(chart: &Chart) -> Vec<(usize, usize, f64)> {
    (0..chart.x.len())
        .flat_map(|i| {
            chart.series.iter().enumerate().filter_map(move |(s, series)| series.values.get(i).filter(|v| v.is_finite()).map(|v| (s, i, *v)))
        })
        .collect()
}

/// A figure in words: "api, 10:05: 180".
fn said(chart: &Chart, (s, i, v): (usize, usize, f64)) -> String {
    format!("{}, {}: {}", chart.series[s].name, chart.x.get(i).map_or("", String::as_str), format_figure(v))
}

/// The drawing at `w` pixels wide; `at` is the figure shown (a ring on its mark).
fn drawing(chart: &Chart, kind: Kind, w: f64, at: Option<(usize, usize, f64)>, shown: RwSignal<Option<usize>>) -> AnyView {
    let (lo, hi) = range(chart, kind);
    let plot_w = w - LEFT - RIGHT;
    let plot_h = H - TOP - BOTTOM;
    let y = move |v: f64| TOP + plot_h - (v - lo) / (hi - lo) * plot_h;
    let n = chart.x.len().max(1);
    let slot = plot_w / n as f64;
    let x_center = move |i: usize| LEFT + slot * (i as f64 + 0.5);
    let ticks: Vec<f64> = (0..=4).map(|i| lo + (hi - lo) * i as f64 / 4.0).collect();
    let grid = ticks
        .iter()
        .map(|t| {
            let ty = y(*t);
            view! {
                <line class="grid" x1=LEFT x2=w - RIGHT y1=ty y2=ty/>
                <text class="axis-label" x=LEFT - 6.0 y=ty + 4.0 text-anchor="end">{format_figure(*t)}</text>
            }
        })
        .collect_view();
    // Every label, or every second, third…: as many as fit side by side.
    let widest = chart.x.iter().map(|l| l.chars().count()).max().unwrap_or(1) as f64 * CHAR_W + 8.0;
    let every = ((widest / slot).ceil() as usize).max(1);
    let x_labels = chart
        .x
        .iter()
        .enumerate()
        .filter(|(i, _)| i % every == 0)
        .map(|(i, label)| view! { <text class="axis-label" x=x_center(i) y=H - 12.0 text-anchor="middle">{label.clone()}</text> })
        .collect_view();
    let series_count = chart.series.len().max(1);
    let band = slot * 0.8 / series_count as f64;
    let zero = y(0.0_f64.clamp(lo, hi));
    let all = points(chart);
    let all = &all;
    let index_of = move |s: usize, i: usize| all.iter().position(|(ps, pi, _)| *ps == s && *pi == i);
    let mark_of = move |s: usize, i: usize, v: f64| -> (f64, f64, f64, f64) {
        let x = LEFT + slot * i as f64 + slot * 0.1 + band * s as f64;
        let top = y(v).min(zero);
        (x, top, band.max(1.0), (y(v) - zero).abs().max(1.0))
    };
    let marks = chart
        .series
        .iter()
        .enumerate()
        .map(|(s, series)| {
            let class = format!("series series-{}", s % 6 + 1);
            let figures = series.values.iter().enumerate().filter(|(_, v)| v.is_finite()).map(|(i, v)| (i, *v)).collect::<Vec<_>>();
            let hover = move |i: usize| {
                let k = index_of(s, i);
                move |_: leptos::ev::MouseEvent| shown.set(k)
            };
            let tip = move |i: usize, v: f64| said(chart, (s, i, v));
            match kind {
                Kind::Line => {
                    let line = figures
                        .iter()
                        .map(|(i, v)| format!("{},{}", crate::data::text::fixed(x_center(*i), 1), crate::data::text::fixed(y(*v), 1)))
                        .collect::<Vec<_>>()
                        .join(" ");
                    let dots = figures
                        .iter()
                        .map(|(i, v)| view! { <circle class="dot" cx=x_center(*i) cy=y(*v) r="4" on:mouseenter=hover(*i)><title>{tip(*i, *v)}</title></circle> })
                        .collect_view();
                    view! { <g class=class><polyline class="line" points=line/>{dots}</g> }.into_any()
                }
                Kind::Bar => {
                    let bars = figures
                        .iter()
                        .map(|(i, v)| {
                            let (x, top, width, height) = mark_of(s, *i, *v);
                            view! { <rect class="bar" x=x y=top width=width height=height on:mouseenter=hover(*i)><title>{tip(*i, *v)}</title></rect> }
                        })
                        .collect_view();
                    view! { <g class=class>{bars}</g> }.into_any()
                }
            }
        })
        .collect_view();
    let ring = at.map(|(s, i, v)| match kind {
        Kind::Line => view! { <circle class="ring" cx=x_center(i) cy=y(v) r="8"/> }.into_any(),
        Kind::Bar => {
            let (x, top, width, height) = mark_of(s, i, v);
            view! { <rect class="ring" x=x - 3.0 y=top - 3.0 width=width + 6.0 height=height + 6.0/> }.into_any()
        }
    });
    view! { {grid}{marks}{x_labels}{ring} }.into_any()
}

#[component]
pub fn ChartView(chart: Chart, kind: Kind, id: String) -> impl IntoView {
    let title_id = format!("{id}-title");
    let desc_id = format!("{id}-desc");
    let readout_id = format!("{id}-figure");
    let description = format!(
        "{} chart of {} over {}. The arrow keys read each figure; they are all in the table below.",
        if kind == Kind::Line { "Line" } else { "Bar" },
        chart.series.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(", "),
        chart.x.join(", ")
    );
    let desc_ref = format!("{desc_id} {readout_id}");
    // The width the chart has, measured (and again when it changes).
    let width = RwSignal::new(FIRST_W);
    let place = NodeRef::<leptos::html::Figure>::new();
    place.on_load(move |el| {
        let measured = el.clone();
        let seen = Closure::<dyn FnMut()>::new(move || {
            let w = f64::from(measured.client_width());
            if w > 0.0 {
                width.set(w.max(MIN_W));
            }
        });
        if let Ok(observer) = web_sys::ResizeObserver::new(seen.as_ref().unchecked_ref()) {
            observer.observe(&el);
            let kept = send_wrapper::SendWrapper::new((observer, seen));
            on_cleanup(move || kept.0.disconnect());
        }
    });
    // The figure shown (hovered, or reached by the arrow keys).
    let shown = RwSignal::new(None::<usize>);
    let chart = StoredValue::new(chart);
    let count = chart.with_value(|c| points(c).len());
    let keys = move |ev: leptos::ev::KeyboardEvent| {
        let last = count.saturating_sub(1);
        let next = match (ev.key().as_str(), shown.get_untracked()) {
            (_, _) if count == 0 => return,
            ("ArrowRight" | "ArrowDown", None) | ("Home", _) => 0,
            ("ArrowLeft" | "ArrowUp", None) | ("End", _) => last,
            ("ArrowRight" | "ArrowDown", Some(k)) => (k + 1).min(last),
            ("ArrowLeft" | "ArrowUp", Some(k)) => k.saturating_sub(1),
            ("Escape", _) => {
                shown.set(None);
                return;
            }
            _ => return,
        };
        ev.prevent_default();
        shown.set(Some(next));
    };
    let at = move || shown.get().and_then(|k| chart.with_value(|c| points(c).get(k).copied()));
    let readout = move || at().map(|p| chart.with_value(|c| said(c, p))).unwrap_or_default();
    let drawn = move || {
        let w = width.get();
        let at = at();
        chart.with_value(|c| drawing(c, kind, w, at, shown))
    };
    let (legend, header, rows, title, kind_name) = chart.with_value(|chart| {
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
        (legend, header, rows, chart.title.clone(), if kind == Kind::Line { "line" } else { "bar" })
    });
    view! {
        <figure class="chart" data-kind=kind_name node_ref=place>
            <figcaption id=title_id.clone()>{title.clone()}</figcaption>
            <svg viewBox=move || format!("0 0 {} {H}", width.get()) width=move || width.get() height=H role="img" tabindex="0"
                aria-labelledby=title_id aria-describedby=desc_ref on:keydown=keys on:mouseleave=move |_| shown.set(None)>
                <desc id=desc_id>{description}</desc>
                {drawn}
            </svg>
            <p class="readout" id=readout_id aria-live="polite">{readout}</p>
            <ul class="legend">{legend}</ul>
            <details class="figures">
                <summary>"Show the figures"</summary>
                <table>
                    <caption>{title}</caption>
                    <thead><tr><th scope="col">"Label"</th>{header}</tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            </details>
        </figure>
    }
}

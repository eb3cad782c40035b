//! OpenTelemetry for lattice (REQUIREMENTS.md O4). Spans are `tracing` spans; with the
//! `export` feature and an OTLP endpoint they leave as OTLP traces, with
//! metrics beside them. The W3C trace context travels between processes as
//! a `traceparent` string: an HTTP header from the edge to the log service,
//! kept with each envelope, a NATS header from the bridge, so one trace
//! runs from a person's request to the message a rule receives.

use std::collections::HashMap;

use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::TraceContextExt;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing_opentelemetry::OpenTelemetrySpanExt;

#[cfg(feature = "export")]
mod export;
#[cfg(feature = "export")]
pub use export::{Telemetry, configured_by_environment, layer};

/// The current span's W3C trace context, when a trace is being recorded.
pub fn traceparent() -> Option<String> {
    let cx = tracing::Span::current().context();
    if !cx.span().span_context().is_valid() {
        return None;
    }
    let mut carrier = HashMap::new();
    TraceContextPropagator::new().inject_context(&cx, &mut carrier);
    carrier.remove("traceparent")
}

/// Makes the span whose context `traceparent` names the parent of `span`.
pub fn set_parent(span: &tracing::Span, traceparent: &str) {
    let carrier = HashMap::from([("traceparent".to_owned(), traceparent.to_owned())]);
    let cx = TraceContextPropagator::new().extract(&carrier);
    if cx.span().span_context().is_valid() {
        let _ = span.set_parent(cx);
    }
}

/// The trace id of `span` (hex), when a trace is being recorded; else
/// the one the caller's `traceparent` names, so logs name it either way.
pub fn trace_id(span: &tracing::Span, traceparent: Option<&str>) -> Option<String> {
    let context = span.context();
    let recorded = context.span().span_context().clone();
    if recorded.is_valid() {
        return Some(recorded.trace_id().to_string());
    }
    let id = traceparent?.split('-').nth(1)?;
    (id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()) && id.bytes().any(|b| b != b'0')).then(|| id.to_ascii_lowercase())
}

pub use opentelemetry::KeyValue;

/// A histogram of the global meter provider, made on first use, like
/// [`Counter`]; durations in seconds take the HTTP conventions' buckets.
pub struct Histogram {
    name: &'static str,
    unit: &'static str,
    histogram: std::sync::OnceLock<opentelemetry::metrics::Histogram<f64>>,
}

impl Histogram {
    pub const fn new(name: &'static str, unit: &'static str) -> Self {
        Self { name, unit, histogram: std::sync::OnceLock::new() }
    }

    pub fn record(&self, value: f64, attributes: &[KeyValue]) {
        const SECONDS: [f64; 14] = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0];
        self.histogram
            .get_or_init(|| {
                let meter = opentelemetry::global::meter("lattice");
                let builder = meter.f64_histogram(self.name).with_unit(self.unit);
                if self.unit == "s" { builder.with_boundaries(SECONDS.to_vec()).build() } else { builder.build() }
            })
            .record(value, attributes);
    }
}

/// A counter of the global meter provider, made on first use (after
/// `layer` installed the provider; without one it counts nothing), so a
/// call site keeps it in a `static`.
pub struct Counter {
    name: &'static str,
    counter: std::sync::OnceLock<opentelemetry::metrics::Counter<u64>>,
}

impl Counter {
    pub const fn new(name: &'static str) -> Self {
        Self { name, counter: std::sync::OnceLock::new() }
    }

    pub fn add(&self, attributes: &[KeyValue]) {
        self.counter.get_or_init(|| opentelemetry::global::meter("lattice").u64_counter(self.name).build()).add(1, attributes);
    }
}

/// A gauge of the global meter provider, made on first use, like
/// [`Counter`]: the last value recorded is what is exported.
pub struct Gauge {
    name: &'static str,
    unit: &'static str,
    gauge: std::sync::OnceLock<opentelemetry::metrics::Gauge<f64>>,
}

impl Gauge {
    pub const fn new(name: &'static str, unit: &'static str) -> Self {
        Self { name, unit, gauge: std::sync::OnceLock::new() }
    }

    pub fn record(&self, value: f64, attributes: &[KeyValue]) {
        self.gauge
            .get_or_init(|| opentelemetry::global::meter("lattice").f64_gauge(self.name).with_unit(self.unit).build())
            .record(value, attributes);
    }
}

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
pub use export::{Telemetry, layer};

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

pub use opentelemetry::KeyValue;

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

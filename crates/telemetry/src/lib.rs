//! OpenTelemetry for lattice (SPEC O4). Spans are `tracing` spans; with the
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
    let span = cx.span();
    let sc = span.span_context();
    sc.is_valid().then(|| format!("00-{}-{}-{:02x}", sc.trace_id(), sc.span_id(), sc.trace_flags().to_u8()))
}

/// Makes the span whose context `traceparent` names the parent of `span`.
pub fn set_parent(span: &tracing::Span, traceparent: &str) {
    let carrier = HashMap::from([("traceparent".to_owned(), traceparent.to_owned())]);
    let cx = TraceContextPropagator::new().extract(&carrier);
    if cx.span().span_context().is_valid() {
        let _ = span.set_parent(cx);
    }
}

/// Adds one to the counter `name` (e.g. `lattice.commands`) with
/// `attributes`; nothing is kept when no meter provider is installed.
pub fn count(name: &'static str, attributes: &[(&'static str, String)]) {
    use std::sync::{LazyLock, Mutex};
    static COUNTERS: LazyLock<Mutex<HashMap<&'static str, opentelemetry::metrics::Counter<u64>>>> = LazyLock::new(Default::default);
    let counter = {
        let mut all = COUNTERS.lock().unwrap_or_else(|e| e.into_inner());
        all.entry(name).or_insert_with(|| opentelemetry::global::meter("lattice").u64_counter(name).build()).clone()
    };
    let attributes: Vec<opentelemetry::KeyValue> = attributes.iter().map(|(k, v)| opentelemetry::KeyValue::new(*k, v.clone())).collect();
    counter.add(1, &attributes);
}

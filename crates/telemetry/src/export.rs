//! OTLP over HTTP (protobuf): traces through a batch processor, metrics
//! through a periodic reader, both named by the service. The endpoint is
//! `LATTICE_OTLP_ENDPOINT`, or the standard `OTEL_EXPORTER_OTLP_ENDPOINT`
//! (and its per-signal forms), which the SDK reads as the specification
//! says, with `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`,
//! `OTEL_METRIC_EXPORT_INTERVAL` and `OTEL_BSP_*`. The blocking HTTP
//! client: the SDK exports from threads of its own, outside the runtime.

use opentelemetry::KeyValue;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{MetricExporter, Protocol, SpanExporter, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_opentelemetry::OpenTelemetryLayer;

/// The providers; dropping it flushes what is left and stops exporting.
pub struct Telemetry {
    traces: SdkTracerProvider,
    metrics: SdkMeterProvider,
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        let _ = self.traces.shutdown();
        let _ = self.metrics.shutdown();
    }
}

/// Whether the standard variables ask for export.
pub fn configured_by_environment() -> bool {
    let set = |name: &str| std::env::var(name).is_ok_and(|v| !v.trim().is_empty());
    let disabled = std::env::var("OTEL_SDK_DISABLED").is_ok_and(|v| v.eq_ignore_ascii_case("true"));
    !disabled && ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"].iter().any(|v| set(v))
}

/// The tracing layer that records spans for `service` and exports them,
/// with the metrics, to `endpoint` (e.g. `http://otel-collector:4318`) or,
/// without one, where the standard variables say; and installs the W3C
/// propagator and the meter provider globally. `OTEL_SERVICE_NAME` wins
/// over `service`.
pub fn layer<S>(service: &str, endpoint: Option<&str>) -> Result<(OpenTelemetryLayer<S, opentelemetry_sdk::trace::Tracer>, Telemetry), String>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    let mut resource = Resource::builder().with_attribute(KeyValue::new("service.namespace", "lattice"));
    if std::env::var("OTEL_SERVICE_NAME").is_err() {
        resource = resource.with_service_name(service.to_owned());
    }
    let resource = resource.build();
    let base = endpoint.map(|e| e.trim_end_matches('/').to_owned());
    let mut spans = SpanExporter::builder().with_http().with_protocol(Protocol::HttpBinary);
    if let Some(base) = &base {
        spans = spans.with_endpoint(format!("{base}/v1/traces"));
    }
    let spans = spans.build().map_err(|e| format!("the OTLP trace exporter: {e}"))?;
    let traces = SdkTracerProvider::builder().with_batch_exporter(spans).with_resource(resource.clone()).build();
    let mut readings = MetricExporter::builder().with_http().with_protocol(Protocol::HttpBinary);
    if let Some(base) = &base {
        readings = readings.with_endpoint(format!("{base}/v1/metrics"));
    }
    let readings = readings.build().map_err(|e| format!("the OTLP metric exporter: {e}"))?;
    let metrics = SdkMeterProvider::builder().with_periodic_exporter(readings).with_resource(resource).build();
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    opentelemetry::global::set_meter_provider(metrics.clone());
    let tracer = traces.tracer("lattice");
    Ok((tracing_opentelemetry::layer().with_tracer(tracer), Telemetry { traces, metrics }))
}

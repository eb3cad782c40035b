//! OTLP over HTTP (protobuf) to `LATTICE_OTLP_ENDPOINT`: traces through a
//! batch processor, metrics through a periodic reader, both named by the
//! service. The blocking HTTP client: the SDK exports from threads of its
//! own, outside the runtime.

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

/// The tracing layer that records spans for `service` and exports them to
/// `endpoint` (e.g. `http://otel-collector:4318`), with the metrics, and
/// installs the W3C propagator and the meter provider globally.
pub fn layer<S>(service: &str, endpoint: &str) -> Result<(OpenTelemetryLayer<S, opentelemetry_sdk::trace::Tracer>, Telemetry), String>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    let base = endpoint.trim_end_matches('/');
    let resource = Resource::builder().with_service_name(service.to_owned()).with_attribute(KeyValue::new("service.namespace", "lattice")).build();
    let spans = SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(format!("{base}/v1/traces"))
        .build()
        .map_err(|e| format!("the OTLP trace exporter: {e}"))?;
    let traces = SdkTracerProvider::builder().with_batch_exporter(spans).with_resource(resource.clone()).build();
    let readings = MetricExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(format!("{base}/v1/metrics"))
        .build()
        .map_err(|e| format!("the OTLP metric exporter: {e}"))?;
    let metrics = SdkMeterProvider::builder().with_periodic_exporter(readings).with_resource(resource).build();
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    opentelemetry::global::set_meter_provider(metrics.clone());
    let tracer = traces.tracer("lattice");
    Ok((tracing_opentelemetry::layer().with_tracer(tracer), Telemetry { traces, metrics }))
}

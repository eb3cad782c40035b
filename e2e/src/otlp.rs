//! A local OpenTelemetry receiver (OTLP over HTTP, protobuf) for the
//! suites and the docs' pictures: it keeps the spans and the metric names
//! each service exports to it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message;

#[derive(Debug, Clone)]
pub struct Span {
    pub service: String,
    pub name: String,
    pub trace: String,
    pub id: String,
    pub parent: String,
    /// String and integer attributes, as text.
    pub attributes: HashMap<String, String>,
    /// When it started and ended, in nanoseconds since the epoch.
    pub start_ns: u64,
    pub end_ns: u64,
}

#[derive(Default)]
pub struct Received {
    pub spans: Vec<Span>,
    /// Metric names, by service.
    pub metrics: HashMap<String, Vec<String>>,
    /// The series names the Collector's Prometheus exporter makes of the
    /// metrics (infra/otel/collector.yaml: suffixes for units and types,
    /// resource attributes as labels), with the labels each carries.
    pub prometheus: HashMap<String, std::collections::BTreeSet<String>>,
}

/// The names the Collector's Prometheus exporter gives one metric with
/// `UnderscoreEscapingWithSuffixes`: dots to underscores, the unit as a
/// suffix (`s` → `_seconds`; an annotation such as `{envelope}` none),
/// `_total` for a monotonic sum, `_bucket`, `_count` and `_sum` for a
/// histogram.
pub fn prometheus_names(name: &str, unit: &str, kind: MetricKind) -> Vec<String> {
    let mut base = name.replace(['.', '-'], "_");
    let suffix = match unit {
        "s" => "seconds",
        "ms" => "milliseconds",
        "By" => "bytes",
        _ => "",
    };
    if !suffix.is_empty() && !base.ends_with(&format!("_{suffix}")) {
        base = format!("{base}_{suffix}");
    }
    match kind {
        MetricKind::Counter => vec![format!("{base}_total")],
        MetricKind::Histogram => ["bucket", "count", "sum"].iter().map(|s| format!("{base}_{s}")).collect(),
        MetricKind::Gauge => vec![base],
    }
}

#[derive(Debug, Clone, Copy)]
pub enum MetricKind {
    Counter,
    Gauge,
    Histogram,
}

fn service_of(resource: Option<&opentelemetry_proto::tonic::resource::v1::Resource>) -> String {
    let attrs = resource.map(|r| r.attributes.clone()).unwrap_or_default();
    attrs
        .iter()
        .find(|a| a.key == "service.name")
        .and_then(|a| a.value.as_ref())
        .and_then(|v| match &v.value {
            Some(opentelemetry_proto::tonic::common::v1::any_value::Value::StringValue(s)) => Some(s.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

/// An OTLP/HTTP receiver on a loopback port; returns its endpoint.
pub async fn receiver(into: Arc<Mutex<Received>>) -> String {
    let traces = into.clone();
    let app = axum::Router::new()
        .route(
            "/v1/traces",
            axum::routing::post(move |body: axum::body::Bytes| {
                let into = traces.clone();
                async move {
                    let request = ExportTraceServiceRequest::decode(body).expect("OTLP traces in protobuf");
                    let mut got = into.lock().unwrap();
                    for rs in request.resource_spans {
                        let service = service_of(rs.resource.as_ref());
                        for ss in rs.scope_spans {
                            for s in ss.spans {
                                got.spans.push(Span {
                                    service: service.clone(),
                                    name: s.name,
                                    trace: hex(&s.trace_id),
                                    id: hex(&s.span_id),
                                    parent: hex(&s.parent_span_id),
                                    attributes: s
                                        .attributes
                                        .iter()
                                        .filter_map(|a| {
                                            use opentelemetry_proto::tonic::common::v1::any_value::Value;
                                            let value = match a.value.as_ref()?.value.as_ref()? {
                                                Value::StringValue(s) => s.clone(),
                                                Value::IntValue(i) => i.to_string(),
                                                _ => return None,
                                            };
                                            Some((a.key.clone(), value))
                                        })
                                        .collect(),
                                    start_ns: s.start_time_unix_nano,
                                    end_ns: s.end_time_unix_nano,
                                });
                            }
                        }
                    }
                    ([("content-type", "application/x-protobuf")], Vec::<u8>::new())
                }
            }),
        )
        .route(
            "/v1/metrics",
            axum::routing::post(move |body: axum::body::Bytes| {
                let into = into.clone();
                async move {
                    let request = ExportMetricsServiceRequest::decode(body).expect("OTLP metrics in protobuf");
                    let mut got = into.lock().unwrap();
                    for rm in request.resource_metrics {
                        let service = service_of(rm.resource.as_ref());
                        // Resource attributes become labels of every series.
                        let resource: Vec<String> = rm.resource.iter().flat_map(|r| r.attributes.iter().map(|a| a.key.replace('.', "_"))).collect();
                        for metric in rm.scope_metrics.into_iter().flat_map(|sm| sm.metrics) {
                            use opentelemetry_proto::tonic::metrics::v1::metric::Data;
                            let keys = |attrs: &[opentelemetry_proto::tonic::common::v1::KeyValue]| {
                                attrs.iter().map(|a| a.key.replace('.', "_")).collect::<Vec<_>>()
                            };
                            let (kind, labels) = match &metric.data {
                                Some(Data::Sum(sum)) if sum.is_monotonic => {
                                    (MetricKind::Counter, sum.data_points.iter().flat_map(|p| keys(&p.attributes)).collect())
                                }
                                Some(Data::Sum(sum)) => (MetricKind::Gauge, sum.data_points.iter().flat_map(|p| keys(&p.attributes)).collect()),
                                Some(Data::Gauge(gauge)) => (MetricKind::Gauge, gauge.data_points.iter().flat_map(|p| keys(&p.attributes)).collect()),
                                Some(Data::Histogram(h)) => {
                                    (MetricKind::Histogram, h.data_points.iter().flat_map(|p| keys(&p.attributes)).chain(["le".to_owned()]).collect())
                                }
                                _ => (MetricKind::Gauge, Vec::new()),
                            };
                            for series in prometheus_names(&metric.name, &metric.unit, kind) {
                                got.prometheus.entry(series).or_default().extend(labels.iter().chain(&resource).cloned());
                            }
                            got.metrics.entry(service.clone()).or_default().push(metric.name);
                        }
                    }
                    ([("content-type", "application/x-protobuf")], Vec::<u8>::new())
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    endpoint
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

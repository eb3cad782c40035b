//! Logs (REQUIREMENTS.md O4's basics: text for people, JSON for machines) and, when
//! LATTICE_OTLP_ENDPOINT or the standard OTEL_EXPORTER_OTLP_ENDPOINT is set,
//! OpenTelemetry traces and metrics over OTLP named after the service
//! (`lattice-log`, `lattice-edge`, …, or OTEL_SERVICE_NAME).

use tracing_subscriber::EnvFilter;
use tracing_subscriber::Layer;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use crate::config::{Config, LogFormat};

/// The MCP client's OAuth code writes authorization codes and tokens at
/// debug level: held at info whatever the filter asks, since a secret goes
/// into no log line.
const QUIET_SECRETS: &str = "rmcp::transport::auth=info";

/// Logs go to standard output, or to standard error when standard output
/// carries a protocol (`lattice mcp --stdio`). The returned guard flushes
/// the telemetry when dropped.
pub fn init(config: &Config, to_stderr: bool, service: &str) -> anyhow::Result<Option<lattice_telemetry::Telemetry>> {
    let filter = EnvFilter::try_new(&config.log).unwrap_or_else(|_| EnvFilter::new("info")).add_directive(QUIET_SECRETS.parse()?);
    let writer = move || -> Box<dyn std::io::Write> { if to_stderr { Box::new(std::io::stderr()) } else { Box::new(std::io::stdout()) } };
    let exporting = config.otlp_endpoint.is_some() || lattice_telemetry::configured_by_environment();
    let (otel, guard) = if exporting {
        let (layer, guard) = lattice_telemetry::layer(service, config.otlp_endpoint.as_deref()).map_err(anyhow::Error::msg)?;
        (Some(layer), Some(guard))
    } else {
        (None, None)
    };
    // Spans reach the exporter whatever the log filter lets through.
    let otel = otel.map(|l| l.with_filter(EnvFilter::new("info")));
    let registry = tracing_subscriber::registry().with(otel);
    match config.log_format {
        LogFormat::Json => registry
            .with(tracing_subscriber::fmt::layer().json().flatten_event(true).with_target(true).with_writer(writer).with_filter(filter))
            .init(),
        LogFormat::Text => registry.with(tracing_subscriber::fmt::layer().with_target(true).with_writer(writer).with_filter(filter)).init(),
    }
    Ok(guard)
}

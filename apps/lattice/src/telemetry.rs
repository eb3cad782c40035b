//! Structured logs (SPEC O4's basics): text for people, JSON for machines.

use tracing_subscriber::EnvFilter;

use crate::config::{Config, LogFormat};

/// Logs go to standard output, or to standard error when standard output
/// carries a protocol (`lattice mcp --stdio`).
pub fn init(config: &Config, to_stderr: bool) {
    let filter = EnvFilter::try_new(&config.log).unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_target(true);
    let writer = move || -> Box<dyn std::io::Write> { if to_stderr { Box::new(std::io::stderr()) } else { Box::new(std::io::stdout()) } };
    match config.log_format {
        LogFormat::Json => builder.json().flatten_event(true).with_writer(writer).init(),
        LogFormat::Text => builder.with_writer(writer).init(),
    }
}

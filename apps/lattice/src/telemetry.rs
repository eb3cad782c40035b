//! Structured logs (SPEC O4's basics): text for people, JSON for machines.

use tracing_subscriber::EnvFilter;

use crate::config::{Config, LogFormat};

pub fn init(config: &Config) {
    let filter = EnvFilter::try_new(&config.log).unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_target(true);
    match config.log_format {
        LogFormat::Json => builder.json().flatten_event(true).init(),
        LogFormat::Text => builder.init(),
    }
}

//! The bridge against a real nats-server (started here) and the real log
//! service, on both backends.

mod chains;
mod leader;
mod permissions;
mod projections;
mod schema;
mod slow_writer;
mod stalled_checkpoint;
mod tls;
mod trace;

use async_nats::jetstream;
use serde_json::Value;

/// Every message in the LATTICE stream: (subject, Nats-Msg-Id, payload).
pub async fn stream_messages(js: &jetstream::Context) -> Vec<(String, String, Value)> {
    // The bridge creates the stream when it connects: none yet, nothing in it.
    let Ok(mut stream) = js.get_stream(lattice_bridge::STREAM).await else { return Vec::new() };
    let info = stream.info().await.unwrap().clone();
    let mut out = Vec::new();
    if info.state.messages == 0 {
        return out;
    }
    for seq in info.state.first_sequence..=info.state.last_sequence {
        let Ok(m) = stream.get_raw_message(seq).await else { continue };
        let id = m.headers.get("Nats-Msg-Id").map(|v| v.as_str().to_owned()).unwrap_or_default();
        out.push((m.subject.to_string(), id, serde_json::from_slice(&m.payload).unwrap_or(Value::Null)));
    }
    out
}

/// The bridge over `log`, publishing to the NATS at `url` (no user) until `stop`.
pub fn spawn_bridge(
    log: &lattice_log::LogService,
    url: &str,
    stop: tokio::sync::watch::Receiver<bool>,
) -> tokio::task::JoinHandle<Result<(), lattice_core::Error>> {
    let config = lattice_bridge::BridgeConfig { nats_url: url.to_owned(), user: None, password: None, name: "bridge".into(), ca_file: None, stream_replicas: 1 };
    tokio::spawn(lattice_bridge::Bridge::new(lattice_log::LogReader::of(log), config).run(stop))
}

//! Publishing to JetStream from a checkpoint.

use std::time::Duration;

use async_nats::jetstream::{self, stream};
use lattice_core::Error;
use lattice_log::LogReader;

use crate::projections::project_stored;

pub const STREAM: &str = "LATTICE";

/// JetStream drops a message whose `Nats-Msg-Id` it saw within this window.
/// The bridge repeats at most the batch it published after its last
/// checkpoint, seconds old at a restart; ten minutes covers a bridge (or
/// NATS) that stays down for a while mid-batch.
pub const DUPLICATE_WINDOW: Duration = Duration::from_secs(600);

/// Envelopes published before their acknowledgements are awaited together.
const BATCH: i64 = 1024;
/// How often the checkpoint is written while the log moves. Between two
/// writes the bridge may repeat, after a crash, what it published since the
/// last one; JetStream drops those repeats by id.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(200);

#[derive(Debug, Clone)]
pub struct BridgeConfig {
    pub nats_url: String,
    /// NATS user and password (the `bridge` user of infra/nats).
    pub user: Option<String>,
    pub password: Option<String>,
    /// The checkpoint's name: one per bridge.
    pub name: String,
}

/// Creates or updates the `LATTICE` stream over `lattice.>`.
pub async fn ensure_stream(js: &jetstream::Context) -> Result<(), Error> {
    let config = stream::Config {
        name: STREAM.into(),
        subjects: vec!["lattice.>".into()],
        duplicate_window: DUPLICATE_WINDOW,
        storage: stream::StorageType::File,
        ..Default::default()
    };
    match js.get_stream(STREAM).await {
        Ok(_) => js.update_stream(config).await.map(|_| ()).map_err(|e| Error::unavailable(format!("updating the stream: {e}"))),
        Err(_) => js.create_stream(config).await.map(|_| ()).map_err(|e| Error::unavailable(format!("creating the stream: {e}"))),
    }
}

pub struct Bridge {
    reader: LogReader,
    config: BridgeConfig,
}

impl Bridge {
    pub fn new(reader: LogReader, config: BridgeConfig) -> Self {
        Self { reader, config }
    }

    async fn connect(&self) -> Result<jetstream::Context, Error> {
        let mut options = async_nats::ConnectOptions::new().retry_on_initial_connect().connection_timeout(Duration::from_secs(5));
        if let (Some(user), Some(password)) = (&self.config.user, &self.config.password) {
            options = options.user_and_password(user.clone(), password.clone());
        }
        let client = options
            .connect(&self.config.nats_url)
            .await
            .map_err(|e| Error::unavailable(format!("cannot reach NATS at {}: {e}", self.config.nats_url)))?;
        let js = jetstream::new(client);
        ensure_stream(&js).await?;
        Ok(js)
    }

    /// Runs until `stop` turns true; reconnects and resumes from the
    /// checkpoint after any failure.
    pub async fn run(self, mut stop: tokio::sync::watch::Receiver<bool>) -> Result<(), Error> {
        let mut horizon = self.reader.horizon();
        let mut backoff = Duration::from_millis(100);
        'connect: loop {
            if *stop.borrow() {
                return Ok(());
            }
            let js = match self.connect().await {
                Ok(js) => js,
                Err(e) => {
                    tracing::warn!(error = %e, "the bridge cannot reach NATS; retrying");
                    tokio::select! { _ = tokio::time::sleep(backoff) => {}, _ = stop.changed() => return Ok(()) }
                    backoff = (backoff * 2).min(Duration::from_secs(5));
                    continue;
                }
            };
            tracing::info!(url = %self.config.nats_url, "the bridge is publishing to JetStream");
            let mut cursor = self.reader.checkpoint(&self.config.name).await?;
            let mut saved = cursor;
            let mut saved_at = std::time::Instant::now();
            loop {
                if *stop.borrow() {
                    if cursor > saved {
                        self.reader.save_checkpoint(&self.config.name, cursor).await?;
                    }
                    return Ok(());
                }
                let batch = self.reader.read_stored(cursor, BATCH).await?;
                if batch.is_empty() {
                    if cursor > saved {
                        self.reader.save_checkpoint(&self.config.name, cursor).await?;
                        (saved, saved_at) = (cursor, std::time::Instant::now());
                    }
                    tokio::select! {
                        _ = horizon.changed() => {}
                        _ = tokio::time::sleep(Duration::from_millis(500)) => {}
                        _ = stop.changed() => {}
                    }
                    continue;
                }
                match self.publish(&js, &batch).await {
                    Ok(()) => {
                        cursor = batch.last().map_or(cursor, |e| e.seq);
                        if saved_at.elapsed() >= CHECKPOINT_EVERY {
                            self.reader.save_checkpoint(&self.config.name, cursor).await?;
                            (saved, saved_at) = (cursor, std::time::Instant::now());
                        }
                        backoff = Duration::from_millis(100);
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, from = cursor, "publishing failed; reconnecting and publishing again from the checkpoint");
                        tokio::select! { _ = tokio::time::sleep(backoff) => {}, _ = stop.changed() => return Ok(()) }
                        backoff = (backoff * 2).min(Duration::from_secs(5));
                        continue 'connect;
                    }
                }
            }
        }
    }

    /// Publishes a batch in order and waits for every acknowledgement.
    async fn publish(&self, js: &jetstream::Context, batch: &[lattice_log::StoredEnvelope]) -> Result<(), Error> {
        let mut acks = Vec::with_capacity(batch.len());
        for e in batch {
            let Some(out) = project_stored(e, &self.reader).await? else { continue };
            let mut headers = async_nats::HeaderMap::new();
            headers.insert("Nats-Msg-Id", out.msg_id.as_str());
            if let Some(traceparent) = &e.traceparent {
                headers.insert("traceparent", traceparent.as_str());
            }
            let ack = js
                .publish_with_headers(out.subject, headers, out.payload.into())
                .await
                .map_err(|e| Error::unavailable(format!("publish: {e}")))?;
            acks.push(ack);
        }
        for ack in acks {
            tokio::time::timeout(Duration::from_secs(10), ack)
                .await
                .map_err(|_| Error::unavailable("no acknowledgement from JetStream"))?
                .map_err(|e| Error::unavailable(format!("acknowledgement: {e}")))?;
        }
        Ok(())
    }
}

//! Publishing to JetStream from a checkpoint.

use std::time::Duration;

use std::collections::VecDeque;

use async_nats::jetstream::context::PublishAckFuture;
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

/// Envelopes read from the log at a time.
const BATCH: i64 = 2048;
/// Publishes awaiting their acknowledgement at most.
const WINDOW: usize = 4096;
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

    /// A fresh connection that never reconnects by itself: a client that
    /// reconnected would send what it had queued after publishes the old
    /// connection lost, out of log order. Instead the bridge notices the loss
    /// (`lost` turns true), drops the client with its queue, and publishes
    /// again from the checkpoint on a new one.
    async fn connect(&self) -> Result<(jetstream::Context, tokio::sync::watch::Receiver<bool>), Error> {
        let (lost_tx, lost) = tokio::sync::watch::channel(false);
        // The first connection is immediate; once it was made, a reconnection
        // waits a day, which is to say never: this client is dropped first.
        let connected = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let connected_for_delay = connected.clone();
        let mut options = async_nats::ConnectOptions::new()
            .connection_timeout(Duration::from_secs(5))
            .reconnect_delay_callback(move |_| {
                if connected_for_delay.load(std::sync::atomic::Ordering::SeqCst) {
                    Duration::from_secs(24 * 3600)
                } else {
                    Duration::ZERO
                }
            })
            .event_callback(move |event| {
                let (lost_tx, connected) = (lost_tx.clone(), connected.clone());
                async move {
                    match event {
                        async_nats::Event::Connected => connected.store(true, std::sync::atomic::Ordering::SeqCst),
                        async_nats::Event::Disconnected | async_nats::Event::Closed => {
                            let _ = lost_tx.send(true);
                        }
                        _ => {}
                    }
                }
            });
        if let (Some(user), Some(password)) = (&self.config.user, &self.config.password) {
            options = options.user_and_password(user.clone(), password.clone());
        }
        let client = options
            .connect(&self.config.nats_url)
            .await
            .map_err(|e| Error::unavailable(format!("cannot reach NATS at {}: {e}", self.config.nats_url)))?;
        let js = jetstream::new(client);
        ensure_stream(&js).await?;
        Ok((js, lost))
    }

    /// Runs until `stop` turns true; reconnects and resumes from the
    /// checkpoint after any failure.
    pub async fn run(self, mut stop: tokio::sync::watch::Receiver<bool>) -> Result<(), Error> {
        let mut horizon = self.reader.horizon();
        let mut backoff = Duration::from_millis(100);
        loop {
            if *stop.borrow() {
                return Ok(());
            }
            let (js, mut lost) = match self.connect().await {
                Ok(connected) => connected,
                Err(e) => {
                    tracing::warn!(error = %e, "the bridge cannot reach NATS; retrying");
                    tokio::select! { _ = tokio::time::sleep(backoff) => {}, _ = stop.changed() => return Ok(()) }
                    backoff = (backoff * 2).min(Duration::from_secs(5));
                    continue;
                }
            };
            tracing::info!(url = %self.config.nats_url, "the bridge is publishing to JetStream");
            // Publishes are pipelined: up to WINDOW await their
            // acknowledgement while later envelopes are read and sent. The
            // checkpoint follows the acknowledgements, in log order.
            let saved_checkpoint = self.reader.checkpoint(&self.config.name).await?;
            let mut read_to = saved_checkpoint;
            let mut acked = saved_checkpoint;
            let mut saved = saved_checkpoint;
            let mut saved_at = std::time::Instant::now();
            let mut inflight: VecDeque<(i64, Option<PublishAckFuture>)> = VecDeque::new();
            let mut prefetch: Option<tokio::task::JoinHandle<Result<Vec<lattice_log::StoredEnvelope>, Error>>> = None;
            let failure: Error = loop {
                if *stop.borrow() {
                    match drain(&mut inflight, &mut acked, &mut lost).await {
                        Ok(()) if acked > saved => self.reader.save_checkpoint(&self.config.name, acked).await?,
                        _ => {}
                    }
                    return Ok(());
                }
                // The next batch is read while this one is published.
                let batch = match prefetch.take() {
                    Some(read) => read.await.map_err(|e| Error::unavailable(e.to_string()))??,
                    None => self.reader.read_stored(read_to, BATCH).await?,
                };
                if let Some(last) = batch.last() {
                    let (reader, from) = (self.reader.clone(), last.seq);
                    prefetch = Some(tokio::spawn(async move { reader.read_stored(from, BATCH).await }));
                }
                if batch.is_empty() {
                    if *lost.borrow() {
                        break Error::unavailable("the connection to NATS was lost");
                    }
                    // Caught up: wait for the log to move. The checkpoint is
                    // brought up to date when the log rests, or every
                    // CHECKPOINT_EVERY, not after each catch-up: its write
                    // must not delay the next envelope.
                    let rested = tokio::select! {
                        _ = horizon.changed() => false,
                        _ = tokio::time::sleep(Duration::from_millis(50)) => true,
                        _ = lost.changed() => false,
                        _ = stop.changed() => false,
                    };
                    if rested || saved_at.elapsed() >= CHECKPOINT_EVERY {
                        if let Err(e) = drain(&mut inflight, &mut acked, &mut lost).await {
                            break e;
                        }
                        if acked > saved {
                            self.reader.save_checkpoint(&self.config.name, acked).await?;
                            (saved, saved_at) = (acked, std::time::Instant::now());
                        }
                        backoff = Duration::from_millis(100);
                    }
                    continue;
                }
                let mut failed = None;
                for e in &batch {
                    let ack = match self.send(&js, e).await {
                        Ok(ack) => ack,
                        Err(err) => {
                            failed = Some(err);
                            break;
                        }
                    };
                    inflight.push_back((e.seq, ack));
                    read_to = e.seq;
                    while inflight.len() > WINDOW {
                        if let Err(err) = settle_front(&mut inflight, &mut acked, &mut lost).await {
                            failed = Some(err);
                            break;
                        }
                    }
                    if failed.is_some() {
                        break;
                    }
                }
                if let Some(err) = failed {
                    break err;
                }
                if saved_at.elapsed() >= CHECKPOINT_EVERY && acked > saved {
                    self.reader.save_checkpoint(&self.config.name, acked).await?;
                    (saved, saved_at) = (acked, std::time::Instant::now());
                }
            };
            tracing::warn!(error = %failure, from = saved, "publishing failed; reconnecting and publishing again from the checkpoint");
            if acked > saved {
                self.reader.save_checkpoint(&self.config.name, acked).await?;
            }
            tokio::select! { _ = tokio::time::sleep(backoff) => {}, _ = stop.changed() => return Ok(()) }
            backoff = (backoff * 2).min(Duration::from_secs(5));
        }
    }

    /// Sends one envelope (if it is bridged); the acknowledgement comes later.
    async fn send(&self, js: &jetstream::Context, e: &lattice_log::StoredEnvelope) -> Result<Option<PublishAckFuture>, Error> {
        let Some(out) = project_stored(e, &self.reader).await? else { return Ok(None) };
        let mut headers = async_nats::HeaderMap::new();
        headers.insert("Nats-Msg-Id", out.msg_id.as_str());
        // The publish is a span of the command's trace, and the message
        // carries it on: a rule's work joins the same trace.
        let span = tracing::info_span!("bridge.publish", otel.kind = "producer", messaging.destination.name = %out.subject, seq = e.seq);
        if let Some(parent) = &e.traceparent {
            lattice_telemetry::set_parent(&span, parent);
        }
        let traceparent = span.in_scope(lattice_telemetry::traceparent).or_else(|| e.traceparent.clone());
        if let Some(traceparent) = &traceparent {
            headers.insert("traceparent", traceparent.as_str());
        }
        static PUBLISHED: lattice_telemetry::Counter = lattice_telemetry::Counter::new("lattice.bridge.published");
        PUBLISHED.add(&[lattice_telemetry::KeyValue::new("event", out.subject.splitn(4, '.').nth(3).unwrap_or_default().to_owned())]);
        js.publish_with_headers(out.subject, headers, out.payload.into())
            .await
            .map(Some)
            .map_err(|e| Error::unavailable(format!("publish: {e}")))
    }
}

/// Awaits the oldest publish's acknowledgement; `acked` moves to its seq.
async fn settle_front(
    inflight: &mut VecDeque<(i64, Option<PublishAckFuture>)>,
    acked: &mut i64,
    lost: &mut tokio::sync::watch::Receiver<bool>,
) -> Result<(), Error> {
    let Some((seq, ack)) = inflight.pop_front() else { return Ok(()) };
    if let Some(ack) = ack {
        if *lost.borrow() {
            return Err(Error::unavailable("the connection to NATS was lost"));
        }
        tokio::select! {
            got = tokio::time::timeout(Duration::from_secs(10), ack) => {
                got.map_err(|_| Error::unavailable("no acknowledgement from JetStream"))?
                    .map_err(|e| Error::unavailable(format!("acknowledgement: {e}")))?;
            }
            _ = lost.wait_for(|lost| *lost) => return Err(Error::unavailable("the connection to NATS was lost")),
        }
    }
    *acked = seq;
    Ok(())
}

async fn drain(
    inflight: &mut VecDeque<(i64, Option<PublishAckFuture>)>,
    acked: &mut i64,
    lost: &mut tokio::sync::watch::Receiver<bool>,
) -> Result<(), Error> {
    while !inflight.is_empty() {
        settle_front(inflight, acked, lost).await?;
    }
    Ok(())
}

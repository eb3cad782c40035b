//! Publishing to JetStream from a checkpoint.

use std::collections::VecDeque;

use backon::BackoffBuilder;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_nats::jetstream::context::PublishAckFuture;
use async_nats::jetstream::{self, stream};
use lattice_core::Error;
use lattice_log::LogReader;
use lattice_log::chain::ChainKey;

use crate::found::Found;
use crate::lookups::Lookups;
use crate::projections::Projector;

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
/// How long a bridge's lead lasts without renewal: a crashed leader's
/// standby takes over this long after it stopped renewing.
const LEAD: Duration = Duration::from_secs(10);
/// How often the leader renews its lead, and a standby looks for it.
const LEAD_RENEW: Duration = Duration::from_secs(3);

#[derive(Debug, Clone)]
pub struct BridgeConfig {
    pub nats_url: String,
    /// NATS user and password (the `bridge` user of infra/nats).
    pub user: Option<String>,
    pub password: Option<String>,
    /// The checkpoint's name: one per bridge.
    pub name: String,
    /// The CA that signs the NATS server's certificate, for `tls://` (the
    /// system's roots otherwise).
    pub ca_file: Option<std::path::PathBuf>,
    /// The copies of the `LATTICE` stream a NATS cluster keeps when the
    /// bridge creates it (1 on a single server; 3 across three).
    pub stream_replicas: usize,
}

impl BridgeConfig {
    /// `options` with the configured CA and credentials.
    fn secured(&self, mut options: async_nats::ConnectOptions) -> async_nats::ConnectOptions {
        if let Some(ca) = &self.ca_file {
            options = options.add_root_certificates(ca.clone()).require_tls(true);
        }
        if let (Some(user), Some(password)) = (&self.user, &self.password) {
            options = options.user_and_password(user.clone(), password.clone());
        }
        options
    }

    /// Connects once as the bridge would, and says what it finds: whether
    /// JetStream answers and the `LATTICE` stream exists (`lattice doctor`).
    pub async fn probe(&self) -> Result<String, Error> {
        let options = self.secured(async_nats::ConnectOptions::new().connection_timeout(Duration::from_secs(5)));
        let client = match tokio::time::timeout(Duration::from_secs(10), options.connect(&self.nats_url)).await {
            Ok(Ok(client)) => client,
            Ok(Err(e)) => return Err(Error::unavailable(format!("cannot reach NATS at {}: {e}", self.nats_url))),
            Err(_) => return Err(Error::unavailable(format!("NATS at {} did not answer within 10 s", self.nats_url))),
        };
        let js = jetstream::new(client);
        match js.get_stream(STREAM).await {
            Ok(mut stream) => {
                let info = stream.info().await.map_err(|e| Error::unavailable(format!("reading stream {STREAM}: {e}")))?;
                Ok(format!("JetStream answers; stream {STREAM} holds {} messages on {} replica(s)", info.state.messages, info.config.num_replicas))
            }
            Err(e) if matches!(e.kind(), jetstream::context::GetStreamErrorKind::JetStream(j) if j.error_code() == jetstream::ErrorCode::STREAM_NOT_FOUND) => {
                Ok(format!("JetStream answers; stream {STREAM} is not there yet (the bridge creates it)"))
            }
            Err(e) => Err(Error::unavailable(format!("JetStream does not answer at {}: {e}", self.nats_url))),
        }
    }
}

/// Creates the `LATTICE` stream over `lattice.>` when it is missing. A
/// stream that exists is the operator's: its replicas, limits and storage
/// are left as they are (the bridge's user may not change them anyway).
pub async fn ensure_stream(js: &jetstream::Context) -> Result<(), Error> {
    ensure_stream_with(js, 1).await
}

/// As [`ensure_stream`], creating it with `replicas` copies.
pub async fn ensure_stream_with(js: &jetstream::Context, replicas: usize) -> Result<(), Error> {
    match js.get_stream(STREAM).await {
        Ok(_) => Ok(()),
        Err(e)
            if matches!(e.kind(), jetstream::context::GetStreamErrorKind::JetStream(ref js)
                if js.error_code() == jetstream::ErrorCode::STREAM_NOT_FOUND) =>
        {
            let config = stream::Config {
                name: STREAM.into(),
                subjects: vec!["lattice.>".into()],
                duplicate_window: DUPLICATE_WINDOW,
                storage: stream::StorageType::File,
                num_replicas: replicas.max(1),
                ..Default::default()
            };
            js.create_stream(config).await.map(|_| ()).map_err(|e| Error::unavailable(format!("creating the stream: {e}")))
        }
        Err(e) => Err(Error::unavailable(format!("reading the stream: {e}"))),
    }
}

pub struct Bridge {
    reader: LogReader,
    projector: Projector,
    files: crate::files::FileCopier,
    config: BridgeConfig,
    status: Arc<BridgeStatus>,
    /// This bridge's name on the lead it holds.
    holder: String,
}

/// How the bridge is doing, for `/readyz` and the lag gauges: whether it is
/// publishing, and how far behind the log it is.
#[derive(Debug, Default)]
pub struct BridgeStatus {
    publishing: AtomicBool,
    /// Envelopes committed and not yet acknowledged by JetStream.
    behind: AtomicI64,
    /// The age of the oldest of them, in milliseconds.
    behind_ms: AtomicI64,
    /// Why it is not publishing, when it is not.
    failure: Mutex<Option<String>>,
    /// Envelopes sent to JetStream (a repeat after a reconnection counts again).
    published: AtomicU64,
    /// Reads of the log for what was sent, besides the envelopes themselves.
    lookups: Arc<AtomicU64>,
}

impl BridgeStatus {
    /// `Ok` while the bridge publishes; why not, otherwise.
    pub fn ready(&self) -> Result<(), String> {
        if self.publishing.load(Ordering::SeqCst) {
            return Ok(());
        }
        let failure = self.failure.lock().expect("never poisoned").clone();
        Err(failure.unwrap_or_else(|| "the bridge has not connected yet".into()))
    }

    /// Envelopes behind the log, and the oldest one's age in seconds.
    pub fn lag(&self) -> (i64, f64) {
        (self.behind.load(Ordering::Relaxed), self.behind_ms.load(Ordering::Relaxed) as f64 / 1000.0)
    }

    /// Envelopes sent to JetStream since the bridge was made, and the reads
    /// of the log it made to build them (the envelopes' own excepted): their
    /// quotient is what a bridged envelope costs the database besides itself.
    pub fn reads(&self) -> (u64, u64) {
        (self.published.load(Ordering::Relaxed), self.lookups.load(Ordering::Relaxed))
    }

    fn publishing(&self) {
        self.publishing.store(true, Ordering::SeqCst);
        *self.failure.lock().expect("never poisoned") = None;
    }

    fn standing_by(&self, name: &str) {
        self.publishing.store(false, Ordering::SeqCst);
        *self.failure.lock().expect("never poisoned") = Some(format!("standing by: another bridge named {name:?} publishes"));
    }

    fn failing(&self, why: &Error) {
        self.publishing.store(false, Ordering::SeqCst);
        *self.failure.lock().expect("never poisoned") = Some(why.to_string());
    }

    fn record_lag(&self, now_ms: i64, horizon: i64, acked: i64, oldest_at_ms: Option<i64>) {
        static ENVELOPES: lattice_telemetry::Gauge = lattice_telemetry::Gauge::new("lattice.bridge.lag", "{envelope}");
        static SECONDS: lattice_telemetry::Gauge = lattice_telemetry::Gauge::new("lattice.bridge.lag.duration", "s");
        let behind = (horizon - acked).max(0);
        let age = match oldest_at_ms {
            Some(at) if behind > 0 => (now_ms - at).max(0),
            _ => 0,
        };
        self.behind.store(behind, Ordering::Relaxed);
        self.behind_ms.store(age, Ordering::Relaxed);
        ENVELOPES.record(behind as f64, &[]);
        SECONDS.record(age as f64 / 1000.0, &[]);
    }
}

/// What a publishing session keeps: the checkpoint and the publishes
/// awaiting their acknowledgement.
struct Progress {
    read_to: i64,
    acked: i64,
    saved: i64,
    saved_at: std::time::Instant,
    /// When the last renewal that was granted was asked for.
    led_at: std::time::Instant,
    inflight: VecDeque<(i64, i64, Option<PublishAckFuture>)>,
    /// The checkpoint's write under way (to the seq it returns), and the
    /// lead's renewal under way (asked for at the instant it returns).
    /// They run beside the publishing: a write held up by the database (a
    /// slow disk, a locked row) must not hold back the next envelope
    /// (`tests/it/stalled_checkpoint.rs`).
    saving: Option<tokio::task::JoinHandle<Result<i64, Error>>>,
    renewing: Option<tokio::task::JoinHandle<Result<(bool, std::time::Instant), Error>>>,
}

impl Bridge {
    pub fn new(reader: LogReader, config: BridgeConfig) -> Self {
        let holder = format!("bridge-{}", ulid::Ulid::generate().to_string().to_lowercase());
        let status = Arc::<BridgeStatus>::default();
        let lookups = Lookups::new(reader.clone(), status.lookups.clone());
        Self { projector: Projector::new(lookups.clone(), None), files: crate::files::FileCopier::new(lookups), reader, config, status, holder }
    }

    /// Mints chains under `key` (the deployment's, `ChainKey::derive` of
    /// its token secret, as the log service checks them): every message
    /// carries a `new_chain`, and an answer the chain its run recorded.
    pub fn with_chains(mut self, key: ChainKey) -> Self {
        self.projector = Projector::new(Lookups::new(self.reader.clone(), self.status.lookups.clone()), Some(key));
        self
    }

    /// Its status, shared: `/readyz` and the lag gauges read it.
    pub fn status(&self) -> Arc<BridgeStatus> {
        self.status.clone()
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
                if connected_for_delay.load(std::sync::atomic::Ordering::SeqCst) { Duration::from_secs(24 * 3600) } else { Duration::ZERO }
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
        options = self.config.secured(options);
        let client = options
            .connect(&self.config.nats_url)
            .await
            .map_err(|e| Error::unavailable(format!("cannot reach NATS at {}: {e}", self.config.nats_url)))?;
        let js = jetstream::new(client);
        ensure_stream_with(&js, self.config.stream_replicas).await?;
        Ok((js, lost))
    }

    /// Runs until `stop` turns true. Any failure, of NATS or of the
    /// database, ends only the session: the bridge waits (exponentially
    /// longer, with jitter, up to 5 s) and publishes again from its
    /// checkpoint, for as long as it takes.
    pub async fn run(self, mut stop: tokio::sync::watch::Receiver<bool>) -> Result<(), Error> {
        let backoff = || {
            backon::ExponentialBuilder::default()
                .with_min_delay(Duration::from_millis(100))
                .with_max_delay(Duration::from_secs(5))
                .with_jitter()
                .without_max_times()
                .build()
        };
        let mut delays = backoff();
        loop {
            if *stop.borrow() {
                return self.step_down().await;
            }
            match self.reader.lead(&self.config.name, &self.holder, LEAD).await {
                Ok(true) => {}
                Ok(false) => {
                    // Another bridge of this name publishes: wait hot.
                    self.status.standing_by(&self.config.name);
                    tokio::select! { _ = tokio::time::sleep(LEAD_RENEW) => {}, _ = stop.changed() => {} }
                    continue;
                }
                Err(e) => {
                    self.status.failing(&e);
                    tokio::select! { _ = tokio::time::sleep(LEAD_RENEW) => {}, _ = stop.changed() => {} }
                    continue;
                }
            }
            let mut progressed = false;
            match self.session(&mut stop, &mut progressed).await {
                Ok(()) => return self.step_down().await,
                Err(e) => {
                    self.status.failing(&e);
                    tracing::warn!(error = %e, "the bridge cannot publish; trying again from its checkpoint");
                }
            }
            if progressed {
                delays = backoff();
            }
            let delay = delays.next().unwrap_or(Duration::from_secs(5));
            tokio::select! { _ = tokio::time::sleep(delay) => {}, _ = stop.changed() => return self.step_down().await }
        }
    }

    /// Gives the lead back on a clean stop: the standby takes over at once.
    async fn step_down(&self) -> Result<(), Error> {
        self.status.publishing.store(false, Ordering::SeqCst);
        self.reader.step_down(&self.config.name, &self.holder).await
    }

    /// One connection's worth of publishing, from the checkpoint; `Ok` when
    /// stopped, the failure otherwise. `progressed` turns true once
    /// something was acknowledged.
    async fn session(&self, stop: &mut tokio::sync::watch::Receiver<bool>, progressed: &mut bool) -> Result<(), Error> {
        let mut horizon = self.reader.horizon();
        let (js, mut lost) = self.connect().await?;
        let checkpoint = self.reader.checkpoint(&self.config.name).await?;
        tracing::info!(url = %self.config.nats_url, from = checkpoint, "the bridge is publishing to JetStream");
        self.status.publishing();
        let mut p = Progress {
            read_to: checkpoint,
            acked: checkpoint,
            saved: checkpoint,
            saved_at: std::time::Instant::now(),
            led_at: std::time::Instant::now(),
            inflight: VecDeque::new(),
            saving: None,
            renewing: None,
        };
        let failure = self.publish_from(&js, &mut p, &mut horizon, &mut lost, stop, progressed).await.err();
        // The writes under way land before the last checkpoint and before
        // a step down (a renewal landing after it would take the lead back).
        if let Some(saving) = p.saving.take()
            && let Ok(Ok(saved)) = saving.await
        {
            p.saved = p.saved.max(saved);
        }
        if let Some(renewing) = p.renewing.take() {
            let _ = renewing.await;
        }
        // What was acknowledged is kept, whatever ended the session (if
        // the database answers: otherwise it is published again, and
        // JetStream drops the repeats by id).
        if failure.is_none() {
            let _ = drain(&mut p.inflight, &mut p.acked, &mut lost).await;
        }
        if p.acked > p.saved
            && let Err(e) = self.reader.save_checkpoint(&self.config.name, p.acked).await
        {
            tracing::warn!(error = %e, "the bridge could not keep its checkpoint");
        }
        failure.map_or(Ok(()), Err)
    }

    async fn publish_from(
        &self,
        js: &jetstream::Context,
        p: &mut Progress,
        horizon: &mut tokio::sync::watch::Receiver<i64>,
        lost: &mut tokio::sync::watch::Receiver<bool>,
        stop: &mut tokio::sync::watch::Receiver<bool>,
        progressed: &mut bool,
    ) -> Result<(), Error> {
        // Publishes are pipelined: up to WINDOW await their acknowledgement
        // while later envelopes are read and sent. The checkpoint follows
        // the acknowledgements, in log order.
        let mut prefetch: Option<tokio::task::JoinHandle<Result<Vec<lattice_log::StoredEnvelope>, Error>>> = None;
        loop {
            if *stop.borrow() {
                return Ok(());
            }
            self.renew_lead(p).await?;
            // The next batch is read while this one is published.
            let batch = match prefetch.take() {
                Some(read) => read.await.map_err(|e| Error::unavailable(e.to_string()))??,
                None => self.reader.read_stored(p.read_to, BATCH).await?,
            };
            if let Some(last) = batch.last() {
                let (reader, from) = (self.reader.clone(), last.seq);
                prefetch = Some(tokio::spawn(async move { reader.read_stored(from, BATCH).await }));
            }
            self.status.record_lag(
                self.reader.clock().now_ms(),
                *horizon.borrow(),
                p.acked,
                p.inflight.front().map(|f| f.1).or(batch.first().map(|e| e.at_ms)),
            );
            if batch.is_empty() {
                if *lost.borrow() {
                    return Err(Error::unavailable("the connection to NATS was lost"));
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
                if rested || p.saved_at.elapsed() >= CHECKPOINT_EVERY {
                    drain(&mut p.inflight, &mut p.acked, lost).await?;
                    *progressed |= p.acked > p.saved;
                    self.keep_checkpoint(p).await?;
                    self.status.record_lag(self.reader.clock().now_ms(), *horizon.borrow(), p.acked, None);
                    self.publish_seal_checkpoints(js).await?;
                }
                continue;
            }
            // What the batch needs besides itself, read once for it.
            let found = self.projector.look_up(&batch).await?;
            for e in &batch {
                let ack = self.send(js, e, &found).await?;
                p.inflight.push_back((e.seq, e.at_ms, ack));
                p.read_to = e.seq;
                while p.inflight.len() > WINDOW {
                    settle_front(&mut p.inflight, &mut p.acked, lost).await?;
                    *progressed = true;
                }
            }
            if p.saved_at.elapsed() >= CHECKPOINT_EVERY {
                self.keep_checkpoint(p).await?;
            }
        }
    }

    /// Takes in the checkpoint's last write if it is done, and starts the
    /// next if there is something to keep; one at a time, so they land in
    /// order. A write that failed ends the session, as it did inline.
    async fn keep_checkpoint(&self, p: &mut Progress) -> Result<(), Error> {
        if let Some(saving) = p.saving.take_if(|h| h.is_finished()) {
            p.saved = saving.await.map_err(|e| Error::unavailable(format!("the checkpoint's write: {e}")))??;
        }
        if p.saving.is_none() && p.acked > p.saved {
            let (reader, name, to) = (self.reader.clone(), self.config.name.clone(), p.acked);
            p.saving = Some(tokio::spawn(async move { reader.save_checkpoint(&name, to).await.map(|()| to) }));
            p.saved_at = std::time::Instant::now();
        }
        Ok(())
    }

    /// Renews the lead every LEAD_RENEW, beside the publishing. Only when
    /// the last granted renewal is about to run out (LEAD after it was
    /// asked for, less one LEAD_RENEW of margin) does publishing wait for
    /// the renewal under way: past that, another bridge may lead.
    async fn renew_lead(&self, p: &mut Progress) -> Result<(), Error> {
        if p.renewing.is_none() && p.led_at.elapsed() >= LEAD_RENEW {
            let (reader, name, holder) = (self.reader.clone(), self.config.name.clone(), self.holder.clone());
            p.renewing = Some(tokio::spawn(async move {
                let asked_at = std::time::Instant::now();
                reader.lead(&name, &holder, LEAD).await.map(|granted| (granted, asked_at))
            }));
        }
        let overdue = p.led_at.elapsed() >= LEAD - LEAD_RENEW;
        if let Some(renewing) = p.renewing.take_if(|h| overdue || h.is_finished()) {
            let (granted, asked_at) = renewing.await.map_err(|e| Error::unavailable(format!("the lead's renewal: {e}")))??;
            if !granted {
                return Err(Error::unavailable("another bridge took the lead"));
            }
            p.led_at = asked_at;
        }
        Ok(())
    }

    /// Publishes the log's seal checkpoints signed since the last published
    /// (docs/SEAL.md), on `lattice.<tenant>.<workspace>.log.checkpoint`, each
    /// once (`Nats-Msg-Id` names its chain and number), so a copy held
    /// elsewhere witnesses them. Its own cursor, apart from the envelopes'.
    async fn publish_seal_checkpoints(&self, js: &jetstream::Context) -> Result<(), Error> {
        let cursor = format!("{}:checkpoints", self.config.name);
        let mut after = self.reader.checkpoint(&cursor).await?;
        loop {
            let signed = self.reader.checkpoints_after(after, 200).await?;
            let Some(last) = signed.last().map(|c| c.seq) else { return Ok(()) };
            for c in &signed {
                let workspace = if c.workspace.is_empty() { "_" } else { c.workspace.as_str() };
                let subject = format!("lattice.{}.{workspace}.log.checkpoint", c.tenant);
                let mut headers = async_nats::HeaderMap::new();
                headers.insert("Nats-Msg-Id", format!("checkpoint:{}:{workspace}:{}", c.tenant, c.n).as_str());
                let payload = serde_json::to_vec(c).expect("a checkpoint serializes");
                js.publish_with_headers(subject, headers, payload.into())
                    .await
                    .map_err(|e| Error::unavailable(format!("publish: {e}")))?
                    .await
                    .map_err(|e| Error::unavailable(format!("publish: {e}")))?;
            }
            after = last;
            self.reader.save_checkpoint(&cursor, after).await?;
        }
    }

    /// Sends one envelope (if it is bridged); the acknowledgement comes later.
    async fn send(&self, js: &jetstream::Context, e: &lattice_log::StoredEnvelope, found: &Found) -> Result<Option<PublishAckFuture>, Error> {
        let Some(mut out) = self.projector.project_stored(e, found).await? else { return Ok(None) };
        // A file's bytes are in the object store before the message that
        // names them; an erased file's leave after its audit row's.
        if matches!(out.files, crate::projections::FileCopies::Put(_)) {
            self.files.apply(js, &e.tenant, &out.files, found).await?;
        }
        // What NATS would refuse goes out summarized, never held back: a
        // refused publish would stall every envelope after it.
        let limit = js.client().server_info().max_payload.saturating_sub(HEADERS_ROOM);
        if limit > 0 && out.payload.len() > limit {
            out.payload = crate::payloads::within(&out.payload, limit);
        }
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
        let ack = js.publish_with_headers(out.subject, headers, out.payload.into()).await.map_err(|e| Error::unavailable(format!("publish: {e}")))?;
        self.status.published.fetch_add(1, Ordering::Relaxed);
        if matches!(out.files, crate::projections::FileCopies::Erase(_)) {
            self.files.apply(js, &e.tenant, &out.files, found).await?;
        }
        Ok(Some(ack))
    }
}

/// What the headers of a message (its id, its trace) may take of NATS's
/// largest payload.
const HEADERS_ROOM: usize = 4096;

/// Awaits the oldest publish's acknowledgement; `acked` moves to its seq.
async fn settle_front(
    inflight: &mut VecDeque<(i64, i64, Option<PublishAckFuture>)>,
    acked: &mut i64,
    lost: &mut tokio::sync::watch::Receiver<bool>,
) -> Result<(), Error> {
    let Some((seq, _, ack)) = inflight.pop_front() else { return Ok(()) };
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
    inflight: &mut VecDeque<(i64, i64, Option<PublishAckFuture>)>,
    acked: &mut i64,
    lost: &mut tokio::sync::watch::Receiver<bool>,
) -> Result<(), Error> {
    while !inflight.is_empty() {
        settle_front(inflight, acked, lost).await?;
    }
    Ok(())
}

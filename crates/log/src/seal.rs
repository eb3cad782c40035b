//! The sealer (docs/SEAL.md): follows the log just after its commits, in
//! log order, one replica at a time (the lead `sealer`, as the bridge
//! holds its own), and puts each envelope in its workspace's hash chain;
//! each batch ends with a signed checkpoint of every chain it moved. The
//! write path is not touched: sealing runs behind it, and how far behind
//! it runs is measured (`SealStatus::lag_ms`).
//!
//! Each batch sealed is told to those waiting for a proof (`sealed.rs`);
//! what the seal proves is read in `receipts.rs`, through the service.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use lattice_core::Error;
use lattice_seal::{Checkpoint, HEAD_ZERO, Seal, SealKey};

/// What proves an envelope is in the log, for the crates that hand one on.
pub use lattice_seal::Receipt;

/// What the operator's `lattice export` reads, and how long an answer
/// waits for its own proof.
pub use crate::receipts::{CHECKPOINTS_LISTED, PROOF_WAIT, export, sealed_form, tenant_of};

use crate::follow::LogReader;
use crate::sealed::SEALER;
use crate::store::StoredEnvelope;
use crate::store::seals::{self, SealRow};

/// Envelopes sealed in one batch at most.
const BATCH: i64 = 500;
/// How long a sealer's lead lasts without renewal.
const LEAD: Duration = Duration::from_secs(10);
/// How often the lead is renewed: well before it runs out.
const LEAD_RENEW: Duration = Duration::from_secs(3);
/// How long envelopes gather before a caught-up sealer seals them: the
/// seal's lag is this and a batch's work, well under its second.
const GATHER: Duration = Duration::from_millis(100);

/// Lags kept for their percentiles: the newest this many.
const LAGS_KEPT: usize = 100_000;

/// How far behind the log the seal runs.
#[derive(Debug, Default)]
pub struct SealStatus {
    /// The time from the commit of the last envelope sealed to its seal, ms.
    lag_ms: AtomicI64,
    /// The longest such time seen, ms.
    max_lag_ms: AtomicI64,
    sealed: AtomicI64,
    /// Each envelope's lag, the newest [`LAGS_KEPT`].
    lags: std::sync::Mutex<std::collections::VecDeque<i64>>,
}

impl SealStatus {
    pub fn lag_ms(&self) -> i64 {
        self.lag_ms.load(Ordering::Relaxed)
    }

    pub fn max_lag_ms(&self) -> i64 {
        self.max_lag_ms.load(Ordering::Relaxed)
    }

    /// Envelopes this sealer sealed.
    pub fn sealed(&self) -> i64 {
        self.sealed.load(Ordering::Relaxed)
    }

    /// The `p`th percentile (0 to 100) of the lags kept, ms.
    pub fn lag_percentile(&self, p: f64) -> Option<i64> {
        let mut lags: Vec<i64> = self.lags.lock().unwrap_or_else(std::sync::PoisonError::into_inner).iter().copied().collect();
        if lags.is_empty() {
            return None;
        }
        lags.sort_unstable();
        let at = ((p / 100.0) * (lags.len() - 1) as f64).round() as usize;
        lags.get(at.min(lags.len() - 1)).copied()
    }

    fn record(&self, now: i64, batch: &[StoredEnvelope]) {
        let mut lags = self.lags.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for e in batch {
            let lag = (now - e.at_ms).max(0);
            self.max_lag_ms.fetch_max(lag, Ordering::Relaxed);
            if lags.len() == LAGS_KEPT {
                lags.pop_front();
            }
            lags.push_back(lag);
        }
        self.lag_ms.store(batch.last().map_or(0, |e| (now - e.at_ms).max(0)), Ordering::Relaxed);
        self.sealed.fetch_add(batch.len() as i64, Ordering::Relaxed);
    }
}

/// Seals the log as it grows.
pub struct Sealer {
    reader: LogReader,
    key: SealKey,
    holder: String,
    status: Arc<SealStatus>,
}

impl Sealer {
    pub fn new(reader: LogReader, key: SealKey) -> Self {
        let holder = format!("sealer-{}", ulid::Ulid::generate().to_string().to_lowercase());
        Self { reader, key, holder, status: Arc::default() }
    }

    pub fn status(&self) -> Arc<SealStatus> {
        self.status.clone()
    }

    /// Seals until `stop`, whenever it holds the lead; a failure (the
    /// database away) is waited out and sealing goes on from the seals
    /// written.
    pub async fn run(self, mut stop: tokio::sync::watch::Receiver<bool>) {
        let mut moved = self.reader.horizon();
        // When the lead was last granted: renewed every LEAD_RENEW, not at
        // every batch (each renewal is a write).
        let mut led: Option<std::time::Instant> = None;
        loop {
            if *stop.borrow() {
                let _ = self.reader.step_down(SEALER, &self.holder).await;
                return;
            }
            let leading = match led {
                Some(at) if at.elapsed() < LEAD_RENEW => Ok(true),
                _ => {
                    let asked = std::time::Instant::now();
                    let granted = self.reader.lead(SEALER, &self.holder, LEAD).await;
                    led = granted.as_ref().ok().and_then(|g| g.then_some(asked));
                    granted
                }
            };
            let sealed = match leading {
                Ok(true) => self.step().await,
                Ok(false) => Ok(0),
                Err(e) => Err(e),
            };
            match sealed {
                // Behind: on at once.
                Ok(n) if n as i64 >= BATCH => continue,
                // Caught up: wait for the log to move, then let the next
                // envelopes gather a moment, so that one seal's transaction
                // (and its sync to disk) covers many commits, not each.
                Ok(_) => {
                    tokio::select! {
                        _ = moved.changed() => {}
                        () = tokio::time::sleep(Duration::from_millis(500)) => {}
                        _ = stop.changed() => {}
                    }
                    tokio::select! {
                        () = tokio::time::sleep(GATHER) => {}
                        _ = stop.changed() => {}
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "the sealer could not seal; trying again");
                    tokio::select! {
                        () = tokio::time::sleep(Duration::from_secs(1)) => {}
                        _ = stop.changed() => {}
                    }
                }
            }
        }
    }

    /// Seals the next batch of envelopes, with a checkpoint of every chain
    /// it moved; answers how many it sealed.
    pub async fn step(&self) -> Result<usize, Error> {
        let db = self.reader.db();
        let from = seals::progress(db).await?;
        let batch = self.reader.read_stored(from, BATCH).await?;
        if batch.is_empty() {
            return Ok(0);
        }
        // Each chain's number, head and seq so far.
        let mut chains: HashMap<(String, String), (i64, String, i64)> = HashMap::new();
        let mut rows = Vec::with_capacity(batch.len());
        for e in &batch {
            let key = (e.tenant.clone(), e.workspace.clone().unwrap_or_default());
            let (n, head) = match chains.get(&key) {
                Some((n, head, _)) => (*n, head.clone()),
                None => seals::last(db, &key.0, &key.1).await?.unwrap_or((0, HEAD_ZERO.to_owned())),
            };
            let leaf =
                lattice_seal::leaf(&sealed_form(e)?).map_err(|e| Error::invalid_state(lattice_core::Code::InvalidState, format!("sealing: {e}")))?;
            let head = lattice_seal::chain(&head, &leaf);
            rows.push(SealRow {
                tenant: key.0.clone(),
                workspace: key.1.clone(),
                seq: e.seq,
                envelope: e.id.clone(),
                seal: Seal { n: n + 1, leaf, head: head.clone() },
            });
            chains.insert(key, (n + 1, head, e.seq));
        }
        let now = self.reader.now_ms();
        let checkpoints: Vec<Checkpoint> =
            chains.iter().map(|((tenant, workspace), (n, head, seq))| self.key.sign(tenant, workspace, *n, *seq, head, now)).collect();
        seals::write(db, &rows, &checkpoints).await?;
        self.status.record(self.reader.now_ms(), &batch);
        // Whoever waits for a proof of what this batch sealed is handed it now.
        if let Some(last) = batch.last() {
            self.reader.sealed().sealed(last.seq).await;
        }
        Ok(batch.len())
    }
}

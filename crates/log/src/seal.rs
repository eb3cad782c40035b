//! The sealer (docs/SEAL.md): follows the log just after its commits, in
//! log order, one replica at a time (the lead `sealer`, as the bridge
//! holds its own), and puts each envelope in its workspace's hash chain;
//! each batch ends with a signed checkpoint of every chain it moved. The
//! write path is not touched: sealing runs behind it, and how far behind
//! it runs is measured (`SealStatus::lag_ms`).
//!
//! Also what an export reads: a workspace's envelopes with their seals, and
//! its checkpoints, as JSON Lines that `lattice verify` checks offline.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use lattice_core::Error;
use lattice_seal::{Checkpoint, HEAD_ZERO, Line, Seal, SealKey};

/// What proves an envelope is in the log, for the crates that hand one on.
pub use lattice_seal::Receipt;

use crate::follow::LogReader;
use crate::store::StoredEnvelope;
use crate::store::seals::{self, SealRow};

/// Envelopes sealed in one batch at most.
const BATCH: i64 = 500;
/// How long a sealer's lead lasts without renewal.
const LEAD: Duration = Duration::from_secs(10);
/// How often the lead is renewed: well before it runs out.
const LEAD_RENEW: Duration = Duration::from_secs(3);
/// The lead's name.
const SEALER: &str = "sealer";
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
            let leaf = lattice_seal::leaf(&sealed_form(e)?).map_err(|e| Error::invalid_state(format!("sealing: {e}")))?;
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
        Ok(batch.len())
    }
}

/// What is sealed of a stored envelope.
pub fn sealed_form(e: &StoredEnvelope) -> Result<lattice_seal::Envelope, Error> {
    let json = |text: &str| serde_json::from_str(text).map_err(|err| Error::invalid_state(format!("envelope {} is not JSON: {err}", e.seq)));
    Ok(lattice_seal::Envelope {
        seq: e.seq,
        id: e.id.clone(),
        tenant: e.tenant.clone(),
        workspace: e.workspace.clone(),
        thread: e.thread.clone(),
        actor: json(&e.actor_json)?,
        at_ms: e.at_ms,
        event_type: e.event_type.clone(),
        payload: Some(json(&e.payload_json)?),
        payload_sha256: None,
    })
}

/// Writes `tenant`'s `workspace` (empty: its envelopes of no workspace) as
/// an export: JSON Lines, its envelopes with their seals in log order,
/// then its checkpoints; read a page at a time. Answers how many
/// envelopes it wrote.
pub async fn export(db: &crate::Db, tenant: &str, workspace: &str, out: &mut impl std::io::Write) -> Result<usize, Error> {
    let write = |out: &mut dyn std::io::Write, line: &Line| -> Result<(), Error> {
        serde_json::to_writer(&mut *out, line).map_err(|e| Error::unavailable(format!("writing the export: {e}")))?;
        out.write_all(b"\n").map_err(|e| Error::unavailable(format!("writing the export: {e}")))
    };
    let (mut after, mut count) = (0, 0);
    loop {
        let page = seals::sealed_envelopes(db, tenant, workspace, after, 1000).await?;
        let Some(last) = page.last() else { break };
        after = last.0.seq;
        for (e, seal) in &page {
            write(out, &Line::Envelope { envelope: Box::new(sealed_form(e)?), seal: seal.clone() })?;
            count += 1;
        }
    }
    let mut after = 0;
    loop {
        let page = seals::checkpoints(db, tenant, workspace, after, 1000).await?;
        let Some(last) = page.last().map(|c| c.n) else { break };
        after = last;
        for c in page {
            write(out, &Line::Checkpoint(c))?;
        }
    }
    Ok(count)
}

/// Checkpoints listed at once, at most.
pub const CHECKPOINTS_LISTED: i64 = 1000;

/// A workspace's checkpoints after its chain's `after`th envelope, oldest
/// first (at most [`CHECKPOINTS_LISTED`]), for whoever may read it.
pub async fn checkpoints(db: &crate::Db, p: &lattice_core::Principal, workspace: &str, after: i64) -> Result<Vec<Checkpoint>, Error> {
    crate::access::workspace_access(db, p, workspace).await?.allow(lattice_core::policy::Action::Read)?;
    seals::checkpoints(db, p.tenant.as_str(), workspace, after, CHECKPOINTS_LISTED).await
}

/// A workspace's newest signed checkpoint, for whoever may read it;
/// `InvalidState` while nothing of it is sealed yet.
pub async fn latest_checkpoint(db: &crate::Db, p: &lattice_core::Principal, workspace: &str) -> Result<Checkpoint, Error> {
    crate::access::workspace_access(db, p, workspace).await?.allow(lattice_core::policy::Action::Read)?;
    seals::latest_checkpoint(db, p.tenant.as_str(), workspace)
        .await?
        .ok_or_else(|| Error::invalid_state(format!("nothing of {workspace} is sealed yet: ask again in a moment")))
}

/// The tenant of `workspace`, for an operator who names the workspace
/// alone; `NotFound` when there is no such workspace.
pub async fn tenant_of(db: &crate::Db, workspace: &str) -> Result<String, Error> {
    seals::tenant_of_workspace(db, workspace).await?.ok_or(Error::NotFound)
}

/// How long an answer waits for its own seal, at most: the seal's lag p99
/// is a fifth of it under the write-path benchmark's load (docs/SEAL.md).
pub const PROOF_WAIT: Duration = Duration::from_secs(2);
/// How often the wait looks.
const PROOF_POLL: Duration = Duration::from_millis(20);

/// The receipt of `seq` once it is sealed, for an answer to carry (MCP's,
/// AG-UI's, an app call's): waited for up to [`PROOF_WAIT`] while a
/// sealer leads; `None` when it is not sealed by then, or when nothing
/// seals this log (the answer then carries its `seq`, and
/// `GET /v1/receipts/{seq}` gives the receipt later).
pub async fn proof(db: &crate::Db, p: &lattice_core::Principal, seq: i64) -> Result<Option<lattice_seal::Receipt>, Error> {
    let deadline = tokio::time::Instant::now() + PROOF_WAIT;
    loop {
        match receipt(db, p, seq).await {
            Ok(receipt) => return Ok(Some(receipt)),
            Err(Error::InvalidState { .. }) => {}
            Err(e) => return Err(e),
        }
        if tokio::time::Instant::now() >= deadline || !crate::store::followers::led(db, SEALER, crate::now_ms()).await? {
            return Ok(None);
        }
        tokio::time::sleep(PROOF_POLL).await;
    }
}

/// The receipt of the envelope `seq` (docs/SEAL.md, "Receipts"), for
/// whoever may read where it was written: its sealed form, its seal, and
/// the first checkpoint at or after it. `InvalidState` until it is sealed
/// and checkpointed (a moment after its commit).
pub async fn receipt(db: &crate::Db, p: &lattice_core::Principal, seq: i64) -> Result<lattice_seal::Receipt, Error> {
    // A seq is a positive number; anything else names no envelope.
    if seq < 1 {
        return Err(Error::NotFound);
    }
    let stored = crate::store::envelopes::between(db, seq - 1, seq, 1).await?;
    let e = stored.into_iter().next().filter(|e| e.seq == seq && e.tenant == p.tenant.as_str()).ok_or(Error::NotFound)?;
    match (&e.thread, &e.workspace) {
        (Some(thread), _) => {
            crate::access::thread_access(db, p, &lattice_core::ThreadId::from_trusted(thread.clone()))
                .await?
                .allow(lattice_core::policy::Action::Read)?;
        }
        (None, Some(workspace)) => {
            crate::access::workspace_access(db, p, workspace).await?.allow(lattice_core::policy::Action::Read)?;
        }
        // The tenant's own events (no workspace): its admins'.
        (None, None) if p.role == lattice_core::TenantRole::Member => return Err(Error::NotFound),
        (None, None) => {}
    }
    let not_yet = || Error::invalid_state(format!("envelope {seq} is not sealed yet: ask again in a moment"));
    let (tenant, workspace, seal) = seals::of_envelope(db, &e.id).await?.ok_or_else(not_yet)?;
    let checkpoint = seals::checkpoints(db, &tenant, &workspace, seal.n - 1, 1).await?.into_iter().next().ok_or_else(not_yet)?;
    Ok(lattice_seal::Receipt { envelope: sealed_form(&e)?, seal, checkpoint })
}

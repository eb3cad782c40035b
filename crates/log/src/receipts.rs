//! What the seal proves, read (docs/SEAL.md): an envelope's receipt, a
//! workspace's checkpoints, and an envelope's proof handed over when it is
//! sealed, each for whoever may read where it was written. Also what an
//! export reads: a workspace's envelopes with their seals, and its
//! checkpoints, as JSON Lines that `lattice verify` checks offline.

use std::time::Duration;

use lattice_core::Error;
use lattice_core::clock::SharedClock;
use lattice_core::policy::Action;
use lattice_seal::{Checkpoint, Line, Receipt};

use crate::auth::Authenticated;
use crate::sealed::{SEALER, Sealed};
use crate::store::seals;
use crate::store::{Db, StoredEnvelope};

/// Checkpoints listed at once, at most.
pub const CHECKPOINTS_LISTED: i64 = 1000;

/// How long an answer waits for its own seal, at most: the seal's lag p99
/// is a fifth of it under the write-path benchmark's load (docs/SEAL.md).
pub const PROOF_WAIT: Duration = Duration::from_secs(2);

/// How often a waiter for a proof looks again without being told of a
/// seal: only the safety net for a seal it could not hear of (another
/// replica's on PostgreSQL whose notification was lost with a connection,
/// or a sealer in another process on one SQLite file). A seal it hears of
/// wakes it at once.
pub(crate) const PROOF_RECHECK: Duration = Duration::from_millis(250);

/// The seal's reads, by the service's clock.
pub(crate) struct Receipts {
    db: Db,
    clock: SharedClock,
    sealed: Sealed,
    recheck: Duration,
}

impl Receipts {
    pub(crate) fn new(db: Db, clock: SharedClock, sealed: Sealed, recheck: Duration) -> Self {
        Self { db, clock, sealed, recheck }
    }

    /// How far the log is sealed, as told to this process's sealer.
    pub(crate) fn sealed(&self) -> &Sealed {
        &self.sealed
    }

    /// A workspace's checkpoints after its chain's `after`th envelope,
    /// oldest first (at most [`CHECKPOINTS_LISTED`]), for whoever may read it.
    pub(crate) async fn checkpoints(&self, who: &Authenticated, workspace: &str, after: i64) -> Result<Vec<Checkpoint>, Error> {
        let p = who.principal();
        crate::access::workspace_access(&self.db, p, workspace).await?.allow(Action::Read)?;
        seals::checkpoints(&self.db, p.tenant.as_str(), workspace, after, CHECKPOINTS_LISTED).await
    }

    /// A workspace's newest signed checkpoint, for whoever may read it;
    /// `InvalidState` while nothing of it is sealed yet.
    pub(crate) async fn latest_checkpoint(&self, who: &Authenticated, workspace: &str) -> Result<Checkpoint, Error> {
        let p = who.principal();
        crate::access::workspace_access(&self.db, p, workspace).await?.allow(Action::Read)?;
        seals::latest_checkpoint(&self.db, p.tenant.as_str(), workspace).await?.ok_or_else(|| {
            Error::invalid_state(lattice_core::Code::NotSealedYet, format!("nothing of {workspace} is sealed yet: ask again in a moment"))
        })
    }

    /// The receipt of the envelope `seq` (docs/SEAL.md, "Receipts"), for
    /// whoever may read where it was written: its sealed form, its seal,
    /// and the first checkpoint at or after it. `InvalidState` until it is
    /// sealed and checkpointed (a moment after its commit).
    pub(crate) async fn receipt(&self, who: &Authenticated, seq: i64) -> Result<Receipt, Error> {
        let (db, p) = (&self.db, who.principal());
        // A seq is a positive number; anything else names no envelope.
        if seq < 1 {
            return Err(Error::NotFound);
        }
        let stored = crate::store::envelopes::between(db, seq - 1, seq, 1).await?;
        let e = stored.into_iter().next().filter(|e| e.seq == seq && e.tenant == p.tenant.as_str()).ok_or(Error::NotFound)?;
        match (&e.thread, &e.workspace) {
            (Some(thread), _) => {
                crate::access::thread_access(db, p, &lattice_core::ThreadId::from_trusted(thread.clone())).await?.allow(Action::Read)?;
            }
            (None, Some(workspace)) => {
                crate::access::workspace_access(db, p, workspace).await?.allow(Action::Read)?;
            }
            // The tenant's own events (no workspace): its admins'.
            (None, None) if p.role == lattice_core::TenantRole::Member => return Err(Error::NotFound),
            (None, None) => {}
        }
        let not_yet = || Error::invalid_state(lattice_core::Code::NotSealedYet, format!("envelope {seq} is not sealed yet: ask again in a moment"));
        let (tenant, workspace, seal) = seals::of_envelope(db, &e.id).await?.ok_or_else(not_yet)?;
        let checkpoint = seals::checkpoints(db, &tenant, &workspace, seal.n - 1, 1).await?.into_iter().next().ok_or_else(not_yet)?;
        Ok(Receipt { envelope: sealed_form(&e)?, seal, checkpoint })
    }

    /// The receipt of `seq` once it is sealed, waited for up to `within`
    /// while a sealer leads; `None` when it is not sealed by then, or when
    /// nothing seals this log. The wait is woken by the seal itself
    /// ([`Sealed`]); it looks again every `recheck` only in case a seal
    /// was not heard of.
    pub(crate) async fn proof_when_sealed(&self, who: &Authenticated, seq: i64, within: Duration) -> Result<Option<Receipt>, Error> {
        let deadline = tokio::time::Instant::now() + within;
        // Watched before the first look, so a seal between the two wakes it.
        let mut sealed = self.sealed.watch();
        loop {
            match self.receipt(who, seq).await {
                Ok(receipt) => return Ok(Some(receipt)),
                Err(Error::InvalidState { .. }) => {}
                Err(e) => return Err(e),
            }
            if tokio::time::Instant::now() >= deadline || !crate::store::followers::led(&self.db, SEALER, self.clock.now_ms()).await? {
                return Ok(None);
            }
            let until = deadline.min(tokio::time::Instant::now() + self.recheck);
            // Heard sealed past `seq` already, yet no receipt: only news
            // of a later seal (or the look again) is worth waking for.
            let past = *sealed.borrow_and_update() >= seq;
            let _ = tokio::time::timeout_at(until, async {
                if past { sealed.changed().await.is_ok() } else { sealed.wait_for(|s| *s >= seq).await.is_ok() }
            })
            .await;
        }
    }
}

/// What is sealed of a stored envelope.
pub fn sealed_form(e: &StoredEnvelope) -> Result<lattice_seal::Envelope, Error> {
    let json = |text: &str| {
        serde_json::from_str(text)
            .map_err(|err| Error::invalid_state(lattice_core::Code::InvalidState, format!("envelope {} is not JSON: {err}", e.seq)))
    };
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
/// envelopes it wrote. The operator's (`lattice export`, on a database it
/// opened), never a caller's.
pub async fn export(db: &Db, tenant: &str, workspace: &str, out: &mut impl std::io::Write) -> Result<usize, Error> {
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

/// The tenant of `workspace`, for an operator who names the workspace
/// alone; `NotFound` when there is no such workspace.
pub async fn tenant_of(db: &Db, workspace: &str) -> Result<String, Error> {
    seals::tenant_of_workspace(db, workspace).await?.ok_or(Error::NotFound)
}

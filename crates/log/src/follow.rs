//! Following the log from outside the write path: the bridge reads every
//! envelope in order, never past the horizon, from a durable checkpoint.
//!
//! The checkpoint is the follower's own bookkeeping, not the product's
//! state: it is written here (only `crates/log` writes to the database) but
//! is no command and leaves no envelope.

use std::time::Duration;

use lattice_core::clock::{self, SharedClock};
use lattice_core::{Envelope, Error};

use crate::horizon::{Following, Horizon};
use crate::sealed::Sealed;
use crate::service::LogService;
use crate::store::runs::load_requests;
use crate::store::{Db, StoredEnvelope, artifact_chain, envelopes, followers, load_artifact, threads};

/// A reader of the whole log, in order, with its own horizon tracker (or
/// the log service's, when it runs in the same process). Reads the store,
/// the horizon, and a clock for the lead's time and the checkpoint's stamp.
#[derive(Clone)]
pub struct LogReader {
    db: Db,
    horizon: Horizon,
    clock: SharedClock,
    /// Whom a sealer reading through this tells of its seals: the service's
    /// waiters for a proof, in the same process.
    sealed: Sealed,
}

impl LogReader {
    /// A reader with a tracker of its own, polling every `poll` while idle
    /// (a separate process hears of no commits), on the wall clock.
    pub fn open(db: Db, poll: Duration) -> Self {
        let horizon = Horizon::start_polling(db.clone(), poll);
        Self { sealed: Sealed::new(db.clone()), db, horizon, clock: clock::system() }
    }

    /// A reader sharing the log service's horizon (same process: woken by
    /// every commit), its clock, and its waiters for a proof.
    pub fn of(service: &LogService) -> Self {
        Self { db: service.db().clone(), horizon: service.horizon().clone(), clock: service.clock().clone(), sealed: service.sealed().clone() }
    }

    /// Follows the horizon: while this lives, the tracker looks on every
    /// commit (see [`Horizon::subscribe`]).
    pub fn horizon(&self) -> Following {
        self.horizon.subscribe()
    }

    /// Up to `limit` envelopes after `after`, never past the horizon.
    pub async fn read(&self, after: i64, limit: i64) -> Result<Vec<Envelope>, Error> {
        self.read_stored(after, limit).await?.iter().map(StoredEnvelope::decode).collect()
    }

    /// As `read`, leaving actors and payloads as their stored JSON text.
    pub async fn read_stored(&self, after: i64, limit: i64) -> Result<Vec<StoredEnvelope>, Error> {
        let horizon = self.horizon.current();
        if horizon <= after {
            return Ok(Vec::new());
        }
        envelopes::between(&self.db, after, horizon, limit).await
    }

    /// The follower's checkpoint (0 when it never ran).
    pub async fn checkpoint(&self, name: &str) -> Result<i64, Error> {
        followers::checkpoint(&self.db, name).await
    }

    /// Takes, or renews, the lead among the followers called `name` for
    /// `ttl`: granted when nobody holds it, its holder's time is up, or
    /// `holder` has it already. Only the leader publishes.
    pub async fn lead(&self, name: &str, holder: &str, ttl: Duration) -> Result<bool, Error> {
        let now = self.clock.now_ms();
        followers::lead(&self.db, name, holder, now, now + ttl.as_millis() as i64).await
    }

    /// Gives the lead back, if `holder` has it: another follower takes it
    /// at its next look instead of after the lead's time runs out.
    pub async fn step_down(&self, name: &str, holder: &str) -> Result<(), Error> {
        followers::step_down(&self.db, name, holder).await
    }

    /// Checkpoints of the log's seal signed after the one whose envelope is
    /// `after` (a seq), in the order they were made: what the bridge
    /// publishes (docs/SEAL.md).
    pub async fn checkpoints_after(&self, after: i64, limit: i64) -> Result<Vec<lattice_seal::Checkpoint>, Error> {
        crate::store::seals::signed_after(&self.db, after, limit).await
    }

    pub(crate) fn db(&self) -> &Db {
        &self.db
    }

    pub(crate) fn sealed(&self) -> &Sealed {
        &self.sealed
    }

    /// The clock the reader stamps and leads by: what a follower compares
    /// envelope times with.
    pub fn clock(&self) -> &SharedClock {
        &self.clock
    }

    pub(crate) fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    /// Moves the checkpoint forward (never back).
    pub async fn save_checkpoint(&self, name: &str, seq: i64) -> Result<(), Error> {
        followers::save_checkpoint(&self.db, name, seq, self.clock.now_ms()).await
    }

    /// The form's or app's title, and a request's args: what projections
    /// read besides the envelope. `None` when absent.
    pub async fn artifact_data(&self, tenant: &str, id: &str, version: Option<u64>) -> Result<Option<(String, serde_json::Value)>, Error> {
        let tenant = lattice_core::TenantId::from_trusted(tenant);
        let id = lattice_core::ArtifactId::from_trusted(id);
        Ok(load_artifact(&self.db, &tenant, &id, version).await?.map(|a| (a.kind, a.data)))
    }

    /// Whether a thread is restricted to the people listed on it.
    pub async fn thread_restricted(&self, thread: &str) -> Result<bool, Error> {
        threads::restricted(&self.db, thread).await
    }

    /// The chain an artifact keeps (that of the run that made it), if any.
    pub async fn artifact_chain(&self, tenant: &str, id: &str) -> Result<Option<String>, Error> {
        artifact_chain(&self.db, tenant, id).await
    }

    /// A whole file's row (erased or not): what the bridge copies to the
    /// object store.
    pub async fn file(&self, tenant: &str, id: &str) -> Result<Option<crate::FileRow>, Error> {
        Ok(crate::store::files::head(&self.db, tenant, id).await?.filter(|r| r.complete))
    }

    /// A file's bytes, `limit` chunks from chunk `from`.
    pub async fn file_chunks(&self, row: &crate::FileRow, from: i64, limit: i64) -> Result<Vec<Vec<u8>>, Error> {
        crate::store::files::chunks(&self.db, &row.tenant, &row.id, from, limit).await
    }

    pub async fn request_args(&self, tenant: &str, run: &str, tool_call_id: &str) -> Result<Option<serde_json::Value>, Error> {
        let tenant = lattice_core::TenantId::from_trusted(tenant);
        let requests = load_requests(&self.db, &tenant, run).await?;
        Ok(requests.into_iter().find(|r| r.tool_call_id == tool_call_id).map(|r| r.args))
    }
}

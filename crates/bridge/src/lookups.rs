//! What the bridge reads from the log besides the envelopes themselves, to
//! build what it publishes, counted: `BridgeStatus::reads` is how the
//! benchmark and the tests hold it to a few reads a batch.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use std::collections::HashMap;

use lattice_core::Error;
use lattice_log::{ArtifactAt, FileRow, LogReader};
use serde_json::Value;

/// The log, as projections and file copies read it; every read counts one.
#[derive(Clone)]
pub(crate) struct Lookups {
    reader: LogReader,
    count: Arc<AtomicU64>,
}

impl Lookups {
    pub(crate) fn new(reader: LogReader, count: Arc<AtomicU64>) -> Self {
        Self { reader, count }
    }

    fn counted(&self) -> &LogReader {
        self.count.fetch_add(1, Ordering::Relaxed);
        &self.reader
    }

    /// A read of `keys` keys: a statement for each `LOOKUP_KEYS_PER_QUERY`.
    fn counted_for(&self, keys: usize) -> &LogReader {
        self.count.fetch_add(keys.div_ceil(lattice_log::LOOKUP_KEYS_PER_QUERY) as u64, Ordering::Relaxed);
        &self.reader
    }

    pub(crate) async fn artifact_data(&self, tenant: &str, id: &str, version: Option<u64>) -> Result<Option<(String, Value)>, Error> {
        self.counted().artifact_data(tenant, id, version).await
    }

    pub(crate) async fn thread_restricted(&self, thread: &str) -> Result<bool, Error> {
        self.counted().thread_restricted(thread).await
    }

    pub(crate) async fn artifact_chain(&self, tenant: &str, id: &str) -> Result<Option<String>, Error> {
        self.counted().artifact_chain(tenant, id).await
    }

    pub(crate) async fn file(&self, tenant: &str, id: &str) -> Result<Option<FileRow>, Error> {
        self.counted().file(tenant, id).await
    }

    pub(crate) async fn file_chunks(&self, row: &FileRow, from: i64, limit: i64) -> Result<Vec<Vec<u8>>, Error> {
        self.counted().file_chunks(row, from, limit).await
    }

    pub(crate) async fn request_args(&self, tenant: &str, run: &str, tool_call_id: &str) -> Result<Option<Value>, Error> {
        self.counted().request_args(tenant, run, tool_call_id).await
    }
}

impl Lookups {
    pub(crate) async fn threads_restricted(&self, threads: &[&str]) -> Result<HashMap<String, bool>, Error> {
        self.counted_for(threads.len()).threads_restricted(threads).await
    }

    pub(crate) async fn artifacts_at(&self, wanted: &[(&str, &str, u64)]) -> Result<HashMap<(String, String, u64), ArtifactAt>, Error> {
        self.counted_for(wanted.len()).artifacts_at(wanted).await
    }

    pub(crate) async fn requests_args(&self, wanted: &[(&str, &str, &str)]) -> Result<HashMap<(String, String, String), Value>, Error> {
        self.counted_for(wanted.len()).requests_args(wanted).await
    }

    pub(crate) async fn files(&self, wanted: &[(&str, &str)]) -> Result<HashMap<(String, String), FileRow>, Error> {
        self.counted_for(wanted.len()).files(wanted).await
    }
}

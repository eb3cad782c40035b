//! What the bridge reads beside a batch of envelopes to build what it
//! publishes (docs/BRIDGE.md, "Reads"): one statement for the batch's
//! threads, one for its forms and apps, one for its requests, one for its
//! files, in place of a read or more for each envelope.

use std::collections::HashMap;

use lattice_core::Error;
use serde_json::Value;

use crate::follow::LogReader;
use crate::store::files::FileRow;
use crate::store::lookups::{self, ArtifactAt};

impl LogReader {
    /// Whether each of `threads` is restricted; a thread not found is missing.
    pub async fn threads_restricted(&self, threads: &[&str]) -> Result<HashMap<String, bool>, Error> {
        lookups::threads_restricted(self.db(), threads).await
    }

    /// The artifacts `wanted` names, each `(tenant, id, version)`: kind,
    /// that version's data, chain. One not found is missing.
    pub async fn artifacts_at(&self, wanted: &[(&str, &str, u64)]) -> Result<HashMap<(String, String, u64), ArtifactAt>, Error> {
        lookups::artifacts_at(self.db(), wanted).await
    }

    /// The arguments of the requests `wanted` names, each `(tenant, run,
    /// tool_call_id)`. One not found is missing.
    pub async fn requests_args(&self, wanted: &[(&str, &str, &str)]) -> Result<HashMap<(String, String, String), Value>, Error> {
        lookups::requests_args(self.db(), wanted).await
    }

    /// The complete files `wanted` names, each `(tenant, id)`, erased or
    /// not (as [`LogReader::file`]). One not found is missing.
    pub async fn files(&self, wanted: &[(&str, &str)]) -> Result<HashMap<(String, String), FileRow>, Error> {
        let mut found = lookups::files(self.db(), wanted).await?;
        found.retain(|_, row| row.complete);
        Ok(found)
    }
}

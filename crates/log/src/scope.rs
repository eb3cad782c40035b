//! What authorization found out about a command's target, read once for
//! every later step of the write path (the gate, the checks' view,
//! prepare, the commit) and for the deadline scheduler's answers.

use std::sync::Arc;

use lattice_core::ThreadId;

use crate::access::Access;
use crate::store::access::ThreadStanding;
use crate::store::{ArtifactRow, RequestRow, RunRow};

#[derive(Default)]
pub(crate) struct Scope {
    pub access: Option<Access>,
    /// The thread the command acts in, when it acts in one.
    pub thread: Option<ThreadId>,
    /// The artifact's head, for edits and archiving.
    pub artifact: Option<ArtifactRow>,
    /// The run and its requests, for answers and recorded steps.
    pub run: Option<Arc<LoadedRun>>,
    /// The standing in the thread the command was authorized from, when
    /// its commit must check that it still holds (src/access.rs,
    /// `thread_access_to_write`).
    pub standing: Option<ThreadStanding>,
}

/// A run with its requests, as one command reads them.
pub(crate) struct LoadedRun {
    pub run: RunRow,
    pub requests: Vec<RequestRow>,
}

impl LoadedRun {
    pub fn request(&self, tool_call_id: &str) -> Option<&RequestRow> {
        self.requests.iter().find(|r| r.tool_call_id == tool_call_id)
    }
}

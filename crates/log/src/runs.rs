//! The reads the API makes of runs (L6), each through the caller's access
//! to the run's thread; the runner's own are in src/trusted.rs, the rows
//! in store/runs.rs.

use lattice_core::{Error, RunId, ThreadId};
use serde::Serialize;

use crate::access::thread_access;
use crate::auth::Authenticated;
use crate::store::runs::{load_requests, load_run, paused_in};
use crate::store::{Db, RequestRow, RunRow};

/// A run with its requests, as `GET /v1/runs/{run}` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunView {
    #[serde(flatten)]
    pub run: RunRow,
    pub requests: Vec<RequestRow>,
}

/// Reads the store, through access.
#[derive(Clone)]
pub(crate) struct Runs {
    db: Db,
}

impl Runs {
    pub fn new(db: Db) -> Self {
        Self { db }
    }

    /// A run and its requests, for a caller who can read its thread.
    pub async fn run(&self, who: &Authenticated, run: &RunId) -> Result<RunView, Error> {
        let p = who.principal();
        let Some(row) = load_run(&self.db, &p.tenant, run).await? else { return Err(Error::NotFound) };
        thread_access(&self.db, p, &ThreadId::from_trusted(row.thread.clone())).await?;
        let requests = load_requests(&self.db, &p.tenant, &row.id).await?;
        Ok(RunView { run: row, requests })
    }

    /// The runs of a thread that wait for an answer.
    pub async fn paused_runs(&self, who: &Authenticated, thread: &ThreadId) -> Result<Vec<RunView>, Error> {
        let p = who.principal();
        thread_access(&self.db, p, thread).await?;
        let mut out = Vec::new();
        for run in paused_in(&self.db, &p.tenant, thread).await? {
            let requests = load_requests(&self.db, &p.tenant, &run.id).await?;
            out.push(RunView { run, requests });
        }
        Ok(out)
    }
}

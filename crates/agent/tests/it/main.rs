//! The runner against the real log service, on both backends, with models
//! that follow a script and record what they were offered.

mod budgets;
mod context;
mod deadlines;
mod fence;
mod files;
mod leases;
mod llama;
mod openai;
mod replies;
mod runs;
mod servers;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use lattice_agent::{Model, ModelError, ModelReply, ModelRequest};
use lattice_core::{RunId, RunStatus};
use lattice_log::{Authenticated, LogService, RunView};

/// Plays `replies` in order (the last one again when they run out) and
/// records the tool names each call offered and the messages it saw.
#[derive(Clone, Default)]
pub struct Script {
    pub replies: Arc<Mutex<Vec<ModelReply>>>,
    pub offered: Arc<Mutex<Vec<Vec<String>>>>,
    pub seen: Arc<Mutex<Vec<ModelRequest>>>,
}

impl Script {
    pub fn new(replies: Vec<ModelReply>) -> Self {
        Self { replies: Arc::new(Mutex::new(replies)), ..Self::default() }
    }
}

#[async_trait::async_trait]
impl Model for Script {
    async fn reply(&self, request: ModelRequest) -> Result<ModelReply, ModelError> {
        self.offered.lock().unwrap().push(request.tools.iter().map(|t| t.name.clone()).collect());
        self.seen.lock().unwrap().push(request);
        let mut replies = self.replies.lock().unwrap();
        Ok(if replies.len() > 1 { replies.remove(0) } else { replies[0].clone() })
    }
}

pub async fn wait_for(log: &LogService, who: &Authenticated, run: &RunId, status: RunStatus) -> RunView {
    // A bound, not a measure: a host busy with the rest of the test
    // command can take seconds to drive a run.
    lattice_testkit::eventually_within(Duration::from_secs(30), &format!("run {run} to reach {status:?}"), async || {
        Some(log.run(who, run).await.unwrap()).filter(|view| view.run.status == status)
    })
    .await
}

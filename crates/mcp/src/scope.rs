//! Where a call acts: the thread it names, or the caller's most recent one.
//! Listing tools only reads; a call that writes and finds no thread makes a
//! workspace and a thread named "MCP" for the caller.

use std::collections::BTreeMap;

use lattice_core::{Command, SwitchKey, ThreadId, WorkspaceId};
use lattice_log::{Authenticated, LogService};
use rmcp::ErrorData as McpError;

pub(crate) fn refused(e: lattice_core::Error) -> McpError {
    McpError::invalid_request(e.to_string(), None)
}

pub(crate) struct Scope {
    /// The thread and its workspace, when the caller has one.
    pub here: Option<(ThreadId, String)>,
}

impl Scope {
    /// The thread `given` names (which the caller must be able to read), or
    /// the caller's most recent thread, or none.
    pub async fn find(log: &LogService, who: &Authenticated, given: Option<&str>) -> Result<Self, lattice_core::Error> {
        if let Some(th) = given {
            let id = ThreadId::parse("thread", th)?;
            let ws = log.thread_workspace(who, &id).await?;
            return Ok(Self { here: Some((id, ws)) });
        }
        Ok(Self { here: log.latest_thread(who).await? })
    }

    /// The thread to write in, made when the caller has none.
    pub async fn thread(self, log: &LogService, who: &Authenticated) -> Result<(ThreadId, String), lattice_core::Error> {
        if let Some(here) = self.here {
            return Ok(here);
        }
        let ws = log.execute(who, Command::CreateWorkspace { name: "MCP".into() }).await?.id.unwrap_or_default();
        let workspace = WorkspaceId::from_trusted(ws.clone());
        let th = log.execute(who, Command::CreateThread { workspace, title: "MCP".into(), restricted: false }).await?.id.unwrap_or_default();
        Ok((ThreadId::from_trusted(th), ws))
    }

    /// Which switches are on where this scope acts; for a caller with no
    /// thread, as a new workspace of the caller's tenant would have them.
    pub async fn switches(&self, log: &LogService, who: &Authenticated) -> Result<BTreeMap<SwitchKey, bool>, McpError> {
        let effective = match &self.here {
            Some((_, ws)) => log.effective(who, ws).await,
            None => log.tenant_effective(who).await,
        }
        .map_err(refused)?;
        Ok(effective.into_iter().map(|(k, e)| (k, e.enabled)).collect())
    }
}

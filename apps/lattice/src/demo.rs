//! The embedded default's demo (O1): a workspace whose first thread has the
//! scripted agent waiting on a form, so a newcomer sees something at once.

use lattice_agent::Runner;
use lattice_core::{Command, Principal, TenantId, TenantRole, ThreadId, UserId, WorkspaceId};
use lattice_log::Trusted;

pub const TENANT: &str = "demo";
pub const USER: &str = "demo";

/// Seeds once: a person with a workspace already has their demo.
pub async fn seed(trusted: &Trusted, runner: &Runner) -> anyhow::Result<()> {
    let log = trusted.log();
    let who = trusted.vouch(Principal {
        tenant: TenantId::parse("tenant", TENANT)?,
        user: UserId::parse("user", USER)?,
        role: TenantRole::TenantAdmin,
        agent: false,
        run: None,
        within: None,
    });
    if !log.workspaces(&who).await?.is_empty() {
        return Ok(());
    }
    let ws = log.execute(&who, Command::CreateWorkspace { name: "Demo".into() }).await?.id.unwrap_or_default();
    let thread = log
        .execute(&who, Command::CreateThread { workspace: WorkspaceId::parse("ws", &ws)?, title: "Incident report".into() })
        .await?
        .id
        .unwrap_or_default();
    let thread = ThreadId::parse("th", &thread)?;
    log.execute(&who, Command::PostMessage { thread: thread.clone(), text: "Something is wrong with the API.".into() }).await?;
    runner.start(&who, thread, "Help me report an incident.".into(), Some("scripted:ask_form".into())).await?;
    tracing::info!(workspace = %ws, "seeded the demo workspace (tenant demo, user demo)");
    Ok(())
}

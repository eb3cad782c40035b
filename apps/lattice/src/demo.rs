//! The demo (O1), seeded outside production: a workspace whose thread shows
//! the three kinds of UI at once — a dashboard with figures, a running mini
//! app, and the scripted agent waiting on a form — so a newcomer sees the
//! whole product in the first minute.

use std::time::{Duration, Instant};

use lattice_agent::Runner;
use lattice_core::{Command, Level, Principal, RunId, RunStatus, SwitchKey, SwitchState, TenantId, TenantRole, ThreadId, UserId, WorkspaceId};
use lattice_log::Trusted;

pub const TENANT: &str = "demo";
pub const USER: &str = "demo";
/// The system actor the seed's switch changes are audited as.
const SEED: &str = "demo-seed";

/// Seeds once: a person with a workspace already has their demo.
pub async fn seed(trusted: &Trusted, runner: &Runner) -> anyhow::Result<()> {
    let log = trusted.log();
    let tenant = TenantId::parse("tenant", TENANT)?;
    let who = trusted.vouch(Principal {
        tenant: tenant.clone(),
        user: UserId::parse("user", USER)?,
        role: TenantRole::TenantAdmin,
        agent: false,
        run: None,
        within: None,
        scope: None,
    });
    if !log.workspaces(&who).await?.is_empty() {
        return Ok(());
    }
    let ws = log.execute(&who, Command::CreateWorkspace { name: "Demo".into() }).await?.id.unwrap_or_default();
    let ws = WorkspaceId::parse("ws", &ws)?;
    let thread = log
        .execute(&who, Command::CreateThread { workspace: ws.clone(), title: "Incident report".into(), restricted: false })
        .await?
        .id
        .unwrap_or_default();
    let thread = ThreadId::parse("th", &thread)?;
    opt_in_to_apps(trusted, &ws).await?;

    let turns = [
        ("How is the API doing?", "Show me the API's figures.", "scripted:dashboard"),
        ("Can you give me something to try?", "Make a small app.", "scripted:app"),
    ];
    for (message, prompt, model) in turns {
        log.execute(&who, Command::PostMessage { thread: thread.clone(), text: message.into() }).await?;
        let run = runner.start(&who, thread.clone(), prompt.into(), Some(model.into()), None).await?;
        // One turn after the other, so the thread reads in order.
        finished(trusted, &tenant, &run).await?;
    }
    log.execute(&who, Command::PostMessage { thread: thread.clone(), text: "Something is wrong with the API.".into() }).await?;
    runner.start(&who, thread, "Help me report an incident.".into(), Some("scripted:ask_form".into()), None).await?;
    tracing::info!(workspace = %ws, "seeded the demo workspace (tenant demo, user demo): a dashboard, an app and a form");
    Ok(())
}

/// Mini apps are off for a deployment until an operator opts it in (I1),
/// and a workspace cannot turn on what its deployment has not: the demo's
/// deployment is opted in, once, by the seed (audited as `demo-seed`),
/// unless an operator already decided; the demo workspace is turned on
/// by name. `lattice switch set deployment ui:mini-apps unset` undoes it.
async fn opt_in_to_apps(trusted: &Trusted, ws: &WorkspaceId) -> anyhow::Result<()> {
    let log = trusted.log();
    let deployment = trusted.switch_levels(Some(Level::Deployment)).await?;
    let undecided = deployment.iter().flat_map(|l| &l.keys).any(|k| k.key == SwitchKey::MiniApps.as_str() && k.state == "unset");
    if undecided {
        let operator = trusted.operator(
            SEED.into(),
            Principal {
                tenant: TenantId::from_trusted(lattice_core::envelope::DEPLOYMENT_TENANT),
                user: UserId::from_trusted(SEED),
                role: TenantRole::DeploymentAdmin,
                agent: false,
                run: None,
                within: None,
                scope: None,
            },
        );
        let reason = "the demo shows a mini app (outside production only)".to_owned();
        log.execute(&operator, Command::SetSwitch { level: Level::Deployment, key: SwitchKey::MiniApps, state: SwitchState::On, reason }).await?;
    }
    let tenant = trusted.workspace_tenant(ws).await?.ok_or_else(|| anyhow::anyhow!("the demo workspace vanished"))?;
    let admin = trusted.operator(
        SEED.into(),
        Principal { tenant, user: UserId::from_trusted(SEED), role: TenantRole::TenantAdmin, agent: false, run: None, within: None, scope: None },
    );
    let reason = "the demo workspace shows a mini app".to_owned();
    log.execute(&admin, Command::SetSwitch { level: Level::Workspace(ws.clone()), key: SwitchKey::MiniApps, state: SwitchState::On, reason }).await?;
    Ok(())
}

/// Waits for a scripted run to finish (they take milliseconds); 10 s at most.
async fn finished(trusted: &Trusted, tenant: &TenantId, run: &RunId) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let row = trusted.run_state(tenant, run).await?;
        if row.is_some_and(|r| r.status != RunStatus::Running) {
            return Ok(());
        }
        anyhow::ensure!(Instant::now() < deadline, "the demo's run {run} did not finish within 10 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

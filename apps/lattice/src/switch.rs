//! `lattice switch`: the operator's command line for the kill switch
//! (REQUIREMENTS.md I1–I3). It acts on the configured database through the
//! write path, as the system actor `cli:<operating-system user>`, so a
//! change from a terminal is checked, committed, pushed to every open chat
//! and audited exactly as one from the console.

use lattice_core::{Command, Level, Principal, SwitchKey, SwitchState, TenantId, TenantRole, UserId};
use lattice_log::{LevelStates, Trusted};

use crate::config::Config;
use crate::schema::Behind;

/// `lattice switch set LEVEL KEY STATE --reason TEXT`.
pub async fn set(config: &Config, level: &str, key: &str, state: &str, reason: String) -> anyhow::Result<()> {
    let level = Level::parse(level).map_err(|_| anyhow::anyhow!("{level:?} is not a level: deployment, tenant:<id> or workspace:<id>"))?;
    let connected = config.connections()?;
    let key = SwitchKey::parse(key).ok_or_else(|| anyhow::anyhow!("{key:?} is not a switch key: {}", keys(&connected)))?;
    let state = SwitchState::parse(state).ok_or_else(|| anyhow::anyhow!("{state:?} is not on, off or unset"))?;
    anyhow::ensure!(!reason.trim().is_empty(), "a change needs a reason (--reason \"…\"): it is kept in the audit");
    let (_, trusted) = crate::serve::start_log_trusted(config, Behind::Refuse).await?;
    let who = operator(&trusted, &level).await?;
    let done = trusted
        .log()
        .execute(&who, Command::SetSwitch { level: level.clone(), key, state, reason: reason.clone() })
        .await
        .map_err(|e| anyhow::anyhow!("{level} {} {}: {e}", key.as_str(), state.as_str()))?;
    println!("{level} {} {} (seq {}, by {}: {reason})", key.as_str(), state.as_str(), done.seq, who.actor().name());
    let after = trusted.switch_levels(Some(level)).await?;
    if let Some(here) = after.first() {
        println!("this level reaches {} workspace(s)", here.workspaces);
    }
    print_levels(&after);
    Ok(())
}

/// `lattice switch list [LEVEL]`: one level, or the deployment and every
/// level that holds a state.
pub async fn list(config: &Config, level: Option<&str>) -> anyhow::Result<()> {
    let level =
        level.map(|l| Level::parse(l).map_err(|_| anyhow::anyhow!("{l:?} is not a level: deployment, tenant:<id> or workspace:<id>"))).transpose()?;
    let (_, trusted) = crate::serve::start_log_trusted(config, Behind::Refuse).await?;
    let levels = trusted.switch_levels(level).await.map_err(|e| match e {
        lattice_core::Error::NotFound => anyhow::anyhow!("no such workspace"),
        other => other.into(),
    })?;
    print_levels(&levels);
    Ok(())
}

/// The kinds of UI and the connected servers.
fn keys(connections: &lattice_connect::Connections) -> String {
    connections.connected().keys().iter().map(|k| k.as_str()).collect::<Vec<_>>().join(", ")
}

/// The system actor with the rights the level asks for: a deployment
/// admin for the deployment, the tenant's admin for a tenant or one of its
/// workspaces.
async fn operator(trusted: &Trusted, level: &Level) -> anyhow::Result<lattice_log::Authenticated> {
    let (tenant, role) = match level {
        Level::Deployment => (TenantId::from_trusted(lattice_core::envelope::DEPLOYMENT_TENANT), TenantRole::DeploymentAdmin),
        Level::Tenant(tenant) => (tenant.clone(), TenantRole::TenantAdmin),
        Level::Workspace(ws) => {
            let tenant = trusted.workspace_tenant(ws).await?.ok_or_else(|| anyhow::anyhow!("no workspace {ws} in this database"))?;
            (tenant, TenantRole::TenantAdmin)
        }
    };
    let name = format!("cli:{}", os_user());
    let principal = Principal { tenant, user: UserId::from_trusted(name.clone()), role, agent: false, run: None, within: None, scope: None };
    Ok(trusted.operator(name, principal))
}

/// Who runs the command, as the operating system names them.
pub(crate) fn os_user() -> String {
    let named = ["USER", "LOGNAME"].iter().find_map(|v| std::env::var(v).ok().filter(|u| !u.is_empty()));
    let name = named.unwrap_or_else(|| {
        // SAFETY: getuid has no preconditions and cannot fail.
        format!("uid{}", unsafe { libc::getuid() })
    });
    name.chars().filter(|c| c.is_ascii_alphanumeric() || "-_.".contains(*c)).take(64).collect()
}

fn print_levels(levels: &[LevelStates]) {
    println!("{:<40} {:<14} {:<6} {:<9} because", "LEVEL", "KEY", "STATE", "EFFECTIVE");
    for level in levels {
        for k in &level.keys {
            let on = if k.effective.enabled { "on" } else { "off" };
            println!("{:<40} {:<14} {:<6} {:<9} {}", level.level, k.key, k.state, on, k.effective.because);
        }
    }
}

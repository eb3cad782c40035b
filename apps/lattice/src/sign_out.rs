//! `lattice sign-out`: an operator ends every token and session of a person
//! (a leaver, a stolen laptop) from a terminal. It runs the same command
//! as `POST /v1/people/{user}/sign-out`, as the system actor
//! `cli:<operating-system user>` with the tenant admin's rights, so it is
//! in the log, bridged, and every open stream of the person ends with it.

use lattice_core::{Command, Principal, TenantId, TenantRole, UserId};

use crate::config::Config;
use crate::schema::Behind;

/// `lattice sign-out --tenant T --user U`.
pub async fn run(config: &Config, tenant: &str, user: &str) -> anyhow::Result<()> {
    let tenant = TenantId::parse("--tenant", tenant).map_err(|e| anyhow::anyhow!("{e}"))?;
    let user = UserId::parse("--user", user).map_err(|e| anyhow::anyhow!("{e}"))?;
    let (_, trusted) = crate::serve::start_log_trusted(config, Behind::Refuse).await?;
    let name = format!("cli:{}", crate::switch::os_user());
    let principal = Principal {
        tenant: tenant.clone(),
        user: UserId::from_trusted(name.clone()),
        role: TenantRole::TenantAdmin,
        agent: false,
        run: None,
        within: None,
        scope: None,
    };
    let who = trusted.operator(name, principal);
    let done = trusted
        .log()
        .execute(&who, Command::EndSessions { user: user.clone(), session: None })
        .await
        .map_err(|e| anyhow::anyhow!("signing out {user} of {tenant}: {e}"))?;
    println!("{user} of {tenant} is signed out everywhere: every token issued until now is refused (seq {}, by {})", done.seq, who.actor().name());
    Ok(())
}

//! The Integrations port (REQUIREMENTS.md I1): which kinds of UI are switched on, per
//! deployment, tenant and workspace.
//!
//! The rule is a pure function, [`resolve`]; where the three states are kept
//! is the store's business, behind the [`Integrations`] trait.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::ids::{TenantId, WorkspaceId};

/// The governed kinds of UI, each with its wire name: the enum, [`SwitchKey::ALL`]
/// and the names are made from this one list, so a key added here is
/// everywhere a key is listed (the console, `lattice switch`, the gate).
macro_rules! switch_keys {
    ($($(#[$doc:meta])* $key:ident = $name:literal,)*) => {
        /// A governed kind of UI.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum SwitchKey {
            $($(#[$doc])* #[serde(rename = $name)] $key,)*
        }

        impl SwitchKey {
            pub const ALL: [SwitchKey; [$(stringify!($key),)*].len()] = [$(Self::$key,)*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$key => $name,)*
                }
            }
        }
    };
}

switch_keys! {
    Forms = "ui:forms",
    Dashboards = "ui:dashboards",
    MiniApps = "ui:mini-apps",
}

impl SwitchKey {
    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == value)
    }

    /// What an unset deployment level means. Mini apps run model-written
    /// code, so an operator opts a deployment in to them.
    pub fn deployment_default(self) -> bool {
        !matches!(self, Self::MiniApps)
    }
}

impl fmt::Display for SwitchKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one level holds for one key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SwitchState {
    On,
    Off,
    #[default]
    Unset,
}

impl SwitchState {
    pub const ALL: [SwitchState; 3] = [Self::On, Self::Off, Self::Unset];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::On => "on",
            Self::Off => "off",
            Self::Unset => "unset",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == value)
    }
}

/// Where a switch is set.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Level {
    Deployment,
    Tenant(TenantId),
    Workspace(WorkspaceId),
}

impl Level {
    /// Parses `deployment`, `tenant:{id}` or `workspace:{id}`.
    pub fn parse(value: &str) -> Result<Self, Error> {
        if value == "deployment" {
            return Ok(Self::Deployment);
        }
        if let Some(id) = value.strip_prefix("tenant:") {
            return Ok(Self::Tenant(TenantId::parse("level", id)?));
        }
        if let Some(id) = value.strip_prefix("workspace:") {
            return Ok(Self::Workspace(WorkspaceId::parse("level", id)?));
        }
        Err(Error::field("level", "enum", format!("{value:?} is not deployment, tenant:{{id}} or workspace:{{id}}")))
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Deployment => f.write_str("deployment"),
            Self::Tenant(t) => write!(f, "tenant:{t}"),
            Self::Workspace(w) => write!(f, "workspace:{w}"),
        }
    }
}

/// A key's effective value in one workspace, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Effective {
    pub enabled: bool,
    /// A sentence naming the level that decided it.
    pub because: String,
}

/// The rule of REQUIREMENTS.md I1: effective = deployment AND tenant AND workspace,
/// where unset means the key's default at the deployment level and on below
/// it. The first level (from the top) that turns the key off is the reason.
pub fn resolve(key: SwitchKey, deployment: SwitchState, tenant: SwitchState, workspace: SwitchState) -> Effective {
    let off = |because: String| Effective { enabled: false, because };
    match deployment {
        SwitchState::Off => return off(format!("{key} is off for the deployment")),
        SwitchState::Unset if !key.deployment_default() => {
            return off(format!("{key} is off by default for the deployment, and no operator turned it on"));
        }
        _ => {}
    }
    if tenant == SwitchState::Off {
        return off(format!("{key} is off for the tenant"));
    }
    if workspace == SwitchState::Off {
        return off(format!("{key} is off for the workspace"));
    }
    let decided_by = if workspace == SwitchState::On {
        "on for the workspace"
    } else if tenant == SwitchState::On {
        "on for the tenant"
    } else if deployment == SwitchState::On {
        "on for the deployment"
    } else {
        "on by default"
    };
    Effective { enabled: true, because: format!("{key} is {decided_by}") }
}

/// The port: answers whether a key is on in a workspace. Implemented by the
/// log service's switch store; consulted by the write path's gate, the agent
/// toolset and the MCP exporter.
#[async_trait::async_trait]
pub trait Integrations: Send + Sync {
    async fn effective(&self, tenant: &TenantId, workspace: &WorkspaceId, key: SwitchKey) -> Result<Effective, Error>;

    async fn is_enabled(&self, tenant: &TenantId, workspace: &WorkspaceId, key: SwitchKey) -> Result<bool, Error> {
        Ok(self.effective(tenant, workspace, key).await?.enabled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// All 27 combinations for each key, against the rule written the other
    /// way round: each level's contribution is a boolean, and they are ANDed.
    #[test]
    fn all_27_combinations_for_every_key() {
        let mut checked = 0;
        for key in SwitchKey::ALL {
            for d in SwitchState::ALL {
                for t in SwitchState::ALL {
                    for w in SwitchState::ALL {
                        let d_on = match d {
                            SwitchState::On => true,
                            SwitchState::Off => false,
                            SwitchState::Unset => key != SwitchKey::MiniApps,
                        };
                        let expected = d_on && t != SwitchState::Off && w != SwitchState::Off;
                        let got = resolve(key, d, t, w);
                        assert_eq!(got.enabled, expected, "{key} d={d:?} t={t:?} w={w:?}: {}", got.because);
                        checked += 1;
                    }
                }
            }
        }
        assert_eq!(checked, 81);
    }

    #[test]
    fn the_reason_names_the_deciding_level() {
        use SwitchState::*;
        assert_eq!(resolve(SwitchKey::Forms, On, Off, Off).because, "ui:forms is off for the tenant");
        assert_eq!(
            resolve(SwitchKey::MiniApps, Unset, On, On).because,
            "ui:mini-apps is off by default for the deployment, and no operator turned it on"
        );
        assert_eq!(resolve(SwitchKey::MiniApps, On, Unset, Unset).because, "ui:mini-apps is on for the deployment");
        assert_eq!(resolve(SwitchKey::Dashboards, Unset, Unset, Unset).because, "ui:dashboards is on by default");
    }

    #[test]
    fn levels_parse_and_print() {
        for s in ["deployment", "tenant:t1", "workspace:ws_01"] {
            assert_eq!(Level::parse(s).unwrap().to_string(), s);
        }
        assert!(Level::parse("tenant:").is_err());
        assert!(Level::parse("galaxy").is_err());
    }
}

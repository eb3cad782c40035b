//! The Integrations port (REQUIREMENTS.md I1): which kinds of UI are switched on, per
//! deployment, tenant and workspace.
//!
//! The rule is a pure function, [`resolve`]; where the three states are kept
//! is the store's business, behind the [`Integrations`] trait.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::ids::{TenantId, WorkspaceId};

/// The governed kinds of UI, each with its wire name, and the MCP servers
/// an operator connected (`mcp:<name>`, [`ServerKey`]): the UI keys and
/// their names are made from this one list, so a key added here is
/// everywhere a key is listed (the console, `lattice switch`, the gate).
macro_rules! switch_keys {
    ($($(#[$doc:meta])* $key:ident = $name:literal,)*) => {
        /// A governed kind of UI, or a connected MCP server.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum SwitchKey {
            $($(#[$doc])* $key,)*
            /// The tools (and their apps) of one connected MCP server.
            Server(ServerKey),
        }

        impl SwitchKey {
            /// The kinds of UI; the servers are the deployment's to list.
            pub const ALL: [SwitchKey; [$(stringify!($key),)*].len()] = [$(Self::$key,)*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$key => $name,)*
                    Self::Server(server) => server.as_str(),
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
    /// A UI key, or the key of a server this process was configured with
    /// (a name nobody configured is no key: it is not made up on demand).
    pub fn parse(value: &str) -> Option<Self> {
        if let Some(name) = value.strip_prefix(ServerKey::PREFIX) {
            return ServerKey::known(name).map(Self::Server);
        }
        Self::ALL.into_iter().find(|k| k.as_str() == value)
    }

    /// What an unset deployment level means. Mini apps run model-written
    /// code, so an operator opts a deployment in to them; a server is
    /// opted in by being configured.
    pub fn deployment_default(self) -> bool {
        !matches!(self, Self::MiniApps)
    }
}

impl Serialize for SwitchKey {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for SwitchKey {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Self::parse(&name).ok_or_else(|| serde::de::Error::custom(format!("{name:?} is not a switch key")))
    }
}

/// The switch key of a connected MCP server, `mcp:<name>`: copied as
/// freely as the UI keys, because its text is made once per configured
/// name and kept for the process's life. Only configuration makes one
/// ([`ServerKey::configure`]), so what a request names can never grow the
/// set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ServerKey(&'static str);

/// Every server key configured in this process.
static SERVERS: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());

impl ServerKey {
    pub const PREFIX: &'static str = "mcp:";
    /// The longest name a server may have.
    pub const NAME_MAX: usize = 32;

    /// Whether `name` may name a server: lowercase letters, digits and
    /// single dashes, starting with a letter. No underscore, so that a
    /// server's tool offered as `<server>__<tool>` splits one way only.
    pub fn check_name(name: &str) -> Result<(), String> {
        let ok = !name.is_empty()
            && name.len() <= Self::NAME_MAX
            && name.starts_with(|c: char| c.is_ascii_lowercase())
            && !name.ends_with('-')
            && !name.contains("--")
            && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if ok {
            Ok(())
        } else {
            Err(format!("{name:?} is not a server name: 1 to {} lowercase letters, digits and single dashes, starting with a letter", Self::NAME_MAX))
        }
    }

    /// The key of a server the configuration names: made once per name.
    pub fn configure(name: &str) -> Result<Self, Error> {
        Self::check_name(name).map_err(|e| Error::field("name", "pattern", e))?;
        let key = format!("{}{name}", Self::PREFIX);
        let mut known = SERVERS.lock().expect("not poisoned");
        if let Some(kept) = known.iter().find(|k| **k == key) {
            return Ok(Self(kept));
        }
        let kept: &'static str = Box::leak(key.into_boxed_str());
        known.push(kept);
        Ok(Self(kept))
    }

    /// The key of a configured server, if `name` is one.
    pub fn known(name: &str) -> Option<Self> {
        let known = SERVERS.lock().expect("not poisoned");
        known.iter().find(|k| k.strip_prefix(Self::PREFIX) == Some(name)).map(|k| Self(k))
    }

    /// The server and its own tool name, if `offered` is a tool offered
    /// as `<server>__<tool>`: a server name holds no underscore, so the
    /// first `__` splits it one way only, and none of lattice's own tools
    /// has one. Syntax only: whether the server is connected is the
    /// deployment's to say.
    pub fn split_tool(offered: &str) -> Option<(&str, &str)> {
        let (server, tool) = offered.split_once("__")?;
        (Self::check_name(server).is_ok() && !tool.is_empty()).then_some((server, tool))
    }

    /// `mcp:<name>`.
    pub fn as_str(self) -> &'static str {
        self.0
    }

    /// The server's name.
    pub fn name(self) -> &'static str {
        &self.0[Self::PREFIX.len()..]
    }
}

impl fmt::Display for SwitchKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The MCP servers a deployment connected, each with the tenants it is
/// offered to (all, when the configuration names none). A server not
/// offered to a tenant is off there whatever its switches hold, and is
/// not listed among its keys.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Connected {
    servers: Vec<(ServerKey, Option<Vec<TenantId>>)>,
}

impl Connected {
    /// Connects `key` for `tenants` (`None`: every tenant).
    pub fn add(&mut self, key: ServerKey, tenants: Option<Vec<TenantId>>) {
        self.servers.retain(|(k, _)| *k != key);
        self.servers.push((key, tenants));
    }

    /// Whether `key` is offered to `tenant`.
    pub fn offers(&self, key: ServerKey, tenant: &TenantId) -> bool {
        self.servers.iter().any(|(k, tenants)| *k == key && tenants.as_ref().is_none_or(|t| t.contains(tenant)))
    }

    /// Every key that governs something in `tenant`: the kinds of UI, then
    /// the servers offered to it, in the order configured.
    pub fn keys_for(&self, tenant: &TenantId) -> Vec<SwitchKey> {
        let servers = self.servers.iter().filter(|(k, _)| self.offers(*k, tenant)).map(|(k, _)| SwitchKey::Server(*k));
        SwitchKey::ALL.into_iter().chain(servers).collect()
    }

    /// Every key of the deployment: the kinds of UI and every server.
    pub fn keys(&self) -> Vec<SwitchKey> {
        SwitchKey::ALL.into_iter().chain(self.servers.iter().map(|(k, _)| SwitchKey::Server(*k))).collect()
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
    fn a_server_key_is_made_by_configuration_only() {
        assert_eq!(SwitchKey::parse("mcp:never-configured"), None);
        let key = ServerKey::configure("budget-2").unwrap();
        assert_eq!(key.as_str(), "mcp:budget-2");
        assert_eq!(key.name(), "budget-2");
        assert_eq!(SwitchKey::parse("mcp:budget-2"), Some(SwitchKey::Server(key)));
        assert_eq!(ServerKey::configure("budget-2").unwrap(), key, "made once");
        assert_eq!(serde_json::to_value(SwitchKey::Server(key)).unwrap(), serde_json::json!("mcp:budget-2"));
        assert_eq!(serde_json::from_value::<SwitchKey>(serde_json::json!("ui:forms")).unwrap(), SwitchKey::Forms);
        assert!(serde_json::from_value::<SwitchKey>(serde_json::json!("mcp:nobody")).is_err());
        assert!(resolve(SwitchKey::Server(key), SwitchState::Unset, SwitchState::Unset, SwitchState::Unset).enabled);
        let long = "a".repeat(ServerKey::NAME_MAX);
        assert!(ServerKey::check_name(&long).is_ok());
        for bad in ["", "Budget", "a_b", "-a", "a-", "a--b", "1a", "a b", "a:b", &format!("{long}a")] {
            assert!(ServerKey::check_name(bad).is_err(), "{bad:?}");
        }
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

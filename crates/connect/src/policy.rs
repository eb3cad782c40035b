//! Who decides a call of a connected server's tool: the server's policy,
//! and for a call an app of that server made, the overlay named
//! `mcp-app:<server>` first. One rule for both paths, so an audit row says
//! which of the two decided.

use lattice_core::Decision;

use crate::config::ServerConfig;

/// Who made a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// The agent, in a run.
    Agent,
    /// One of the server's own apps, shown in the chat.
    App,
}

/// What decided a call, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decided {
    pub decision: Decision,
    /// `mcp:<server>` or `mcp-app:<server>`: the policy that decided.
    pub policy: String,
}

/// Decides a call of `tool` (the server's own name for it).
pub fn decide(server: &str, config: &ServerConfig, tool: &str, caller: Caller) -> Decided {
    if caller == Caller::App {
        let overlay = &config.app_policy;
        if let Some(decision) = overlay.tools.get(tool).copied().or(overlay.default) {
            return Decided { decision, policy: format!("mcp-app:{server}") };
        }
    }
    let decision = config.policy.tools.get(tool).copied().unwrap_or(config.policy.default);
    Decided { decision, policy: format!("mcp:{server}") }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_overlay_goes_first_for_an_apps_calls_only() {
        let config: ServerConfig = serde_json::from_value(json!({
            "url": "https://x/",
            "policy": {"default": "deny", "tools": {"read": "allow", "write": "ask"}},
            "app_policy": {"tools": {"write": "allow"}}
        }))
        .unwrap();
        let d = |tool, caller| decide("budget", &config, tool, caller);
        assert_eq!(d("write", Caller::Agent), Decided { decision: Decision::Ask, policy: "mcp:budget".into() });
        assert_eq!(d("write", Caller::App), Decided { decision: Decision::Allow, policy: "mcp-app:budget".into() });
        assert_eq!(d("read", Caller::App), Decided { decision: Decision::Allow, policy: "mcp:budget".into() });
        assert_eq!(d("drop", Caller::App).decision, Decision::Deny);
        let with_default: ServerConfig = serde_json::from_value(json!({"url": "https://x/", "app_policy": {"default": "deny"}})).unwrap();
        assert_eq!(decide("b", &with_default, "any", Caller::App).decision, Decision::Deny);
        assert_eq!(decide("b", &with_default, "any", Caller::Agent).decision, Decision::Ask);
    }
}

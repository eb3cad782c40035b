//! What a mini app may call without a person (REQUIREMENTS.md M5): allow, deny or ask,
//! per app tool, with an overlay for single apps. The chat host and the MCP
//! exporter both decide with it, so an app gets the same answer in either.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// An app reads its own state.
pub const GET_STATE: &str = "get_state";
/// An app changes its own state (RFC 6902 operations).
pub const SET_STATE: &str = "set_state";
/// An app sends values as the person who uses it.
pub const SUBMIT: &str = "submit";
/// The tools an app reaches.
pub const APP_TOOLS: [&str; 3] = [GET_STATE, SET_STATE, SUBMIT];

pub use lattice_core::Decision;

/// The deployment's decisions per tool, and per app where an operator set
/// one for that app (`acme:art_…:submit=deny`). Artifact ids are unique per
/// tenant only, so an app's overlay names its tenant: another tenant's app
/// that took the same id is not touched. A tool left out is asked about.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppToolPolicy {
    pub tools: BTreeMap<String, Decision>,
    /// Overlays by `tenant:artifact`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub apps: BTreeMap<String, BTreeMap<String, Decision>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyError(String);

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PolicyError {}

impl AppToolPolicy {
    /// Reads `get_state=allow,set_state=allow,submit=ask,acme:art_01…:submit=deny`.
    pub fn parse(text: &str) -> Result<Self, PolicyError> {
        let mut policy = Self::default();
        for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let (target, decision) = entry.split_once('=').ok_or_else(|| PolicyError(format!("{entry:?} is not tool=decision")))?;
            let decision = match decision.trim() {
                "allow" => Decision::Allow,
                "deny" => Decision::Deny,
                "ask" => Decision::Ask,
                other => return Err(PolicyError(format!("{other:?} is not allow, deny or ask"))),
            };
            // TENANT:ARTIFACT:TOOL (tenant ids hold no colon, tools none
            // either; an artifact id may).
            let target = target.trim();
            let (app, tool) = match target.rsplit_once(':') {
                Some((app, tool)) => (Some(app.trim()), tool.trim()),
                None => (None, target),
            };
            if !APP_TOOLS.contains(&tool) {
                return Err(PolicyError(format!("{tool:?} is not an app tool ({})", APP_TOOLS.join(", "))));
            }
            match app {
                Some(app) => {
                    let Some((tenant, artifact)) = app.split_once(':') else {
                        return Err(PolicyError(format!("{app:?}: an app's overlay names its tenant, as TENANT:{app}:{tool}={}", decision.as_str())));
                    };
                    lattice_core::TenantId::parse("tenant", tenant).map_err(|_| PolicyError(format!("{tenant:?} is not a tenant id")))?;
                    if !artifact.starts_with("art_") || lattice_core::ArtifactId::parse("app", artifact).is_err() {
                        return Err(PolicyError(format!("{artifact:?} is not an artifact id")));
                    }
                    policy.apps.entry(format!("{tenant}:{artifact}")).or_default().insert(tool.to_owned(), decision);
                }
                None => {
                    policy.tools.insert(tool.to_owned(), decision);
                }
            }
        }
        Ok(policy)
    }

    /// The decision for `tool` called by the app `app` of `tenant`: the
    /// app's overlay, else the deployment's, else ask.
    pub fn decide(&self, tenant: &str, app: &str, tool: &str) -> Decision {
        self.apps.get(&format!("{tenant}:{app}")).and_then(|o| o.get(tool)).or_else(|| self.tools.get(tool)).copied().unwrap_or(Decision::Ask)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_overlay_wins_for_its_tenants_app_only() {
        let p = AppToolPolicy::parse("get_state=allow, submit=allow, acme:art_01j0000000000000000000000a:submit=deny").unwrap();
        assert_eq!(p.decide("acme", "art_01j0000000000000000000000a", SUBMIT), Decision::Deny);
        assert_eq!(p.decide("other", "art_01j0000000000000000000000a", SUBMIT), Decision::Allow, "another tenant's app of the same id");
        assert_eq!(p.decide("acme", "art_01j0000000000000000000000b", SUBMIT), Decision::Allow);
        assert_eq!(p.decide("acme", "art_01j0000000000000000000000a", GET_STATE), Decision::Allow);
        assert_eq!(p.decide("acme", "art_01j0000000000000000000000a", SET_STATE), Decision::Ask);
        // An artifact id may hold a colon.
        let p = AppToolPolicy::parse("acme:art_a:b:submit=deny").unwrap();
        assert_eq!(p.decide("acme", "art_a:b", SUBMIT), Decision::Deny);
    }

    #[test]
    fn a_bad_entry_is_named() {
        for (text, said) in [
            ("submit", "is not tool=decision"),
            ("submit=maybe", "is not allow, deny or ask"),
            ("delete=allow", "is not an app tool"),
            ("acme:nope:submit=deny", "is not an artifact id"),
            ("art_01j0000000000000000000000a:submit=deny", "names its tenant"),
            ("no tenant:art_01j0000000000000000000000a:submit=deny", "is not a tenant id"),
        ] {
            let e = AppToolPolicy::parse(text).unwrap_err().to_string();
            assert!(e.contains(said), "{text}: {e}");
        }
        assert_eq!(AppToolPolicy::parse("").unwrap(), AppToolPolicy::default());
    }

    #[test]
    fn it_travels_as_json() {
        let p = AppToolPolicy::parse("get_state=allow,acme:art_01j0000000000000000000000a:submit=deny").unwrap();
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(json, serde_json::json!({"tools": {"get_state": "allow"}, "apps": {"acme:art_01j0000000000000000000000a": {"submit": "deny"}}}));
        assert_eq!(serde_json::from_value::<AppToolPolicy>(json).unwrap(), p);
    }
}

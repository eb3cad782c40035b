//! Who acts (REQUIREMENTS.md T2). Every command carries its actor, and the envelope it
//! commits records it.

use serde::{Deserialize, Serialize};

use crate::flat::need;
use crate::ids::{RunId, TenantId, UserId, WorkspaceId};
use crate::role::TenantRole;

/// An identity a verified token vouches for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Principal {
    pub tenant: TenantId,
    pub user: UserId,
    pub role: TenantRole,
    /// An agent's token: what may create an app or change its HTML.
    pub agent: bool,
    /// The run an agent acts in, when lattice's runner acts for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunId>,
    /// Whose rights bound this principal's: a run resumed by someone else's
    /// answer acts for the answerer, within what its starter may do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within: Option<Within>,
    /// The one workspace this principal may act in (an API key of a
    /// workspace): anything outside it is not there for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<WorkspaceId>,
}

/// The person whose rights bound a principal's (a run's starter).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Within {
    pub user: UserId,
    pub role: TenantRole,
}

impl Principal {
    /// The actor this principal is when it acts directly (not for a run).
    pub fn actor(&self) -> Actor {
        if self.agent {
            Actor::Agent { tenant: self.tenant.clone(), user: self.user.clone(), run: self.run.clone() }
        } else {
            Actor::Person { tenant: self.tenant.clone(), user: self.user.clone() }
        }
    }
}

/// The author of an envelope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", try_from = "ActorWire")]
pub enum Actor {
    Person {
        tenant: TenantId,
        user: UserId,
    },
    /// An agent, acting in a workspace as the member it was added as, and
    /// for a run when it acts inside one.
    Agent {
        tenant: TenantId,
        user: UserId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        run: Option<RunId>,
    },
    /// A named part of lattice itself (the bridge publishes as `bridge`).
    System {
        name: String,
    },
}

/// An actor as it is read: the variants' fields side by side, then
/// [`Actor`] by its `kind`, in one pass (every envelope has one; the
/// derived reading of a tagged enum buffers it first).
#[derive(Deserialize)]
struct ActorWire {
    kind: String,
    tenant: Option<TenantId>,
    user: Option<UserId>,
    run: Option<RunId>,
    name: Option<String>,
}

impl TryFrom<ActorWire> for Actor {
    type Error = String;

    fn try_from(w: ActorWire) -> Result<Self, String> {
        Ok(match w.kind.as_str() {
            "person" => Self::Person { tenant: need(w.tenant, "tenant")?, user: need(w.user, "user")? },
            "agent" => Self::Agent { tenant: need(w.tenant, "tenant")?, user: need(w.user, "user")?, run: w.run },
            "system" => Self::System { name: need(w.name, "name")? },
            other => return Err(format!("unknown actor kind `{other}`")),
        })
    }
}

impl Actor {
    /// The name shown as an author: the user id, or the system's name.
    pub fn name(&self) -> &str {
        match self {
            Self::Person { user, .. } | Self::Agent { user, .. } => user.as_str(),
            Self::System { name } => name,
        }
    }

    pub fn is_agent(&self) -> bool {
        matches!(self, Self::Agent { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each kind reads back what it wrote; a required field missing or a
    /// kind no variant has is refused, and so is an id that is not a string.
    #[test]
    fn an_actor_reads_back_and_a_partial_one_is_refused() {
        let tenant = TenantId::parse("t", "acme").unwrap();
        let user = UserId::parse("u", "ana").unwrap();
        let every = [
            Actor::Person { tenant: tenant.clone(), user: user.clone() },
            Actor::Agent { tenant: tenant.clone(), user: user.clone(), run: None },
            Actor::Agent { tenant, user, run: Some(RunId::parse("r", "run_1").unwrap()) },
            Actor::System { name: "bridge".into() },
        ];
        for a in &every {
            match a {
                Actor::Person { .. } | Actor::Agent { .. } | Actor::System { .. } => {}
            }
            let text = serde_json::to_string(a).unwrap();
            assert_eq!(&serde_json::from_str::<Actor>(&text).unwrap(), a, "{text}");
        }
        for text in [
            r#"{"kind":"person","tenant":"acme"}"#,
            r#"{"kind":"agent","user":"ana"}"#,
            r#"{"kind":"system"}"#,
            r#"{"kind":"robot","name":"x"}"#,
            r#"{"name":"x"}"#,
            r#"{"kind":"person","tenant":"acme","user":7}"#,
        ] {
            assert!(serde_json::from_str::<Actor>(text).is_err(), "{text}");
        }
    }
}

//! Who acts (REQUIREMENTS.md T2). Every command carries its actor, and the envelope it
//! commits records it.

use serde::{Deserialize, Serialize};

use crate::ids::{RunId, TenantId, UserId};
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
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Actor {
    Person { tenant: TenantId, user: UserId },
    /// An agent, acting in a workspace as the member it was added as, and
    /// for a run when it acts inside one.
    Agent {
        tenant: TenantId,
        user: UserId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        run: Option<RunId>,
    },
    /// A named part of lattice itself (the bridge publishes as `bridge`).
    System { name: String },
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

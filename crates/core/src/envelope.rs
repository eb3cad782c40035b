//! The envelope (REQUIREMENTS.md L2): what one commit appends to the log.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::actor::Actor;

/// One entry of the append-only log. `seq` orders the log; `id` (a ULID) is
/// the envelope's identity everywhere it travels, NATS's `Nats-Msg-Id` too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    pub seq: i64,
    pub id: String,
    /// The tenant, or `_` for the deployment's own events.
    pub tenant: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread: Option<String>,
    pub actor: Actor,
    /// RFC 3339, UTC, milliseconds.
    pub at: String,
    #[serde(rename = "type")]
    pub event_type: String,
    pub payload: Value,
    /// The W3C trace context of the request that caused it, when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traceparent: Option<String>,
}

/// The tenant column of deployment-level envelopes. Tenant ids start with a
/// letter or a digit, so it can't collide with one.
pub const DEPLOYMENT_TENANT: &str = "_";

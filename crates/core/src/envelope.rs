//! The envelope (REQUIREMENTS.md L2): what one commit appends to the log.

use serde::{Deserialize, Serialize};

use crate::actor::Actor;
use crate::event::Event;

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
    /// `type` and `payload` on the wire.
    #[serde(flatten)]
    pub event: Event,
    /// The W3C trace context of the request that caused it, when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traceparent: Option<String>,
}

/// The tenant column of deployment-level envelopes. Tenant ids start with a
/// letter or a digit, so it can't collide with one.
pub const DEPLOYMENT_TENANT: &str = "_";

impl Envelope {
    /// The envelope's `type`.
    pub fn event_type(&self) -> &'static str {
        self.event.name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::MessagePosted;

    #[test]
    fn an_envelope_reads_back_what_it_wrote() {
        let envelope = Envelope {
            seq: 7,
            id: "01J".into(),
            tenant: "acme".into(),
            workspace: Some("ws_1".into()),
            thread: Some("th_1".into()),
            actor: Actor::System { name: "bridge".into() },
            at: "2026-01-01T00:00:00.000Z".into(),
            event: MessagePosted { thread: "th_1".into(), text: "hi".into() }.into(),
            traceparent: None,
        };
        let wire = serde_json::to_value(&envelope).unwrap();
        assert_eq!(wire["type"], "message_posted");
        assert_eq!(wire["payload"]["text"], "hi");
        assert_eq!(serde_json::from_value::<Envelope>(wire).unwrap(), envelope);
    }
}

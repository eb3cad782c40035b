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

    /// Reads an envelope from its JSON text, as [`Deserialize`] does, in
    /// one pass: the payload is kept as text while the envelope is read,
    /// then decoded by its `type` ([`Event::decode`]). The derived reading
    /// buffers the whole envelope first (its event is flattened into it);
    /// the chat host reads every envelope of a thread this way, and the
    /// buffering's code for every payload was a tenth of its module.
    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        Self::read(text, |name, payload| Event::decode(name, payload).map(Some))?.ok_or_else(|| serde::de::Error::custom("no event"))
    }

    /// [`Envelope::from_json`] of an envelope whose event is of one of the
    /// types in `KINDS` ([`Event::decode_in`]); one of another known type
    /// is `None`.
    pub fn from_json_in<const KINDS: u64>(text: &str) -> Result<Option<Self>, serde_json::Error> {
        Self::read(text, Event::decode_in::<KINDS>)
    }

    fn read(text: &str, decode: impl FnOnce(&str, &str) -> Result<Option<Event>, serde_json::Error>) -> Result<Option<Self>, serde_json::Error> {
        #[derive(Deserialize)]
        struct Wire<'a> {
            seq: i64,
            id: String,
            tenant: String,
            #[serde(default)]
            workspace: Option<String>,
            #[serde(default)]
            thread: Option<String>,
            actor: Actor,
            at: String,
            #[serde(rename = "type")]
            event_type: String,
            #[serde(borrow)]
            payload: &'a serde_json::value::RawValue,
            #[serde(default)]
            traceparent: Option<String>,
        }
        let wire: Wire = crate::json::from_str(text)?;
        let Some(event) = decode(&wire.event_type, wire.payload.get())? else { return Ok(None) };
        Ok(Some(Self {
            seq: wire.seq,
            id: wire.id,
            tenant: wire.tenant,
            workspace: wire.workspace,
            thread: wire.thread,
            actor: wire.actor,
            at: wire.at,
            event,
            traceparent: wire.traceparent,
        }))
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
        assert_eq!(serde_json::from_value::<Envelope>(wire.clone()).unwrap(), envelope);
        assert_eq!(Envelope::from_json(&wire.to_string()).unwrap(), envelope);
    }

    /// A reader of some types reads those as [`Envelope::from_json`] does,
    /// passes over the other known ones unread, and refuses what it refuses.
    #[test]
    fn a_reader_of_some_types_passes_over_the_others() {
        use crate::event::{RunStarted, ThreadCreated};
        const SOME: u64 = MessagePosted::BIT | ThreadCreated::BIT;
        let message = r#"{"seq":1,"id":"01J","tenant":"acme","actor":{"kind":"system","name":"bridge"},"at":"t","type":"message_posted","payload":{"thread":"th_1","text":"hi"}}"#;
        assert_eq!(Envelope::from_json_in::<SOME>(message).unwrap(), Some(Envelope::from_json(message).unwrap()));
        // Another type: not read, so not even its payload's fields are asked for.
        let other = message.replace("message_posted", RunStarted::NAME);
        assert!(Envelope::from_json(&other).is_err());
        assert_eq!(Envelope::from_json_in::<SOME>(&other).unwrap(), None);
        for refused in [
            message.replace("message_posted", "no_such_event"),
            message.replace(r#","text":"hi""#, ""),
            message.replace(r#""seq":1"#, r#""seq":"1""#),
        ] {
            assert!(Envelope::from_json_in::<SOME>(&refused).is_err(), "{refused}");
        }
        assert_ne!(MessagePosted::BIT, ThreadCreated::BIT);
    }

    /// The one-pass reading and the derived one agree on what they take
    /// and on what they refuse.
    #[test]
    fn from_json_reads_as_the_derived_reading_does() {
        let taken = [
            r#"{"seq":1,"id":"01J","tenant":"acme","actor":{"kind":"system","name":"bridge"},"at":"t","type":"message_posted","payload":{"thread":"th_1","text":"a \"quoted\" word"},"traceparent":"00-x"}"#,
            r#"{"payload":{"text":"hi","thread":"th_1"},"type":"message_posted","at":"t","actor":{"kind":"system","name":"bridge"},"tenant":"acme","id":"01J","seq":2,"workspace":"ws_1","unknown":[1,2]}"#,
        ];
        for text in taken {
            assert_eq!(Envelope::from_json(text).unwrap(), serde_json::from_str::<Envelope>(text).unwrap(), "{text}");
        }
        let refused = [
            r#"{"seq":1,"id":"01J","tenant":"acme","actor":{"kind":"system","name":"bridge"},"at":"t","type":"no_such_event","payload":{}}"#,
            r#"{"seq":1,"id":"01J","tenant":"acme","actor":{"kind":"system","name":"bridge"},"at":"t","type":"message_posted","payload":{"thread":"th_1"}}"#,
            r#"{"seq":1,"id":"01J","tenant":"acme","actor":{"kind":"system","name":"bridge"},"at":"t","type":"message_posted"}"#,
            r#"{"seq":"1","id":"01J","tenant":"acme","actor":{"kind":"system","name":"bridge"},"at":"t","type":"message_posted","payload":{"thread":"th_1","text":"hi"}}"#,
            "[]",
        ];
        for text in refused {
            assert!(Envelope::from_json(text).is_err(), "{text}");
            assert!(serde_json::from_str::<Envelope>(text).is_err(), "{text}");
        }
    }
}

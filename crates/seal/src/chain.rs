//! An envelope's leaf and the chain's heads.
//!
//! The leaf is SHA-256 over `0x00` and the RFC 8785 form of what is sealed
//! of the envelope: its place (seq, id, tenant, workspace, thread), its
//! actor, its time, its type, and its payload's own digest rather than
//! the payload, so a payload that must one day be erased can be, and its
//! envelope still verifies by that digest. A head is SHA-256 over `0x01`,
//! the previous head and the leaf; the first previous head is 32 zeros.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::{Hash, SealError};

/// The head before a chain's first envelope.
pub const HEAD_ZERO: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// An envelope as it is sealed and exported: what the log stores of it.
/// `payload` may be left out for its digest, `payload_sha256` (a payload
/// erased or withheld).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    pub seq: i64,
    pub id: String,
    pub tenant: String,
    #[serde(default)]
    pub workspace: Option<String>,
    #[serde(default)]
    pub thread: Option<String>,
    pub actor: Value,
    pub at_ms: i64,
    #[serde(rename = "type")]
    pub event_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload_sha256: Option<Hash>,
}

impl Envelope {
    /// The digest of its payload: computed from the payload when it is
    /// there, else the one it carries.
    pub fn payload_digest(&self) -> Result<Option<Hash>, SealError> {
        match (&self.payload, &self.payload_sha256) {
            (Some(payload), _) => Ok(Some(hex::encode(Sha256::digest(serde_json_canonicalizer::to_vec(payload)?)))),
            (None, Some(digest)) => Ok(Some(digest.clone())),
            (None, None) => Ok(None),
        }
    }
}

/// An envelope's place in its chain, as the sealer recorded it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seal {
    /// Its number in its workspace's chain, from 1.
    pub n: i64,
    pub leaf: Hash,
    pub head: Hash,
}

/// The envelope's leaf.
pub fn leaf(e: &Envelope) -> Result<Hash, SealError> {
    let sealed = json!({
        "v": 1,
        "seq": e.seq,
        "id": e.id,
        "tenant": e.tenant,
        "workspace": e.workspace,
        "thread": e.thread,
        "actor": e.actor,
        "at_ms": e.at_ms,
        "type": e.event_type,
        "payload_sha256": e.payload_digest()?,
    });
    let mut h = Sha256::new();
    h.update([0u8]);
    h.update(serde_json_canonicalizer::to_vec(&sealed)?);
    Ok(hex::encode(h.finalize()))
}

/// The head after `leaf`, from the head before it.
pub fn chain(previous: &str, leaf: &str) -> Hash {
    let mut h = Sha256::new();
    h.update([1u8]);
    h.update(hex::decode(previous).unwrap_or_default());
    h.update(hex::decode(leaf).unwrap_or_default());
    hex::encode(h.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn envelope() -> Envelope {
        Envelope {
            seq: 7,
            id: "env_1".into(),
            tenant: "acme".into(),
            workspace: Some("ws_1".into()),
            thread: None,
            actor: json!({"kind": "person", "user": "ana"}),
            at_ms: 1,
            event_type: "message_posted".into(),
            payload: Some(json!({"text": "é", "n": 1.0})),
            payload_sha256: None,
        }
    }

    #[test]
    fn a_leaf_is_of_the_canonical_form_and_a_payload_may_be_its_digest() {
        let e = envelope();
        let digest = e.payload_digest().unwrap().unwrap();
        // Key order and number spelling do not change the canonical form.
        let respelled = Envelope { payload: Some(serde_json::from_str(r#"{"n": 1, "text": "\u00e9"}"#).unwrap()), ..e.clone() };
        assert_eq!(leaf(&respelled).unwrap(), leaf(&e).unwrap());
        let withheld = Envelope { payload: None, payload_sha256: Some(digest), ..e.clone() };
        assert_eq!(leaf(&withheld).unwrap(), leaf(&e).unwrap(), "an erased payload verifies by its digest");
        let altered = Envelope { payload: Some(json!({"text": "e", "n": 1})), ..e.clone() };
        assert_ne!(leaf(&altered).unwrap(), leaf(&e).unwrap());
        assert_ne!(leaf(&Envelope { seq: 8, ..e.clone() }).unwrap(), leaf(&e).unwrap());
        assert_ne!(chain(HEAD_ZERO, &leaf(&e).unwrap()), leaf(&e).unwrap());
    }
}

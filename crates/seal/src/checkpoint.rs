//! Signed checkpoints: a chain's head at its `n`th envelope, signed with
//! the deployment's seal key (Ed25519). The key is derived from the
//! deployment's secret, so every replica signs with the same one; its id
//! is the start of its public key's digest, and a checkpoint names the key
//! that signed it, so keys can change without old checkpoints failing
//! (a verifier is given every public key it trusts).

use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use serde::{Deserialize, Serialize};
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::{Hash, SealError};

/// A key's id: 16 hex digits of SHA-256 over its public key.
pub type KeyId = String;

/// A chain's head at its `n`th envelope, signed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub tenant: String,
    /// Empty for the tenant's envelopes of no workspace.
    pub workspace: String,
    pub n: i64,
    /// The log's sequence number of the `n`th envelope.
    pub seq: i64,
    pub head: Hash,
    pub at_ms: i64,
    pub key_id: KeyId,
    /// Ed25519 over [`Checkpoint::signed_bytes`], hex.
    pub signature: String,
}

impl Checkpoint {
    /// What is signed: the RFC 8785 form of everything but the signature.
    pub fn signed_bytes(&self) -> Vec<u8> {
        let signed = json!({
            "v": 1, "tenant": self.tenant, "workspace": self.workspace, "n": self.n, "seq": self.seq,
            "head": self.head, "at_ms": self.at_ms, "key_id": self.key_id,
        });
        serde_json_canonicalizer::to_vec(&signed).expect("a checkpoint serializes")
    }

    /// Whether `key` signed it.
    pub fn verifies_with(&self, key: &VerifyingKey) -> bool {
        let Ok(bytes) = hex::decode(&self.signature) else { return false };
        let Ok(signature) = Signature::from_slice(&bytes) else { return false };
        key_id(key) == self.key_id && key.verify(&self.signed_bytes(), &signature).is_ok()
    }
}

/// The deployment's seal key.
#[derive(Clone)]
pub struct SealKey {
    signing: SigningKey,
}

impl std::fmt::Debug for SealKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SealKey({})", self.id())
    }
}

impl SealKey {
    /// The key of a deployment, from its secret: a key of its own, never
    /// a token's or a chain's (a separate derivation).
    pub fn derive(secret: &[u8]) -> Self {
        let seed: [u8; 32] = Sha256::new().chain_update(b"lattice.seal.v1\0").chain_update(secret).finalize().into();
        Self { signing: SigningKey::from_bytes(&seed) }
    }

    pub fn public(&self) -> VerifyingKey {
        self.signing.verifying_key()
    }

    /// Its public key in hex: what a verifier is given.
    pub fn public_hex(&self) -> String {
        hex::encode(self.public().as_bytes())
    }

    pub fn id(&self) -> KeyId {
        key_id(&self.public())
    }

    /// Signs the head of `tenant`'s `workspace` at its `n`th envelope.
    pub fn sign(&self, tenant: &str, workspace: &str, n: i64, seq: i64, head: &str, at_ms: i64) -> Checkpoint {
        let mut checkpoint = Checkpoint {
            tenant: tenant.to_owned(),
            workspace: workspace.to_owned(),
            n,
            seq,
            head: head.to_owned(),
            at_ms,
            key_id: self.id(),
            signature: String::new(),
        };
        checkpoint.signature = hex::encode(self.signing.sign(&checkpoint.signed_bytes()).to_bytes());
        checkpoint
    }
}

fn key_id(key: &VerifyingKey) -> KeyId {
    hex::encode(&Sha256::digest(key.as_bytes())[..8])
}

/// A public key from its hex.
pub fn verifying_key(hex_key: &str) -> Result<VerifyingKey, SealError> {
    let bytes: [u8; 32] =
        hex::decode(hex_key.trim()).ok().and_then(|b| b.try_into().ok()).ok_or_else(|| SealError::Key("64 hex digits expected".into()))?;
    VerifyingKey::from_bytes(&bytes).map_err(|e| SealError::Key(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_verifies_with_its_key_only_and_not_once_changed() {
        let key = SealKey::derive(b"secret");
        let other = SealKey::derive(b"another secret");
        let c = key.sign("acme", "ws_1", 3, 9, &"ab".repeat(32), 5);
        assert!(c.verifies_with(&key.public()));
        assert!(!c.verifies_with(&other.public()));
        assert!(!Checkpoint { head: "cd".repeat(32), ..c.clone() }.verifies_with(&key.public()));
        assert!(!Checkpoint { n: 4, ..c.clone() }.verifies_with(&key.public()));
        assert_eq!(verifying_key(&key.public_hex()).unwrap(), key.public());
        assert_eq!(SealKey::derive(b"secret").id(), key.id(), "every replica derives the same key");
    }
}

//! The log's seal (docs/SEAL.md): every envelope is hashed, in the
//! canonical JSON of RFC 8785, into a hash chain per workspace, and the
//! chain's head is signed with Ed25519 at checkpoints. Whoever holds an
//! export and the public key can check, offline, that no envelope was
//! altered, removed, inserted or reordered since it was sealed.
//!
//! Why a chain per workspace and not a Merkle tree: a workspace's log is
//! read, exported and verified whole (a verifier walks it anyway), an
//! envelope joins one chain in one step (the sealer keeps only the head),
//! and a receipt is the envelope's place in the chain with the checkpoint
//! after it, which a verifier checks against the export. A tree would
//! give shorter inclusion proofs for a log nobody holds, which is not the
//! case here.
//!
//! This crate does no I/O: the log service seals and stores, `lattice
//! verify` reads an export; both call these functions.

mod chain;
mod checkpoint;
mod receipt;
mod verify;

pub use chain::{Envelope, HEAD_ZERO, Seal, chain, leaf};
pub use checkpoint::{Checkpoint, KeyId, SealKey, verifying_key};
pub use receipt::{Receipt, verify_receipt};
pub use verify::{Export, Finding, Line, Report, verify};

/// A hash, in lower-case hex.
pub type Hash = String;

#[derive(Debug, thiserror::Error)]
pub enum SealError {
    #[error("not JSON the seal can hash: {0}")]
    Json(#[from] serde_json::Error),
    #[error("not a public key: {0}")]
    Key(String),
}

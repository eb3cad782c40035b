//! Receipts: what a person is handed to prove that something they did (a
//! submission, an answer, an app call's confirmation) is in the log under
//! a signed checkpoint. A receipt is the envelope's sealed form, its seal
//! (its number in its chain, its leaf and head), and a checkpoint at or
//! after it. Checked with an export of the workspace and the public key:
//! the checkpoint is signed by a trusted key, the envelope hashes to its
//! leaf, and the export (intact) holds that envelope at that number and
//! that checkpoint.

use ed25519_dalek::VerifyingKey;
use serde::{Deserialize, Serialize};

use crate::chain::{Envelope, Seal, leaf};
use crate::checkpoint::Checkpoint;
use crate::verify::{Export, verify};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Receipt {
    pub envelope: Envelope,
    pub seal: Seal,
    pub checkpoint: Checkpoint,
}

/// Checks `receipt` against `export`: what it proves, or why it does not.
pub fn verify_receipt(receipt: &Receipt, export: &Export, keys: &[VerifyingKey]) -> Result<String, String> {
    let (e, seal, c) = (&receipt.envelope, &receipt.seal, &receipt.checkpoint);
    if !keys.iter().any(|k| c.verifies_with(k)) {
        return Err(format!("the receipt's checkpoint {} is not signed by a trusted key (it names key {})", c.n, c.key_id));
    }
    if leaf(e).map_err(|err| err.to_string())? != seal.leaf {
        return Err(format!("the receipt's envelope {} does not hash to its seal", e.seq));
    }
    if c.tenant != e.tenant || c.workspace != e.workspace.clone().unwrap_or_default() || c.n < seal.n {
        return Err("the receipt's checkpoint is not of its envelope's chain, at or after it".into());
    }
    let report = verify(export, keys);
    if !report.intact() {
        return Err(format!("the export is not intact, so it proves nothing: {report}"));
    }
    match export.envelopes.iter().find(|(x, _)| x.id == e.id) {
        Some((_, Some(held))) if held == seal => {}
        Some(_) => return Err(format!("the export holds envelope {} with another seal", e.id)),
        None => return Err(format!("the export does not hold envelope {}", e.id)),
    }
    if !export.checkpoints.iter().any(|x| x == c) {
        return Err(format!("the export does not hold the receipt's checkpoint {}", c.n));
    }
    let ws = if c.workspace.is_empty() { "_" } else { &c.workspace };
    Ok(format!(
        "the receipt holds: envelope {} ({}, {}) is number {} of the chain {}/{ws}, under checkpoint {} signed by key {}",
        e.seq, e.id, e.event_type, seal.n, c.tenant, c.n, c.key_id
    ))
}

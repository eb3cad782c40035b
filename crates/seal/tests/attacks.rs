//! Each attack on a sealed log, caught and named by `verify`; what
//! verification lets pass (a payload withheld for its digest, a key
//! changed between checkpoints) passes.

use lattice_seal::{Envelope, Export, Finding, HEAD_ZERO, Seal, SealKey, chain, leaf, verify};
use serde_json::json;

fn envelope(seq: i64) -> Envelope {
    Envelope {
        seq,
        id: format!("env_{seq}"),
        tenant: "acme".into(),
        workspace: Some("ws_1".into()),
        thread: Some("th_1".into()),
        actor: json!({"kind": "person", "user": "ana"}),
        at_ms: 1_000 + seq,
        event_type: "message_posted".into(),
        payload: Some(json!({"text": format!("message {seq}")})),
        payload_sha256: None,
    }
}

/// Five envelopes sealed, checkpoints after the 2nd (key `first`) and the
/// 5th (key `second`).
fn sealed(first: &SealKey, second: &SealKey) -> Export {
    let mut export = Export::default();
    let mut head = HEAD_ZERO.to_owned();
    for (n, seq) in (1..=5).map(|n| (n, n * 10)) {
        let e = envelope(seq);
        let l = leaf(&e).unwrap();
        head = chain(&head, &l);
        export.envelopes.push((e, Some(Seal { n, leaf: l, head: head.clone() })));
        match n {
            2 => export.checkpoints.push(first.sign("acme", "ws_1", n, seq, &head, 1)),
            5 => export.checkpoints.push(second.sign("acme", "ws_1", n, seq, &head, 2)),
            _ => {}
        }
    }
    export
}

fn keys() -> (SealKey, SealKey) {
    (SealKey::derive(b"first secret"), SealKey::derive(b"second secret"))
}

fn first_finding(export: &Export, trusted: &[&SealKey]) -> Option<Finding> {
    let keys: Vec<_> = trusted.iter().map(|k| k.public()).collect();
    verify(export, &keys).findings.into_iter().next()
}

#[test]
fn an_intact_log_verifies_across_a_change_of_key_and_a_payload_withheld() {
    let (a, b) = keys();
    let mut export = sealed(&a, &b);
    let report = verify(&export, &[a.public(), b.public()]);
    assert!(report.intact(), "{report}");
    assert!(report.to_string().starts_with("intact: 5 envelopes in 1 chains"), "{report}");
    assert!(report.to_string().contains("acme/ws_1: signed up to envelope 50"), "{report}");
    // Erased: the payload gone, its digest kept.
    let e = &mut export.envelopes[2].0;
    e.payload_sha256 = e.payload_digest().unwrap();
    e.payload = None;
    assert!(verify(&export, &[a.public(), b.public()]).intact());
    // Trusting only the newer key, the older checkpoint is not trusted.
    assert_eq!(first_finding(&export, &[&b]), Some(Finding::BadSignature { n: 2, key_id: a.id() }));
    // Round trip through the file form.
    assert_eq!(Export::read(&export.write()).unwrap(), export);
}

#[test]
fn one_byte_of_a_payload_altered_is_named() {
    let (a, b) = keys();
    let mut export = sealed(&a, &b);
    export.envelopes[2].0.payload = Some(json!({"text": "message 3O"}));
    assert_eq!(first_finding(&export, &[&a, &b]), Some(Finding::Altered { seq: 30, id: "env_30".into() }));
}

#[test]
fn an_envelope_deleted_is_named() {
    let (a, b) = keys();
    let mut export = sealed(&a, &b);
    export.envelopes.remove(1);
    assert_eq!(first_finding(&export, &[&a, &b]), Some(Finding::Removed { n: 2, before_seq: Some(30) }));
    // The last one deleted: the checkpoint after it says so.
    let mut export = sealed(&a, &b);
    export.envelopes.pop();
    assert_eq!(first_finding(&export, &[&a, &b]), Some(Finding::Removed { n: 5, before_seq: None }));
}

#[test]
fn two_envelopes_swapped_are_named() {
    let (a, b) = keys();
    let mut export = sealed(&a, &b);
    export.envelopes.swap(2, 3);
    assert_eq!(first_finding(&export, &[&a, &b]), Some(Finding::Reordered { seq: 40, id: "env_40".into() }));
}

#[test]
fn an_envelope_slipped_in_is_named() {
    let (a, b) = keys();
    let mut export = sealed(&a, &b);
    export.envelopes.insert(2, (envelope(25), None));
    assert_eq!(first_finding(&export, &[&a, &b]), Some(Finding::Inserted { seq: 25, id: "env_25".into() }));
}

#[test]
fn a_checkpoints_signature_replaced_is_named() {
    let (a, b) = keys();
    let mut export = sealed(&a, &b);
    let forger = SealKey::derive(b"forger");
    let c = export.checkpoints[1].clone();
    export.checkpoints[1] = forger.sign(&c.tenant, &c.workspace, c.n, c.seq, &c.head, c.at_ms);
    export.checkpoints[1].key_id = c.key_id.clone();
    assert_eq!(first_finding(&export, &[&a, &b]), Some(Finding::BadSignature { n: 5, key_id: b.id() }));
}

#[test]
fn a_rewrite_with_its_seals_redone_is_caught_by_the_signed_head() {
    let (a, b) = keys();
    let mut export = sealed(&a, &b);
    // The answer rewritten, and every seal after it recomputed to match:
    // only the signature over the old head is left to tell.
    export.envelopes[3].0.payload = Some(json!({"approved": true}));
    let mut head = export.envelopes[2].1.as_ref().unwrap().head.clone();
    for (e, seal) in export.envelopes.iter_mut().skip(3) {
        let seal = seal.as_mut().unwrap();
        seal.leaf = leaf(e).unwrap();
        head = chain(&head, &seal.leaf);
        seal.head = head.clone();
    }
    assert_eq!(first_finding(&export, &[&a, &b]), Some(Finding::CheckpointDiffers { n: 5, seq: 50 }));
}

#[test]
fn a_receipt_verifies_with_the_export_and_the_key_only_while_both_hold() {
    use lattice_seal::{Receipt, verify_receipt};
    let (a, b) = keys();
    let export = sealed(&a, &b);
    let (envelope, seal) = export.envelopes[2].clone();
    let receipt = Receipt { envelope, seal: seal.unwrap(), checkpoint: export.checkpoints[1].clone() };
    let keys = [a.public(), b.public()];
    let said = verify_receipt(&receipt, &export, &keys).unwrap();
    assert!(said.starts_with("the receipt holds: envelope 30 (env_30, message_posted) is number 3 of the chain acme/ws_1"), "{said}");
    // Its envelope changed, or the export changed under it: it proves nothing.
    let mut forged = receipt.clone();
    forged.envelope.payload = Some(json!({"text": "something else"}));
    assert!(verify_receipt(&forged, &export, &keys).unwrap_err().contains("does not hash"));
    let mut altered = export.clone();
    altered.envelopes[2].0.payload = Some(json!({"text": "something else"}));
    assert!(verify_receipt(&receipt, &altered, &keys).unwrap_err().contains("not intact"));
    // A verifier trusts every key the log was sealed with: with one left
    // out, the export's older checkpoint, then the receipt's, are not trusted.
    assert!(verify_receipt(&receipt, &export, &[b.public()]).unwrap_err().contains("not intact"));
    assert!(verify_receipt(&receipt, &export, &[a.public()]).unwrap_err().contains("not signed by a trusted key"));
}

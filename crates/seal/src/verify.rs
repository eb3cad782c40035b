//! Verifying an export offline, given only the public keys trusted: every
//! sealed envelope still hashes to its leaf, the leaves chain to the heads
//! in order with none missing, and every checkpoint is signed by a trusted
//! key over the head the envelopes give. The first thing that fails in
//! each chain is named: the envelope altered, removed, inserted or
//! reordered, or the checkpoint whose signature does not hold.

use std::collections::BTreeMap;
use std::fmt;

use ed25519_dalek::VerifyingKey;
use serde::{Deserialize, Serialize};

use crate::chain::{Envelope, HEAD_ZERO, Seal, chain, leaf};
use crate::checkpoint::Checkpoint;

/// One line of an export: an envelope (with its seal, once sealed) or a
/// checkpoint. An export is JSON Lines of these, envelopes in log order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Line {
    Envelope {
        #[serde(flatten)]
        envelope: Box<Envelope>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seal: Option<Seal>,
    },
    Checkpoint(Checkpoint),
}

/// An export: its envelopes in log order, with their seals, and the
/// checkpoints.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Export {
    pub envelopes: Vec<(Envelope, Option<Seal>)>,
    pub checkpoints: Vec<Checkpoint>,
}

impl Export {
    /// Reads JSON Lines; a line that is none of an export's is an error
    /// naming its number.
    pub fn read(text: &str) -> Result<Self, String> {
        let mut export = Export::default();
        for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            match serde_json::from_str::<Line>(line) {
                Ok(Line::Envelope { envelope, seal }) => export.envelopes.push((*envelope, seal)),
                Ok(Line::Checkpoint(c)) => export.checkpoints.push(c),
                Err(e) => return Err(format!("line {}: not a line of an export: {e}", i + 1)),
            }
        }
        Ok(export)
    }

    /// Writes JSON Lines.
    pub fn write(&self) -> String {
        let mut out = String::new();
        for (envelope, seal) in &self.envelopes {
            let line = Line::Envelope { envelope: Box::new(envelope.clone()), seal: seal.clone() };
            out.push_str(&serde_json::to_string(&line).expect("a line serializes"));
            out.push('\n');
        }
        for c in &self.checkpoints {
            out.push_str(&serde_json::to_string(&Line::Checkpoint(c.clone())).expect("a line serializes"));
            out.push('\n');
        }
        out
    }
}

/// What verification found wrong, the first in its chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// Its content no longer hashes to what was sealed.
    Altered { seq: i64, id: String },
    /// The chain's `n`th envelope is missing (before the one at `seq`, or
    /// at its end).
    Removed { n: i64, before_seq: Option<i64> },
    /// It carries no seal, yet later envelopes do: it was put in after.
    Inserted { seq: i64, id: String },
    /// It stands out of its place in the chain.
    Reordered { seq: i64, id: String },
    /// Its seal's head does not follow from the chain before it.
    SealAltered { seq: i64, id: String },
    /// The envelopes up to `n` do not give the head the checkpoint signed.
    CheckpointDiffers { n: i64, seq: i64 },
    /// The checkpoint is not signed by a trusted key.
    BadSignature { n: i64, key_id: String },
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Altered { seq, id } => write!(f, "envelope {seq} ({id}) was altered: it no longer hashes to its seal"),
            Self::Removed { n, before_seq: Some(seq) } => write!(f, "an envelope was removed: the chain's envelope {n}, before envelope {seq}"),
            Self::Removed { n, before_seq: None } => write!(f, "an envelope was removed: the chain's envelope {n}, at its end"),
            Self::Inserted { seq, id } => write!(f, "envelope {seq} ({id}) was inserted: it has no seal, and envelopes after it have"),
            Self::Reordered { seq, id } => write!(f, "envelope {seq} ({id}) was reordered: it stands out of its place in the chain"),
            Self::SealAltered { seq, id } => write!(f, "the seal of envelope {seq} ({id}) was altered: its head does not follow"),
            Self::CheckpointDiffers { n, seq } => {
                write!(f, "the log up to envelope {seq} does not give the head signed at checkpoint {n}: an envelope at or before it was changed")
            }
            Self::BadSignature { n, key_id } => write!(f, "checkpoint {n} is not signed by a trusted key (it names key {key_id})"),
        }
    }
}

/// What verification found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    pub chains: usize,
    pub envelopes: usize,
    /// Envelopes not sealed yet: the newest, after the last sealed one.
    pub unsealed: usize,
    pub checkpoints: usize,
    /// The last checkpoint of each chain that verified: (tenant, workspace, n, seq).
    pub signed_up_to: Vec<(String, String, i64, i64)>,
    pub findings: Vec<Finding>,
}

impl Report {
    pub fn intact(&self) -> bool {
        self.findings.is_empty()
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.intact() {
            write!(
                f,
                "intact: {} envelopes in {} chains ({} not sealed yet), {} checkpoints signed by trusted keys",
                self.envelopes, self.chains, self.unsealed, self.checkpoints
            )?;
            for (tenant, workspace, n, seq) in &self.signed_up_to {
                let ws = if workspace.is_empty() { "_" } else { workspace };
                write!(f, "\n  {tenant}/{ws}: signed up to envelope {seq} (number {n} of its chain)")?;
            }
            Ok(())
        } else {
            write!(f, "NOT intact:")?;
            for finding in &self.findings {
                write!(f, "\n  {finding}")?;
            }
            Ok(())
        }
    }
}

type ChainKey = (String, String);

/// Verifies `export` against the public keys trusted.
pub fn verify(export: &Export, keys: &[VerifyingKey]) -> Report {
    let mut report = Report { envelopes: export.envelopes.len(), checkpoints: export.checkpoints.len(), ..Report::default() };
    let mut chains: BTreeMap<ChainKey, Vec<&(Envelope, Option<Seal>)>> = BTreeMap::new();
    for item in &export.envelopes {
        chains.entry((item.0.tenant.clone(), item.0.workspace.clone().unwrap_or_default())).or_default().push(item);
    }
    let mut signed: BTreeMap<ChainKey, BTreeMap<i64, &Checkpoint>> = BTreeMap::new();
    for c in &export.checkpoints {
        if !keys.iter().any(|k| c.verifies_with(k)) {
            report.findings.push(Finding::BadSignature { n: c.n, key_id: c.key_id.clone() });
            continue;
        }
        signed.entry((c.tenant.clone(), c.workspace.clone())).or_default().insert(c.n, c);
    }
    // A chain with checkpoints and no envelope left lost them all.
    for key in signed.keys() {
        chains.entry(key.clone()).or_default();
    }
    report.chains = chains.len();
    for (key, envelopes) in &chains {
        let checkpoints = signed.get(key).cloned().unwrap_or_default();
        let (finding, unsealed, up_to) = walk(envelopes, &checkpoints);
        report.unsealed += unsealed;
        if let Some(finding) = finding {
            report.findings.push(finding);
        } else if let Some((n, seq)) = up_to {
            report.signed_up_to.push((key.0.clone(), key.1.clone(), n, seq));
        }
    }
    report
}

/// One chain's walk: its first finding, the envelopes not sealed yet, the
/// last checkpoint that held.
fn walk(envelopes: &[&(Envelope, Option<Seal>)], checkpoints: &BTreeMap<i64, &Checkpoint>) -> (Option<Finding>, usize, Option<(i64, i64)>) {
    let last_sealed = envelopes.iter().rposition(|(_, seal)| seal.is_some());
    let (mut n, mut head, mut seq) = (0i64, HEAD_ZERO.to_owned(), i64::MIN);
    let mut up_to = None;
    let mut unsealed = 0;
    for (i, (e, seal)) in envelopes.iter().enumerate() {
        let at = || (e.seq, e.id.clone());
        let Some(seal) = seal else {
            if last_sealed.is_some_and(|last| i < last) {
                return (Some(Finding::Inserted { seq: e.seq, id: e.id.clone() }), unsealed, up_to);
            }
            unsealed += 1;
            continue;
        };
        if e.seq <= seq || seal.n <= n {
            let (seq, id) = at();
            return (Some(Finding::Reordered { seq, id }), unsealed, up_to);
        }
        if seal.n > n + 1 {
            // The one missing here stands later: moved, not removed.
            let later = envelopes[i..].iter().any(|(_, s)| s.as_ref().is_some_and(|s| s.n == n + 1));
            let (seq, id) = at();
            let finding = if later { Finding::Reordered { seq, id } } else { Finding::Removed { n: n + 1, before_seq: Some(seq) } };
            return (Some(finding), unsealed, up_to);
        }
        match leaf(e) {
            Ok(l) if l == seal.leaf => {}
            _ => {
                let (seq, id) = at();
                return (Some(Finding::Altered { seq, id }), unsealed, up_to);
            }
        }
        n = seal.n;
        seq = e.seq;
        head = chain(&head, &seal.leaf);
        if head != seal.head {
            let (seq, id) = at();
            return (Some(Finding::SealAltered { seq, id }), unsealed, up_to);
        }
        if let Some(c) = checkpoints.get(&n) {
            if c.head != head || c.seq != e.seq {
                return (Some(Finding::CheckpointDiffers { n, seq: e.seq }), unsealed, up_to);
            }
            up_to = Some((n, e.seq));
        }
    }
    // A checkpoint past the last envelope: what it signed is gone.
    if let Some((&last, _)) = checkpoints.iter().next_back()
        && last > n
    {
        return (Some(Finding::Removed { n: n + 1, before_seq: None }), unsealed, up_to);
    }
    (None, unsealed, up_to)
}

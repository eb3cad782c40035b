//! The log against NATS at the end: every committed envelope the bridge
//! publishes (its types, `lattice_bridge::BRIDGED`, less a submission's
//! changes and archiving, which map to nothing) must be in the stream
//! exactly once by `Nats-Msg-Id`, and nothing else but the seal's
//! checkpoints (`checkpoint:…` ids, not envelopes) may be there.

use std::collections::{BTreeMap, HashSet};

use sqlx::Row;

use super::rules::Heard;

/// What PostgreSQL holds.
pub struct Log {
    pub envelopes: usize,
    /// The ids the bridge publishes, with their types.
    pub bridged: BTreeMap<String, String>,
    /// The ids it does not (a run's inner steps).
    pub not_bridged: HashSet<String>,
}

pub async fn read(database_url: &str) -> Log {
    let pool = sqlx::PgPool::connect(database_url).await.expect("the stack's PostgreSQL");
    let rows = sqlx::query(
        "SELECT id, type, (type IN ('artifact_changed', 'artifact_archived') AND payload::jsonb->>'kind' = 'submission') AS mapped_to_nothing FROM envelopes",
    )
    .fetch_all(&pool)
    .await
    .expect("reading the envelopes");
    pool.close().await;
    let mut log = Log { envelopes: rows.len(), bridged: BTreeMap::new(), not_bridged: HashSet::new() };
    for row in rows {
        let (id, kind, nothing): (String, String, bool) = (row.get(0), row.get(1), row.get(2));
        if lattice_bridge::BRIDGED.contains(&kind.as_str()) && !nothing {
            log.bridged.insert(id, kind);
        } else {
            log.not_bridged.insert(id);
        }
    }
    log
}

pub struct Verdict {
    pub on_nats: usize,
    pub checkpoints: usize,
    /// Bridged envelopes not in the stream, by type.
    pub missing: BTreeMap<String, usize>,
    /// Ids the stream holds at more than one position.
    pub duplicated: Vec<String>,
    /// Messages that are neither a bridged envelope nor a checkpoint.
    pub extra: Vec<String>,
}

impl Verdict {
    pub fn whole(&self) -> bool {
        self.missing.is_empty() && self.duplicated.is_empty() && self.extra.is_empty()
    }
}

pub fn compare(log: &Log, heard: &Heard) -> Verdict {
    let mut missing = BTreeMap::new();
    for (id, kind) in &log.bridged {
        if !heard.by_id.contains_key(id) {
            *missing.entry(kind.clone()).or_default() += 1;
        }
    }
    let mut duplicated: Vec<String> = heard.by_id.iter().filter(|(_, at)| at.len() > 1).map(|(id, _)| id.clone()).collect();
    duplicated.sort();
    let checkpoints = heard.by_id.keys().filter(|id| id.starts_with("checkpoint:")).count();
    let mut extra: Vec<String> = heard
        .by_id
        .keys()
        .filter(|id| !id.starts_with("checkpoint:") && !log.bridged.contains_key(*id))
        .map(|id| if log.not_bridged.contains(id) { format!("{id} (an envelope of a type not bridged)") } else { id.clone() })
        .collect();
    extra.extend((0..heard.without_id).map(|_| "a message without Nats-Msg-Id".to_owned()));
    extra.sort();
    Verdict { on_nats: heard.by_id.len() - checkpoints, checkpoints, missing, duplicated, extra }
}

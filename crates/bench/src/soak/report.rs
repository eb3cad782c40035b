//! The soak's table, one row a minute, and its end: growth per process,
//! each kind's totals, what failed, what NATS holds, and a verdict per
//! must-hold.

use std::collections::BTreeMap;

use super::ledger::Verdict;
use super::stats::{KINDS, Tally};

/// The processes in the table, in its order.
pub const PROCESSES: &[&str] = &["edge", "log", "log-2", "bridge", "mcp", "nats", "postgres"];
/// lattice's own, whose memory and descriptors must stay flat. PostgreSQL's
/// and NATS' are shown beside them: their caches fill with the data by
/// design, and a connection lattice leaked would show in lattice's own
/// descriptors too.
pub const JUDGED: &[&str] = &["edge", "log", "log-2", "bridge", "mcp"];
/// Growth allowed from minute five to the end.
pub const FLAT: f64 = 10.0;
/// Descriptors a process may gain whatever the percentage: which replica
/// holds the six live streams at a sample, and a pooled connection opened
/// at a burst, move a count of twenty or thirty by more than 10% with
/// nothing leaking. A leak at this traffic grows by hundreds.
pub const FD_NOISE: f64 = 5.0;

pub struct Row {
    pub minute: u32,
    /// Each process's mean over the minute's samples: MiB, descriptors.
    pub processes: BTreeMap<String, (f64, f64)>,
    /// The process restarted during this minute, if one was.
    pub restarted: Option<String>,
    pub kinds: BTreeMap<&'static str, Tally>,
}

pub fn header() -> String {
    let mut names: Vec<String> = vec!["min".into()];
    names.extend(PROCESSES.iter().map(|p| format!("{p} MiB/fd")));
    names.extend(KINDS.iter().map(|(k, _)| format!("{k} n/p99")));
    names.extend(["errors".into(), "recovered".into()]);
    format!("| {} |\n|{}", names.join(" | "), "---|".repeat(names.len()))
}

pub fn line(row: &Row) -> String {
    let mut cells = vec![row.minute.to_string()];
    for name in PROCESSES {
        let mark = if row.restarted.as_deref() == Some(name) { " ↻" } else { "" };
        cells.push(match row.processes.get(*name) {
            Some((mib, fds)) => format!("{mib:.1}/{fds:.0}{mark}"),
            None => "-".into(),
        });
    }
    let (mut errors, mut recovered) = (0, 0);
    for (kind, _) in KINDS {
        let tally = row.kinds.get(kind).cloned().unwrap_or_default();
        errors += tally.failed;
        recovered += tally.recovered;
        cells.push(match tally.p99() {
            Some(p99) if tally.failed > 0 => format!("{}/{p99:.0} ({} err)", tally.count(), tally.failed),
            Some(p99) => format!("{}/{p99:.0}", tally.count()),
            None if tally.failed > 0 => format!("{}/- ({} err)", tally.count(), tally.failed),
            None => "0".into(),
        });
    }
    cells.push(errors.to_string());
    cells.push(recovered.to_string());
    format!("| {} |", cells.join(" | "))
}

pub fn legend() -> String {
    let mut text = String::from(
        "Processes: resident memory in MiB / open descriptors, each the mean of the minute's six samples (/proc: VmRSS and fd/; \
         PostgreSQL: its processes' RssAnon summed plus the shared buffers once, and their descriptors summed, each backend \
         keeping the table files it opened); ↻ the minute a process was killed and started again.\n\
         Kinds: requests in the minute / p99 in ms, with those that failed; `recovered` = answered on a retry (a cut connection or \
         the edge's 502-504 tried again, up to 5 attempts), not an error.\n",
    );
    for (kind, what) in KINDS {
        text.push_str(&format!("- {kind}: {what}\n"));
    }
    text
}

pub struct Growth {
    pub from: u32,
    pub to: u32,
    pub base: (f64, f64),
    pub end: (f64, f64),
}

impl Growth {
    pub fn percent(&self) -> (f64, f64) {
        let pct = |a: f64, b: f64| if a > 0.0 { (b - a) / a * 100.0 } else { 0.0 };
        (pct(self.base.0, self.end.0), pct(self.base.1, self.end.1))
    }

    pub fn flat(&self) -> bool {
        let (memory, fds) = self.percent();
        memory < FLAT && (fds < FLAT || self.end.1 - self.base.1 <= FD_NOISE)
    }
}

/// From minute five (or, for the restarted process, five minutes after
/// its restart; in a run too short for either, the latest minute before
/// the last that has it) to the last minute.
pub fn growth(rows: &[Row], name: &str, restarted_at: Option<u32>) -> Option<Growth> {
    let last = rows.last()?;
    let wanted = match restarted_at {
        Some(r) if r + 5 < last.minute => r + 5,
        Some(r) => r + 1,
        None => 5.min(last.minute.saturating_sub(1)),
    };
    let base = rows.iter().find(|r| r.minute == wanted && r.restarted.as_deref() != Some(name))?;
    if base.minute >= last.minute {
        return None;
    }
    Some(Growth { from: base.minute, to: last.minute, base: *base.processes.get(name)?, end: *last.processes.get(name)? })
}

pub fn growth_table(growths: &[(String, Option<Growth>)]) -> String {
    let mut out = String::from(
        "| process | from minute | to minute | MiB then → at the end | fds then → at the end | memory growth | fd growth | flat (< 10%; fds: or ≤ 5 more) |\n|---|---|---|---|---|---|---|---|\n",
    );
    for (name, growth) in growths {
        let judged = JUDGED.contains(&name.as_str());
        match growth {
            Some(g) => {
                let (memory, fds) = g.percent();
                let verdict = match (judged, g.flat()) {
                    (true, true) => "yes",
                    (true, false) => "**no**",
                    (false, true) => "yes (not judged)",
                    (false, false) => "no (not judged)",
                };
                out.push_str(&format!(
                    "| {name} | {} | {} | {:.1} → {:.1} | {:.0} → {:.0} | {memory:+.1}% | {fds:+.1}% | {verdict} |\n",
                    g.from, g.to, g.base.0, g.end.0, g.base.1, g.end.1
                ));
            }
            None => out.push_str(&format!("| {name} | - | - | - | - | - | - | too short a run to say |\n")),
        }
    }
    out
}

pub fn totals_table(totals: &BTreeMap<&'static str, Tally>) -> String {
    let mut out = String::from("| kind | requests | p50 ms | p99 ms | max ms | errors | recovered |\n|---|---|---|---|---|---|---|\n");
    for (kind, _) in KINDS {
        let tally = totals.get(kind).cloned().unwrap_or_default();
        let mut sorted = tally.latencies.clone();
        sorted.sort_by(f64::total_cmp);
        let at = |p: f64| sorted.get(((sorted.len() as f64 - 1.0) * p).round() as usize).map_or("-".to_owned(), |v| format!("{v:.1}"));
        out.push_str(&format!(
            "| {kind} | {} | {} | {} | {} | {} | {} |\n",
            tally.count(),
            at(0.5),
            at(0.99),
            at(1.0),
            tally.failed,
            tally.recovered
        ));
    }
    out
}

pub fn nats(verdict: &Verdict, envelopes: usize, bridged: usize, deliveries: u64, redeliveries: u64) -> String {
    let mut out = format!(
        "envelopes in PostgreSQL: {envelopes}, of which the bridge publishes {bridged} (the rest are a run's inner steps and a submission's changes)\n\
         on NATS (stream LATTICE, by Nats-Msg-Id): {} envelopes, {} checkpoints; the rule's deliveries {deliveries} ({redeliveries} redelivered)\n\
         missing: {}, in the stream twice or more: {}, not an envelope the bridge publishes: {}\n",
        verdict.on_nats,
        verdict.checkpoints,
        verdict.missing.values().sum::<usize>(),
        verdict.duplicated.len(),
        verdict.extra.len()
    );
    for (kind, n) in &verdict.missing {
        out.push_str(&format!("  missing {n} {kind}\n"));
    }
    for id in verdict.duplicated.iter().take(10) {
        out.push_str(&format!("  twice: {id}\n"));
    }
    for id in verdict.extra.iter().take(10) {
        out.push_str(&format!("  extra: {id}\n"));
    }
    out
}

//! What the traffic saw, per kind of request: latencies, failures, and the
//! requests a retry recovered. Taken minute by minute for the table and
//! kept whole for the end.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

/// The kinds, in the table's order: what each column counts.
pub const KINDS: &[(&str, &str)] = &[
    ("message", "POST /v1/threads/{th}/messages"),
    ("read", "GET /v1/threads/{th}/events?format=json (a page)"),
    ("submit", "a form's submission (POST /v1/threads/{th}/artifacts)"),
    ("run", "POST /v1/threads/{th}/runs"),
    ("run_get", "GET /v1/runs/{run} (a person waiting on a run)"),
    ("answer", "POST /v1/runs/{run}/answers (an ask_form answered)"),
    ("app_call", "an app's capability, get_state, set_state, submit and its confirmation"),
    ("sse_open", "GET /v1/threads/{th}/events as SSE, to its headers"),
    ("agui", "POST /v1/agui/threads/{th}, to RUN_FINISHED (a resume included)"),
    ("mcp_init", "/mcp initialize and notifications/initialized"),
    ("mcp_list", "/mcp tools/list"),
    ("mcp_call", "/mcp tools/call show_dashboard"),
    ("rule", "NATS: an envelope's commit to a rule's delivery (the lag, not a request)"),
];

/// How one request ended for the person who made it.
pub enum Outcome {
    Ok,
    /// Failed at first (a connection cut, a 502/503/504 from the edge)
    /// and answered on a retry, as a client retries: nobody saw an error.
    Recovered,
    /// Seen by a person: why.
    Failed(String),
}

#[derive(Default, Clone)]
pub struct Tally {
    /// Of what was answered (at once or on a retry), in milliseconds.
    pub latencies: Vec<f64>,
    pub failed: u64,
    pub recovered: u64,
}

impl Tally {
    pub fn count(&self) -> u64 {
        self.latencies.len() as u64 + self.failed
    }

    pub fn p99(&self) -> Option<f64> {
        let mut sorted = self.latencies.clone();
        if sorted.is_empty() {
            return None;
        }
        sorted.sort_by(f64::total_cmp);
        let i = ((sorted.len() as f64 - 1.0) * 0.99).round() as usize;
        Some(sorted[i.min(sorted.len() - 1)])
    }
}

#[derive(Default)]
struct Inner {
    minute: BTreeMap<&'static str, Tally>,
    total: BTreeMap<&'static str, Tally>,
    /// "kind: why" with how many times.
    failures: BTreeMap<String, u64>,
    counters: BTreeMap<&'static str, u64>,
}

#[derive(Default)]
pub struct Stats {
    inner: Mutex<Inner>,
}

impl Stats {
    pub fn record(&self, kind: &'static str, took: Duration, outcome: Outcome) {
        let mut guard = self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let inner = &mut *guard;
        let ms = took.as_secs_f64() * 1000.0;
        let why = match outcome {
            Outcome::Ok => None,
            Outcome::Recovered => {
                for tally in [inner.minute.entry(kind).or_default(), inner.total.entry(kind).or_default()] {
                    tally.recovered += 1;
                }
                None
            }
            Outcome::Failed(why) => Some(why),
        };
        match why {
            None => {
                inner.minute.entry(kind).or_default().latencies.push(ms);
                inner.total.entry(kind).or_default().latencies.push(ms);
            }
            Some(why) => {
                inner.minute.entry(kind).or_default().failed += 1;
                inner.total.entry(kind).or_default().failed += 1;
                *inner.failures.entry(format!("{kind}: {why}")).or_default() += 1;
            }
        }
    }

    /// A failure outside any request (a run that never finished, a
    /// stream that broke and could not be opened again).
    pub fn fail(&self, kind: &'static str, why: String) {
        self.record(kind, Duration::ZERO, Outcome::Failed(why));
    }

    pub fn add(&self, counter: &'static str, n: u64) {
        *self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner).counters.entry(counter).or_default() += n;
    }

    /// The minute's tallies; the next minute starts empty.
    pub fn take_minute(&self) -> BTreeMap<&'static str, Tally> {
        std::mem::take(&mut self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner).minute)
    }

    pub fn totals(&self) -> BTreeMap<&'static str, Tally> {
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner).total.clone()
    }

    pub fn failures(&self) -> BTreeMap<String, u64> {
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner).failures.clone()
    }

    pub fn counters(&self) -> BTreeMap<&'static str, u64> {
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner).counters.clone()
    }
}

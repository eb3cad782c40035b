//! The reads people and agents make, each a request to the API as the
//! probe workspace's reader, and their timing: each read many times on
//! the large log and on the small one in turn, so that whatever else the
//! machine does falls on both alike.

use std::time::Duration;

use axum::http::StatusCode;

use super::side::Side;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Read {
    ThreadFirstPage,
    ThreadLaterPage,
    ThreadList,
    WorkspaceCatchUp,
    FormSubmissions,
    SwitchResolution,
    WritePath,
}

impl Read {
    pub const ALL: [Read; 7] = [
        Read::ThreadFirstPage,
        Read::ThreadLaterPage,
        Read::ThreadList,
        Read::WorkspaceCatchUp,
        Read::FormSubmissions,
        Read::SwitchResolution,
        Read::WritePath,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Read::ThreadFirstPage => "thread first page",
            Read::ThreadLaterPage => "thread later page",
            Read::ThreadList => "thread list",
            Read::WorkspaceCatchUp => "workspace catch-up",
            Read::FormSubmissions => "form submissions",
            Read::SwitchResolution => "switch resolution",
            Read::WritePath => "write path",
        }
    }

    /// The request: method, path, body.
    pub fn request(self, side: &Side, n: usize) -> (&'static str, String, Option<String>) {
        let p = &side.probe;
        match self {
            Read::ThreadFirstPage => ("GET", format!("/v1/threads/{}/events?format=json&after=0", p.thread), None),
            Read::ThreadLaterPage => ("GET", format!("/v1/threads/{}/events?format=json&after={}", p.thread, p.thread_after), None),
            Read::ThreadList => ("GET", format!("/v1/workspaces/{}/threads", p.ws), None),
            Read::WorkspaceCatchUp => ("GET", format!("/v1/workspaces/{}/events?format=json&after={}", p.ws, p.ws_after), None),
            Read::FormSubmissions => ("GET", format!("/v1/threads/{}/artifacts?kind=submission&form_id={}", p.thread, p.form), None),
            Read::SwitchResolution => ("GET", format!("/v1/integrations/effective?workspace={}", p.ws), None),
            Read::WritePath => {
                let body = serde_json::json!({"text": format!("Posted by the benchmark, number {n}: the numbers look right to me.")});
                ("POST", format!("/v1/threads/{}/messages", p.thread), Some(body.to_string()))
            }
        }
    }
}

pub const WARM_UP: usize = 40;
/// Samples of a read on each log: a page of a thread or of a workspace
/// (3 to 8 ms) 1,000 times, the reads of a millisecond or less 2,000 times,
/// so that a p99 is the tenth slowest sample or the twentieth, never one
/// of five (15 to 30 s for both logs). Timed over two seconds, a p99 was
/// the slowest 10 ms of them, and whatever else the machine did then fell
/// on one log more than the other; sampled 500 times, a page's p99 moved
/// by a fifth between runs of the same build.
impl Read {
    pub fn samples(self) -> usize {
        match self {
            Read::ThreadFirstPage | Read::ThreadLaterPage | Read::WorkspaceCatchUp => 1_000,
            _ => 2_000,
        }
    }
}
/// Tries per sample on each log, the two logs' tries taking turns; the
/// sample is a log's fastest. The same request repeated costs what the
/// log makes it cost each time; what differs between tries is the
/// machine's other work (two cores, shared), which the fastest of three
/// leaves out, and which the turns spread over both logs alike.
pub const TRIES: usize = 3;

/// One side's latencies for a read, in milliseconds, sorted: each
/// sample's fastest try, and every try.
pub struct Timed {
    pub best: Vec<f64>,
    pub every: Vec<f64>,
    /// Every try's start (seconds from the read's first) and latency, in
    /// the order made: when the slowest fell.
    pub when: Vec<(f64, f64)>,
}

pub async fn measure(read: Read, sides: &[&Side; 2]) -> [Timed; 2] {
    let samples = read.samples();
    let mut out = [(); 2].map(|_| Timed { best: Vec::with_capacity(samples), every: Vec::with_capacity(samples * TRIES), when: Vec::new() });
    let mut n = 0;
    let began = std::time::Instant::now();
    for sample in 0..WARM_UP + samples {
        let mut best = [f64::INFINITY; 2];
        for t in 0..TRIES {
            // Alternate which log goes first.
            let order = if (sample + t) % 2 == 0 { [0, 1] } else { [1, 0] };
            for i in order {
                let (method, uri, body) = read.request(sides[i], n);
                n += 1;
                let at = began.elapsed().as_secs_f64();
                let (status, bytes, took) = sides[i].call(method, &uri, body).await;
                assert_eq!(status, StatusCode::OK, "{} {uri}: {}", read.name(), String::from_utf8_lossy(&bytes));
                best[i] = best[i].min(ms(took));
                if sample >= WARM_UP {
                    out[i].every.push(ms(took));
                    out[i].when.push((at, ms(took)));
                }
            }
        }
        if sample >= WARM_UP {
            for i in 0..2 {
                out[i].best.push(best[i]);
            }
        }
    }
    for o in &mut out {
        o.best.sort_by(f64::total_cmp);
        o.every.sort_by(f64::total_cmp);
    }
    out
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The `q` quantile of sorted samples (nearest rank).
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    let rank = ((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

//! What every request passes before it is served: the Host it names, the
//! caller's write rate and open live streams, and a deadline. Each refusal
//! is a typed error (421, 429 with `Retry-After`, 503) that costs next to
//! nothing to make.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};
use lattice_core::{Error, Principal};

use crate::error::ApiError;

/// The Host names a deployment answers for (a guard against DNS
/// rebinding: a page on another name that resolves to this server gets
/// 421). Names compare without their port and case.
#[derive(Debug, Clone)]
pub struct AllowedHosts {
    names: Arc<[String]>,
}

impl AllowedHosts {
    /// `names` as configured (`host` or `host:port`; the port is ignored).
    pub fn new<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> Self {
        let names: Vec<String> = names.into_iter().filter_map(|n| host_name(n.as_ref())).collect();
        Self { names: names.into() }
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }

    pub fn allows(&self, host: &str) -> bool {
        host_name(host).is_some_and(|name| self.names.contains(&name))
    }

    /// Refuses a request whose Host is not one of the names, but for the
    /// probes (`/healthz`, `/readyz`), which orchestrators call by address.
    pub async fn check(self, req: Request, next: Next) -> Response {
        let path = req.uri().path();
        if path == "/healthz" || path == "/readyz" {
            return next.run(req).await;
        }
        let host = req
            .headers()
            .get(axum::http::header::HOST)
            .and_then(|h| h.to_str().ok())
            .or_else(|| req.uri().authority().map(|a| a.as_str()))
            .unwrap_or_default();
        if self.allows(host) { next.run(req).await } else { ApiError(Error::MisdirectedRequest { host: host.to_owned() }).into_response() }
    }
}

/// The name part of a Host header, lowercased, without a port or a
/// trailing dot; `None` when there is no name.
fn host_name(host: &str) -> Option<String> {
    let host = host.trim();
    let name = if let Some(rest) = host.strip_prefix('[') {
        // [v6]:port
        rest.split(']').next()?
    } else if host.matches(':').count() == 1 {
        host.split(':').next()?
    } else {
        host
    };
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    (!name.is_empty()).then_some(name)
}

/// Per-caller limits (docs/CONFIGURATION.md).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Writes (any method but GET, HEAD and OPTIONS) a caller may make per
    /// second, sustained; 0 turns the limit off.
    pub writes_per_sec: u32,
    /// Writes a caller may make at once before the rate applies.
    pub write_burst: u32,
    /// Live streams a caller may hold open at once.
    pub streams_per_caller: usize,
    /// How long a request may take to answer (a stream's start counts, not
    /// its life).
    pub request_timeout: Duration,
}

impl Default for Limits {
    /// No person reaches these; a runaway client does at once.
    fn default() -> Self {
        Self { writes_per_sec: 20, write_burst: 100, streams_per_caller: 32, request_timeout: Duration::from_secs(30) }
    }
}

/// The state behind [`Limits`]: a rate limiter keyed by caller and the
/// count of each caller's open streams.
pub struct Guard {
    limits: Limits,
    writes: Option<DefaultKeyedRateLimiter<String>>,
    checks: AtomicU64,
    streams: Arc<Mutex<HashMap<String, usize>>>,
}

impl Guard {
    pub fn new(limits: Limits) -> Self {
        let writes = NonZeroU32::new(limits.writes_per_sec).map(|rate| {
            let burst = NonZeroU32::new(limits.write_burst).unwrap_or(rate);
            governor::RateLimiter::keyed(Quota::per_second(rate).allow_burst(burst))
        });
        Self { limits, writes, checks: AtomicU64::new(0), streams: Arc::default() }
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Counts one write by `who`, or refuses it with how long to wait.
    pub fn admit_write(&self, who: &Principal) -> Result<(), Error> {
        let Some(limiter) = &self.writes else { return Ok(()) };
        // Callers that went quiet are forgotten now and then, so the map
        // does not grow with every caller ever seen.
        if self.checks.fetch_add(1, Ordering::Relaxed) % 4096 == 4095 {
            limiter.retain_recent();
            limiter.shrink_to_fit();
        }
        limiter.check_key(&caller_key(who)).map_err(|not_until| {
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            Error::RateLimited { retry_after_secs: wait.as_secs() + u64::from(wait.subsec_nanos() > 0) }
        })
    }

    /// A permit for one more live stream of `who`'s, held while the stream
    /// is open.
    pub fn open_stream(&self, who: &Principal) -> Result<StreamPermit, Error> {
        let key = caller_key(who);
        let mut streams = self.streams.lock().expect("the stream counts are never poisoned");
        let open = streams.entry(key.clone()).or_default();
        if *open >= self.limits.streams_per_caller {
            return Err(Error::RateLimited { retry_after_secs: 5 });
        }
        *open += 1;
        Ok(StreamPermit { key, streams: self.streams.clone() })
    }
}

/// One open live stream; closing it (dropping this) frees its place.
pub struct StreamPermit {
    key: String,
    streams: Arc<Mutex<HashMap<String, usize>>>,
}

impl Drop for StreamPermit {
    fn drop(&mut self) {
        let mut streams = self.streams.lock().expect("the stream counts are never poisoned");
        if let Some(open) = streams.get_mut(&self.key) {
            *open -= 1;
            if *open == 0 {
                streams.remove(&self.key);
            }
        }
    }
}

fn caller_key(who: &Principal) -> String {
    format!("{}\u{0}{}\u{0}{}", who.tenant, who.user, who.agent)
}

/// Ends a request that takes longer than `timeout` to answer with 503.
pub async fn deadline(timeout: Duration, req: Request, next: Next) -> Response {
    match tokio::time::timeout(timeout, next.run(req)).await {
        Ok(response) => response,
        Err(_) => ApiError(Error::unavailable(format!("the request took longer than {} s", timeout.as_secs()))).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use lattice_core::{TenantId, TenantRole, UserId};

    use super::*;

    fn who(user: &str) -> Principal {
        Principal {
            tenant: TenantId::parse("tenant", "t1").unwrap(),
            user: UserId::parse("user", user).unwrap(),
            role: TenantRole::Member,
            agent: false,
            run: None,
            within: None,
        }
    }

    #[test]
    fn hosts_compare_by_name() {
        let hosts = AllowedHosts::new(["localhost", "127.0.0.1:8080", "[::1]", "Lattice.Example.com."]);
        for ok in ["localhost", "localhost:8080", "127.0.0.1", "127.0.0.1:9", "[::1]:8080", "lattice.example.com", "LATTICE.example.com:443"] {
            assert!(hosts.allows(ok), "{ok}");
        }
        for refused in ["", "rebind.attacker.example", "localhost.attacker.example", "127.0.0.2", "[::2]:8080", "evil:localhost"] {
            assert!(!hosts.allows(refused), "{refused}");
        }
    }

    #[test]
    fn writes_are_limited_at_the_burst_and_streams_at_their_count() {
        let guard = Guard::new(Limits { writes_per_sec: 1, write_burst: 3, streams_per_caller: 2, ..Limits::default() });
        for _ in 0..3 {
            guard.admit_write(&who("ana")).unwrap();
        }
        match guard.admit_write(&who("ana")) {
            Err(Error::RateLimited { retry_after_secs }) => assert_eq!(retry_after_secs, 1),
            other => panic!("{other:?}"),
        }
        guard.admit_write(&who("bob")).unwrap();
        let a = guard.open_stream(&who("ana")).unwrap();
        let _b = guard.open_stream(&who("ana")).unwrap();
        assert!(guard.open_stream(&who("ana")).is_err());
        drop(a);
        let _c = guard.open_stream(&who("ana")).unwrap();
        let off = Guard::new(Limits { writes_per_sec: 0, ..Limits::default() });
        for _ in 0..1000 {
            off.admit_write(&who("ana")).unwrap();
        }
    }
}

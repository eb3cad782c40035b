//! What every request passes before it is served: the Host it names, the
//! caller's write rate and open live streams, and a deadline. Each refusal
//! is a typed error (421, 429 with `Retry-After`, 503) that costs next to
//! nothing to make. The write rate reads the time from the service's
//! [`SharedClock`], so a test moves a `ManualClock` instead of waiting.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use governor::clock::Clock as _;
use governor::middleware::NoOpMiddleware;
use governor::nanos::Nanos;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};
use lattice_core::clock::SharedClock;
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

/// The service's clock as the rate limiter reads it: nanoseconds since
/// the epoch (the limiter counts from its first reading, and takes a
/// clock that goes back as standing still).
#[derive(Debug, Clone)]
struct RateClock(SharedClock);

impl governor::clock::Clock for RateClock {
    type Instant = Nanos;

    fn now(&self) -> Nanos {
        Nanos::from(u64::try_from(self.0.now_ms()).unwrap_or(0).saturating_mul(1_000_000))
    }
}

type WriteLimiter = RateLimiter<String, DefaultKeyedStateStore<String>, RateClock, NoOpMiddleware<Nanos>>;

/// The state behind [`Limits`]: a rate limiter keyed by caller and the
/// count of each caller's open streams.
pub struct Guard {
    limits: Limits,
    writes: Option<WriteLimiter>,
    checks: AtomicU64,
    streams: Arc<Mutex<HashMap<String, usize>>>,
}

impl Guard {
    /// The limits, on the wall clock.
    pub fn new(limits: Limits) -> Self {
        Self::with_clock(limits, lattice_core::clock::system())
    }

    /// The limits, with the write rate read from `clock`.
    pub fn with_clock(limits: Limits, clock: SharedClock) -> Self {
        let writes = NonZeroU32::new(limits.writes_per_sec).map(|rate| {
            let burst = NonZeroU32::new(limits.write_burst).unwrap_or(rate);
            RateLimiter::new(Quota::per_second(rate).allow_burst(burst), DefaultKeyedStateStore::default(), RateClock(clock))
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
            let wait = not_until.wait_time_from(limiter.clock().now());
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
            scope: None,
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

    /// The burst, then a write per 1/rate seconds of the guard's clock:
    /// the clock is moved, nothing waits.
    #[test]
    fn writes_are_limited_at_the_burst_and_earned_back_as_the_clock_moves() {
        let clock = lattice_core::ManualClock::at(1_000_000);
        let guard = Guard::with_clock(Limits { writes_per_sec: 2, write_burst: 3, ..Limits::default() }, clock.clone());
        for _ in 0..3 {
            guard.admit_write(&who("ana")).unwrap();
        }
        let refused = |guard: &Guard| match guard.admit_write(&who("ana")) {
            Err(Error::RateLimited { retry_after_secs }) => retry_after_secs,
            other => panic!("{other:?}"),
        };
        // One write is earned every 500 ms; a part of a second is a second.
        assert_eq!(refused(&guard), 1);
        clock.advance(Duration::from_millis(499));
        assert_eq!(refused(&guard), 1);
        clock.advance(Duration::from_millis(1));
        guard.admit_write(&who("ana")).unwrap();
        assert_eq!(refused(&guard), 1);
        // Another caller has a bucket of its own.
        guard.admit_write(&who("bob")).unwrap();
        // Time earns back the burst and no more.
        clock.advance(Duration::from_secs(60));
        for _ in 0..3 {
            guard.admit_write(&who("ana")).unwrap();
        }
        assert_eq!(refused(&guard), 1);
        // A slower rate says a longer wait.
        let slow = Guard::with_clock(Limits { writes_per_sec: 1, write_burst: 1, ..Limits::default() }, clock.clone());
        slow.admit_write(&who("ana")).unwrap();
        assert_eq!(refused(&slow), 1);
        clock.advance(Duration::from_millis(1_000));
        slow.admit_write(&who("ana")).unwrap();
    }

    /// Many at once, from many threads, at the edge: never more than the
    /// bound between them (each place and each write is decided under
    /// one lock or one atomic step, not read then written).
    #[test]
    fn places_and_writes_taken_at_once_never_pass_their_bound() {
        let clock = lattice_core::ManualClock::at(1_000_000);
        let guard = Arc::new(Guard::with_clock(Limits { streams_per_caller: 5, writes_per_sec: 1, write_burst: 7, ..Limits::default() }, clock));
        let start = Arc::new(std::sync::Barrier::new(32));
        let tries: Vec<_> = (0..32)
            .map(|_| {
                let (guard, start) = (guard.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    let place = guard.open_stream(&who("ana")).ok();
                    let wrote = guard.admit_write(&who("ana")).is_ok();
                    // Held until every thread has tried.
                    (place, wrote)
                })
            })
            .collect();
        let results: Vec<_> = tries.into_iter().map(|t| t.join().unwrap()).collect();
        assert_eq!(results.iter().filter(|(place, _)| place.is_some()).count(), 5);
        assert_eq!(results.iter().filter(|(_, wrote)| *wrote).count(), 7);
        drop(results);
        // Every place given back.
        assert_eq!(guard.streams.lock().unwrap().get(&caller_key(&who("ana"))).copied().unwrap_or(0), 0);
    }

    #[test]
    fn streams_are_limited_at_their_count_and_no_rate_is_no_limit() {
        let guard = Guard::new(Limits { streams_per_caller: 2, ..Limits::default() });
        let a = guard.open_stream(&who("ana")).unwrap();
        let _b = guard.open_stream(&who("ana")).unwrap();
        assert!(guard.open_stream(&who("ana")).is_err());
        let _other = guard.open_stream(&who("bob")).unwrap();
        drop(a);
        let _c = guard.open_stream(&who("ana")).unwrap();
        let off = Guard::with_clock(Limits { writes_per_sec: 0, ..Limits::default() }, lattice_core::ManualClock::at(0));
        for _ in 0..1000 {
            off.admit_write(&who("ana")).unwrap();
        }
    }
}

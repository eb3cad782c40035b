//! The clock lattice reads the time from. Deadlines, leases, token and
//! capability expiry and rate limits ask a [`Clock`] instead of the wall, so
//! a test can move time with a [`ManualClock`] and never sleep for real.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch, UTC: the one unit lattice stores.
pub trait Clock: Send + Sync + fmt::Debug {
    fn now_ms(&self) -> i64;

    /// Whole seconds since the epoch (what a token's `exp` counts).
    fn now_secs(&self) -> i64 {
        self.now_ms().div_euclid(1000)
    }
}

/// A clock shared by every part of one service.
pub type SharedClock = Arc<dyn Clock>;

/// The wall clock: what every service runs with.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
    }
}

/// The wall clock, shared.
pub fn system() -> SharedClock {
    Arc::new(SystemClock)
}

/// A clock that stands still until it is moved: for tests of what time
/// decides. Starts at the wall clock's time, so what it stamps reads as now.
#[derive(Debug)]
pub struct ManualClock {
    now: AtomicI64,
}

impl ManualClock {
    pub fn new() -> Arc<Self> {
        Self::at(SystemClock.now_ms())
    }

    pub fn at(ms: i64) -> Arc<Self> {
        Arc::new(ManualClock { now: AtomicI64::new(ms) })
    }

    /// Moves the clock forward by `by` (never back).
    pub fn advance(&self, by: Duration) {
        self.now.fetch_add(i64::try_from(by.as_millis()).unwrap_or(i64::MAX), Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.now.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_moves_only_when_moved() {
        let clock = ManualClock::at(1_000);
        assert_eq!(clock.now_ms(), 1_000);
        assert_eq!(clock.now_ms(), 1_000);
        clock.advance(Duration::from_millis(2_500));
        assert_eq!((clock.now_ms(), clock.now_secs()), (3_500, 3));
    }

    #[test]
    fn the_system_clock_reads_the_wall() {
        let wall = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64;
        assert!((SystemClock.now_ms() - wall).abs() < 5_000);
    }
}

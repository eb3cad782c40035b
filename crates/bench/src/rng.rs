//! One small seeded generator for the benchmarks: a seeded log (`data`)
//! is the same on every run, and the soak's choices (who acts, what, how
//! long a stream stays open) vary the same way each time.

use std::time::Duration;

/// SplitMix64.
#[derive(Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// In `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// In `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform between `low` and `high` milliseconds.
    pub fn millis(&mut self, low: u64, high: u64) -> Duration {
        Duration::from_millis(low + self.below(high.saturating_sub(low)))
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    /// A ULID stamped `ms`, as the product mints one then.
    pub fn ulid(&mut self, ms: i64) -> ulid::Ulid {
        let random = ((u128::from(self.next()) << 64) | u128::from(self.next())) & ((1u128 << 80) - 1);
        ulid::Ulid::from_parts(ms as u64, random)
    }

    /// An id of one of lattice's types (`ws_`, `th_`, `art_`, `run_`).
    pub fn id(&mut self, prefix: &str, ms: i64) -> String {
        format!("{prefix}{}", self.ulid(ms).to_string().to_ascii_lowercase())
    }
}

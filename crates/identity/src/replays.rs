//! The `jti`s of back-channel logout tokens taken (`logout.rs`), kept per
//! provider so that the same token sent again is refused while it could
//! still verify.

use std::collections::HashMap;
use std::sync::Mutex;

/// The most `jti`s kept per provider; when full, the one that would be
/// forgotten soonest goes first.
const REPLAYS_MAX: usize = 10_000;

/// The `jti`s of logout tokens taken, each until it could no longer verify.
#[derive(Default)]
pub(crate) struct Replays {
    seen: Mutex<HashMap<String, i64>>,
}

impl Replays {
    /// Remembers `jti` until `until_ms`; false if it was already taken.
    pub(crate) fn first_use(&self, jti: &str, until_ms: i64, now_ms: i64) -> bool {
        let mut seen = self.seen.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if seen.get(jti).is_some_and(|until| *until >= now_ms) {
            return false;
        }
        if seen.len() >= REPLAYS_MAX {
            seen.retain(|_, until| *until >= now_ms);
        }
        if seen.len() >= REPLAYS_MAX
            && let Some(soonest) = seen.iter().min_by_key(|(_, until)| **until).map(|(jti, _)| jti.clone())
        {
            seen.remove(&soonest);
        }
        seen.insert(jti.to_owned(), until_ms);
        true
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.seen.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jti_is_refused_while_remembered_and_memory_is_bounded() {
        let replays = Replays::default();
        assert!(replays.first_use("a", 2_000, 1_000));
        assert!(!replays.first_use("a", 2_000, 1_500), "a replay within its lifetime");
        assert!(replays.first_use("a", 9_000, 2_001), "past its lifetime it could not verify anyway");
        for i in 0..REPLAYS_MAX + 10 {
            assert!(replays.first_use(&format!("j{i}"), 10_000 + i as i64, 3_000));
        }
        assert_eq!(replays.len(), REPLAYS_MAX);
        assert!(!replays.first_use(&format!("j{}", REPLAYS_MAX + 9), 99_999, 3_000), "the latest are kept");
        // The ones that would be forgotten soonest went first.
        assert!(replays.first_use("j0", 10_000, 3_000));
    }
}

//! The fold of what makes threads unread into their rows
//! (store/unread.rs), beside the write path rather than on it: a commit
//! writes its envelope alone, and every [`EVERY`] a task folds the log up
//! to the horizon. A list reads the log itself past the fold, so a thread
//! is unread the moment the message that makes it so can be read, fold or
//! no fold; the fold only keeps that part of the list short.
//!
//! Every replica folds: folding is idempotent, and each thread's row is
//! merged into, never overwritten.

use std::sync::{Arc, Weak};
use std::time::Duration;

use lattice_core::clock::SharedClock;

use crate::horizon::Horizon;
use crate::store::{Db, unread};

/// How often the fold looks for what to fold.
const EVERY: Duration = Duration::from_millis(100);

/// Envelopes read per fold, at most: a log folded for the first time (a
/// new deployment of an old log) is folded in turns this size.
const BATCH: i64 = 5_000;

/// Folds for as long as it lives (the service holds it).
pub(crate) struct Folding {
    _alive: Arc<()>,
}

pub(crate) fn start(db: Db, horizon: Horizon, clock: SharedClock) -> Folding {
    let alive = Arc::new(());
    let weak: Weak<()> = Arc::downgrade(&alive);
    tokio::spawn(async move {
        let mut every = tokio::time::interval(EVERY);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut folded = 0;
        loop {
            every.tick().await;
            if weak.strong_count() == 0 || db.is_closed() {
                return;
            }
            // The horizon as the tracker last saw it: asking it to catch up
            // would make it follow every commit, which it spares the write
            // path while nobody else follows.
            let upto = horizon.current();
            if upto <= folded {
                continue;
            }
            match unread::fold(&db, upto, BATCH, clock.now_ms()).await {
                Ok(to) => {
                    folded = to;
                    // A log folded for the first time: the next turn at once.
                    if to < upto {
                        every.reset_immediately();
                    }
                }
                Err(_) if db.is_closed() => return,
                Err(e) => tracing::warn!(error = %e, "cannot fold what makes threads unread; trying again"),
            }
        }
    });
    Folding { _alive: alive }
}

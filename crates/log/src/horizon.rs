//! The horizon: the highest sequence number below which every envelope is
//! either committed and visible or will never exist. Readers of the log (the
//! live stream, the bridge) read only up to it, so a slow transaction that
//! holds an earlier sequence number is waited for, never skipped.
//!
//! On SQLite writers take turns, so the horizon is simply the last sequence
//! number. On PostgreSQL numbers come from a sequence and commit in any
//! order: when a gap shows (seq N+2 visible, N+1 not), the tracker notes
//! which transactions hold the writers' shared advisory lock and waits until
//! all of them have ended. Every writer takes that lock before its number
//! (`store::insert_envelope`) and keeps it to its end, so the writer of N+1
//! is among them; once they have all ended, N+1 is either visible or was
//! rolled back and never will be. No timeout decides it, and no transaction
//! that is not a lattice writer (a psql session, another database on the
//! server) is waited for.
//!
//! Replicas sharing a PostgreSQL database tell each other: a tracker whose
//! horizon passes its own process's commits sends `NOTIFY lattice_log` (one
//! for a burst of commits; a tracker that does not look tells of them as
//! they come), and every tracker listens on that channel. Polling stays, as
//! the fallback for a notification lost with a connection.
//!
//! The log service's tracker looks on each commit only while somebody
//! follows the horizon (a live stream, a switch watcher, a holder of a
//! [`Following`] such as the bridge, a read waiting for its own commit);
//! otherwise it looks only on its idle poll, so
//! commits nobody follows cost no reads (on PostgreSQL a gap under
//! concurrent writers costs two `pg_locks` reads).

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use tokio::sync::{Notify, watch};

use crate::store::horizon::{self as stored, CHANNEL};
use crate::store::{Backend, Db};

/// How often the tracker looks without being told of a commit: writes by
/// other processes sharing the database show up within this even when
/// their notification is lost.
pub(crate) const IDLE_POLL: Duration = Duration::from_millis(200);
/// At most one notification this often: the commits of a burst share one,
/// and the writers keep the database to themselves.
const ANNOUNCE_EVERY: Duration = Duration::from_millis(5);
/// How often the log service's own tracker looks again while a gap is open:
/// its writers' commits wake it at once, so this only matters for writers
/// in other processes.
const GAP_POLL: Duration = Duration::from_millis(5);
const BATCH: i64 = 1000;
const MIN_INTERVAL: Duration = Duration::from_millis(1);

/// Whether anybody follows the horizon beyond its own followers.
type Wanted = Arc<std::sync::OnceLock<Box<dyn Fn() -> bool + Send + Sync>>>;

#[derive(Clone)]
pub struct Horizon {
    notify: Arc<Notify>,
    tx: Arc<watch::Sender<i64>>,
    /// Followers of the horizon ([`Following`]: the bridge, a tool call
    /// waiting for an answer) and reads waiting for it to reach a sequence
    /// number.
    followers: Arc<std::sync::atomic::AtomicUsize>,
    /// Set by the service once its fan-out runs; unset, always.
    wanted: Wanted,
    /// The highest sequence number this process has committed.
    latest_local: Arc<AtomicI64>,
    /// Whether the tracker has looked at the log once: before that the
    /// horizon is 0 whatever the log holds (a process just started).
    looked: Arc<watch::Sender<bool>>,
}

impl Horizon {
    pub(crate) fn start(db: Db, idle_poll: Duration) -> Self {
        Self::spawn(db, idle_poll, GAP_POLL, false)
    }

    /// A tracker that looks every `idle_poll` when nobody tells it of a
    /// commit (a follower in another process), and at once again after it
    /// found something, so a busy log is followed closely.
    pub(crate) fn start_polling(db: Db, idle_poll: Duration) -> Self {
        Self::spawn(db, idle_poll, Duration::from_millis(1), true)
    }

    /// `busy`: look again after `gap_poll` whenever the horizon moved, for a
    /// tracker that hears of no commits (a follower in another process).
    fn spawn(db: Db, idle_poll: Duration, gap_poll: Duration, busy: bool) -> Self {
        let (tx, _) = watch::channel(0);
        let horizon = Self {
            notify: Arc::new(Notify::new()),
            tx: Arc::new(tx),
            followers: Arc::default(),
            wanted: Arc::default(),
            latest_local: Arc::default(),
            looked: Arc::new(watch::channel(false).0),
        };
        let (followers, wanted) = (horizon.followers.clone(), horizon.wanted.clone());
        let followed = move || followers.load(Ordering::Relaxed) > 0 || wanted.get().is_none_or(|wanted| wanted());
        let looked = horizon.looked.clone();
        let notify = horizon.notify.clone();
        // The tracker stops once every handle on the service is gone.
        let weak_tx = Arc::downgrade(&horizon.tx);
        let latest_local = horizon.latest_local.clone();
        let announce = Arc::new(Notify::new());
        if db.backend() == Backend::Postgres {
            tokio::spawn(listen(db.url(), notify.clone(), weak_tx.clone()));
            tokio::spawn(announcer(db.clone(), announce.clone(), weak_tx.clone()));
        }
        tokio::spawn(async move {
            let mut tracker = Tracker { db, horizon: 0, gap: None };
            let mut announced = 0;
            loop {
                let Some(tx) = weak_tx.upgrade() else { return };
                let wait = match tracker.advance().await {
                    Ok(()) => {
                        let moved = tx.send_if_modified(|h| {
                            let changed = *h != tracker.horizon;
                            *h = tracker.horizon;
                            changed
                        });
                        looked.send_if_modified(|l| !std::mem::replace(l, true));
                        let local = latest_local.load(Ordering::Relaxed);
                        if local > announced && tracker.horizon >= local {
                            announced = local;
                            announce.notify_one();
                        }
                        if !followed() {
                            idle_poll
                        } else if tracker.gap.is_some() || (busy && moved) {
                            gap_poll
                        } else {
                            idle_poll
                        }
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "the horizon tracker cannot read the log; retrying");
                        Duration::from_secs(1)
                    }
                };
                drop(tx);
                // At most one look per millisecond: under a burst of commits
                // one query serves them all instead of one query each.
                tokio::time::sleep(MIN_INTERVAL).await;
                let until = tokio::time::Instant::now() + wait.saturating_sub(MIN_INTERVAL);
                loop {
                    let woken = tokio::time::timeout_at(until, notify.notified()).await;
                    if woken.is_err() || followed() {
                        break;
                    }
                    // A commit nobody here follows: no look, but the other
                    // replicas are told (it was visible once it returned).
                    let local = latest_local.load(Ordering::Relaxed);
                    if local > announced {
                        announced = local;
                        announce.notify_one();
                    }
                }
            }
        });
        horizon
    }

    /// Tells the tracker that this process committed `seq`.
    pub(crate) fn committed(&self, seq: i64) {
        self.latest_local.fetch_max(seq, Ordering::Relaxed);
        self.notify.notify_one();
    }

    /// Waits (briefly) until the tracker has looked at the log once and
    /// this process's own commits are below the horizon, so a client reads
    /// what it has just written, and a process just started reads what the
    /// log already held.
    pub async fn caught_up(&self) -> i64 {
        self.has_looked(Duration::from_secs(2)).await;
        let latest = self.latest_local.load(Ordering::Relaxed);
        if self.current() >= latest {
            return self.current();
        }
        self.wait_for(latest, Duration::from_secs(2)).await
    }

    /// Whether the tracker has looked at the log since the process
    /// started, waiting up to `patience` for it.
    pub async fn has_looked(&self, patience: Duration) -> bool {
        // Every read asks: once it has looked, answered without waiting.
        if *self.looked.borrow() {
            return true;
        }
        let mut looked = self.looked.subscribe();
        tokio::time::timeout(patience, looked.wait_for(|l| *l)).await.is_ok_and(|r| r.is_ok())
    }

    /// Says whether anybody follows the horizon (the fan-out's streams and
    /// watchers); while nobody does, commits do not make the tracker look.
    pub(crate) fn followed_while(&self, wanted: impl Fn() -> bool + Send + Sync + 'static) {
        let _ = self.wanted.set(Box::new(wanted));
    }

    /// Follows the horizon as it moves: while the follower lives, every
    /// commit of this process makes the tracker look at once.
    pub fn subscribe(&self) -> Following {
        let following = Following { rx: self.tx.subscribe(), _counted: Counted::new(self.followers.clone()) };
        self.notify.notify_one();
        following
    }

    /// The horizon as it moves, for the fan-out, which says by itself
    /// whether it follows ([`Horizon::followed_while`]).
    pub(crate) fn watch(&self) -> watch::Receiver<i64> {
        self.tx.subscribe()
    }

    pub fn current(&self) -> i64 {
        *self.tx.borrow()
    }

    /// The furthest this process knows the log to reach: the horizon, or
    /// its own latest commit past it.
    pub(crate) fn known(&self) -> i64 {
        self.current().max(self.latest_local.load(Ordering::Relaxed))
    }

    /// Waits until the horizon reaches `seq` (or `timeout` passes); returns
    /// the horizon then.
    pub async fn wait_for(&self, seq: i64, timeout: Duration) -> i64 {
        // Counted before the tracker is woken, so that it looks.
        let mut following = self.subscribe();
        let _ = tokio::time::timeout(timeout, following.wait_for(|h| *h >= seq)).await;
        *following.borrow()
    }
}

/// A follower of the horizon ([`Horizon::subscribe`]): a watch of it that
/// makes the tracker follow commits closely for as long as it lives.
pub struct Following {
    rx: watch::Receiver<i64>,
    _counted: Counted,
}

impl std::ops::Deref for Following {
    type Target = watch::Receiver<i64>;

    fn deref(&self) -> &Self::Target {
        &self.rx
    }
}

impl std::ops::DerefMut for Following {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.rx
    }
}

/// One follower counted, for as long as it lives.
struct Counted(Arc<std::sync::atomic::AtomicUsize>);

impl Counted {
    fn new(followers: Arc<std::sync::atomic::AtomicUsize>) -> Self {
        followers.fetch_add(1, Ordering::Relaxed);
        Self(followers)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Wakes the tracker whenever another process sharing the database says its
/// horizon moved. A lost connection may lose notifications: the tracker is
/// woken then too, and the listener connects again.
async fn listen(url: Arc<str>, notify: Arc<Notify>, alive: std::sync::Weak<watch::Sender<i64>>) {
    let mut listener: Option<sqlx::postgres::PgListener> = None;
    while alive.strong_count() > 0 {
        let Some(l) = listener.as_mut() else {
            match crate::store::notify::listen(&url, CHANNEL).await {
                Ok(l) => {
                    listener = Some(l);
                    notify.notify_one();
                }
                Err(e) => failed(&e).await,
            }
            continue;
        };
        // Wakes now and then to see whether the service is still there.
        match tokio::time::timeout(Duration::from_secs(5), l.try_recv()).await {
            // A notification, or a lost connection (`None`) that may have
            // lost some: either way, look.
            Ok(Ok(_)) => notify.notify_one(),
            Ok(Err(e)) => {
                listener = None;
                notify.notify_one();
                failed(&e).await;
            }
            Err(_) => {}
        }
    }
}

async fn failed(e: &sqlx::Error) {
    tracing::warn!(error = %e, "the horizon cannot hear other replicas' commits; polling until it can");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

/// Tells the other processes sharing the database that this one's commits
/// are below its horizon: one notification however many commits it
/// covers, at most one per ANNOUNCE_EVERY.
async fn announcer(db: Db, announce: Arc<Notify>, alive: std::sync::Weak<watch::Sender<i64>>) {
    loop {
        if tokio::time::timeout(Duration::from_secs(5), announce.notified()).await.is_err() {
            if alive.strong_count() == 0 {
                return;
            }
            continue;
        }
        // One implicit transaction that waits for no disk flush: a
        // notification needs none, and the writers' own flushes stay theirs.
        if let Err(e) = stored::announce(&db).await {
            tracing::warn!(error = %e, "cannot tell other replicas of a commit; they will see it when they poll");
        }
        tokio::time::sleep(ANNOUNCE_EVERY).await;
    }
}

struct Tracker {
    db: Db,
    horizon: i64,
    /// A missing sequence number and the writers that held the lock when it
    /// was seen missing (their virtual transaction ids, comma-separated).
    gap: Option<(i64, String)>,
}

impl Tracker {
    async fn advance(&mut self) -> Result<(), lattice_core::Error> {
        match self.db.backend() {
            Backend::Sqlite => {
                self.horizon = stored::last_seq(&self.db).await?;
                Ok(())
            }
            Backend::Postgres => self.advance_postgres().await,
        }
    }

    async fn advance_postgres(&mut self) -> Result<(), lattice_core::Error> {
        loop {
            // Whether the gap's transactions have all ended is asked before
            // the log is read, so that a number committed in between is seen.
            let gap_settled = match &self.gap {
                Some((_, writers)) => stored::all_ended(&self.db, writers).await?,
                None => false,
            };
            let seqs = stored::seqs_after(&self.db, self.horizon, BATCH).await?;
            let count = seqs.len() as i64;
            for seq in seqs {
                while seq > self.horizon + 1 {
                    let missing = self.horizon + 1;
                    match &self.gap {
                        Some((gap, _)) if *gap == missing && gap_settled => {
                            // Rolled back: it will never appear.
                            self.horizon = missing;
                            self.gap = None;
                        }
                        Some((gap, _)) if *gap == missing => return Ok(()),
                        _ => {
                            self.gap = Some((missing, stored::writers_now(&self.db).await?));
                            return Ok(());
                        }
                    }
                }
                self.horizon = seq;
                self.gap = None;
            }
            if count < BATCH {
                return Ok(());
            }
        }
    }
}

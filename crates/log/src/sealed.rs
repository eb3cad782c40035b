//! How far the log is sealed, as this process has heard it: what waits for
//! an envelope's proof waits on this, not on a timer. A sealer in this
//! process tells it at once, after the seals' transaction; on PostgreSQL
//! every sealer also says it on the `lattice_seal` channel, and each
//! process with a waiter listens there, so a proof sealed by another
//! replica's sealer (the lead `sealer` is one replica's) wakes it too.

use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use tokio::sync::watch;

use crate::store::{Backend, Db, notify};

/// The lead among sealers: one replica seals at a time.
pub(crate) const SEALER: &str = "sealer";
/// The channel sealers say the highest sequence number they sealed on.
const CHANNEL: &str = "lattice_seal";

/// The highest sequence number known sealed (the log is sealed in order,
/// so every envelope up to it is).
#[derive(Clone)]
pub(crate) struct Sealed {
    db: Db,
    tx: Arc<watch::Sender<i64>>,
    /// Set once this process listens for other replicas' seals: from its
    /// first waiter on, so a process nobody waits in holds no connection
    /// for it.
    listening: Arc<OnceLock<()>>,
}

impl Sealed {
    pub(crate) fn new(db: Db) -> Self {
        Self { db, tx: Arc::new(watch::channel(0).0), listening: Arc::default() }
    }

    /// A sealer sealed every envelope up to `seq`: its waiters here wake at
    /// once, and on PostgreSQL the other replicas' are told.
    pub(crate) async fn sealed(&self, seq: i64) {
        self.heard(seq);
        if self.db.backend() == Backend::Postgres
            && let Err(e) = notify::say(&self.db, CHANNEL, &seq.to_string()).await
        {
            tracing::warn!(error = %e, "cannot tell other replicas of a seal; their waiters will find it when they look again");
        }
    }

    fn heard(&self, seq: i64) {
        heard(&self.tx, seq);
    }

    /// Follows how far the log is sealed, with other replicas' seals heard
    /// from now on (on PostgreSQL; the listener's first connection may miss
    /// a seal said while it connects, which the waiter's own look again
    /// finds).
    pub(crate) fn watch(&self) -> watch::Receiver<i64> {
        if self.db.backend() == Backend::Postgres {
            self.listening.get_or_init(|| {
                tokio::spawn(hear(self.db.url(), Arc::downgrade(&self.tx)));
            });
        }
        self.tx.subscribe()
    }
}

fn heard(tx: &watch::Sender<i64>, seq: i64) {
    tx.send_if_modified(|known| {
        let moved = seq > *known;
        *known = (*known).max(seq);
        moved
    });
}

/// Hears other replicas' seals while anything in this process may wait for
/// one; a lost connection is made again (what it missed is found by the
/// waiters' looks again).
async fn hear(url: Arc<str>, tx: Weak<watch::Sender<i64>>) {
    let mut listener: Option<sqlx::postgres::PgListener> = None;
    while tx.strong_count() > 0 {
        let Some(l) = listener.as_mut() else {
            match notify::listen(&url, CHANNEL).await {
                Ok(l) => listener = Some(l),
                Err(e) => {
                    tracing::warn!(error = %e, "cannot hear other replicas' seals; proofs are looked for again instead");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
            continue;
        };
        // Wakes now and then to see whether the service is still there.
        match tokio::time::timeout(Duration::from_secs(5), l.try_recv()).await {
            Ok(Ok(Some(notification))) => {
                if let (Ok(seq), Some(tx)) = (notification.payload().parse::<i64>(), tx.upgrade()) {
                    heard(&tx, seq);
                }
            }
            Ok(Ok(None)) | Err(_) => {}
            Ok(Err(_)) => listener = None,
        }
    }
}

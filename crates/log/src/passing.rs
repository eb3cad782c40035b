//! What passes on a thread's live stream without being kept (a model's
//! text as it is written) reaches the streams of every replica sharing a
//! PostgreSQL database: the replica that drives a run hands its deltas to
//! its own streams and says them on the `lattice_pass` channel; every
//! replica listens there and hands on what another said. A delta is worth
//! little once late, so none is retried: one larger than a notification
//! may carry, or said while the queue is full or the connection lost, is
//! left out (the finished reply is in the log whatever happens).

use std::sync::Weak;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use crate::store::{Db, notify};
use crate::subscribers::{Passing, Subscribers};

/// The channel replicas say and hear passing events on.
const CHANNEL: &str = "lattice_pass";
/// The most a notification carries (PostgreSQL's limit is 8000 bytes).
const MAX_PAYLOAD: usize = 7900;
/// Passing events waiting to be said, at most.
const QUEUE: usize = 1024;

/// One passing event as replicas say it.
#[derive(Serialize, Deserialize)]
struct Said {
    /// The replica that said it: it hears itself and hands nothing on twice.
    origin: String,
    thread: String,
    name: String,
    json: String,
}

/// The names a passing event may have; a name heard that is not one of
/// them is not handed on.
const NAMES: [&str; 2] = ["delta", "tool_input"];

/// Says this replica's passing events to the others.
#[derive(Clone)]
pub(crate) struct Relay {
    origin: String,
    tx: mpsc::Sender<String>,
}

impl Relay {
    /// Starts saying and hearing on `db`'s PostgreSQL; what is heard goes to
    /// `subscribers` while they last.
    pub(crate) fn start(db: &Db, subscribers: Weak<std::sync::Mutex<Subscribers>>) -> Self {
        let origin = ulid::Ulid::generate().to_string();
        let (tx, rx) = mpsc::channel(QUEUE);
        tokio::spawn(say(db.clone(), rx));
        tokio::spawn(hear(db.url(), origin.clone(), subscribers));
        Self { origin, tx }
    }

    /// Says `passing` to the other replicas, if it fits a notification.
    pub(crate) fn say(&self, thread: &str, passing: &Passing) {
        let said = Said { origin: self.origin.clone(), thread: thread.to_owned(), name: passing.name.to_owned(), json: passing.json.clone() };
        let payload = serde_json::to_string(&said).expect("a passing event serializes");
        if payload.len() <= MAX_PAYLOAD {
            let _ = self.tx.try_send(payload);
        }
    }
}

async fn say(db: Db, mut rx: mpsc::Receiver<String>) {
    while let Some(payload) = rx.recv().await {
        if let Err(e) = notify::say(&db, CHANNEL, &payload).await {
            tracing::debug!(error = %e, "a passing event was not said to the other replicas");
        }
    }
}

async fn hear(url: std::sync::Arc<str>, origin: String, subscribers: Weak<std::sync::Mutex<Subscribers>>) {
    let mut listener: Option<sqlx::postgres::PgListener> = None;
    while subscribers.strong_count() > 0 {
        let Some(l) = listener.as_mut() else {
            match notify::listen(&url, CHANNEL).await {
                Ok(l) => listener = Some(l),
                Err(_) => tokio::time::sleep(Duration::from_secs(1)).await,
            }
            continue;
        };
        match tokio::time::timeout(Duration::from_secs(5), l.try_recv()).await {
            Ok(Ok(Some(notification))) => {
                let Ok(said) = serde_json::from_str::<Said>(notification.payload()) else { continue };
                let Some(name) = NAMES.iter().find(|n| **n == said.name) else { continue };
                if said.origin == origin {
                    continue;
                }
                if let Some(subs) = subscribers.upgrade() {
                    Subscribers::pass(&subs, &said.thread, Passing { name, json: said.json });
                }
            }
            Ok(Ok(None)) => {}
            Ok(Err(_)) => listener = None,
            Err(_) => {}
        }
    }
}

//! Who the fan-out hands what to: each open stream and access watcher, by
//! the thread, the workspace and the person it follows, with its queue.
//! What passes through them: a committed envelope serialized once for all,
//! a passing event (passing.rs brings other replicas'), a recheck.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use tokio::sync::mpsc;

use crate::store::StoredEnvelope;

/// One envelope on its way to the streams: serialized once for all of them.
#[derive(Debug)]
pub struct Delivered {
    pub seq: i64,
    pub event_type: String,
    /// The thread it happened in, if any: a workspace's stream hands on
    /// only what is in the threads its caller can read.
    pub thread: Option<String>,
    /// The envelope as JSON (the live stream's event data).
    pub json: String,
}

/// Something passing on a thread's live stream that the log does not
/// keep: a model's text as it writes, a tool's arguments as they arrive.
/// Only the streams open at the time see it; nothing replays it.
#[derive(Debug)]
pub struct Passing {
    /// The event's name on the stream (`delta`, `tool_input`).
    pub name: &'static str,
    pub json: String,
}

pub(crate) enum Delivery {
    Envelope(Arc<Delivered>),
    Passing(Arc<Passing>),
    /// The caller's access may have changed (at this sequence number):
    /// check it again.
    Recheck(i64),
}

pub(crate) struct Subscriber {
    pub id: u64,
    pub tx: mpsc::Sender<Delivery>,
}

#[derive(Default)]
pub(crate) struct Subscribers {
    pub next_id: u64,
    pub threads: HashMap<String, Vec<Subscriber>>,
    /// Streams of a whole workspace.
    pub workspaces: HashMap<String, Vec<Subscriber>>,
    /// Every stream and access watcher by its person (`tenant/user`),
    /// told when that person's access changes.
    pub people: HashMap<String, Vec<Subscriber>>,
}

impl Subscribers {
    pub fn is_empty(&self) -> bool {
        self.threads.is_empty() && self.workspaces.is_empty() && self.people.is_empty()
    }

    /// Hands a delivery to each of `list`; answers those whose queue is
    /// full or whose stream is gone, to be dropped from every list.
    pub fn send(list: &[Subscriber], make: impl Fn() -> Delivery, failed: &mut Vec<u64>) {
        failed.extend(list.iter().filter(|s| s.tx.try_send(make()).is_err()).map(|s| s.id));
    }

    /// Hands `passing` to the streams following `thread` now; a stream
    /// whose queue is full misses it (and catches up on what is kept).
    pub(crate) fn pass(subscribers: &Mutex<Subscribers>, thread: &str, passing: Passing) {
        let passing = Arc::new(passing);
        let mut subs = subscribers.lock().expect("the fan-out's lock is never poisoned");
        let mut failed = Vec::new();
        if let Some(list) = subs.threads.get(thread) {
            Subscribers::send(list, || Delivery::Passing(passing.clone()), &mut failed);
        }
        for id in failed {
            subs.remove(id);
        }
    }

    pub fn remove(&mut self, id: u64) {
        for map in [&mut self.threads, &mut self.workspaces, &mut self.people] {
            map.retain(|_, list| {
                list.retain(|s| s.id != id);
                !list.is_empty()
            });
        }
    }
}

/// A stream's place in the fan-out; leaving it (dropping this) removes it.
pub(crate) struct Subscription {
    pub id: u64,
    pub rx: mpsc::Receiver<Delivery>,
    pub subscribers: Weak<Mutex<Subscribers>>,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if let Some(subs) = self.subscribers.upgrade() {
            subs.lock().expect("the fan-out's lock is never poisoned").remove(self.id);
        }
    }
}

impl Delivered {
    pub(crate) fn of(e: &StoredEnvelope) -> Self {
        Self { seq: e.seq, event_type: e.event_type.clone(), thread: e.thread.clone(), json: String::from_utf8(e.to_json()).expect("JSON is UTF-8") }
    }
}

/// How the fan-out names a person (`tenant/user`).
pub(crate) fn person_key(tenant: &str, user: &str) -> String {
    format!("{tenant}/{user}")
}

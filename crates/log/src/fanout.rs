//! The live stream's fan-out: one reader of the log hands each envelope to
//! the streams that follow its thread or its workspace, from memory. A
//! commit costs one read however many streams are open, and wakes only
//! the streams it concerns; a stream never queries for another thread's
//! commits (src/live.rs is the stream's side).

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use lattice_core::event::{
    CredentialKind, CredentialRevoked, Event, GroupRemoved, GroupSaved, MemberAdded, MemberRemoved, PersonRemoved, PersonSaved, SessionsEnded,
    SwitchSet, ThreadShared, ThreadUnshared,
};
use lattice_core::{Error, Principal};
use tokio::sync::{mpsc, watch};

use crate::passing::Relay;
use crate::store::{Backend, Db, StoredEnvelope, envelopes};
use crate::subscribers::{Delivered, Delivery, Passing, Subscriber, Subscribers, Subscription, person_key};

/// Envelopes a stream may have waiting before it is dropped to catch up
/// from the database.
const QUEUE: usize = 1024;
/// Envelopes read from the log at a time.
const BATCH: i64 = 1000;
/// Events that change what the person they name may read: each of that
/// person's streams decides again, before anything after it is handed on.
const ACCESS_EVENTS: [&str; 10] = [
    MemberAdded::NAME,
    MemberRemoved::NAME,
    ThreadShared::NAME,
    ThreadUnshared::NAME,
    SessionsEnded::NAME,
    PersonSaved::NAME,
    PersonRemoved::NAME,
    GroupSaved::NAME,
    GroupRemoved::NAME,
    CredentialRevoked::NAME,
];

/// The fan-out: started with the log service, it follows the horizon.
#[derive(Clone)]
pub(crate) struct Fanout {
    subscribers: Arc<Mutex<Subscribers>>,
    /// The sequence number of the last `switch_set` handed on.
    switches: Arc<watch::Sender<i64>>,
    /// Other replicas' passing events, on PostgreSQL.
    relay: Option<Relay>,
}

impl Fanout {
    pub(crate) fn start(db: Db, mut horizon: watch::Receiver<i64>) -> Self {
        let subscribers: Arc<Mutex<Subscribers>> = Arc::default();
        let relay = (db.backend() == Backend::Postgres).then(|| Relay::start(&db, Arc::downgrade(&subscribers)));
        let fanout = Self { subscribers, switches: Arc::new(watch::channel(0).0), relay };
        let subscribers = Arc::downgrade(&fanout.subscribers);
        let switches = Arc::downgrade(&fanout.switches);
        tokio::spawn(async move {
            let mut handed = *horizon.borrow_and_update();
            loop {
                if horizon.changed().await.is_err() {
                    return;
                }
                let to = *horizon.borrow_and_update();
                while handed < to {
                    match hand_on(&db, &subscribers, &switches, handed, to).await {
                        Ok(Some(last)) => handed = last,
                        Ok(None) => return,
                        Err(e) => {
                            tracing::warn!(error = %e, "the live stream's fan-out cannot read the log; retrying");
                            tokio::time::sleep(Duration::from_secs(1)).await;
                        }
                    }
                }
            }
        });
        fanout
    }

    /// Whether any stream or switch watcher listens now (the horizon
    /// tracker follows commits closely only then).
    pub(crate) fn listening(&self) -> impl Fn() -> bool + Send + Sync + 'static {
        let (subscribers, switches) = (Arc::downgrade(&self.subscribers), Arc::downgrade(&self.switches));
        move || match (subscribers.upgrade(), switches.upgrade()) {
            (Some(subs), Some(switches)) => !subs.lock().expect("the fan-out's lock is never poisoned").is_empty() || switches.receiver_count() > 0,
            _ => false,
        }
    }

    /// Follows the sequence number of the latest switch change.
    pub(crate) fn switches(&self) -> watch::Receiver<i64> {
        self.switches.subscribe()
    }

    /// Hands `passing` to this replica's streams following `thread`, and
    /// says it to the other replicas sharing the database.
    pub(crate) fn pass(&self, thread: &str, passing: Passing) {
        if let Some(relay) = &self.relay {
            relay.say(thread, &passing);
        }
        Subscribers::pass(&self.subscribers, thread, passing);
    }

    /// A stream of `followed` (a thread, a workspace, or nothing but its
    /// person's access), told too when `person`'s access changes.
    pub(crate) fn subscribe(&self, followed: Followed<'_>, person: &Principal) -> Subscription {
        let (tx, rx) = mpsc::channel(QUEUE);
        let mut subs = self.subscribers.lock().expect("the fan-out's lock is never poisoned");
        subs.next_id += 1;
        let id = subs.next_id;
        match followed {
            Followed::Thread(thread) => subs.threads.entry(thread.to_owned()).or_default().push(Subscriber { id, tx: tx.clone() }),
            Followed::Workspace(ws) => subs.workspaces.entry(ws.to_owned()).or_default().push(Subscriber { id, tx: tx.clone() }),
            Followed::Places { workspaces, threads } => {
                for ws in workspaces {
                    subs.workspaces.entry(ws.clone()).or_default().push(Subscriber { id, tx: tx.clone() });
                }
                for thread in threads {
                    subs.threads.entry(thread.clone()).or_default().push(Subscriber { id, tx: tx.clone() });
                }
            }
            Followed::Access => {}
        }
        subs.people.entry(person_key(person.tenant.as_str(), person.user.as_str())).or_default().push(Subscriber { id, tx });
        Subscription { id, rx, subscribers: Arc::downgrade(&self.subscribers) }
    }
}

/// Reads the log after `from` up to `to` (one batch) and hands each
/// envelope on; answers the last sequence number handed on, or `None` once
/// the service is gone.
async fn hand_on(
    db: &Db,
    subscribers: &Weak<Mutex<Subscribers>>,
    switches: &Weak<watch::Sender<i64>>,
    from: i64,
    to: i64,
) -> Result<Option<i64>, Error> {
    let (Some(subs), Some(switches)) = (subscribers.upgrade(), switches.upgrade()) else { return Ok(None) };
    let idle = subs.lock().expect("the fan-out's lock is never poisoned").is_empty() && switches.receiver_count() == 0;
    if idle {
        // Nobody listens: nothing to read.
        return Ok(Some(to));
    }
    let envelopes = envelopes::between(db, from, to, BATCH).await?;
    let full = envelopes.len() as i64 == BATCH;
    let mut last = from;
    let mut subs = subs.lock().expect("the fan-out's lock is never poisoned");
    let mut failed = Vec::new();
    for e in &envelopes {
        last = e.seq;
        if e.event_type == SwitchSet::NAME {
            switches.send_replace(e.seq);
        }
        // Told before the envelope itself is handed on: a person taken out
        // of a workspace does not read the news on its stream.
        if ACCESS_EVENTS.contains(&e.event_type.as_str()) {
            for person in concerned(e) {
                if let Some(list) = subs.people.get(&person) {
                    Subscribers::send(list, || Delivery::Recheck(e.seq), &mut failed);
                }
            }
        }
        let workspace = e.workspace.as_deref();
        let followed =
            e.thread.as_deref().is_some_and(|t| subs.threads.contains_key(t)) || workspace.is_some_and(|w| subs.workspaces.contains_key(w));
        if let Some(workspace) = workspace
            && followed
        {
            let delivered = Arc::new(Delivered::of(e));
            if let Some(thread) = e.thread.as_deref()
                && let Some(list) = subs.threads.get(thread)
            {
                Subscribers::send(list, || Delivery::Envelope(delivered.clone()), &mut failed);
            }
            if let Some(list) = subs.workspaces.get(workspace) {
                Subscribers::send(list, || Delivery::Envelope(delivered.clone()), &mut failed);
            }
        }
        // A stream that fell behind leaves every list at once, so that its
        // queue closes and it catches up from the log.
        for id in failed.drain(..) {
            subs.remove(id);
        }
    }
    Ok(Some(if full { last } else { to }))
}

/// The people (`tenant/user`) whose access an access event changes.
fn concerned(e: &StoredEnvelope) -> Vec<String> {
    let Ok(event) = Event::decode(&e.event_type, &e.payload_json) else { return Vec::new() };
    let users = match event {
        Event::MemberAdded(m) => vec![m.user],
        Event::MemberRemoved(m) => vec![m.user],
        Event::ThreadShared(s) => vec![s.user],
        Event::ThreadUnshared(s) => vec![s.user],
        Event::SessionsEnded(s) => vec![s.user],
        Event::PersonSaved(p) => vec![p.user],
        Event::PersonRemoved(p) => vec![p.user],
        Event::GroupSaved(g) => g.roles_changed,
        Event::GroupRemoved(g) => g.roles_changed,
        // A key's id is its agent's user id.
        Event::CredentialRevoked(c) if c.kind == CredentialKind::ApiKey => vec![c.id],
        _ => Vec::new(),
    };
    users.iter().map(|user| person_key(&e.tenant, user)).collect()
}

/// What a subscription follows besides its person's access.
pub(crate) enum Followed<'a> {
    Thread(&'a str),
    Workspace(&'a str),
    /// Several workspaces and threads at once (what waits for a person's
    /// answer): an envelope of a thread in one of the workspaces may come
    /// twice.
    Places {
        workspaces: &'a [String],
        threads: &'a [String],
    },
    /// Nothing else: an access watcher (an MCP session's streams).
    Access,
}

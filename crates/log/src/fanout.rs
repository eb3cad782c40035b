//! The live stream's fan-out: one reader of the log hands each envelope to
//! the streams that follow its thread or its workspace, from memory. A
//! commit costs one read however many streams are open, and wakes only
//! the streams it concerns; a stream never queries for another thread's
//! commits.
//!
//! A stream first reads what it missed from the database (after its last
//! sequence number, up to the horizon), then takes envelopes as the
//! fan-out hands them on. It subscribes before it reads, so nothing falls
//! between the two; what arrives twice is dropped by sequence number. A
//! stream that falls behind (its queue full) is dropped from the fan-out
//! and catches up from the database again: a slow reader never holds back
//! the others, and never loses an envelope.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use lattice_core::event::{Event, MemberAdded, MemberRemoved, SessionsEnded, SwitchSet, ThreadShared, ThreadUnshared};
use lattice_core::{Error, Principal, ThreadId};
use tokio::sync::{mpsc, watch};

use crate::auth::Authenticated;
use crate::db::{Db, db_error};
use crate::read::Follow;
use crate::service::LogService;
use crate::store::{ENVELOPE_COLUMNS, StoredEnvelope};

/// Envelopes a stream may have waiting before it is dropped to catch up
/// from the database.
const QUEUE: usize = 1024;
/// Envelopes read from the log at a time.
const BATCH: i64 = 1000;
/// Envelopes a stream reads from the database at a time while catching up.
const PAGE: i64 = 500;
/// Events that change what the person they name may read: each of that
/// person's streams decides again, before anything after it is handed on.
const ACCESS_EVENTS: [&str; 5] = [MemberAdded::NAME, MemberRemoved::NAME, ThreadShared::NAME, ThreadUnshared::NAME, SessionsEnded::NAME];

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

/// What a live stream hands on next.
#[derive(Debug, Clone)]
pub enum Live {
    /// A committed envelope, with its sequence number.
    Committed(Arc<Delivered>),
    Passing(Arc<Passing>),
    /// The caller may no longer read what it follows (removed, demoted,
    /// unlisted, signed out): the stream's last item.
    AccessLost,
}

enum Delivery {
    Envelope(Arc<Delivered>),
    Passing(Arc<Passing>),
    /// The caller's access may have changed (at this sequence number):
    /// check it again.
    Recheck(i64),
}

struct Subscriber {
    id: u64,
    tx: mpsc::Sender<Delivery>,
}

#[derive(Default)]
pub(crate) struct Subscribers {
    next_id: u64,
    threads: HashMap<String, Vec<Subscriber>>,
    /// Streams of a whole workspace.
    workspaces: HashMap<String, Vec<Subscriber>>,
    /// Every stream and access watcher by its person (`tenant/user`),
    /// told when that person's access changes.
    people: HashMap<String, Vec<Subscriber>>,
}

impl Subscribers {
    fn is_empty(&self) -> bool {
        self.threads.is_empty() && self.workspaces.is_empty() && self.people.is_empty()
    }

    /// Hands a delivery to each of `list`; answers those whose queue is
    /// full or whose stream is gone, to be dropped from every list.
    fn send(list: &[Subscriber], make: impl Fn() -> Delivery, failed: &mut Vec<u64>) {
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

    fn remove(&mut self, id: u64) {
        for map in [&mut self.threads, &mut self.workspaces, &mut self.people] {
            map.retain(|_, list| {
                list.retain(|s| s.id != id);
                !list.is_empty()
            });
        }
    }
}

/// The fan-out: started with the log service, it follows the horizon.
#[derive(Clone)]
pub(crate) struct Fanout {
    subscribers: Arc<Mutex<Subscribers>>,
    /// The sequence number of the last `switch_set` handed on.
    switches: Arc<watch::Sender<i64>>,
    /// Other replicas' passing events, on PostgreSQL.
    relay: Option<crate::relay::Relay>,
}

impl Fanout {
    pub(crate) fn start(db: Db, mut horizon: watch::Receiver<i64>) -> Self {
        let subscribers: Arc<Mutex<Subscribers>> = Arc::default();
        let relay = (db.backend == crate::db::Backend::Postgres).then(|| crate::relay::Relay::start(&db, Arc::downgrade(&subscribers)));
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
    fn subscribe(&self, followed: Followed<'_>, person: &Principal) -> Subscription {
        let (tx, rx) = mpsc::channel(QUEUE);
        let mut subs = self.subscribers.lock().expect("the fan-out's lock is never poisoned");
        subs.next_id += 1;
        let id = subs.next_id;
        match followed {
            Followed::Thread(thread) => subs.threads.entry(thread.to_owned()).or_default().push(Subscriber { id, tx: tx.clone() }),
            Followed::Workspace(ws) => subs.workspaces.entry(ws.to_owned()).or_default().push(Subscriber { id, tx: tx.clone() }),
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
    let rows =
        sqlx::query(sqlx::AssertSqlSafe(format!("SELECT {ENVELOPE_COLUMNS} FROM envelopes WHERE seq > $1 AND seq <= $2 ORDER BY seq LIMIT $3")))
            .bind(from)
            .bind(to)
            .bind(BATCH)
            .fetch_all(&db.pool)
            .await
            .map_err(db_error)?;
    let full = rows.len() as i64 == BATCH;
    let mut last = from;
    let mut subs = subs.lock().expect("the fan-out's lock is never poisoned");
    let mut failed = Vec::new();
    for row in &rows {
        let e = StoredEnvelope::from_row(row)?;
        last = e.seq;
        if e.event_type == SwitchSet::NAME {
            switches.send_replace(e.seq);
        }
        // Told before the envelope itself is handed on: a person taken out
        // of a workspace does not read the news on its stream.
        if ACCESS_EVENTS.contains(&e.event_type.as_str())
            && let Some(list) = concerned(&e).and_then(|person| subs.people.get(&person))
        {
            Subscribers::send(list, || Delivery::Recheck(e.seq), &mut failed);
        }
        let workspace = e.workspace.as_deref();
        let followed =
            e.thread.as_deref().is_some_and(|t| subs.threads.contains_key(t)) || workspace.is_some_and(|w| subs.workspaces.contains_key(w));
        if let Some(workspace) = workspace
            && followed
        {
            let delivered = Arc::new(Delivered::of(&e));
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

/// The person (`tenant/user`) whose access an access event changes.
fn concerned(e: &StoredEnvelope) -> Option<String> {
    let user = match Event::decode(&e.event_type, &e.payload_json).ok()? {
        Event::MemberAdded(m) => m.user,
        Event::MemberRemoved(m) => m.user,
        Event::ThreadShared(s) => s.user,
        Event::ThreadUnshared(s) => s.user,
        Event::SessionsEnded(s) => s.user,
        _ => return None,
    };
    Some(person_key(&e.tenant, &user))
}

fn person_key(tenant: &str, user: &str) -> String {
    format!("{tenant}/{user}")
}

/// What a subscription follows besides its person's access.
enum Followed<'a> {
    Thread(&'a str),
    Workspace(&'a str),
    /// Nothing else: an access watcher (an MCP session's streams).
    Access,
}

/// A stream's place in the fan-out; leaving it (dropping this) removes it.
struct Subscription {
    id: u64,
    rx: mpsc::Receiver<Delivery>,
    subscribers: Weak<Mutex<Subscribers>>,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if let Some(subs) = self.subscribers.upgrade() {
            subs.lock().expect("the fan-out's lock is never poisoned").remove(self.id);
        }
    }
}

impl Delivered {
    fn of(e: &StoredEnvelope) -> Self {
        Self { seq: e.seq, event_type: e.event_type.clone(), thread: e.thread.clone(), json: String::from_utf8(e.to_json()).expect("JSON is UTF-8") }
    }
}

/// One live stream: what the caller missed, then what is committed, in
/// order, each envelope once.
pub struct LiveEvents {
    log: LogService,
    who: Authenticated,
    follow: Follow,
    workspace: String,
    after: i64,
    backlog: VecDeque<Arc<Delivered>>,
    catching_up: bool,
    subscription: Option<Subscription>,
    /// A workspace stream's answer, per thread, to whether its caller
    /// reads it (restricted threads); forgotten when its access changes.
    reads: HashMap<String, bool>,
    /// Access was lost and said: nothing more comes.
    ended: bool,
}

impl LogService {
    /// Follows a thread or a workspace the caller can read, from `after`.
    /// Refuses at once what the caller may not see.
    pub async fn follow(&self, who: &Authenticated, follow: Follow, after: i64) -> Result<LiveEvents, Error> {
        let workspace = self.followed_workspace(who, &follow).await?;
        let mut live = LiveEvents {
            log: self.clone(),
            who: who.clone(),
            follow,
            workspace,
            after,
            backlog: VecDeque::new(),
            catching_up: true,
            subscription: None,
            reads: HashMap::new(),
            ended: false,
        };
        live.subscribe();
        Ok(live)
    }

    async fn followed_workspace(&self, who: &Authenticated, follow: &Follow) -> Result<String, Error> {
        match follow {
            Follow::Thread(thread) => self.thread_workspace(who, thread).await,
            Follow::Workspace(ws) => {
                let access = crate::access::workspace_access(&self.inner.db, who.principal(), ws).await?;
                Ok(access.workspace.to_string())
            }
        }
    }
}

impl LiveEvents {
    fn subscribe(&mut self) {
        let followed = match &self.follow {
            Follow::Thread(t) => Followed::Thread(ThreadId::as_str(t)),
            Follow::Workspace(_) => Followed::Workspace(&self.workspace),
        };
        self.subscription = Some(self.log.inner.fanout.subscribe(followed, self.who.principal()));
    }

    /// Decides again whether the caller reads what it follows: its token
    /// not ended, its access to the thread or workspace still there.
    async fn still_allowed(&mut self) -> Result<(), Error> {
        self.reads.clear();
        self.log.still_signed_in(&self.who).await?;
        self.log.followed_workspace(&self.who, &self.follow).await.map(drop)
    }

    /// Ends the stream with [`Live::AccessLost`] when `e` says access is
    /// gone; `None` for any other failure.
    fn failed(&mut self, e: &Error) -> Option<Live> {
        tracing::debug!(error = %e, "live stream ends");
        if matches!(e, Error::NotFound | Error::Forbidden { .. } | Error::Unauthorized { .. }) {
            self.ended = true;
            return Some(Live::AccessLost);
        }
        None
    }

    /// Reads what the caller missed into the stream, up to now: from here
    /// on what comes arrives as it happens, in the order it happens (a
    /// model's deltas before the reply they add up to).
    pub async fn catch_up(&mut self) -> Result<(), Error> {
        while self.catching_up {
            if self.subscription.is_none() {
                self.subscribe();
            }
            let from = self.backlog.back().map_or(self.after, |d| d.seq);
            let page = self.log.events_stored(&self.who, &self.follow, from, PAGE).await?;
            if page.is_empty() {
                self.catching_up = false;
            }
            self.backlog.extend(page.iter().map(|e| Arc::new(Delivered::of(e))));
        }
        Ok(())
    }

    /// Whether the caller reads the thread `d` happened in: always on a
    /// thread's stream (checked when it opened); on a workspace's, asked
    /// once per thread, again when someone is listed on it.
    async fn readable(&mut self, d: &Delivered) -> bool {
        let (Follow::Workspace(_), Some(thread)) = (&self.follow, &d.thread) else { return true };
        if d.event_type == lattice_core::event::ThreadShared::NAME {
            self.reads.remove(thread);
        }
        if let Some(known) = self.reads.get(thread) {
            return *known;
        }
        let reads = crate::access::thread_access(&self.log.inner.db, self.who.principal(), &ThreadId::from_trusted(thread.clone())).await.is_ok();
        self.reads.insert(thread.clone(), reads);
        reads
    }

    /// The next committed envelope, passing what is not kept by.
    pub async fn next_committed(&mut self) -> Option<Arc<Delivered>> {
        loop {
            match self.next().await? {
                Live::Committed(d) => return Some(d),
                Live::AccessLost => return None,
                Live::Passing(_) => {}
            }
        }
    }

    /// The next envelope or passing event; [`Live::AccessLost`] once when
    /// the caller may no longer read what it follows, then `None`; `None`
    /// too when the database fails while catching up.
    pub async fn next(&mut self) -> Option<Live> {
        loop {
            if self.ended {
                return None;
            }
            if let Some(d) = self.backlog.pop_front() {
                if d.seq > self.after {
                    self.after = d.seq;
                    return Some(Live::Committed(d));
                }
                continue;
            }
            if self.catching_up {
                if self.subscription.is_none() {
                    self.subscribe();
                }
                match self.log.events_stored(&self.who, &self.follow, self.after, PAGE).await {
                    Ok(page) if !page.is_empty() => {
                        self.backlog = page.iter().map(|e| Arc::new(Delivered::of(e))).collect();
                    }
                    Ok(_) => self.catching_up = false,
                    Err(e) => return self.failed(&e),
                }
                continue;
            }
            let subscription = self.subscription.as_mut().expect("a live stream past its catch-up is subscribed");
            match subscription.rx.recv().await {
                Some(Delivery::Envelope(d)) => {
                    if d.seq > self.after && self.readable(&d).await {
                        self.after = d.seq;
                        return Some(Live::Committed(d));
                    }
                }
                Some(Delivery::Passing(p)) => return Some(Live::Passing(p)),
                Some(Delivery::Recheck(_)) => {
                    if let Err(e) = self.still_allowed().await {
                        return self.failed(&e);
                    }
                }
                None => {
                    // Dropped for falling behind: catch up from the log,
                    // deciding access again (a change may have been missed).
                    self.subscription = None;
                    self.catching_up = true;
                    if let Err(e) = self.still_allowed().await {
                        return self.failed(&e);
                    }
                }
            }
        }
    }
}

/// Watches one person's access, for a surface that is no stream of the log
/// (an MCP session's open responses): [`AccessWatch::changed`] answers when
/// something changes what they may read, or their sessions end.
pub struct AccessWatch {
    subscription: Subscription,
    /// The log as far as it was known when the watch began: a change
    /// committed before it (and handed on late) is no change to what the
    /// watcher was let in with.
    since: i64,
}

impl AccessWatch {
    /// Waits for the next change of the person's access (or for the
    /// service to stop).
    pub async fn changed(&mut self) {
        while let Some(delivery) = self.subscription.rx.recv().await {
            if matches!(delivery, Delivery::Recheck(seq) if seq > self.since) {
                return;
            }
        }
    }
}

impl LogService {
    /// Watches `who`'s access from now on.
    pub fn watch_access(&self, who: &Authenticated) -> AccessWatch {
        let since = self.inner.horizon.known();
        AccessWatch { subscription: self.inner.fanout.subscribe(Followed::Access, who.principal()), since }
    }
}

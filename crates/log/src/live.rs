//! One live stream of a thread or a workspace, and a watch on a person's
//! access; the fan-out (src/fanout.rs) hands them what is committed.
//!
//! A stream first reads what it missed from the database (after its last
//! sequence number, up to the horizon), then takes envelopes as the
//! fan-out hands them on. It subscribes before it reads, so nothing falls
//! between the two; what arrives twice is dropped by sequence number. A
//! stream that falls behind (its queue full) is dropped from the fan-out
//! and catches up from the database again: a slow reader never holds back
//! the others, and never loses an envelope.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use lattice_core::{Error, ThreadId};

use crate::access::{thread_access, workspace_access};
use crate::auth::Authenticated;
use crate::credentials::Credentials;
use crate::fanout::{Fanout, Followed};
use crate::horizon::Horizon;
use crate::reads::{Follow, Reads};
use crate::store::Db;
use crate::subscribers::{Delivered, Delivery, Passing, Subscription};

/// Envelopes a stream reads from the database at a time while catching up.
const PAGE: i64 = 500;

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

/// Opens streams and access watches: reads the store through access and
/// [`Reads`], the sign-outs, the fan-out and the horizon.
#[derive(Clone)]
pub(crate) struct Streams {
    db: Db,
    reads: Reads,
    credentials: Arc<Credentials>,
    fanout: Fanout,
    horizon: Horizon,
}

impl Streams {
    pub fn new(db: Db, reads: Reads, credentials: Arc<Credentials>, fanout: Fanout, horizon: Horizon) -> Self {
        Self { db, reads, credentials, fanout, horizon }
    }

    /// Follows a thread or a workspace the caller can read, from `after`.
    /// Refuses at once what the caller may not see.
    pub async fn follow(&self, who: &Authenticated, follow: Follow, after: i64) -> Result<LiveEvents, Error> {
        let workspace = self.followed_workspace(who, &follow).await?;
        let mut live = LiveEvents {
            streams: self.clone(),
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

    /// Watches `who`'s access from now on.
    pub fn watch_access(&self, who: &Authenticated) -> AccessWatch {
        let since = self.horizon.known();
        AccessWatch { subscription: self.fanout.subscribe(Followed::Access, who.principal()), since }
    }

    async fn followed_workspace(&self, who: &Authenticated, follow: &Follow) -> Result<String, Error> {
        match follow {
            Follow::Thread(thread) => self.reads.thread_workspace(who, thread).await,
            Follow::Workspace(ws) => {
                let access = workspace_access(&self.db, who.principal(), ws).await?;
                Ok(access.workspace.to_string())
            }
        }
    }
}

/// One live stream: what the caller missed, then what is committed, in
/// order, each envelope once.
pub struct LiveEvents {
    streams: Streams,
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

impl LiveEvents {
    fn subscribe(&mut self) {
        let followed = match &self.follow {
            Follow::Thread(t) => Followed::Thread(ThreadId::as_str(t)),
            Follow::Workspace(_) => Followed::Workspace(&self.workspace),
        };
        self.subscription = Some(self.streams.fanout.subscribe(followed, self.who.principal()));
    }

    /// Decides again whether the caller reads what it follows: its token
    /// not ended, its access to the thread or workspace still there.
    async fn still_allowed(&mut self) -> Result<(), Error> {
        self.reads.clear();
        self.streams.credentials.check(&self.who, true).await?;
        self.streams.followed_workspace(&self.who, &self.follow).await.map(drop)
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
            let page = self.streams.reads.events_stored(&self.who, &self.follow, from, PAGE).await?;
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
        let reads = thread_access(&self.streams.db, self.who.principal(), &ThreadId::from_trusted(thread.clone())).await.is_ok();
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
                match self.streams.reads.events_stored(&self.who, &self.follow, self.after, PAGE).await {
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

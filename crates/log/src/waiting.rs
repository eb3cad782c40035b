//! What waits for a person's answer (`GET /v1/me/waiting`), and its live
//! stream: every artifact that asks (a form taking submissions, as its kind
//! says: `ArtifactKind::asks`) that the person has not answered, and every
//! open request of a paused run by a tool the caller names (the API names
//! `ask_form`), in every thread of their tenant where they may answer
//! (`Action::Submit`, by the one rule: `policy::thread_role` and
//! [`Access::allow`]), whose switch is on there; soonest deadline first,
//! those without one last, then the newest.
//!
//! The rule is applied to the person's places, not to each row: a
//! workspace whose restricted threads they answer in (an admin's) is read
//! whole, one whose open threads they answer in is read without its
//! restricted threads, and each thread they are listed on and answer in
//! outside those is read alone. What that costs is store/waiting.rs's to say.
//!
//! The stream subscribes to the fan-out for those workspaces and threads
//! (and, as every stream, for the person's access), reads the list, and
//! reads it again when something that could change it is handed on: an
//! artifact or a run of those places, a switch, a change of the person's
//! access (their places are decided again first), a deadline reached. A
//! sign-out ends it.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use lattice_core::clock::SharedClock;
use lattice_core::event::{
    ArtifactArchived, ArtifactChanged, ArtifactCreated, DeferredAnswered, RunAsked, RunFailed, RunFinished, RunPaused, RunResumed,
};
use lattice_core::integrations::resolve;
use lattice_core::policy::{Action, thread_role};
use lattice_core::{Actor, Error, Level, Principal, Role, SwitchKey, SwitchState, TenantRole, WorkspaceId};
use serde_json::Value;

use crate::access::Access;
use crate::auth::Authenticated;
use crate::credentials::Credentials;
use crate::fanout::{Fanout, Followed};
use crate::registry::Registry;
use crate::store::waiting::{self as stored, AskingRow, PLACES, Places, RequestRow};
use crate::store::{Db, members, switches};
use crate::subscribers::{Delivery, Subscription};

/// The most items one list holds: the first this many in its order, the
/// rest cut.
pub const WAITING_MAX: usize = 200;

/// A tool whose requests a person answers with a form (the API names
/// `ask_form`), and the switch its answer needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AskingTool {
    pub name: String,
    pub switch: Option<SwitchKey>,
}

/// What waits.
#[derive(Debug, Clone, PartialEq)]
pub enum Waits {
    /// An artifact that asks, at its head version.
    Artifact { id: String, kind: String, version: u64 },
    /// An open request of a paused run, with the arguments it was asked with.
    Request { run: String, tool_call_id: String, tool_name: String, args: Value },
}

/// One thing waiting for the person's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct WaitingItem {
    pub waits: Waits,
    /// An artifact's title as its kind says it; empty for a request (its
    /// `args` say it).
    pub title: String,
    pub thread: String,
    pub thread_title: String,
    pub workspace: String,
    pub workspace_name: String,
    /// Who asked: the name of the actor of the envelope that asked (the
    /// artifact's author; the run's pause), and whether an agent.
    pub asked_by: String,
    pub asked_by_agent: bool,
    /// When (ms since the epoch): the artifact's last change, the pause.
    pub asked_at: i64,
    /// When it stops taking answers (ms since the epoch).
    pub closes_at: Option<i64>,
}

impl WaitingItem {
    /// The list's order: soonest deadline first, none last, then newest,
    /// then by id (a total order, the same as the store's).
    fn order(&self) -> (bool, i64, Reverse<i64>, String) {
        let id = match &self.waits {
            Waits::Artifact { id, .. } => format!("a:{id}"),
            Waits::Request { run, tool_call_id, .. } => format!("r:{run}\u{0}{tool_call_id}"),
        };
        (self.closes_at.is_none(), self.closes_at.unwrap_or(0), Reverse(self.asked_at), id)
    }
}

/// The reads of what waits: the store, the clock, the kinds' switches, the
/// fan-out and the sign-outs.
#[derive(Clone)]
pub(crate) struct WaitingReads {
    db: Db,
    clock: SharedClock,
    registry: Arc<Registry>,
    credentials: Arc<Credentials>,
    fanout: Fanout,
}

/// Where a person answers, and the workspaces and threads to follow for it.
#[derive(Debug, Default, Clone)]
struct Answering {
    places: Places,
}

impl Answering {
    fn workspaces(&self) -> Vec<String> {
        self.places.whole.iter().chain(&self.places.open).cloned().collect()
    }

    /// The places, at most [`PLACES`] to a statement.
    fn chunks(&self) -> Vec<Places> {
        let p = &self.places;
        let mut chunks = Vec::new();
        let mut chunk = Places::default();
        let mut n = 0;
        let mut push = |chunk: &mut Places, n: &mut usize| {
            *n += 1;
            if *n == PLACES {
                chunks.push(std::mem::take(chunk));
                *n = 0;
            }
        };
        for ws in &p.whole {
            chunk.whole.push(ws.clone());
            push(&mut chunk, &mut n);
        }
        for ws in &p.open {
            chunk.open.push(ws.clone());
            push(&mut chunk, &mut n);
        }
        for th in &p.threads {
            chunk.threads.push(th.clone());
            push(&mut chunk, &mut n);
        }
        if !chunk.is_empty() {
            chunks.push(chunk);
        }
        chunks
    }
}

/// Which keys are on in which workspaces, read as rows name them.
struct Switched<'a> {
    db: &'a Db,
    tenant: &'a str,
    on: HashMap<String, [bool; SwitchKey::ALL.len()]>,
}

impl Switched<'_> {
    /// Reads what `workspaces` (those not read yet) hold, with the
    /// deployment and the tenant, in one query.
    async fn learn(&mut self, workspaces: impl Iterator<Item = &String>) -> Result<(), Error> {
        let new: BTreeSet<&String> = workspaces.filter(|w| !self.on.contains_key(*w)).collect();
        if new.is_empty() {
            return Ok(());
        }
        let tenant = lattice_core::TenantId::from_trusted(self.tenant.to_owned());
        let mut levels = vec![Level::Deployment, Level::Tenant(tenant)];
        levels.extend(new.iter().map(|w| Level::Workspace(WorkspaceId::from_trusted((*w).clone()))));
        let states = switches::states_of(self.db, &levels, &SwitchKey::ALL).await?;
        for (i, ws) in new.into_iter().enumerate() {
            let mut on = [false; SwitchKey::ALL.len()];
            for (k, key) in SwitchKey::ALL.into_iter().enumerate() {
                on[k] = resolve(key, states[0][k], states[1][k], states.get(i + 2).map_or(SwitchState::Unset, |s| s[k])).enabled;
            }
            self.on.insert(ws.clone(), on);
        }
        Ok(())
    }

    fn is_on(&self, workspace: &str, key: Option<SwitchKey>) -> bool {
        let Some(key) = key else { return true };
        // What no kind of UI governs (a server's) is not listed as waiting.
        let Some(k) = SwitchKey::ALL.iter().position(|x| *x == key) else { return false };
        self.on.get(workspace).is_some_and(|on| on[k])
    }
}

impl WaitingReads {
    pub fn new(db: Db, clock: SharedClock, registry: Arc<Registry>, credentials: Arc<Credentials>, fanout: Fanout) -> Self {
        Self { db, clock, registry, credentials, fanout }
    }

    /// What waits for `who`'s answer now: at most `limit` items (and
    /// [`WAITING_MAX`]), the first in the list's order.
    pub async fn waiting(&self, who: &Authenticated, tools: &[AskingTool], limit: usize) -> Result<Vec<WaitingItem>, Error> {
        let answering = self.answering(who.principal()).await?;
        self.list(who.principal(), &answering, tools, limit).await
    }

    /// Where `p` answers, by the rule: each of their workspaces as a whole
    /// (they answer in its restricted threads too), without its restricted
    /// threads, or not at all; then each thread they are listed on that
    /// none of those holds.
    async fn answering(&self, p: &Principal) -> Result<Answering, Error> {
        // A run's principal, bounded by its starter's rights: a run
        // answers nothing, and its starter's list is theirs to read.
        if p.within.is_some() {
            return Ok(Answering::default());
        }
        let (tenant, user) = (p.tenant.as_str(), p.user.as_str());
        let tenant_admin = p.role == TenantRole::TenantAdmin;
        let answers = |role: Option<Role>, workspace: &str| {
            role.is_some_and(|role| {
                let access = Access { tenant: p.tenant.clone(), workspace: WorkspaceId::from_trusted(workspace.to_owned()), role };
                access.allow(Action::Submit).is_ok()
            })
        };
        let mut places = Places::default();
        for ws in members::workspaces_of(&self.db, tenant, (!tenant_admin).then_some(user)).await? {
            let member = (!tenant_admin).then_some(ws.role);
            if answers(thread_role(p.role, member, true, None), &ws.id) {
                places.whole.push(ws.id);
            } else if answers(thread_role(p.role, member, false, None), &ws.id) {
                places.open.push(ws.id);
            }
        }
        if !tenant_admin {
            let whole: HashSet<String> = places.whole.iter().cloned().collect();
            let open: HashSet<String> = places.open.iter().cloned().collect();
            for l in stored::listings(&self.db, tenant, user).await? {
                if whole.contains(&l.workspace) || (!l.restricted && open.contains(&l.workspace)) {
                    continue;
                }
                let member = l.member.as_deref().and_then(Role::parse);
                if answers(thread_role(p.role, member, l.restricted, Role::parse(&l.listed)), &l.workspace) {
                    places.threads.push(l.thread);
                }
            }
        }
        Ok(Answering { places })
    }

    async fn list(&self, p: &Principal, answering: &Answering, tools: &[AskingTool], limit: usize) -> Result<Vec<WaitingItem>, Error> {
        let limit = limit.min(WAITING_MAX);
        if limit == 0 {
            return Ok(Vec::new());
        }
        let now = self.clock.now_ms();
        let mut switched = Switched { db: &self.db, tenant: p.tenant.as_str(), on: HashMap::new() };
        let mut items = Vec::new();
        for chunk in answering.chunks() {
            for row in self.asking(p, &chunk, now, limit, &mut switched).await? {
                items.push(WaitingItem {
                    title: row.title,
                    asked_by: row.author,
                    asked_by_agent: row.author_agent,
                    asked_at: row.updated_at,
                    closes_at: row.closes_at,
                    thread: row.place.thread,
                    thread_title: row.place.thread_title,
                    workspace: row.place.workspace,
                    workspace_name: row.place.workspace_name,
                    waits: Waits::Artifact { id: row.id, kind: row.kind, version: row.version },
                });
            }
            for row in self.requests(p, &chunk, tools, now, limit, &mut switched).await? {
                let actor: Option<Actor> = serde_json::from_str(&row.actor_json).ok();
                items.push(WaitingItem {
                    title: String::new(),
                    asked_by: actor.as_ref().map_or_else(String::new, |a| a.name().to_owned()),
                    asked_by_agent: actor.as_ref().is_some_and(Actor::is_agent),
                    asked_at: row.paused_at,
                    closes_at: row.expires_at,
                    thread: row.place.thread,
                    thread_title: row.place.thread_title,
                    workspace: row.place.workspace,
                    workspace_name: row.place.workspace_name,
                    waits: Waits::Request { run: row.run, tool_call_id: row.tool_call_id, tool_name: row.tool_name, args: row.args },
                });
            }
        }
        items.sort_by_cached_key(WaitingItem::order);
        items.truncate(limit);
        Ok(items)
    }

    /// The artifacts that ask in `places`, those whose kind's switch is off
    /// in their workspace left out: read again without each such (kind,
    /// workspace) when one fills the page, so the page holds `limit` items
    /// whenever there are as many.
    async fn asking(&self, p: &Principal, places: &Places, now: i64, limit: usize, sw: &mut Switched<'_>) -> Result<Vec<AskingRow>, Error> {
        let mut off: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        loop {
            let rows = stored::asking(&self.db, p.tenant.as_str(), p.user.as_str(), places, &off, now, limit).await?;
            sw.learn(rows.iter().map(|r| &r.place.workspace)).await?;
            let full = rows.len() == limit;
            let (mut kept, mut more_off) = (Vec::new(), false);
            for row in rows {
                if sw.is_on(&row.place.workspace, self.registry.kind_switch(&row.kind)) {
                    kept.push(row);
                } else {
                    more_off |= off.entry(row.kind.clone()).or_default().insert(row.place.workspace.clone());
                }
            }
            if !full || !more_off {
                return Ok(kept);
            }
        }
    }

    /// The open requests in `places`, those whose tool's switch is off in
    /// their workspace left out (as [`Self::asking`]).
    async fn requests(
        &self,
        p: &Principal,
        places: &Places,
        tools: &[AskingTool],
        now: i64,
        limit: usize,
        sw: &mut Switched<'_>,
    ) -> Result<Vec<RequestRow>, Error> {
        let names: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
        let mut off: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        loop {
            let rows = stored::requests(&self.db, p, places, &names, &off, now, limit).await?;
            sw.learn(rows.iter().map(|r| &r.place.workspace)).await?;
            let full = rows.len() == limit;
            let (mut kept, mut more_off) = (Vec::new(), false);
            for row in rows {
                let switch = tools.iter().find(|t| t.name == row.tool_name).and_then(|t| t.switch);
                if sw.is_on(&row.place.workspace, switch) {
                    kept.push(row);
                } else {
                    more_off |= off.entry(row.tool_name.clone()).or_default().insert(row.place.workspace.clone());
                }
            }
            if !full || !more_off {
                return Ok(kept);
            }
        }
    }

    /// Follows what waits for `who`'s answer: the list at once, then
    /// again each time it changes.
    pub async fn follow(&self, who: &Authenticated, tools: Vec<AskingTool>, limit: usize) -> Result<WaitingStream, Error> {
        let mut stream = WaitingStream {
            reads: self.clone(),
            who: who.clone(),
            tools,
            limit,
            answering: Answering::default(),
            subscription: None,
            switches: self.fanout.switches(),
            last: None,
            stale: true,
            signed_out: false,
            ended: false,
        };
        stream.switches.mark_unchanged();
        stream.resubscribe().await?;
        Ok(stream)
    }
}

/// What the waiting stream hands on next.
#[derive(Debug, Clone, PartialEq)]
pub enum WaitingNext {
    /// The whole list, as it is now (different from the last one handed on).
    List(Vec<WaitingItem>),
    /// The person signed out: the stream's last item.
    SignedOut,
}

/// The envelopes that can change what waits in a place the stream follows
/// (access events come as rechecks).
const CHANGES: [&str; 9] = [
    ArtifactCreated::NAME,
    ArtifactChanged::NAME,
    ArtifactArchived::NAME,
    RunPaused::NAME,
    RunAsked::NAME,
    DeferredAnswered::NAME,
    RunResumed::NAME,
    RunFinished::NAME,
    RunFailed::NAME,
];

/// How long a stream gathers a burst of changes before it reads the list.
const SETTLE: Duration = Duration::from_millis(20);

/// One person's waiting list, followed live.
pub struct WaitingStream {
    reads: WaitingReads,
    who: Authenticated,
    tools: Vec<AskingTool>,
    limit: usize,
    answering: Answering,
    subscription: Option<Subscription>,
    switches: tokio::sync::watch::Receiver<i64>,
    /// The list last handed on.
    last: Option<Vec<WaitingItem>>,
    /// Something may have changed since the list was last read.
    stale: bool,
    /// The person signed out: said next, and the stream ends.
    signed_out: bool,
    ended: bool,
}

impl WaitingStream {
    /// Decides the person's places again and follows them: subscribed
    /// before the list is read again, so nothing falls between the two.
    async fn resubscribe(&mut self) -> Result<(), Error> {
        self.answering = self.reads.answering(self.who.principal()).await?;
        let (workspaces, threads) = (self.answering.workspaces(), self.answering.places.threads.clone());
        self.subscription = None;
        self.subscription = Some(self.reads.fanout.subscribe(Followed::Places { workspaces: &workspaces, threads: &threads }, self.who.principal()));
        self.stale = true;
        Ok(())
    }

    /// The soonest deadline of the list handed on, from now by the log's
    /// clock: the list changes then with no envelope to say so.
    fn next_deadline(&self) -> Option<Duration> {
        let now = self.reads.clock.now_ms();
        let soonest = self.last.as_ref()?.iter().filter_map(|i| i.closes_at).min()?;
        Some(Duration::from_millis(u64::try_from(soonest - now).unwrap_or(0).saturating_add(1)))
    }

    /// The list when it differs from the last handed on (the first at
    /// once); [`WaitingNext::SignedOut`] once when the person signs out,
    /// then `None`. An error of the database ends the stream with it.
    pub async fn next(&mut self) -> Result<Option<WaitingNext>, Error> {
        loop {
            if self.ended {
                return Ok(None);
            }
            if self.signed_out {
                self.ended = true;
                return Ok(Some(WaitingNext::SignedOut));
            }
            if self.stale {
                self.stale = false;
                let list = self.reads.list(self.who.principal(), &self.answering, &self.tools, self.limit).await?;
                if self.last.as_ref() != Some(&list) {
                    self.last = Some(list.clone());
                    return Ok(Some(WaitingNext::List(list)));
                }
                continue;
            }
            let deadline = self.next_deadline();
            let subscription = self.subscription.as_mut().expect("a waiting stream is subscribed");
            tokio::select! {
                delivery = subscription.rx.recv() => match delivery {
                    Some(Delivery::Envelope(d)) => self.stale = CHANGES.contains(&d.event_type.as_str()),
                    Some(Delivery::Recheck(_)) => self.recheck().await?,
                    Some(Delivery::Passing(_)) => {}
                    // Dropped for falling behind: follow again, reading anew.
                    None => self.resubscribe().await?,
                },
                changed = self.switches.changed() => {
                    if changed.is_err() {
                        return Ok(None);
                    }
                    self.stale = true;
                }
                () = sleep_for(deadline) => self.stale = true,
            }
            if self.stale || self.signed_out {
                // A burst (a form and its first answers, a run's steps) is
                // read once.
                tokio::time::sleep(SETTLE).await;
                self.drain().await?;
            }
        }
    }

    /// Takes what has arrived meanwhile without waiting: a recheck among it
    /// is done now.
    async fn drain(&mut self) -> Result<(), Error> {
        self.switches.mark_unchanged();
        let mut recheck = false;
        if let Some(subscription) = self.subscription.as_mut() {
            loop {
                match subscription.rx.try_recv() {
                    Ok(Delivery::Recheck(_)) => recheck = true,
                    Ok(_) => {}
                    Err(tokio::sync::mpsc::error::TryRecvError::Empty) => break,
                    Err(tokio::sync::mpsc::error::TryRecvError::Disconnected) => {
                        recheck = true;
                        break;
                    }
                }
            }
        }
        if recheck {
            self.recheck().await?;
        }
        Ok(())
    }

    /// The person's access changed: a sign-out ends the stream, anything
    /// else decides their places again.
    async fn recheck(&mut self) -> Result<(), Error> {
        if self.reads.credentials.check(&self.who, true).await.is_err() {
            self.signed_out = true;
            self.stale = false;
            return Ok(());
        }
        self.resubscribe().await
    }
}

async fn sleep_for(d: Option<Duration>) {
    match d {
        Some(d) => tokio::time::sleep(d).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_order_is_soonest_deadline_then_newest() {
        let item = |closes_at: Option<i64>, asked_at: i64, id: &str| WaitingItem {
            waits: Waits::Artifact { id: id.into(), kind: "k".into(), version: 1 },
            title: String::new(),
            thread: String::new(),
            thread_title: String::new(),
            workspace: String::new(),
            workspace_name: String::new(),
            asked_by: String::new(),
            asked_by_agent: false,
            asked_at,
            closes_at,
        };
        let mut items = [item(None, 5, "a"), item(Some(20), 1, "b"), item(None, 9, "c"), item(Some(10), 1, "d"), item(Some(10), 3, "e")];
        items.sort_by_cached_key(WaitingItem::order);
        let ids: Vec<String> = items.iter().map(|i| if let Waits::Artifact { id, .. } = &i.waits { id.clone() } else { unreachable!() }).collect();
        assert_eq!(ids, ["e", "d", "b", "c", "a"]);
    }
}

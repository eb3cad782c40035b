//! The one write path (REQUIREMENTS.md L1, L2): authenticate → authorize → integration
//! gate → checks → commit. Every state change in lattice is a [`Command`]
//! run through [`LogService::execute`]; nothing else writes.
//!
//! [`LogService`] owns no logic of its own beyond that order: it wires the
//! parts (the registry, access and authorization, the gate, prepare, the
//! committer, the deadlines, the horizon and the fan-out, the reads) and
//! hands each only what it needs. Its reads are delegations to them.

use std::collections::BTreeMap;
use std::sync::Arc;

use lattice_core::clock::SharedClock;
use lattice_core::kind::{SharedCheck, SharedKind};
use lattice_core::{ArtifactId, Audit, Command, CommandType, Effective, Envelope, Error, Integrations, RunId, SwitchKey, ThreadId};

use crate::auth::{Authenticated, Authenticator};
use crate::authorize::authorize;
use crate::commit::{Committed, Committer};
use crate::deadlines::Deadlines;
use crate::fanout::Fanout;
use crate::gate::Gate;
use crate::horizon::{Horizon, IDLE_POLL};
use crate::limits;
use crate::live::{AccessWatch, LiveEvents, Streams};
use crate::prepare::Preparing;
use crate::reads::{AuditRow, Follow, LevelStates, Reads, ThreadAccess};
use crate::registry::Registry;
use crate::runs::{RunView, Runs};
use crate::sessions::Sessions;
use crate::sign_outs::SignOuts;
use crate::store::{ArtifactRow, Db, Listed, ThreadSummary, WorkspaceSummary};
use crate::switches::SwitchStore;
use crate::view::ScopedView;
use crate::waiting::{AskingTool, WaitingItem, WaitingReads, WaitingStream};

/// The log service. Cheap to clone; all clones share one pool and registry.
#[derive(Clone)]
pub struct LogService {
    inner: Arc<Inner>,
}

struct Inner {
    db: Db,
    auth: Authenticator,
    clock: SharedClock,
    registry: Arc<Registry>,
    sign_outs: Arc<SignOuts>,
    horizon: Horizon,
    gate: Gate,
    committer: Committer,
    runs: Runs,
    streams: Streams,
    waiting: WaitingReads,
    files: crate::files::Files,
    parts: Parts,
    /// Standings in threads remembered from earlier writes (src/access.rs).
    standings: crate::access::Standings,
    /// Folds what makes threads unread into their rows while it lives.
    _unread: crate::unread::Folding,
}

/// The parts a trusted in-process caller (src/trusted.rs) shares with the
/// service.
pub(crate) struct Parts {
    pub switches: SwitchStore,
    pub fanout: Fanout,
    pub deadlines: Deadlines,
    pub reads: Reads,
}

/// Registers kinds and checks, then starts the service.
pub struct Builder {
    db: Db,
    auth: Authenticator,
    registry: Registry,
    idle_poll: std::time::Duration,
    clock: Option<SharedClock>,
    connected: lattice_core::Connected,
    file_limits: crate::files::FileLimits,
}

impl Builder {
    /// What files may hold (per file, per tenant).
    pub fn file_limits(mut self, limits: crate::files::FileLimits) -> Self {
        self.file_limits = limits;
        self
    }

    /// The MCP servers the deployment connected: each is governed by its
    /// own switch key (`mcp:<name>`), in the tenants it is offered to.
    pub fn connected(mut self, connected: lattice_core::Connected) -> Self {
        self.connected = connected;
        self
    }

    /// Registers an artifact kind; a later registration of the same name wins.
    pub fn kind(mut self, kind: SharedKind) -> Self {
        self.registry.add_kind(kind);
        self
    }

    /// Adds a check for one command type (L5). Checks run in the order added.
    pub fn check(mut self, command: CommandType, check: SharedCheck) -> Self {
        self.registry.add_check(command, check);
        self
    }

    /// How often the log is looked at when no commit is heard of (200 ms by
    /// default). Other replicas' commits are heard of through PostgreSQL's
    /// `NOTIFY`; this is the fallback for one lost with a connection.
    pub fn idle_poll(mut self, every: std::time::Duration) -> Self {
        self.idle_poll = every;
        self
    }

    /// The clock the service reads time from: what it stamps, which
    /// deadlines and sessions are past, and (given to its authenticator)
    /// when tokens and capabilities are issued and expire. By default the
    /// authenticator's, which is the wall clock unless it was given one.
    pub fn clock(mut self, clock: SharedClock) -> Self {
        self.clock = Some(clock);
        self
    }

    /// Starts the service, its horizon tracker and its deadline scheduler
    /// (which need a Tokio runtime).
    pub fn start(self) -> LogService {
        let clock = self.clock.unwrap_or_else(|| self.auth.clock().clone());
        let auth = self.auth.with_clock(clock.clone());
        let db = self.db;
        let registry = Arc::new(self.registry);
        let horizon = Horizon::start(db.clone(), self.idle_poll);
        let fanout = Fanout::start(db.clone(), horizon.watch());
        horizon.followed_while(fanout.listening());
        let switches = SwitchStore::new(db.clone(), self.connected);
        let sign_outs = Arc::new(SignOuts::new(db.clone(), clock.clone()));
        let committer = Committer::new(db.clone(), clock.clone(), horizon.clone());
        let deadlines = Deadlines::new(db.clone(), clock.clone(), committer.clone());
        let reads = Reads::new(db.clone(), horizon.clone(), switches.clone());
        let streams = Streams::new(db.clone(), reads.clone(), sign_outs.clone(), fanout.clone(), horizon.clone());
        let waiting = WaitingReads::new(db.clone(), clock.clone(), registry.clone(), sign_outs.clone(), fanout.clone());
        deadlines.start();
        let unread = crate::unread::start(db.clone(), horizon.clone(), clock.clone());
        let files = crate::files::Files::new(db.clone(), clock.clone(), switches.clone(), self.file_limits);
        LogService {
            inner: Arc::new(Inner {
                files,
                gate: Gate::new(db.clone(), registry.clone(), switches.clone()),
                runs: Runs::new(db.clone()),
                parts: Parts { switches, fanout, deadlines, reads },
                db,
                auth,
                clock,
                registry,
                sign_outs,
                horizon,
                committer,
                streams,
                waiting,
                standings: Default::default(),
                _unread: unread,
            }),
        }
    }
}

impl LogService {
    pub fn builder(db: Db, auth: Authenticator) -> Builder {
        Builder {
            db,
            auth,
            registry: Registry::default(),
            idle_poll: IDLE_POLL,
            clock: None,
            connected: Default::default(),
            file_limits: Default::default(),
        }
    }

    pub fn db(&self) -> &Db {
        &self.inner.db
    }

    pub fn authenticator(&self) -> &Authenticator {
        &self.inner.auth
    }

    /// The clock the service reads time from ([`Builder::clock`]).
    pub fn clock(&self) -> &SharedClock {
        &self.inner.clock
    }

    /// The switch store, which answers the Integrations port.
    pub fn integrations(&self) -> &dyn Integrations {
        &self.inner.parts.switches
    }

    /// Files attached to answers (uploads, reads).
    pub fn files(&self) -> &crate::files::Files {
        &self.inner.files
    }

    /// A link to a file's bytes on the apps origin, for whoever may read
    /// its thread ([`crate::FILE_LINK_TTL`]).
    pub async fn file_link(&self, who: &Authenticated, id: &str) -> Result<String, Error> {
        let row = self.inner.files.head(who, id).await?;
        if let Some(at) = row.erased_at {
            return Err(erased(&row, at));
        }
        Ok(self.inner.auth.file_link(who, &row.id))
    }

    /// The file a link opens, if the link is its own and whoever it was
    /// given to may still read it (their access and their sign-outs, asked
    /// again now: a link outlives neither).
    pub async fn file_by_link(&self, link: &str, id: &str) -> Result<(Authenticated, crate::store::files::FileRow), Error> {
        let (who, file) = self.inner.auth.verify_file_link(link)?;
        if file != id {
            return Err(Error::forbidden("the file's link was given for another file"));
        }
        self.still_signed_in(&who).await?;
        let row = self.inner.files.head(&who, id).await?;
        if let Some(at) = row.erased_at {
            return Err(erased(&row, at));
        }
        Ok((who, row))
    }

    /// Erases a file's bytes, by a workspace admin, with a reason: first the
    /// audit row (`file_erased`: the file, its name, size and digest, the
    /// reason) in the thread's log, then the bytes. The row in `files` stays,
    /// saying when and by whom, so every reader of a reference is told.
    pub async fn erase_file(&self, who: &Authenticated, id: &str, reason: &str) -> Result<i64, Error> {
        let row = self.inner.files.head(who, id).await?;
        let thread = ThreadId::from_trusted(row.thread.clone());
        let access = crate::access::thread_access(self.db(), who.principal(), &thread).await?;
        access.allow(lattice_core::policy::Action::Administer)?;
        if row.erased_at.is_some() {
            return Err(Error::invalid_state("the file's bytes were erased already"));
        }
        let data =
            serde_json::json!({"file": row.id, "name": row.name, "type": row.media_type, "size": row.size, "sha256": row.sha256, "reason": reason});
        let audit = Audit { name: crate::files::FILE_ERASED.into(), data, once: Some(format!("erase:{}", row.id)) };
        let seq = match self.execute(who, Command::RecordAudit { thread, audit }).await {
            Ok(done) => done.seq,
            // The row was written by an erase whose deleting of the bytes
            // did not finish: this one finishes it, under that row.
            Err(Error::Conflict { .. }) => {
                let rows = self.audit_records(who, &row.workspace, crate::files::FILE_ERASED, 1000).await?;
                rows.iter()
                    .find(|e| matches!(&e.event, lattice_core::event::Event::AuditRecorded(a) if a.data["file"] == row.id))
                    .map_or(0, |e| e.seq)
            }
            Err(e) => return Err(e),
        };
        crate::store::files::erase(self.inner.files.db(), &row.tenant, &row.id, who.actor().name(), self.inner.files.now_ms()).await?;
        Ok(seq)
    }

    pub fn horizon(&self) -> &Horizon {
        &self.inner.horizon
    }

    pub(crate) fn parts(&self) -> &Parts {
        &self.inner.parts
    }

    /// The caller of a request: its `Authorization` header's token, verified
    /// and not ended by a sign-out. Every surface (the API, MCP) asks this.
    pub async fn authenticate(&self, header: Option<&[u8]>) -> Result<Authenticated, Error> {
        let who = self.inner.auth.verify_header(header)?;
        self.inner.sign_outs.check(&who, false).await?;
        Ok(who)
    }

    /// Whether `who`'s token still stands (no sign-out since it was
    /// issued), read afresh: what an open stream asks when access changes.
    pub async fn still_signed_in(&self, who: &Authenticated) -> Result<(), Error> {
        self.inner.sign_outs.check(who, true).await
    }

    /// Runs one command through the write path, as `who`.
    #[tracing::instrument(name = "log.execute", skip_all, fields(command = ?command.command_type(), user = %who.principal().user))]
    pub async fn execute(&self, who: &Authenticated, command: Command) -> Result<Committed, Error> {
        self.write(who, command, None).await
    }

    /// Runs one command with its audit row: both are written in one
    /// transaction, or neither is (no row, no effect; a row whose `once`
    /// key was used refuses the command with `Conflict`).
    #[tracing::instrument(name = "log.execute", skip_all, fields(command = ?command.command_type(), user = %who.principal().user))]
    pub async fn execute_audited(&self, who: &Authenticated, command: Command, audit: Audit) -> Result<Committed, Error> {
        limits::check_audit(&audit)?;
        self.write(who, command, Some(audit)).await
    }

    async fn write(&self, who: &Authenticated, command: Command, audit: Option<Audit>) -> Result<Committed, Error> {
        limits::check_command(&command)?;
        let mut command = command;
        // A command authorized from a remembered standing that no longer
        // holds is written nowhere and authorized again from the store; one
        // whose fresh standing changed before it was written, again.
        for fresh in [false, true, true] {
            match self.attempt(who, command, audit.as_ref(), fresh).await? {
                Attempt::Committed(committed) => return Ok(committed),
                Attempt::Changed(again) => command = again,
            }
        }
        Err(Error::Conflict {
            reason: "who may write in the thread changed while the command was written, three times over; try again".into(),
            expected: None,
            actual: None,
        })
    }

    async fn attempt(&self, who: &Authenticated, command: Command, audit: Option<&Audit>, fresh: bool) -> Result<Attempt, Error> {
        let inner = &*self.inner;
        let principal = who.principal();
        let command_type = command.command_type();
        let scope = authorize(&inner.db, &inner.registry, &inner.standings, principal, &command, fresh).await?;
        // The command as it came, to try again with if the standing it was
        // authorized from changes before it is written.
        let original = scope.standing.is_some().then(|| command.clone());
        // What checks read: the workspace as the principal sees it, with the
        // run authorization read (read once, whoever asks).
        let view = scope
            .access
            .clone()
            .map(|access| ScopedView::new(inner.db.clone(), inner.clock.clone(), principal.clone(), access, scope.run.clone(), scope.thread.clone()));
        // Who the envelope and the checks name: read once per command.
        let actor = who.actor();
        let checks = inner.registry.checks(command_type);
        let mut command = command;
        if let Some(view) = view.as_ref() {
            for check in checks {
                check.complete(view, &actor, &mut command).await;
            }
        }
        inner.gate.check(principal, &scope, view.as_ref(), &command).await?;
        // Registered checks (who may do this) run before the kind's own shape
        // checks, so a refusal says Forbidden before it says ValidationFailed.
        if let Some(view) = view.as_ref() {
            for check in checks {
                check.check(view, &actor, &command).await?;
            }
        }
        let preparing = Preparing { registry: &inner.registry, chains: inner.auth.chains(), now_ms: inner.clock.now_ms() };
        let effect = preparing.prepare(&scope, &command)?;
        let Some(committed) = inner.committer.commit(principal, &actor, &scope, effect, audit).await? else {
            // Only a standing stops a commit, and with one the command was kept.
            return original.map(Attempt::Changed).ok_or_else(|| Error::unavailable("a commit stopped without a standing"));
        };
        if let Command::EndSessions { user } = &command {
            inner.sign_outs.forget(principal.tenant.as_str(), user.as_str());
        }
        inner.committer.told(committed.seq);
        static COMMANDS: lattice_telemetry::Counter = lattice_telemetry::Counter::new("lattice.commands");
        COMMANDS.add(&[lattice_telemetry::KeyValue::new("command", format!("{command_type:?}"))]);
        Ok(Attempt::Committed(committed))
    }

    /// Answers `expired` to every open request whose deadline has passed by
    /// the service's clock, and answers how many this look answered: what
    /// the scheduler does every 500 ms; tests call it after moving the
    /// clock. On PostgreSQL it waits for another replica's look to end
    /// first, so what was due is answered when it returns.
    pub async fn expire_due(&self) -> Result<usize, Error> {
        self.inner.parts.deadlines.expire_due().await
    }

    /// The shared session table (the MCP transport's).
    pub fn sessions(&self) -> Sessions {
        Sessions::new(self.inner.db.clone(), self.inner.clock.clone())
    }

    /// Follows a thread or a workspace the caller can read, from `after`.
    /// Refuses at once what the caller may not see.
    pub async fn follow(&self, who: &Authenticated, follow: Follow, after: i64) -> Result<LiveEvents, Error> {
        self.inner.streams.follow(who, follow, after).await
    }

    /// Watches `who`'s access from now on.
    pub fn watch_access(&self, who: &Authenticated) -> AccessWatch {
        self.inner.streams.watch_access(who)
    }

    /// Follows the sequence number of the latest switch change the live
    /// streams have been handed: a switch stream recomputes effective
    /// values when it moves, and only then.
    pub fn switch_changes(&self) -> tokio::sync::watch::Receiver<i64> {
        self.inner.parts.fanout.switches()
    }

    /// What waits for the caller's answer: the artifacts that ask and the
    /// open requests by `tools`, in every thread where it may answer, at
    /// most `limit` ([`crate::WAITING_MAX`]), soonest deadline first.
    pub async fn waiting(&self, who: &Authenticated, tools: &[AskingTool], limit: usize) -> Result<Vec<WaitingItem>, Error> {
        self.inner.waiting.waiting(who, tools, limit).await
    }

    /// Follows what waits for the caller's answer: the list at once, and
    /// again whenever it changes; ends when the caller signs out.
    pub async fn follow_waiting(&self, who: &Authenticated, tools: Vec<AskingTool>, limit: usize) -> Result<WaitingStream, Error> {
        self.inner.waiting.follow(who, tools, limit).await
    }

    /// A run and its requests, for a caller who can read its thread.
    pub async fn run(&self, who: &Authenticated, run: &RunId) -> Result<RunView, Error> {
        self.inner.runs.run(who, run).await
    }

    /// The runs of a thread that wait for an answer.
    pub async fn paused_runs(&self, who: &Authenticated, thread: &ThreadId) -> Result<Vec<RunView>, Error> {
        self.inner.runs.paused_runs(who, thread).await
    }

    fn reads(&self) -> &Reads {
        &self.inner.parts.reads
    }

    /// The caller's workspaces: those it is a member of, or all of its
    /// tenant's for a tenant admin.
    pub async fn workspaces(&self, who: &Authenticated) -> Result<Vec<WorkspaceSummary>, Error> {
        self.reads().workspaces(who).await
    }

    /// The newest thread the caller can read, and its workspace.
    pub async fn latest_thread(&self, who: &Authenticated) -> Result<Option<(ThreadId, String)>, Error> {
        self.reads().latest_thread(who).await
    }

    /// The threads the caller can read whose id begins with `prefix`,
    /// newest first, at most `limit`, each with its workspace.
    pub async fn readable_threads(&self, who: &Authenticated, prefix: &str, limit: i64) -> Result<Vec<(ThreadId, String)>, Error> {
        self.reads().readable_threads(who, prefix, limit).await
    }

    /// How far the log is folded into what says a thread is unread
    /// (src/unread.rs): what a thread list reads past it, it reads from the
    /// log.
    pub async fn unread_folded(&self) -> Result<i64, Error> {
        crate::store::unread::folded(&self.inner.db).await
    }

    /// The workspace's threads the caller can read, newest first.
    pub async fn threads(&self, who: &Authenticated, workspace: &str) -> Result<Vec<ThreadSummary>, Error> {
        self.reads().threads(who, workspace).await
    }

    /// Marks the thread read by the caller as far as `seq`: the mark as it
    /// now stands.
    pub async fn mark_read(&self, who: &Authenticated, thread: &ThreadId, seq: i64) -> Result<i64, Error> {
        self.reads().mark_read(who, thread, seq).await
    }

    /// The threads the caller is listed on, newest first.
    pub async fn listed_threads(&self, who: &Authenticated) -> Result<Vec<ThreadAccess>, Error> {
        self.reads().listed_threads(who).await
    }

    /// The workspace's members and their roles, for its admins.
    pub async fn members(&self, who: &Authenticated, workspace: &str) -> Result<Vec<Listed>, Error> {
        self.reads().members(who, workspace).await
    }

    /// The people listed on a thread and their roles there, for its admins.
    pub async fn thread_members(&self, who: &Authenticated, thread: &ThreadId) -> Result<Vec<Listed>, Error> {
        self.reads().thread_members(who, thread).await
    }

    /// A thread the caller can read, and its role there.
    pub async fn thread(&self, who: &Authenticated, thread: &ThreadId) -> Result<ThreadAccess, Error> {
        self.reads().thread(who, thread).await
    }

    /// An artifact's head, or one of its versions.
    pub async fn artifact(&self, who: &Authenticated, id: &ArtifactId, version: Option<u64>) -> Result<ArtifactRow, Error> {
        self.reads().artifact(who, id, version).await
    }

    /// The artifacts of a thread the caller can read, optionally of one
    /// kind or one parent.
    pub async fn artifacts(
        &self,
        who: &Authenticated,
        thread: &ThreadId,
        kind: Option<&str>,
        parent: Option<&str>,
    ) -> Result<Vec<ArtifactRow>, Error> {
        self.reads().artifacts(who, thread, kind, parent).await
    }

    /// Up to `limit` of a thread's envelopes before `before`, never past
    /// `upto`, newest first: a thread's end read backwards.
    pub async fn thread_events_backwards(
        &self,
        who: &Authenticated,
        thread: &ThreadId,
        upto: i64,
        before: i64,
        limit: i64,
    ) -> Result<Vec<Envelope>, Error> {
        self.reads().thread_events_backwards(who, thread, upto, before, limit).await
    }

    /// Up to `limit` envelopes after `after`, never past the horizon.
    pub async fn events(&self, who: &Authenticated, follow: &Follow, after: i64, limit: i64) -> Result<Vec<Envelope>, Error> {
        self.reads().events(who, follow, after, limit).await
    }

    /// One audit row by its envelope id, if the caller can read its thread.
    pub async fn audit_record(&self, who: &Authenticated, id: &str) -> Result<Envelope, Error> {
        self.reads().audit_record(who, id).await
    }

    /// A workspace's audit rows named `name`, newest first, at most
    /// `limit`: for the workspace's admins.
    pub async fn audit_records(&self, who: &Authenticated, workspace: &str, name: &str, limit: i64) -> Result<Vec<Envelope>, Error> {
        self.reads().audit_records(who, workspace, name, limit).await
    }

    /// Each key's effective value in a workspace the caller can see, or
    /// one a thread shared with the caller is in.
    pub async fn effective(&self, who: &Authenticated, workspace: &str) -> Result<BTreeMap<SwitchKey, Effective>, Error> {
        self.reads().effective(who, workspace).await
    }

    /// Each key's effective value for the caller's tenant as a workspace
    /// that sets nothing would have it.
    pub async fn tenant_effective(&self, who: &Authenticated) -> Result<BTreeMap<SwitchKey, Effective>, Error> {
        self.reads().tenant_effective(who).await
    }

    /// The workspace a thread the caller can read is in.
    pub async fn thread_workspace(&self, who: &Authenticated, thread: &ThreadId) -> Result<String, Error> {
        self.reads().thread_workspace(who, thread).await
    }

    /// Every level the caller administers (REQUIREMENTS.md W7).
    pub async fn switch_levels(&self, who: &Authenticated) -> Result<Vec<LevelStates>, Error> {
        self.reads().switch_levels(who).await
    }

    /// The switch changes the caller administers, narrowed by `tenant` and
    /// `workspace`.
    pub async fn audit(&self, who: &Authenticated, tenant: Option<&str>, workspace: Option<&str>) -> Result<Vec<AuditRow>, Error> {
        self.reads().audit(who, tenant, workspace).await
    }

    /// The sequence number of the last switch change [`Self::audit`] would
    /// show the caller (0 when none).
    pub async fn last_audited(&self, who: &Authenticated) -> Result<i64, Error> {
        self.reads().last_audited(who).await
    }
}

/// What a reader of an erased file is told.
fn erased(row: &crate::store::files::FileRow, at: i64) -> Error {
    Error::invalid_state(format!(
        "the file's bytes were erased by {} at {}: its reference stays",
        row.erased_by.as_deref().unwrap_or("an admin"),
        crate::clock::rfc3339(at)
    ))
}

/// One try at writing a command.
enum Attempt {
    Committed(Committed),
    /// What the command was authorized from changed before it was
    /// written: nothing was, and here is the command to try again.
    Changed(Command),
}

//! The one write path (REQUIREMENTS.md L1, L2): authenticate → authorize → integration
//! gate → checks → commit. Every state change in lattice is a [`Command`]
//! run through [`LogService::execute`]; nothing else writes.

use std::collections::BTreeMap;
use std::sync::Arc;

use lattice_core::kind::{SharedCheck, SharedKind};
use lattice_core::{Audit, Command, CommandType, Error, Integrations};

use crate::auth::{Authenticated, Authenticator};
use crate::db::Db;
use crate::horizon::Horizon;
use crate::limits;
use crate::switches::SwitchStore;
use crate::trusted::Trusted;
use crate::view::ScopedView;

/// What a committed command produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Committed {
    pub seq: i64,
    pub envelope_id: String,
    /// The id of what was created or changed (workspace, thread, artifact).
    pub id: Option<String>,
    pub version: Option<u64>,
    pub digest: Option<String>,
}

/// The log service. Cheap to clone; all clones share one pool and registry.
#[derive(Clone)]
pub struct LogService {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) db: Db,
    pub(crate) auth: Authenticator,
    pub(crate) kinds: BTreeMap<String, SharedKind>,
    pub(crate) checks: BTreeMap<CommandType, Vec<SharedCheck>>,
    pub(crate) switches: SwitchStore,
    pub(crate) sign_outs: crate::sign_outs::SignOuts,
    pub(crate) horizon: Horizon,
    pub(crate) fanout: crate::fanout::Fanout,
    /// Runs the deadline scheduler answered a request of.
    pub(crate) expirations: tokio::sync::broadcast::Sender<crate::deadlines::Expired>,
}

/// Registers kinds and checks, then starts the service.
pub struct Builder {
    db: Db,
    auth: Authenticator,
    kinds: BTreeMap<String, SharedKind>,
    checks: BTreeMap<CommandType, Vec<SharedCheck>>,
    idle_poll: std::time::Duration,
}

impl Builder {
    /// Registers an artifact kind; a later registration of the same name wins.
    pub fn kind(mut self, kind: SharedKind) -> Self {
        self.kinds.insert(kind.name().to_owned(), kind);
        self
    }

    /// Adds a check for one command type (L5). Checks run in the order added.
    pub fn check(mut self, command: CommandType, check: SharedCheck) -> Self {
        self.checks.entry(command).or_default().push(check);
        self
    }

    /// How often the log is looked at when no commit is heard of (200 ms by
    /// default). Other replicas' commits are heard of through PostgreSQL's
    /// `NOTIFY`; this is the fallback for one lost with a connection.
    pub fn idle_poll(mut self, every: std::time::Duration) -> Self {
        self.idle_poll = every;
        self
    }

    /// Starts the service, with the trust lattice's own in-process parts
    /// act with (the runner, the demo's seed): see [`Trusted`].
    pub fn start_trusted(self) -> (LogService, Trusted) {
        let log = self.start();
        (log.clone(), Trusted::new(log))
    }

    /// Starts the service and its horizon tracker (which needs a Tokio runtime).
    pub fn start(self) -> LogService {
        let horizon = Horizon::start(self.db.clone(), self.idle_poll);
        let fanout = crate::fanout::Fanout::start(self.db.clone(), horizon.watch());
        horizon.followed_while(fanout.listening());
        let log = LogService {
            inner: Arc::new(Inner {
                fanout,
                expirations: tokio::sync::broadcast::channel(256).0,
                switches: SwitchStore::new(self.db.clone()),
                sign_outs: crate::sign_outs::SignOuts::new(self.db.clone()),
                db: self.db,
                auth: self.auth,
                kinds: self.kinds,
                checks: self.checks,
                horizon,
            }),
        };
        crate::deadlines::start(Arc::downgrade(&log.inner));
        log
    }
}

impl LogService {
    pub fn builder(db: Db, auth: Authenticator) -> Builder {
        Builder { db, auth, kinds: BTreeMap::new(), checks: BTreeMap::new(), idle_poll: crate::horizon::IDLE_POLL }
    }

    pub fn db(&self) -> &Db {
        &self.inner.db
    }

    pub fn authenticator(&self) -> &Authenticator {
        &self.inner.auth
    }

    /// The switch store, which answers the Integrations port.
    pub fn integrations(&self) -> &dyn Integrations {
        &self.inner.switches
    }

    pub fn horizon(&self) -> &Horizon {
        &self.inner.horizon
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
        let principal = who.principal();
        let command_type = command.command_type();
        limits::check_command(&command)?;
        let scope = self.authorize(principal, &command).await?;
        // What checks read: the workspace as the principal sees it, with the
        // run authorization read (read once, whoever asks).
        let view =
            scope.access.clone().map(|access| ScopedView::new(self.clone(), principal.clone(), access, scope.run.clone(), scope.thread.clone()));
        // Who the envelope and the checks name: read once per command.
        let actor = who.actor();
        let mut command = command;
        if let (Some(checks), Some(view)) = (self.inner.checks.get(&command_type), view.as_ref()) {
            for check in checks {
                check.complete(view, &actor, &mut command).await;
            }
        }
        self.gate(principal, &scope, view.as_ref(), &command).await?;
        // Registered checks (who may do this) run before the kind's own shape
        // checks, so a refusal says Forbidden before it says ValidationFailed.
        self.run_checks(&actor, view.as_ref(), &command).await?;
        let effect = self.prepare(&scope, &command)?;
        let committed = self.commit(principal, &actor, &scope, effect, audit.as_ref()).await?;
        if let Command::EndSessions { user } = &command {
            self.inner.sign_outs.forget(principal.tenant.as_str(), user.as_str());
        }
        self.inner.horizon.committed(committed.seq);
        static COMMANDS: lattice_telemetry::Counter = lattice_telemetry::Counter::new("lattice.commands");
        COMMANDS.add(&[lattice_telemetry::KeyValue::new("command", format!("{command_type:?}"))]);
        Ok(committed)
    }

    pub(crate) fn kind(&self, kind: &str) -> Result<&SharedKind, Error> {
        self.inner.kinds.get(kind).ok_or_else(|| {
            let known: Vec<&str> = self.inner.kinds.keys().map(String::as_str).collect();
            Error::field("kind", "enum", format!("unknown kind {kind:?}; known kinds: {}", known.join(", ")))
        })
    }

    async fn run_checks(&self, actor: &lattice_core::Actor, view: Option<&ScopedView>, command: &Command) -> Result<(), Error> {
        let (Some(checks), Some(view)) = (self.inner.checks.get(&command.command_type()), view) else { return Ok(()) };
        for check in checks {
            check.check(view, actor, command).await?;
        }
        Ok(())
    }
}

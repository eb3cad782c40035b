//! What lattice's own in-process parts may do that no request may: act as
//! a principal without a token, and read runs without an access check.
//! Handed out by the log's builder ([`crate::Builder::start_trusted`]) to
//! whoever starts the service, which gives it to the runner and to the
//! demo's seed; no other crate can make one.

use lattice_core::clock::SharedClock;
use lattice_core::event::{AppContextSet, Event};
use lattice_core::{Error, Level, Principal, RunId, TenantId, WorkspaceId};

use crate::auth::Authenticated;
use crate::deadlines::{Deadlines, Expired};
use crate::fanout::Fanout;
use crate::reads::{LevelStates, Reads};
use crate::service::{Builder, LogService};
use crate::store::{Db, RunRow, envelopes, load_artifact, runs};
use crate::subscribers::Passing;
use crate::switches::SwitchStore;

/// The apps of a thread whose context a model call reads, at most.
pub const APP_CONTEXTS: i64 = 8;

/// The log service's trust in its own process. Reads the store, the
/// switch levels through [`Reads`], the deadlines' expirations, the
/// fan-out (to pass what is not kept) and the log's clock (leases).
#[derive(Clone)]
pub struct Trusted {
    log: LogService,
    db: Db,
    reads: Reads,
    switches: SwitchStore,
    fanout: Fanout,
    deadlines: Deadlines,
    connections: crate::connections::ServerConnections,
    clock: SharedClock,
}

impl Builder {
    /// Starts the service, with the trust lattice's own in-process parts
    /// act with (the runner, the demo's seed): see [`Trusted`].
    pub fn start_trusted(self) -> (LogService, Trusted) {
        let log = self.start();
        (log.clone(), Trusted::new(log))
    }
}

impl Trusted {
    fn new(log: LogService) -> Self {
        let parts = log.parts();
        Self {
            db: log.db().clone(),
            reads: parts.reads.clone(),
            switches: parts.switches.clone(),
            fanout: parts.fanout.clone(),
            deadlines: parts.deadlines.clone(),
            connections: parts.connections.clone(),
            clock: log.clock().clone(),
            log,
        }
    }

    /// For lattice's own tests, which act as anyone.
    #[cfg(feature = "testing")]
    pub fn for_tests(log: &LogService) -> Self {
        Self::new(log.clone())
    }

    pub fn log(&self) -> &LogService {
        &self.log
    }

    /// Vouches for a principal without a token: an agent's run acting as
    /// its agent, the demo's seed as its people.
    pub fn vouch(&self, principal: Principal) -> Authenticated {
        Authenticated::trusted(principal)
    }

    /// A part of lattice named `name` (an operator's command line), acting
    /// with `principal`'s rights: its envelopes name it as a system actor.
    pub fn operator(&self, name: String, principal: Principal) -> Authenticated {
        Authenticated::system(name, principal)
    }

    /// The runs the deadline scheduler answers a request of, from now on.
    pub fn expirations(&self) -> tokio::sync::broadcast::Receiver<Expired> {
        self.deadlines.subscribe()
    }

    /// Paused runs whose every request is answered: the resume that should
    /// have followed the last answer was lost (a stop between the two, or
    /// a deadline's answer no runner heard). Each with who answered last
    /// (`None` for the deadline scheduler).
    pub async fn answered_paused_runs(&self) -> Result<Vec<(TenantId, RunRow, Option<String>)>, Error> {
        let mut out = Vec::new();
        for (tenant, run) in runs::answered_paused(&self.db).await? {
            // The last answer's actor: a person, or lattice itself.
            let last = envelopes::last_answer(&self.db, tenant.as_str(), &run.id).await?;
            let by = match last.map(|e| e.actor) {
                Some(lattice_core::Actor::Person { user, .. } | lattice_core::Actor::Agent { user, .. }) => Some(user.to_string()),
                _ => None,
            };
            out.push((tenant, run, by));
        }
        Ok(out)
    }

    /// Puts something the log does not keep on the live streams of a
    /// thread (a model's reply as it is written): the runner's, for the
    /// threads of the runs it drives.
    pub fn pass(&self, thread: &lattice_core::ThreadId, passing: Passing) {
        self.fanout.pass(thread.as_str(), passing);
    }

    /// The tenant a workspace belongs to, if it exists.
    pub async fn workspace_tenant(&self, workspace: &WorkspaceId) -> Result<Option<TenantId>, Error> {
        let tenant = crate::store::access::workspace_tenant(&self.db, workspace.as_str()).await?;
        Ok(tenant.map(TenantId::from_trusted))
    }

    /// What a person's sign-in to a connected server gave, opened: for
    /// lattice's MCP client acting for that person alone.
    pub async fn server_connection(&self, tenant: &str, user: &str, server: &str) -> Result<Option<String>, Error> {
        self.connections.load(tenant, user, server).await
    }

    pub async fn save_server_connection(&self, tenant: &str, user: &str, server: &str, plain: &str) -> Result<(), Error> {
        self.connections.save(tenant, user, server, plain).await
    }

    pub async fn clear_server_connection(&self, tenant: &str, user: &str, server: &str) -> Result<bool, Error> {
        self.connections.clear(tenant, user, server).await
    }

    /// Keeps a person's sign-in to a server begun, for `ttl`.
    pub async fn begin_server_sign_in(
        &self,
        state: &str,
        tenant: &str,
        user: &str,
        server: &str,
        plain: &str,
        ttl: std::time::Duration,
    ) -> Result<(), Error> {
        self.connections.begin(state, tenant, user, server, plain, ttl).await
    }

    /// A sign-in to a server begun: (tenant, user, server, what was kept).
    pub async fn server_sign_in(&self, state: &str) -> Result<Option<(String, String, String, String)>, Error> {
        self.connections.attempt(state).await
    }

    /// Takes a sign-in to a server begun: once.
    pub async fn finish_server_sign_in(&self, state: &str) -> Result<bool, Error> {
        self.connections.finish(state).await
    }

    /// Whether `key` is on for `tenant` as a workspace that sets nothing
    /// would have it: the deployment's and the tenant's levels, and whether
    /// the server is offered to the tenant at all.
    pub async fn on_for_tenant(&self, tenant: &TenantId, key: lattice_core::SwitchKey) -> Result<bool, Error> {
        let switches = &self.switches;
        if let lattice_core::SwitchKey::Server(server) = key
            && !switches.connected().offers(server, tenant)
        {
            return Ok(false);
        }
        let levels = [Level::Deployment, Level::Tenant(tenant.clone())];
        let states = switches.states_of(&levels, &[key]).await?;
        let (d, t) = (states[0][0], states[1][0]);
        Ok(lattice_core::integrations::resolve(key, d, t, lattice_core::SwitchState::Unset).enabled)
    }

    pub async fn switch_levels(&self, only: Option<Level>) -> Result<Vec<LevelStates>, Error> {
        let levels = match only {
            Some(level) => vec![level],
            None => self.switches.levels_held().await?,
        };
        let mut out = Vec::with_capacity(levels.len());
        for level in levels {
            let name = level.to_string();
            out.push(self.reads.level_states(level, name).await?);
        }
        Ok(out)
    }

    /// Every envelope of a run, in order: what the runner rebuilds a
    /// conversation from.
    pub async fn run_log(&self, tenant: &TenantId, run: &RunId) -> Result<Vec<lattice_core::Envelope>, Error> {
        envelopes::of_run(&self.db, tenant.as_str(), run.as_str()).await
    }

    /// What the apps of a thread last told the agent, one per app (the
    /// newest), oldest first; apps archived since are left out. At most
    /// [`APP_CONTEXTS`] apps: the thread's newest.
    pub async fn app_contexts(&self, tenant: &TenantId, thread: &str) -> Result<Vec<AppContextSet>, Error> {
        let envelopes = envelopes::app_contexts(&self.db, tenant.as_str(), thread, APP_CONTEXTS * 4).await?;
        let mut newest: Vec<AppContextSet> = Vec::new();
        for envelope in envelopes {
            if let Event::AppContextSet(said) = envelope.event
                && !newest.iter().any(|n| n.artifact_id == said.artifact_id)
                && newest.len() < APP_CONTEXTS as usize
            {
                newest.push(said);
            }
        }
        let mut kept = Vec::with_capacity(newest.len());
        for said in newest.into_iter().rev() {
            let Ok(id) = lattice_core::ArtifactId::parse("artifact", &said.artifact_id) else { continue };
            if load_artifact(&self.db, tenant, &id, None).await?.is_some_and(|a| !a.archived) {
                kept.push(said);
            }
        }
        Ok(kept)
    }

    /// A file as a run's agent is shown it: its reference, whether it was
    /// erased, and for a text file its first `text_bytes` bytes (cut at a
    /// character). The file must be of `workspace`.
    pub async fn file_for_agent(
        &self,
        tenant: &TenantId,
        workspace: &str,
        id: &str,
        text_bytes: usize,
    ) -> Result<Option<(lattice_core::FileRef, bool, Option<String>)>, Error> {
        let Some(row) = crate::store::files::head(&self.db, tenant.as_str(), id).await?.filter(|r| r.complete && r.workspace == workspace) else {
            return Ok(None);
        };
        let erased = row.erased_at.is_some();
        let text = if !erased && row.media_type == "text/plain" {
            let chunks = text_bytes.div_ceil(crate::files::CHUNK_BYTES).max(1) as i64;
            let mut bytes = crate::store::files::chunks(&self.db, &row.tenant, &row.id, 0, chunks).await?.concat();
            bytes.truncate(text_bytes);
            let text = match String::from_utf8(bytes) {
                Ok(text) => text,
                Err(e) => {
                    let valid = e.utf8_error().valid_up_to();
                    let mut bytes = e.into_bytes();
                    bytes.truncate(valid);
                    String::from_utf8(bytes).unwrap_or_default()
                }
            };
            Some(text)
        } else {
            None
        };
        Ok(Some((row.reference(), erased, text)))
    }

    /// A run's read model, without an access check.
    pub async fn run_state(&self, tenant: &TenantId, run: &RunId) -> Result<Option<RunRow>, Error> {
        runs::load_run(&self.db, tenant, run).await
    }

    /// Running runs that no runner drives: their lease is free or has
    /// expired (a stop, a crash, a replica gone).
    pub async fn orphaned_runs(&self) -> Result<Vec<(TenantId, RunRow)>, Error> {
        runs::orphaned(&self.db, self.clock.now_ms()).await
    }

    /// Takes, or renews, the lease on driving a running run for `ttl`:
    /// granted while the run is running and its lease is free, expired or
    /// already `holder`'s. A runner drives a run only while it holds this.
    pub async fn lease_run(&self, tenant: &TenantId, run: &RunId, holder: &str, ttl: std::time::Duration) -> Result<bool, Error> {
        let now = self.clock.now_ms();
        runs::lease(&self.db, tenant, run, holder, now, now + ttl.as_millis() as i64).await
    }

    /// Gives a run's lease back, if `holder` has it.
    pub async fn release_run(&self, tenant: &TenantId, run: &RunId, holder: &str) -> Result<(), Error> {
        runs::release(&self.db, tenant, run, holder).await
    }

    /// The principal a run's current segment acts as: the agent, for the
    /// person it acts for, in that run, within what the run's starter may
    /// do (an admin's answer lends the run no admin's rights). For
    /// lattice's runner.
    pub fn principal_for(&self, tenant: &TenantId, run: &RunRow) -> Principal {
        let within = (run.acting_for != run.started_by)
            .then(|| lattice_core::Within { user: lattice_core::UserId::from_trusted(run.started_by.clone()), role: run.started_role });
        Principal {
            tenant: tenant.clone(),
            user: lattice_core::UserId::from_trusted(run.acting_for.clone()),
            role: run.acting_role,
            agent: true,
            run: Some(RunId::from_trusted(run.id.clone())),
            within,
            scope: None,
        }
    }
}

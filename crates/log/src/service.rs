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
use lattice_core::switch_audit::AuditEntry;
use lattice_core::{ArtifactId, Audit, Command, CommandType, Effective, Envelope, Error, Integrations, RunId, SwitchKey, ThreadId};

use lattice_core::directory::{KEY_ID_PREFIX, KeyScope, NewApiKey, SignedInPerson};
use lattice_core::identity::{Audience, GroupRules, TokenIssuers};
use lattice_core::{Principal, TenantId, TenantRole, UserId};

use crate::auth::{Authenticated, Authenticator, Via};
use crate::authorize::authorize;
use crate::bearer::{API_KEY_PREFIX, Bearers, SCIM_TOKEN_PREFIX};
use crate::commit::{Committed, Committer};
use crate::credentials::Credentials;
use crate::deadlines::Deadlines;
use crate::digest::secret_digest;
use crate::directory::Directory;
use crate::fanout::Fanout;
use crate::gate::Gate;
use crate::horizon::{Horizon, IDLE_POLL};
use crate::limits;
use crate::live::{AccessWatch, LiveEvents, Streams};
use crate::prepare::Preparing;
use crate::reads::{Follow, LevelStates, Reads, ThreadAccess};
use crate::receipts::{PROOF_RECHECK, PROOF_WAIT, Receipts};
use crate::registry::Registry;
use crate::runs::{RunView, Runs};
use crate::sealed::Sealed;
use crate::sessions::Sessions;
use crate::sign_in::{SessionLimits, SessionToken, SignIns, random_secret};
use crate::store::credentials::CredentialRow;
use crate::store::groups::GroupRow;
use crate::store::people::PersonRow;
use crate::store::sign_ins::Attempt as SignInAttempt;
use crate::store::{ArtifactRow, Db, Listed, ThreadSummary, WorkspaceSummary};
use crate::switches::SwitchStore;
use crate::view::ScopedView;
use crate::waiting::{AskingTool, WaitingItem, WaitingReads, WaitingStream};

/// Who closes a connected server's question nobody answered, as its
/// answer's author says.
pub const QUESTION_ACTOR: &str = "lattice";

/// The log service. Cheap to clone; all clones share one pool and registry.
#[derive(Clone)]
pub struct LogService {
    inner: Arc<Inner>,
}

struct Inner {
    db: Db,
    auth: Authenticator,
    bearers: Bearers,
    /// How groups become tenant roles (the directory's writers keep each
    /// person's role by them).
    rules: Arc<GroupRules>,
    sign_ins: SignIns,
    directory: Directory,
    clock: SharedClock,
    registry: Arc<Registry>,
    credentials: Arc<Credentials>,
    horizon: Horizon,
    gate: Gate,
    committer: Committer,
    runs: Runs,
    streams: Streams,
    waiting: WaitingReads,
    files: crate::files::Files,
    /// What the seal proves, read.
    receipts: Receipts,
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
    /// People's sign-ins to connected servers.
    pub connections: crate::connections::ServerConnections,
}

/// Registers kinds and checks, then starts the service.
pub struct Builder {
    db: Db,
    auth: Authenticator,
    registry: Registry,
    idle_poll: std::time::Duration,
    proof_recheck: std::time::Duration,
    clock: Option<SharedClock>,
    connected: lattice_core::Connected,
    file_limits: crate::files::FileLimits,
    issuers: Option<Arc<dyn TokenIssuers>>,
    rules: GroupRules,
    session_limits: SessionLimits,
}

impl Builder {
    /// The identity providers whose tokens the deployment takes (R6), and
    /// how their groups become roles.
    pub fn identity(mut self, issuers: Arc<dyn TokenIssuers>, rules: GroupRules) -> Self {
        self.issuers = Some(issuers);
        self.rules = rules;
        self
    }

    /// How long sign-in sessions and their tokens last.
    pub fn session_limits(mut self, limits: SessionLimits) -> Self {
        self.session_limits = limits;
        self
    }

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

    /// How often a wait for a proof ([`LogService::proof_when_sealed`])
    /// looks again when no seal was heard of (250 ms by default). A seal is
    /// heard of at once (this process's sealer tells it; on PostgreSQL
    /// another replica's says it with `NOTIFY`): this is the fallback for a
    /// seal not heard of.
    pub fn proof_recheck(mut self, every: std::time::Duration) -> Self {
        self.proof_recheck = every;
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
        let credentials = Arc::new(Credentials::new(db.clone(), clock.clone()));
        let bearers = Bearers { auth: auth.clone(), issuers: self.issuers, credentials: credentials.clone() };
        let sign_ins = SignIns::new(db.clone(), clock.clone(), self.session_limits);
        let directory = Directory::new(db.clone());
        let committer = Committer::new(db.clone(), clock.clone(), horizon.clone());
        let deadlines = Deadlines::new(db.clone(), clock.clone(), committer.clone());
        let reads = Reads::new(db.clone(), horizon.clone(), switches.clone());
        let streams = Streams::new(db.clone(), reads.clone(), credentials.clone(), fanout.clone(), horizon.clone());
        let waiting = WaitingReads::new(db.clone(), clock.clone(), registry.clone(), credentials.clone(), fanout.clone());
        deadlines.start();
        let unread = crate::unread::start(db.clone(), horizon.clone(), clock.clone());
        let files = crate::files::Files::new(db.clone(), clock.clone(), switches.clone(), self.file_limits);
        let receipts = Receipts::new(db.clone(), clock.clone(), Sealed::new(db.clone()), self.proof_recheck);
        LogService {
            inner: Arc::new(Inner {
                files,
                receipts,
                gate: Gate::new(registry.clone(), switches.clone()),
                runs: Runs::new(db.clone()),
                parts: Parts {
                    switches,
                    fanout,
                    deadlines,
                    reads,
                    connections: crate::connections::ServerConnections::new(db.clone(), clock.clone(), auth.connections_key()),
                },
                db,
                auth,
                bearers,
                rules: Arc::new(self.rules),
                sign_ins,
                directory,
                clock,
                registry,
                credentials,
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
            proof_recheck: PROOF_RECHECK,
            clock: None,
            connected: Default::default(),
            file_limits: Default::default(),
            issuers: None,
            rules: GroupRules::default(),
            session_limits: SessionLimits::default(),
        }
    }

    /// The database, for the parts of this crate alone: everything else
    /// reaches it through the methods below, as a caller
    /// (`xtask/src/front_door.rs` keeps it so).
    pub(crate) fn db(&self) -> &Db {
        &self.inner.db
    }

    /// Whether the database answers: what readiness asks.
    pub async fn ping(&self) -> Result<(), Error> {
        self.inner.db.ping().await
    }

    /// Closes the database's connections, for a process that stops: every
    /// clone of the service is done with them.
    pub async fn close(&self) {
        self.inner.db.close().await;
    }

    /// How far the log is sealed, for a sealer in this process to tell.
    pub(crate) fn sealed(&self) -> &Sealed {
        self.inner.receipts.sealed()
    }

    /// The receipt of the envelope `seq` (docs/SEAL.md), for whoever may
    /// read where it was written; `InvalidState` until it is sealed.
    pub async fn receipt(&self, who: &Authenticated, seq: i64) -> Result<lattice_seal::Receipt, Error> {
        self.inner.receipts.receipt(who, seq).await
    }

    /// The receipt of `seq` for an answer to carry (MCP's, AG-UI's, an app
    /// call's): [`Self::proof_when_sealed`] within [`PROOF_WAIT`].
    pub async fn proof(&self, who: &Authenticated, seq: i64) -> Result<Option<lattice_seal::Receipt>, Error> {
        self.proof_when_sealed(who, seq, PROOF_WAIT).await
    }

    /// The receipt of `seq` as soon as it is sealed, waited for up to
    /// `within` while a sealer leads: handed over when the seal is heard
    /// of, not polled for. `None` when it is not sealed by then, or when
    /// nothing seals this log (the answer then carries its `seq`, and
    /// `GET /v1/receipts/{seq}` gives the receipt later).
    pub async fn proof_when_sealed(
        &self,
        who: &Authenticated,
        seq: i64,
        within: std::time::Duration,
    ) -> Result<Option<lattice_seal::Receipt>, Error> {
        self.inner.receipts.proof_when_sealed(who, seq, within).await
    }

    /// A workspace's signed checkpoints after its chain's `after`th
    /// envelope, oldest first, at most [`crate::seal::CHECKPOINTS_LISTED`],
    /// for whoever may read the workspace.
    pub async fn checkpoints(&self, who: &Authenticated, workspace: &str, after: i64) -> Result<Vec<lattice_seal::Checkpoint>, Error> {
        self.inner.receipts.checkpoints(who, workspace, after).await
    }

    /// A workspace's newest signed checkpoint, for whoever may read it;
    /// `InvalidState` while nothing of it is sealed yet.
    pub async fn latest_checkpoint(&self, who: &Authenticated, workspace: &str) -> Result<lattice_seal::Checkpoint, Error> {
        self.inner.receipts.latest_checkpoint(who, workspace).await
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
            return Err(Error::forbidden(lattice_core::Code::FileLinkInvalid, "the file's link was given for another file"));
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
            return Err(Error::invalid_state(lattice_core::Code::FileErased, "the file's bytes were erased already"));
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

    /// The caller of a request to the API: its `Authorization` header's
    /// token (lattice's own, an API key, or a configured provider's issued
    /// to lattice's client), verified, and not ended since.
    pub async fn authenticate(&self, header: Option<&[u8]>) -> Result<Authenticated, Error> {
        self.inner.bearers.authenticate(header, Audience::Api).await
    }

    /// The caller of a request to `audience` (`/mcp` also takes a
    /// provider's token issued for lattice's MCP resource).
    pub async fn authenticate_for(&self, header: Option<&[u8]>, audience: Audience) -> Result<Authenticated, Error> {
        self.inner.bearers.authenticate(header, audience).await
    }

    /// A SCIM client, by the tenant's SCIM token: it acts as the
    /// directory's admin (`scim:<token>`), for the directory alone.
    pub async fn authenticate_scim(&self, header: Option<&[u8]>) -> Result<Authenticated, Error> {
        self.inner.bearers.scim_client(header).await
    }

    /// How long sign-in sessions and their tokens last.
    pub fn session_limits(&self) -> SessionLimits {
        self.inner.sign_ins.limits()
    }

    /// Keeps what a sign-in begun at `provider` with `state` needs when the
    /// browser comes back (the nonce, the PKCE verifier, the digest of the
    /// page's binding secret).
    pub async fn begin_sign_in(&self, state: String, provider: &str, nonce: String, verifier: String, binding: Option<String>) -> Result<(), Error> {
        self.inner.sign_ins.begin(state, provider, nonce, verifier, binding).await
    }

    /// Ends the sign-in session `who`'s token names (signing out in the
    /// chat): its tokens refused from now on, its streams ended. Answers the
    /// provider it was opened through.
    pub async fn end_session(&self, who: &Authenticated) -> Result<Option<String>, Error> {
        let Some(session) = who.session() else {
            return Err(Error::invalid_state(
                lattice_core::Code::NotASignInToken,
                "this token is no sign-in's: `POST /v1/people/{user}/sign-out` ends every token of a person",
            ));
        };
        let provider = self.inner.sign_ins.provider_of(who).await?;
        let user = who.principal().user.clone();
        self.execute(who, Command::EndSessions { user, session: Some(session.to_owned()) }).await?;
        Ok(provider)
    }

    /// The sign-in `state` names, once.
    pub async fn take_sign_in(&self, state: &str) -> Result<SignInAttempt, Error> {
        self.inner.sign_ins.take(state).await
    }

    /// Records a person's sign-in through a provider whose ID token the
    /// caller verified: the person created at their first, their groups
    /// and role as the token gives them (the directory's, when it holds
    /// them); a person the directory made inactive is refused. Answers the
    /// one-time code the browser trades for its first token.
    pub async fn sign_in(
        &self,
        tenant: &TenantId,
        person: SignedInPerson,
        subject: &str,
        provider_sid: Option<&str>,
        binding: Option<&str>,
    ) -> Result<String, Error> {
        let user = self.inner.sign_ins.user_for(tenant, &person.user_name).await?;
        let provider = person.provider.clone();
        let principal =
            Principal { tenant: tenant.clone(), user: user.clone(), role: TenantRole::Member, agent: false, run: None, within: None, scope: None };
        let who = Authenticated::system(format!("sign-in:{provider}"), principal);
        self.execute(&who, Command::RecordSignIn { person }).await?;
        self.apply_group_rules(tenant, std::slice::from_ref(&user)).await?;
        self.inner.sign_ins.open(tenant, &user, &provider, subject, provider_sid, binding).await
    }

    /// Puts each of `people` in the workspaces the group rules give them a
    /// role in, at that role, and takes them out of those the rules name
    /// but give them nothing in: each change a command of the system actor
    /// `directory`. A workspace a rule names that does not exist is passed
    /// over (and said in the log's output).
    pub async fn apply_group_rules(&self, tenant: &TenantId, people: &[UserId]) -> Result<(), Error> {
        let rules = &self.inner.rules;
        if rules.workspaces.is_empty() {
            return Ok(());
        }
        let admin = Principal {
            tenant: tenant.clone(),
            user: UserId::from_trusted("directory".to_owned()),
            role: TenantRole::TenantAdmin,
            agent: false,
            run: None,
            within: None,
            scope: None,
        };
        let directory = Authenticated::system("directory".to_owned(), admin);
        for user in people {
            let groups = self.inner.directory.all_groups_of(tenant.as_str(), user.as_str()).await?;
            for (workspace, wanted) in rules.workspace_roles(tenant, &groups) {
                let now = crate::store::access::member_role(&self.inner.db, workspace.as_str(), user.as_str()).await?;
                let command = match (now.as_deref().and_then(lattice_core::Role::parse), wanted) {
                    (now, Some(role)) if now != Some(role) => Command::AddMember { workspace: workspace.clone(), user: user.clone(), role },
                    (Some(_), None) => Command::RemoveMember { workspace: workspace.clone(), user: user.clone() },
                    _ => continue,
                };
                match self.execute(&directory, command).await {
                    Ok(_) => {}
                    Err(Error::NotFound) => tracing::warn!(%workspace, "a group rule names a workspace that does not exist"),
                    // A rule never leaves a workspace without an admin: the
                    // person keeps the role until another holds it.
                    Err(Error::InvalidState { reason, .. }) => tracing::warn!(%workspace, %user, %reason, "a group rule is not applied"),
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(())
    }

    /// Trades a sign-in's one-time code (and the secret of the page that
    /// began it) for the session's first token.
    pub async fn redeem_sign_in(&self, code: &str, binding: Option<&str>) -> Result<SessionToken, Error> {
        self.inner.sign_ins.redeem(&self.inner.auth, code, binding).await
    }

    /// A new token for the sign-in session `who`'s token names, while the
    /// session stands (its person active, not signed out, within its life).
    pub async fn renew_session(&self, who: &Authenticated) -> Result<SessionToken, Error> {
        self.inner.sign_ins.renew(&self.inner.auth, &self.inner.credentials, who).await
    }

    /// Signs out everyone a provider's session signed in (its back-channel
    /// logout: the `sid` it names, or all sessions of its subject):
    /// everywhere, as `oidc:<provider>`. Answers how many people.
    pub async fn provider_signed_out(&self, provider: &str, subject: Option<&str>, sid: Option<&str>) -> Result<usize, Error> {
        let people = self.inner.sign_ins.signed_in_by(provider, subject, sid).await?;
        for (tenant, user) in &people {
            let user = UserId::from_trusted(user.clone());
            let principal = Principal {
                tenant: TenantId::from_trusted(tenant.clone()),
                user: user.clone(),
                role: TenantRole::Member,
                agent: false,
                run: None,
                within: None,
                scope: None,
            };
            let who = Authenticated::system(format!("oidc:{provider}"), principal);
            self.execute(&who, Command::EndSessions { user, session: None }).await?;
        }
        Ok(people.len())
    }

    /// A person of the caller's tenant's directory (its admins).
    pub async fn directory_person(&self, who: &Authenticated, user: &str) -> Result<PersonRow, Error> {
        self.inner.directory.person(who, user).await
    }

    /// The person of the caller's tenant's directory named `name`,
    /// whatever its case (its admins).
    pub async fn directory_person_named(&self, who: &Authenticated, name: &str) -> Result<Option<PersonRow>, Error> {
        self.inner.directory.person_named(who, name).await
    }

    /// Up to `limit` people of the directory after `after`, by id.
    pub async fn directory_people(&self, who: &Authenticated, after: &str, limit: i64) -> Result<Vec<PersonRow>, Error> {
        self.inner.directory.people(who, after, limit).await
    }

    /// A page of the directory's people from the `offset`th (by id), and
    /// how many it holds.
    pub async fn directory_people_at(&self, who: &Authenticated, offset: i64, limit: i64) -> Result<(Vec<PersonRow>, i64), Error> {
        self.inner.directory.people_at(who, offset, limit).await
    }

    /// Every membership of the directory's groups: (person, group id, name).
    pub async fn directory_memberships(&self, who: &Authenticated) -> Result<Vec<(String, String, String)>, Error> {
        self.inner.directory.memberships(who).await
    }

    pub async fn directory_group(&self, who: &Authenticated, id: &str) -> Result<GroupRow, Error> {
        self.inner.directory.group(who, id).await
    }

    /// Up to `limit` groups of the directory after `after`, by id.
    pub async fn directory_groups(&self, who: &Authenticated, after: &str, limit: i64) -> Result<Vec<GroupRow>, Error> {
        self.inner.directory.groups(who, after, limit).await
    }

    /// The groups a person of the directory is in: (id, display name).
    pub async fn directory_groups_of(&self, who: &Authenticated, user: &str) -> Result<Vec<(String, String)>, Error> {
        self.inner.directory.groups_of(who, user).await
    }

    /// Issues an API key for an agent at `scope`: answers its id and the
    /// key, which is shown this once (only its digest is kept).
    pub async fn create_api_key(
        &self,
        who: &Authenticated,
        name: String,
        scope: KeyScope,
        expires_at: Option<i64>,
    ) -> Result<(String, String), Error> {
        let key = format!("{API_KEY_PREFIX}{}", random_secret());
        let id = UserId::from_trusted(format!("{KEY_ID_PREFIX}{}", ulid::Ulid::generate().to_string().to_lowercase()));
        let new = NewApiKey { id: id.clone(), name, scope, expires_at, digest: secret_digest(&key) };
        self.execute(who, Command::CreateApiKey { key: new }).await?;
        Ok((id.to_string(), key))
    }

    /// The connected servers the caller is signed in to (never the tokens).
    pub async fn server_connections(&self, who: &Authenticated) -> Result<Vec<crate::ConnectionRow>, Error> {
        self.inner.parts.connections.of(who).await
    }

    /// How many people are signed in to `server` (the console's count): of
    /// the caller's tenant, or of every one for a deployment admin. Admins
    /// only.
    pub async fn server_connection_count(&self, who: &Authenticated, server: &str) -> Result<i64, Error> {
        if !matches!(who.principal().role, lattice_core::TenantRole::TenantAdmin | lattice_core::TenantRole::DeploymentAdmin) {
            return Err(Error::forbidden(lattice_core::Code::AdminOnly, "only an admin sees who is connected to a server"));
        }
        self.inner.parts.connections.count(who, server).await
    }

    /// Forgets the caller's sign-in to `server`: its tokens are gone, and
    /// lattice asks them to sign in again at the next call. `NotFound` when
    /// there was none.
    pub async fn disconnect_server(&self, who: &Authenticated, server: &str) -> Result<(), Error> {
        let p = who.principal();
        if self.inner.parts.connections.clear(p.tenant.as_str(), p.user.as_str(), server).await? { Ok(()) } else { Err(Error::NotFound) }
    }

    /// The API keys the caller may see (never the keys themselves).
    pub async fn api_keys(&self, who: &Authenticated) -> Result<Vec<CredentialRow>, Error> {
        self.inner.directory.api_keys(who).await
    }

    /// Issues a SCIM token for the caller's tenant: its id and the token,
    /// shown this once.
    pub async fn issue_scim_token(&self, who: &Authenticated) -> Result<(String, String), Error> {
        let token = format!("{SCIM_TOKEN_PREFIX}{}", random_secret());
        let id = format!("scim_{}", ulid::Ulid::generate().to_string().to_lowercase());
        self.execute(who, Command::IssueScimToken { id: id.clone(), digest: secret_digest(&token) }).await?;
        Ok((id, token))
    }

    /// The tenant's SCIM tokens (its admins; never the tokens themselves).
    pub async fn scim_tokens(&self, who: &Authenticated) -> Result<Vec<CredentialRow>, Error> {
        self.inner.directory.scim_tokens(who).await
    }

    /// Whether `who`'s token still stands (no sign-out since it was
    /// issued), read afresh: what an open stream asks when access changes.
    pub async fn still_signed_in(&self, who: &Authenticated) -> Result<(), Error> {
        self.inner.credentials.check(who, true).await
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

    async fn write(&self, who: &Authenticated, mut command: Command, audit: Option<Audit>) -> Result<Committed, Error> {
        limits::names(&mut command)?;
        limits::check_command(&command)?;
        // A sign-in is recorded by lattice for the person, never asked for.
        if matches!(command, Command::RecordSignIn { .. }) && *who.via() != Via::Trusted {
            return Err(Error::forbidden(lattice_core::Code::ReservedForLattice, "a sign-in is recorded by lattice itself"));
        }
        // A command authorized from a remembered standing that no longer
        // holds is written nowhere and authorized again from the store; one
        // whose fresh standing changed before it was written, again.
        for fresh in [false, true, true] {
            match self.attempt(who, command, audit.as_ref(), fresh).await? {
                Attempt::Committed(committed) => return Ok(committed),
                Attempt::Changed(again) => command = again,
            }
        }
        Err(Error::conflict(
            lattice_core::Code::ConcurrentWrite,
            "who may write in the thread changed while the command was written, three times over; try again",
        ))
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
        let preparing =
            Preparing { registry: &inner.registry, chains: inner.auth.chains(), now_ms: inner.clock.now_ms(), rules: &inner.rules, principal };
        let effect = preparing.prepare(&scope, &command)?;
        let Some(committed) = inner.committer.commit(principal, &actor, &scope, effect, audit).await? else {
            // Only a standing stops a commit, and with one the command was kept.
            return original.map(Attempt::Changed).ok_or_else(|| Error::unavailable("a commit stopped without a standing"));
        };
        self.forget_what_changed(&command, principal);
        inner.committer.told(committed.seq);
        static COMMANDS: lattice_telemetry::Counter = lattice_telemetry::Counter::new("lattice.commands");
        COMMANDS.add(&[lattice_telemetry::KeyValue::new("command", format!("{command_type:?}"))]);
        Ok(Attempt::Committed(committed))
    }

    /// Forgets what this replica kept of a person, a session or a key the
    /// command just changed, so its own change holds here at once.
    fn forget_what_changed(&self, command: &Command, principal: &Principal) {
        let credentials = &self.inner.credentials;
        match command {
            Command::EndSessions { user, .. } | Command::ProvisionPerson { user, .. } | Command::RemovePerson { user } => {
                credentials.forget(principal.tenant.as_str(), user.as_str());
                credentials.forget_credentials();
            }
            Command::RecordSignIn { .. } => credentials.forget(principal.tenant.as_str(), principal.user.as_str()),
            // A group's change may change the roles of anyone in it.
            Command::ProvisionGroup { .. } | Command::RemoveGroup { .. } => credentials.forget_everyone(),
            Command::RevokeApiKey { .. } | Command::RevokeScimToken { .. } => credentials.forget_credentials(),
            _ => {}
        }
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

    /// Closes a connected server's question the run's agent asked and
    /// nobody answered (the server withdrew it, its call or its run ended),
    /// as lattice (`{"action": "cancel", "reason": …}`): its card closes,
    /// and nobody answers it late. Only the run's own agent closes it.
    pub async fn close_question(&self, who: &Authenticated, tool_call_id: &str, reason: &str) -> Result<(), Error> {
        let p = who.principal();
        let (true, Some(run)) = (p.agent, p.run.as_ref()) else {
            return Err(Error::forbidden(lattice_core::Code::AgentOnly, "only the run's agent closes its questions"));
        };
        let open = self
            .run(who, run)
            .await?
            .requests
            .into_iter()
            .any(|r| r.tool_call_id == tool_call_id && r.tool_name == lattice_core::run::ELICITATION && r.answered_by.is_none());
        if !open {
            return Ok(());
        }
        let answer = serde_json::json!({"action": "cancel", "reason": reason});
        match self.inner.parts.deadlines.close(&p.tenant, run, tool_call_id, answer, QUESTION_ACTOR).await {
            // Answered a moment ago: the answer stands.
            Ok(()) | Err(Error::InvalidState { .. }) => Ok(()),
            Err(e) => Err(e),
        }
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
    pub async fn audit(&self, who: &Authenticated, tenant: Option<&str>, workspace: Option<&str>) -> Result<Vec<AuditEntry>, Error> {
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
    Error::invalid_state(
        lattice_core::Code::FileErased,
        format!(
            "the file's bytes were erased by {} at {}: its reference stays",
            row.erased_by.as_deref().unwrap_or("an admin"),
            crate::clock::rfc3339(at)
        ),
    )
}

/// One try at writing a command.
enum Attempt {
    Committed(Committed),
    /// What the command was authorized from changed before it was
    /// written: nothing was, and here is the command to try again.
    Changed(Command),
}

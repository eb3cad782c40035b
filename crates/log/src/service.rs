//! The one write path (REQUIREMENTS.md L1, L2): authenticate → authorize → integration
//! gate → checks → commit. Every state change in lattice is a [`Command`]
//! run through [`LogService::execute`]; nothing else writes.

use std::collections::BTreeMap;
use std::sync::Arc;

use lattice_core::envelope::DEPLOYMENT_TENANT;
use lattice_core::event::{self, ArtifactArchived, ArtifactChanged, ArtifactCreated};
use lattice_core::kind::{SharedCheck, SharedKind};
use lattice_core::{
    ArtifactId, Audit, Command, CommandType, Error, Integrations, Level, Principal, Role, RunId, RunStatus, RunStep, SwitchKey,
    SwitchState, TenantRole, ThreadId, WorkspaceId,
};
use serde_json::{Value, json};
use sqlx::{AnyConnection, Row};

use crate::access::{Access, artifact_access, thread_access, workspace_access};
use crate::auth::{Authenticated, Authenticator};
use crate::clock::now_ms;
use crate::db::{Backend, Db, db_error};
use crate::digest::digest;
use crate::horizon::Horizon;
use crate::limits;
use crate::store::{ArtifactRow, NewEnvelope, insert_envelope};
use crate::runs::{RequestRow, RunRow, load_requests, load_run};
use crate::switches::SwitchStore;
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
    pub(crate) horizon: Horizon,
    pub(crate) fanout: crate::fanout::Fanout,
}

/// Registers kinds and checks, then starts the service.
pub struct Builder {
    db: Db,
    auth: Authenticator,
    kinds: BTreeMap<String, SharedKind>,
    checks: BTreeMap<CommandType, Vec<SharedCheck>>,
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

    /// Starts the service and its horizon tracker (which needs a Tokio runtime).
    pub fn start(self) -> LogService {
        let horizon = Horizon::start(self.db.clone());
        let fanout = crate::fanout::Fanout::start(self.db.clone(), horizon.subscribe());
        LogService {
            inner: Arc::new(Inner {
                fanout,
                switches: SwitchStore::new(self.db.clone()),
                db: self.db,
                auth: self.auth,
                kinds: self.kinds,
                checks: self.checks,
                horizon,
            }),
        }
    }
}

/// What authorization found out about a command's target.
struct Scope {
    access: Option<Access>,
    /// The thread the command acts in, when it acts in one.
    thread: Option<ThreadId>,
    /// The artifact's head, for edits and archiving.
    artifact: Option<ArtifactRow>,
    /// The run and its requests, for answers and recorded steps.
    run: Option<(RunRow, Vec<RequestRow>)>,
}

/// A command's effect, worked out before the transaction opens.
enum Effect {
    Workspace { id: WorkspaceId, name: String },
    Member { user: String, role: Role },
    Thread { id: ThreadId, title: String },
    Message { text: String },
    Created { id: ArtifactId, kind: String, data: Value, digest: String, parent: Option<String> },
    Changed { head: ArtifactRow, data: Value, digest: String, patch: Value },
    Archived { head: ArtifactRow },
    Switch { level: Level, key: SwitchKey, state: SwitchState, reason: String },
    RunStarted { id: RunId, prompt: String, model: String },
    Answered { run: String, tool_call_id: String, tool_name: String, answer: Value, approved: bool },
    Step { run: String, step: RunStep },
    AppEvent { namespace: String, name: String, data: Value },
    Audit(Audit),
}

impl LogService {
    pub fn builder(db: Db, auth: Authenticator) -> Builder {
        Builder { db, auth, kinds: BTreeMap::new(), checks: BTreeMap::new() }
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
        self.gate(principal, &scope, &command).await?;
        // Registered checks (who may do this) run before the kind's own shape
        // checks, so a refusal says Forbidden before it says ValidationFailed.
        self.run_checks(principal, &scope, &command).await?;
        let effect = self.prepare(&scope, &command)?;
        let committed = self.commit(principal, &scope, effect, audit.as_ref()).await?;
        self.inner.horizon.committed(committed.seq);
        static COMMANDS: lattice_telemetry::Counter = lattice_telemetry::Counter::new("lattice.commands");
        COMMANDS.add(&[lattice_telemetry::KeyValue::new("command", format!("{command_type:?}"))]);
        Ok(committed)
    }

    async fn authorize(&self, p: &Principal, command: &Command) -> Result<Scope, Error> {
        let db = &self.inner.db;
        let none = Scope { access: None, thread: None, artifact: None, run: None };
        match command {
            Command::CreateWorkspace { .. } => Ok(none),
            Command::AddMember { workspace, .. } => {
                let access = workspace_access(db, p, workspace.as_str()).await?;
                access.require(Role::Admin, "adding a member")?;
                Ok(Scope { access: Some(access), ..none })
            }
            Command::CreateThread { workspace, .. } => {
                let access = workspace_access(db, p, workspace.as_str()).await?;
                access.require(Role::Editor, "starting a thread")?;
                Ok(Scope { access: Some(access), ..none })
            }
            Command::PostMessage { thread, .. } | Command::CreateArtifact { thread, .. } => {
                let access = thread_access(db, p, thread).await?;
                access.require(Role::Editor, "writing in a thread")?;
                Ok(Scope { access: Some(access), thread: Some(thread.clone()), artifact: None, run: None })
            }
            Command::EditArtifact { id, .. } | Command::ArchiveArtifact { id } => {
                let (access, head) = artifact_access(db, p, id).await?;
                access.require(Role::Editor, "changing an artifact")?;
                if matches!(command, Command::ArchiveArtifact { .. })
                    && access.role < Role::Admin
                    && head.author != p.user.as_str()
                {
                    return Err(Error::forbidden("only the artifact's author or a workspace admin archives it"));
                }
                if head.archived {
                    return Err(Error::invalid_state("the artifact is archived"));
                }
                let thread = ThreadId::from_trusted(head.thread.clone());
                Ok(Scope { access: Some(access), thread: Some(thread), artifact: Some(head), run: None })
            }
            Command::AppEvent { workspace, namespace, .. } => {
                let access = workspace_access(db, p, workspace.as_str()).await?;
                access.require(Role::Editor, "publishing an application event")?;
                if crate::limits::RESERVED_NAMESPACES.contains(&namespace.as_str()) {
                    return Err(Error::forbidden(format!(
                        "the {namespace} namespace is lattice's own: only the bridge publishes there"
                    )));
                }
                Ok(Scope { access: Some(access), ..none })
            }
            Command::RecordAudit { thread, .. } => {
                // Whoever may read the thread may have a decision about it
                // recorded (a viewer's app reading its state).
                let access = thread_access(db, p, thread).await?;
                Ok(Scope { access: Some(access), thread: Some(thread.clone()), ..none })
            }
            Command::StartRun { thread, .. } => {
                let access = thread_access(db, p, thread).await?;
                access.require(Role::Editor, "starting an agent turn")?;
                Ok(Scope { access: Some(access), thread: Some(thread.clone()), ..none })
            }
            Command::AnswerDeferred { run, .. } | Command::RecordRun { run, .. } => {
                if matches!(command, Command::RecordRun { .. }) && !(p.agent && p.run.as_ref() == Some(run)) {
                    return Err(Error::forbidden("only the runner records a run's steps, inside that run"));
                }
                let Some(row) = load_run(db, &p.tenant, run).await? else { return Err(Error::NotFound) };
                let thread = ThreadId::from_trusted(row.thread.clone());
                let access = thread_access(db, p, &thread).await?;
                access.require(Role::Editor, "answering or acting in an agent turn")?;
                let requests = load_requests(db, &p.tenant, &row.id).await?;
                Ok(Scope { access: Some(access), thread: Some(thread), artifact: None, run: Some((row, requests)) })
            }
            Command::SetSwitch { level, .. } => {
                match level {
                    Level::Deployment => {
                        if p.role != TenantRole::DeploymentAdmin {
                            return Err(Error::forbidden("only a deployment admin sets the deployment's switch"));
                        }
                        Ok(none)
                    }
                    Level::Tenant(tenant) => {
                        if tenant != &p.tenant {
                            return Err(Error::NotFound);
                        }
                        if p.role != TenantRole::TenantAdmin {
                            return Err(Error::forbidden("only a tenant admin sets the tenant's switch"));
                        }
                        Ok(none)
                    }
                    Level::Workspace(workspace) => {
                        let access = workspace_access(db, p, workspace.as_str()).await?;
                        access.require(Role::Admin, "setting the workspace's switch")?;
                        Ok(Scope { access: Some(access), ..none })
                    }
                }
            }
        }
    }

    /// The integration gate (I3): governed kinds are refused while off.
    async fn gate(&self, p: &Principal, scope: &Scope, command: &Command) -> Result<(), Error> {
        let kind = match command {
            Command::CreateArtifact { kind, .. } => Some(kind.as_str()),
            Command::EditArtifact { .. } => scope.artifact.as_ref().map(|a| a.kind.as_str()),
            _ => None,
        };
        let mut keys = Vec::new();
        match (command, kind) {
            (_, Some(kind)) => keys.extend(self.inner.kinds.get(kind).and_then(|spec| spec.switch())),
            // Answering an ask_form is using a form (I3).
            (Command::AnswerDeferred { tool_call_id, .. }, None) => keys.extend(
                scope
                    .run
                    .as_ref()
                    .and_then(|(_, requests)| requests.iter().find(|r| &r.tool_call_id == tool_call_id))
                    .filter(|r| r.tool_name == "ask_form")
                    .map(|_| SwitchKey::Forms),
            ),
            _ => {}
        }
        // What belongs to another artifact (a submission to an app) is
        // governed by that artifact's switch as well: sending to an app is
        // using the app.
        if let Command::CreateArtifact { kind, data, .. } = command
            && let Some(parent) = self.inner.kinds.get(kind).and_then(|spec| spec.parent(data))
            && let Ok(parent) = ArtifactId::parse("parent", &parent)
            && let Some(row) = crate::store::load_artifact(&self.inner.db, &p.tenant, &parent, None).await?
        {
            keys.extend(self.inner.kinds.get(&row.kind).and_then(|spec| spec.switch()));
        }
        let Some(access) = scope.access.as_ref() else { return Ok(()) };
        keys.dedup();
        for key in keys {
            let effective = self.inner.switches.effective(&p.tenant, &access.workspace, key).await?;
            if !effective.enabled {
                return Err(Error::NotEnabled { key: key.as_str().to_owned() });
            }
        }
        Ok(())
    }

    /// Works out what the command will write, refusing what cannot be
    /// written: unknown kinds, payloads of the wrong shape or size, patches
    /// that do not apply, stale versions.
    fn prepare(&self, scope: &Scope, command: &Command) -> Result<Effect, Error> {
        Ok(match command {
            Command::CreateWorkspace { name } => Effect::Workspace { id: WorkspaceId::generate(), name: name.clone() },
            Command::AddMember { user, role, .. } => Effect::Member { user: user.to_string(), role: *role },
            Command::CreateThread { title, .. } => Effect::Thread { id: ThreadId::generate(), title: title.clone() },
            Command::PostMessage { text, .. } => Effect::Message { text: text.clone() },
            Command::CreateArtifact { id, kind, data, .. } => {
                let spec = self.kind(kind)?;
                check_payload(spec.as_ref(), data)?;
                Effect::Created {
                    id: id.clone().unwrap_or_else(ArtifactId::generate),
                    kind: kind.clone(),
                    digest: digest(data),
                    parent: spec.parent(data),
                    data: data.clone(),
                }
            }
            Command::EditArtifact { expected_version, patch, .. } => {
                let head = scope.artifact.clone().expect("authorize loads the head of an edited artifact");
                if *expected_version != head.version {
                    return Err(Error::version_conflict(*expected_version, head.version));
                }
                let spec = self.kind(&head.kind)?;
                // Applied within the kind's size and the nesting limit,
                // operation by operation: a patch that would grow the
                // document past either stops there.
                let data = lattice_core::patch::apply(&head.data, patch, spec.max_bytes())?;
                check_payload(spec.as_ref(), &data)?;
                Effect::Changed {
                    digest: digest(&data),
                    data,
                    patch: serde_json::to_value(patch).expect("a patch serializes"),
                    head,
                }
            }
            Command::ArchiveArtifact { .. } => {
                Effect::Archived { head: scope.artifact.clone().expect("authorize loads the head of an archived artifact") }
            }
            Command::SetSwitch { level, key, state, reason } => {
                Effect::Switch { level: level.clone(), key: *key, state: *state, reason: reason.clone() }
            }
            Command::AppEvent { namespace, name, data, .. } => {
                Effect::AppEvent { namespace: namespace.clone(), name: name.clone(), data: data.clone() }
            }
            Command::RecordAudit { audit, .. } => Effect::Audit(audit.clone()),
            Command::StartRun { prompt, model, .. } => {
                Effect::RunStarted { id: RunId::generate(), prompt: prompt.clone(), model: model.clone() }
            }
            Command::AnswerDeferred { tool_call_id, answer, approved, .. } => {
                let (run, requests) = scope.run.as_ref().expect("authorize loads the run");
                let Some(request) = requests.iter().find(|r| &r.tool_call_id == tool_call_id) else {
                    return Err(Error::field("tool_call_id", "exists", "this run has no such request"));
                };
                if let Some(by) = &request.answered_by {
                    return Err(Error::InvalidState { reason: format!("already answered by {by}"), answered_by: Some(by.clone()) });
                }
                if run.status != RunStatus::Paused {
                    return Err(Error::invalid_state(format!("the run is {}, not waiting for an answer", run.status.as_str())));
                }
                if request.tool_name == "ask_user" && !answer.is_string() {
                    return Err(Error::field("answer", "type", "an ask_user request is answered with text"));
                }
                Effect::Answered {
                    run: run.id.clone(),
                    tool_call_id: tool_call_id.clone(),
                    tool_name: request.tool_name.clone(),
                    answer: answer.clone(),
                    approved: *approved,
                }
            }
            Command::RecordRun { step, .. } => {
                let (run, requests) = scope.run.as_ref().expect("authorize loads the run");
                let allowed = match step {
                    RunStep::Resumed { .. } => {
                        run.status == RunStatus::Paused && requests.iter().all(|r| r.answered_by.is_some())
                    }
                    RunStep::Failed { .. } => matches!(run.status, RunStatus::Running | RunStatus::Paused),
                    _ => run.status == RunStatus::Running,
                };
                if !allowed {
                    return Err(Error::invalid_state(format!("a {} run cannot record this step", run.status.as_str())));
                }
                Effect::Step { run: run.id.clone(), step: step.clone() }
            }
        })
    }

    fn kind(&self, kind: &str) -> Result<&SharedKind, Error> {
        self.inner.kinds.get(kind).ok_or_else(|| {
            let known: Vec<&str> = self.inner.kinds.keys().map(String::as_str).collect();
            Error::field("kind", "enum", format!("unknown kind {kind:?}; known kinds: {}", known.join(", ")))
        })
    }

    async fn run_checks(&self, p: &Principal, scope: &Scope, command: &Command) -> Result<(), Error> {
        let Some(checks) = self.inner.checks.get(&command.command_type()) else { return Ok(()) };
        let Some(access) = scope.access.clone() else { return Ok(()) };
        let view = ScopedView::new(self.clone(), p.clone(), access);
        for check in checks {
            check.check(&view, &p.actor(), command).await?;
        }
        Ok(())
    }

    /// Appends the envelope and updates the read models in one transaction.
    async fn commit(&self, p: &Principal, scope: &Scope, effect: Effect, attached: Option<&Audit>) -> Result<Committed, Error> {
        let db = &self.inner.db;
        let _writer = match db.backend {
            Backend::Sqlite => Some(db.write_lock.lock().await),
            Backend::Postgres => None,
        };
        // A message is one row: it commits as one statement, without a
        // transaction around it. Everything else writes read models too.
        let single_statement = attached.is_none()
            && matches!(
                effect,
                Effect::Message { .. }
                    | Effect::AppEvent { .. }
                    | Effect::Audit(Audit { once: None, .. })
                    | Effect::Step { step: RunStep::ModelReplied { .. } | RunStep::ToolReturned { .. }, .. }
            );
        let mut tx = if single_statement { None } else { Some(db.pool.begin().await.map_err(db_error)?) };
        let mut pooled = if single_statement { Some(db.pool.acquire().await.map_err(db_error)?) } else { None };
        let actor = p.actor();
        let at = now_ms();
        let tenant = p.tenant.as_str();
        let workspace = scope.access.as_ref().map(|a| a.workspace.as_str());
        let thread = scope.thread.as_ref().map(ThreadId::as_str);
        let envelope_id = ulid::Ulid::generate().to_string();
        let mut committed = Committed { seq: 0, envelope_id: envelope_id.clone(), id: None, version: None, digest: None };
        let conn: &mut AnyConnection = match (&mut tx, &mut pooled) {
            (Some(tx), _) => tx,
            (None, Some(conn)) => conn,
            (None, None) => unreachable!("one of the two is taken"),
        };

        let mut env_run = p.run.as_ref().map(|r| r.to_string());
        let traceparent = crate::trace::current();
        // The audit row first: its once key, taken here, refuses a second
        // use before anything else is written.
        if let Some(audit) = attached {
            let env = NewEnvelope {
                id: &ulid::Ulid::generate().to_string(),
                tenant,
                workspace,
                thread,
                run: env_run.as_deref(),
                actor: &actor,
                at,
                event_type: event::AUDIT_RECORDED,
                payload: &audit_payload(conn, tenant, audit, at).await?,
                traceparent: traceparent.as_deref(),
            };
            insert_envelope(conn, db.backend, &env).await?;
        }
        let (event_type, payload, env_tenant, env_workspace, env_thread) = match effect {
            Effect::Workspace { id, name } => {
                sqlx::query("INSERT INTO workspaces (id, tenant, name, created_by, created_at) VALUES ($1, $2, $3, $4, $5)")
                    .bind(id.as_str())
                    .bind(tenant)
                    .bind(&name)
                    .bind(p.user.as_str())
                    .bind(at)
                    .execute(&mut *conn)
                    .await
                    .map_err(db_error)?;
                upsert_member(conn, id.as_str(), p.user.as_str(), Role::Admin).await?;
                committed.id = Some(id.to_string());
                let payload = json!({"workspace": id, "name": name, "admin": p.user});
                (event::WORKSPACE_CREATED, payload, tenant.to_owned(), Some(id.to_string()), None)
            }
            Effect::Member { user, role } => {
                let ws = workspace.expect("a member is added to a workspace");
                upsert_member(conn, ws, &user, role).await?;
                let payload = json!({"workspace": ws, "user": user, "role": role.as_str()});
                (event::MEMBER_ADDED, payload, tenant.to_owned(), workspace.map(str::to_owned), thread.map(str::to_owned))
            }
            Effect::Thread { id, title } => {
                let ws = workspace.expect("a thread is started in a workspace");
                sqlx::query("INSERT INTO threads (id, workspace, title, created_by, created_at) VALUES ($1, $2, $3, $4, $5)")
                    .bind(id.as_str())
                    .bind(ws)
                    .bind(&title)
                    .bind(p.user.as_str())
                    .bind(at)
                    .execute(&mut *conn)
                    .await
                    .map_err(db_error)?;
                committed.id = Some(id.to_string());
                let payload = json!({"thread": id, "title": title});
                (event::THREAD_CREATED, payload, tenant.to_owned(), workspace.map(str::to_owned), Some(id.to_string()))
            }
            Effect::Message { text } => {
                let payload = json!({"thread": thread, "text": text});
                (event::MESSAGE_POSTED, payload, tenant.to_owned(), workspace.map(str::to_owned), thread.map(str::to_owned))
            }
            Effect::Created { id, kind, data, digest, parent } => {
                let ws = workspace.expect("an artifact lives in a workspace");
                let th = thread.expect("an artifact lives in a thread");
                let data_text = serde_json::to_string(&data).expect("JSON serializes");
                let inserted = sqlx::query(
                    "INSERT INTO artifacts (tenant, id, workspace, thread, kind, version, data, digest, author, \
                     created_at, updated_at, archived, parent) \
                     VALUES ($1, $2, $3, $4, $5, 1, $6, $7, $8, $9, $9, 0, $10) ON CONFLICT DO NOTHING",
                )
                .bind(tenant)
                .bind(id.as_str())
                .bind(ws)
                .bind(th)
                .bind(&kind)
                .bind(&data_text)
                .bind(&digest)
                .bind(actor.name())
                .bind(at)
                .bind(parent.as_deref())
                .execute(&mut *conn)
                .await
                .map_err(db_error)?;
                if inserted.rows_affected() == 0 {
                    return Err(Error::exists(format!("artifact {id}")));
                }
                insert_version(conn, tenant, id.as_str(), 1, &data_text, &digest, actor.name(), at).await?;
                committed.id = Some(id.to_string());
                committed.version = Some(1);
                committed.digest = Some(digest.clone());
                let payload = serde_json::to_value(ArtifactCreated { id: id.to_string(), kind, version: 1, data, digest })
                    .expect("an event serializes");
                (event::ARTIFACT_CREATED, payload, tenant.to_owned(), workspace.map(str::to_owned), thread.map(str::to_owned))
            }
            Effect::Changed { head, data, digest, patch } => {
                let version = head.version + 1;
                let data_text = serde_json::to_string(&data).expect("JSON serializes");
                let updated = sqlx::query(
                    "UPDATE artifacts SET version = $1, data = $2, digest = $3, updated_at = $4 \
                     WHERE tenant = $5 AND id = $6 AND version = $7 AND archived = 0",
                )
                .bind(version as i64)
                .bind(&data_text)
                .bind(&digest)
                .bind(at)
                .bind(tenant)
                .bind(&head.id)
                .bind(head.version as i64)
                .execute(&mut *conn)
                .await
                .map_err(db_error)?;
                if updated.rows_affected() == 0 {
                    // Someone else committed a version since the head was read.
                    let row = sqlx::query("SELECT version FROM artifacts WHERE tenant = $1 AND id = $2")
                        .bind(tenant)
                        .bind(&head.id)
                        .fetch_one(&mut *conn)
                        .await
                        .map_err(db_error)?;
                    let actual: i64 = row.try_get(0).map_err(db_error)?;
                    return Err(Error::version_conflict(head.version, actual as u64));
                }
                insert_version(conn, tenant, &head.id, version, &data_text, &digest, actor.name(), at).await?;
                committed.id = Some(head.id.clone());
                committed.version = Some(version);
                committed.digest = Some(digest.clone());
                let payload =
                    serde_json::to_value(ArtifactChanged { id: head.id.clone(), kind: head.kind.clone(), version, patch, digest })
                        .expect("an event serializes");
                (event::ARTIFACT_CHANGED, payload, tenant.to_owned(), workspace.map(str::to_owned), thread.map(str::to_owned))
            }
            Effect::Archived { head } => {
                let updated = sqlx::query("UPDATE artifacts SET archived = 1, updated_at = $1 WHERE tenant = $2 AND id = $3 AND archived = 0")
                    .bind(at)
                    .bind(tenant)
                    .bind(&head.id)
                    .execute(&mut *conn)
                    .await
                    .map_err(db_error)?;
                if updated.rows_affected() == 0 {
                    return Err(Error::invalid_state("the artifact is archived"));
                }
                committed.id = Some(head.id.clone());
                committed.version = Some(head.version);
                let payload = serde_json::to_value(ArtifactArchived { id: head.id.clone(), kind: head.kind.clone(), version: head.version })
                    .expect("an event serializes");
                (event::ARTIFACT_ARCHIVED, payload, tenant.to_owned(), workspace.map(str::to_owned), thread.map(str::to_owned))
            }
            Effect::Switch { level, key, state, reason } => {
                let old = crate::switches::set_in(conn, &level, key, state).await?;
                let payload = json!({
                    "level": level.to_string(), "key": key.as_str(), "old": old.as_str(), "new": state.as_str(), "reason": reason,
                });
                let (env_tenant, env_workspace) = match &level {
                    Level::Deployment => (DEPLOYMENT_TENANT.to_owned(), None),
                    Level::Tenant(t) => (t.to_string(), None),
                    Level::Workspace(w) => (tenant.to_owned(), Some(w.to_string())),
                };
                (event::SWITCH_SET, payload, env_tenant, env_workspace, None)
            }
            Effect::Audit(audit) => {
                let payload = audit_payload(conn, tenant, &audit, at).await?;
                (event::AUDIT_RECORDED, payload, tenant.to_owned(), workspace.map(str::to_owned), thread.map(str::to_owned))
            }
            Effect::AppEvent { namespace, name, data } => {
                let payload = json!({"namespace": namespace, "name": name, "data": data});
                (event::APP_EVENT, payload, tenant.to_owned(), workspace.map(str::to_owned), None)
            }
            Effect::RunStarted { id, prompt, model } => {
                sqlx::query(
                    "INSERT INTO runs (tenant, id, workspace, thread, status, model, started_by, acting_for, acting_role, \
                     started_role, created_at, updated_at) VALUES ($1, $2, $3, $4, 'running', $5, $6, $6, $7, $7, $8, $8)",
                )
                .bind(tenant)
                .bind(id.as_str())
                .bind(workspace)
                .bind(thread)
                .bind(&model)
                .bind(p.user.as_str())
                .bind(p.role.as_str())
                .bind(at)
                .execute(&mut *conn)
                .await
                .map_err(db_error)?;
                committed.id = Some(id.to_string());
                env_run = Some(id.to_string());
                let payload = json!({"run_id": id, "prompt": prompt, "model": model, "started_by": p.user});
                (event::RUN_STARTED, payload, tenant.to_owned(), workspace.map(str::to_owned), thread.map(str::to_owned))
            }
            Effect::Answered { run, tool_call_id, tool_name, answer, approved } => {
                let updated = sqlx::query(
                    "UPDATE run_requests SET answered_by = $1, answer = $2 \
                     WHERE tenant = $3 AND run = $4 AND tool_call_id = $5 AND answered_by IS NULL",
                )
                .bind(p.user.as_str())
                .bind(answer.to_string())
                .bind(tenant)
                .bind(&run)
                .bind(&tool_call_id)
                .execute(&mut *conn)
                .await
                .map_err(db_error)?;
                if updated.rows_affected() == 0 {
                    let by: Option<String> = sqlx::query(
                        "SELECT answered_by FROM run_requests WHERE tenant = $1 AND run = $2 AND tool_call_id = $3",
                    )
                    .bind(tenant)
                    .bind(&run)
                    .bind(&tool_call_id)
                    .fetch_one(&mut *conn)
                    .await
                    .map_err(db_error)?
                    .try_get(0)
                    .map_err(db_error)?;
                    return Err(Error::InvalidState {
                        reason: format!("already answered by {}", by.as_deref().unwrap_or("someone")),
                        answered_by: by,
                    });
                }
                committed.id = Some(run.clone());
                env_run = Some(run.clone());
                let payload = json!({
                    "run_id": run, "turn_id": run, "tool_call_id": tool_call_id, "tool_name": tool_name,
                    "answer": answer, "approved": approved, "author": p.user,
                });
                (event::DEFERRED_ANSWERED, payload, tenant.to_owned(), workspace.map(str::to_owned), thread.map(str::to_owned))
            }
            Effect::Step { run, step } => {
                let transition = match &step {
                    RunStep::Paused { .. } => Some(("paused", "running")),
                    RunStep::Resumed { .. } => Some(("running", "paused")),
                    RunStep::Finished { .. } => Some(("finished", "running")),
                    RunStep::Failed { .. } => Some(("failed", "")),
                    RunStep::ModelReplied { .. } | RunStep::ToolReturned { .. } => None,
                };
                if let Some((to, from)) = transition {
                    // Conditional on the state read before, so that two
                    // writers racing to resume (say) cannot both succeed.
                    let (acting_for, acting_role) = match &step {
                        RunStep::Resumed { actor, role } => (Some(actor.clone()), Some(role.as_str())),
                        _ => (None, None),
                    };
                    let updated = sqlx::query(
                        "UPDATE runs SET status = $1, updated_at = $2, acting_for = COALESCE($3, acting_for), \
                         acting_role = COALESCE($4, acting_role) \
                         WHERE tenant = $5 AND id = $6 AND ($7 = '' OR status = $7) AND status NOT IN ('finished', 'failed')",
                    )
                    .bind(to)
                    .bind(at)
                    .bind(acting_for)
                    .bind(acting_role)
                    .bind(tenant)
                    .bind(&run)
                    .bind(from)
                    .execute(&mut *conn)
                    .await
                    .map_err(db_error)?;
                    if updated.rows_affected() == 0 {
                        return Err(Error::invalid_state("the run moved on before this step"));
                    }
                }
                if let RunStep::Paused { requests } = &step {
                    for r in requests {
                        sqlx::query("INSERT INTO run_requests (tenant, run, tool_call_id, tool_name, args) VALUES ($1, $2, $3, $4, $5)")
                            .bind(tenant)
                            .bind(&run)
                            .bind(&r.tool_call_id)
                            .bind(&r.tool_name)
                            .bind(r.args.to_string())
                            .execute(&mut *conn)
                            .await
                            .map_err(db_error)?;
                    }
                }
                committed.id = Some(run.clone());
                env_run = Some(run.clone());
                let event_type = match &step {
                    RunStep::ModelReplied { .. } => event::MODEL_REPLIED,
                    RunStep::ToolReturned { .. } => event::TOOL_RETURNED,
                    RunStep::Paused { .. } => event::RUN_PAUSED,
                    RunStep::Resumed { .. } => event::RUN_RESUMED,
                    RunStep::Finished { .. } => event::RUN_FINISHED,
                    RunStep::Failed { .. } => event::RUN_FAILED,
                };
                let mut payload = serde_json::to_value(&step).expect("a step serializes");
                if let Some(map) = payload.as_object_mut() {
                    map.remove("step");
                    map.insert("run_id".into(), json!(run));
                }
                (event_type, payload, tenant.to_owned(), workspace.map(str::to_owned), thread.map(str::to_owned))
            }
        };
        let env = NewEnvelope {
            id: &envelope_id,
            tenant: &env_tenant,
            workspace: env_workspace.as_deref(),
            thread: env_thread.as_deref(),
            run: env_run.as_deref(),
            actor: &actor,
            at,
            event_type,
            payload: &payload,
            traceparent: traceparent.as_deref(),
        };
        committed.seq = insert_envelope(conn, db.backend, &env).await?;
        if let Some(tx) = tx {
            tx.commit().await.map_err(db_error)?;
        }
        Ok(committed)
    }
}

/// An audit row's payload, its once key taken (refused if it was used).
async fn audit_payload(conn: &mut AnyConnection, tenant: &str, audit: &Audit, at: i64) -> Result<Value, Error> {
    if let Some(key) = &audit.once {
        let taken = sqlx::query("INSERT INTO once_keys (tenant, key, at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING")
            .bind(tenant)
            .bind(key)
            .bind(at)
            .execute(&mut *conn)
            .await
            .map_err(db_error)?;
        if taken.rows_affected() == 0 {
            return Err(Error::Conflict { reason: format!("{key} was already used"), expected: None, actual: None });
        }
    }
    Ok(serde_json::to_value(event::AuditRecorded { name: audit.name.clone(), data: audit.data.clone() }).expect("an event serializes"))
}

/// A payload within the kind's size and the nesting limit every stored
/// document keeps, and of the kind's shape.
fn check_payload(spec: &dyn lattice_core::ArtifactKind, data: &Value) -> Result<(), Error> {
    lattice_core::document::check(data, "data", spec.max_bytes().min(lattice_core::document::MAX_BYTES))?;
    spec.check(data)
}

async fn upsert_member(conn: &mut AnyConnection, workspace: &str, user: &str, role: Role) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO members (workspace, user_id, role) VALUES ($1, $2, $3) \
         ON CONFLICT (workspace, user_id) DO UPDATE SET role = excluded.role",
    )
    .bind(workspace)
    .bind(user)
    .bind(role.as_str())
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
async fn insert_version(
    conn: &mut AnyConnection,
    tenant: &str,
    id: &str,
    version: u64,
    data: &str,
    digest: &str,
    author: &str,
    at: i64,
) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO artifact_versions (tenant, id, version, data, digest, author, at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(tenant)
    .bind(id)
    .bind(version as i64)
    .bind(data)
    .bind(digest)
    .bind(author)
    .bind(at)
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    Ok(())
}


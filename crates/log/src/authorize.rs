//! Authorization: who may run a command against what it names (T3, I4),
//! and what the write path learns on the way (the access, the artifact's
//! head, the run and its requests), read once for every later step.

use std::sync::Arc;

use lattice_core::policy::{self, Action};
use lattice_core::{Command, Error, Level, Principal, Role, TenantRole, ThreadId};

use lattice_core::directory::KeyScope;
use lattice_core::event::CredentialKind;

use crate::access::{Access, Standings, artifact_access, is_member, thread_access, thread_access_to_write, workspace_access};
use crate::registry::Registry;
use crate::scope::{LoadedRun, Scope};
use crate::store::Db;
use crate::store::runs::{load_requests, load_run};

/// Decides whether `p` may run `command`, answering what it read on the
/// way. Reads the store, the registry (a respondent's kind) and the
/// standings remembered from earlier writes (unless `fresh`), nothing else.
pub(crate) async fn authorize(
    db: &Db,
    registry: &Registry,
    standings: &Standings,
    p: &Principal,
    command: &Command,
    fresh: bool,
) -> Result<Scope, Error> {
    let in_workspace = |access: Access| Scope { access: Some(access), ..Scope::default() };
    let in_thread = |access: Access, thread: ThreadId| Scope { access: Some(access), thread: Some(thread), ..Scope::default() };
    match command {
        Command::CreateWorkspace { .. } if p.scope.is_some() => {
            Err(Error::forbidden(lattice_core::Code::KeyOutOfScope, "a key of one workspace makes no other"))
        }
        Command::CreateWorkspace { .. } => Ok(Scope::default()),
        Command::AddMember { workspace, .. } => {
            let access = workspace_access(db, p, workspace.as_str()).await?;
            access.allow(Action::ManageMembers)?;
            Ok(in_workspace(access))
        }
        Command::RemoveMember { workspace, .. } => {
            let access = workspace_access(db, p, workspace.as_str()).await?;
            access.allow(Action::ManageMembers)?;
            Ok(in_workspace(access))
        }
        Command::CreateThread { workspace, .. } => {
            let access = workspace_access(db, p, workspace.as_str()).await?;
            access.allow(Action::StartThread)?;
            Ok(in_workspace(access))
        }
        Command::ShareThread { thread, user, role } => {
            let access = thread_access(db, p, thread).await?;
            access.allow(Action::ManageListings)?;
            if *role == Role::Admin {
                return Err(Error::field("role", "enum", "a thread lists viewers, respondents and editors; admins see every thread"));
            }
            // Someone outside the workspace reads, or answers, never writes.
            if *role > Role::Respondent && !is_member(db, access.workspace.as_str(), user.as_str()).await? {
                return Err(Error::field(
                    "role",
                    "enum",
                    format!("{user} is not a member of the workspace: a thread is shared with them as viewer or respondent"),
                ));
            }
            Ok(in_thread(access, thread.clone()))
        }
        Command::UnshareThread { thread, .. } => {
            let access = thread_access(db, p, thread).await?;
            access.allow(Action::ManageListings)?;
            Ok(in_thread(access, thread.clone()))
        }
        // Anyone ends their own sessions; a tenant admin anyone's of the
        // tenant (the tenant is the caller's: another's is out of reach).
        Command::EndSessions { user, session } => {
            if user != &p.user && (p.role != TenantRole::TenantAdmin || session.is_some()) {
                return Err(Error::forbidden(lattice_core::Code::AdminOnly, "only a tenant admin signs someone else out"));
            }
            Ok(Scope::default())
        }
        // The directory is the tenant's admins' (a SCIM client acts as one).
        Command::ProvisionPerson { .. } | Command::RemovePerson { .. } | Command::ProvisionGroup { .. } | Command::RemoveGroup { .. } => {
            tenant_admin(p, "only a tenant admin (or the tenant's SCIM client) changes the tenant's directory")?;
            Ok(Scope::default())
        }
        // A person's own sign-in, recorded by lattice for them (the write
        // path lets only its own parts send it).
        Command::RecordSignIn { .. } => {
            if p.agent {
                return Err(Error::forbidden(lattice_core::Code::AgentNotAllowed, "an agent does not sign in through a provider"));
            }
            Ok(Scope::default())
        }
        Command::CreateApiKey { key } => {
            if p.agent || p.scope.is_some() {
                return Err(Error::forbidden(lattice_core::Code::AgentNotAllowed, "an agent's key does not make keys"));
            }
            match &key.scope {
                KeyScope::Tenant { role } => {
                    tenant_admin(p, "only a tenant admin makes a key for the whole tenant")?;
                    if *role == TenantRole::DeploymentAdmin {
                        return Err(Error::field("role", "enum", "a key is a member or a tenant admin of its tenant; operators use `lattice token`"));
                    }
                    Ok(Scope::default())
                }
                KeyScope::Workspace { workspace, .. } => {
                    let access = workspace_access(db, p, workspace.as_str()).await?;
                    access.allow(Action::ManageMembers)?;
                    Ok(in_workspace(access))
                }
            }
        }
        Command::RevokeApiKey { id } => {
            if p.agent || p.scope.is_some() {
                return Err(Error::forbidden(lattice_core::Code::AgentNotAllowed, "an agent's key does not revoke keys"));
            }
            // A key is there for whoever may list it (`Directory::api_keys`):
            // a tenant admin, or an admin of its workspace. For anyone
            // else it answers as one that does not exist.
            let Some(row) = crate::store::credentials::by_id(db, id.as_str())
                .await?
                .filter(|r| r.tenant == p.tenant.as_str() && r.kind == CredentialKind::ApiKey)
            else {
                return Err(Error::NotFound);
            };
            match &row.scope {
                _ if p.role == TenantRole::TenantAdmin => Ok(Scope::default()),
                Some(KeyScope::Workspace { workspace, .. }) => {
                    let access = workspace_access(db, p, workspace.as_str()).await?;
                    access.allow(Action::ManageMembers).map_err(|_| Error::NotFound)?;
                    Ok(in_workspace(access))
                }
                _ => Err(Error::NotFound),
            }
        }
        Command::IssueScimToken { .. } | Command::RevokeScimToken { .. } => {
            if p.agent || p.scope.is_some() {
                return Err(Error::forbidden(lattice_core::Code::AgentNotAllowed, "an agent does not hold the tenant's directory"));
            }
            tenant_admin(p, "only a tenant admin issues and revokes the tenant's SCIM tokens")?;
            Ok(Scope::default())
        }
        // A respondent's one kind of artifact (a submission); the kind's
        // checks say what it may submit to.
        Command::CreateArtifact { thread, kind, .. } if registry.find(kind).is_some_and(|k| k.respondents_create()) => {
            let access = thread_access(db, p, thread).await?;
            access.allow(Action::Submit)?;
            Ok(in_thread(access, thread.clone()))
        }
        // A message commits as one statement, which checks again what it
        // was authorized from: the caller's standing from their last
        // message there serves.
        Command::PostMessage { thread, .. } if p.within.is_none() => {
            let (access, standing) = thread_access_to_write(db, standings, p, thread, Action::Post, fresh).await?;
            Ok(Scope { standing: Some(standing), ..in_thread(access, thread.clone()) })
        }
        Command::PostMessage { thread, .. } | Command::CreateArtifact { thread, .. } => {
            let access = thread_access(db, p, thread).await?;
            access.allow(if matches!(command, Command::PostMessage { .. }) { Action::Post } else { Action::Author })?;
            Ok(in_thread(access, thread.clone()))
        }
        Command::EditArtifact { id, .. } | Command::ArchiveArtifact { id } => {
            let (access, head) = artifact_access(db, p, id).await?;
            access.allow(if matches!(command, Command::ArchiveArtifact { .. }) { Action::Archive } else { Action::Author })?;
            if matches!(command, Command::ArchiveArtifact { .. }) && !policy::archives(access.role, head.author == p.user.as_str()) {
                return Err(Error::forbidden(lattice_core::Code::NotAuthor, "only the artifact's author or a workspace admin archives it"));
            }
            if head.archived {
                return Err(Error::invalid_state(lattice_core::Code::ArtifactArchived, "the artifact is archived"));
            }
            let thread = ThreadId::from_trusted(head.thread.clone());
            Ok(Scope { artifact: Some(head), ..in_thread(access, thread) })
        }
        Command::SetAppContext { artifact, .. } => {
            let (access, head) = artifact_access(db, p, artifact).await?;
            access.allow(Action::TellContext)?;
            if head.archived {
                return Err(Error::invalid_state(lattice_core::Code::ArtifactArchived, "the app is archived"));
            }
            let thread = ThreadId::from_trusted(head.thread.clone());
            Ok(Scope { artifact: Some(head), ..in_thread(access, thread) })
        }
        Command::AppEvent { workspace, namespace, .. } => {
            let access = workspace_access(db, p, workspace.as_str()).await?;
            access.allow(Action::PublishEvent)?;
            if crate::limits::RESERVED_NAMESPACES.contains(&namespace.as_str()) {
                return Err(Error::forbidden(
                    lattice_core::Code::ReservedForLattice,
                    format!("the {namespace} namespace is lattice's own: only the bridge publishes there"),
                ));
            }
            Ok(in_workspace(access))
        }
        // Whoever may read the thread may have a decision about it
        // recorded (a viewer's app reading its state).
        Command::RecordAudit { thread, .. } => Ok(in_thread(thread_access(db, p, thread).await?, thread.clone())),
        Command::StartRun { thread, .. } => {
            let access = thread_access(db, p, thread).await?;
            access.allow(Action::Run)?;
            Ok(in_thread(access, thread.clone()))
        }
        Command::AnswerDeferred { run, .. } | Command::CancelRun { run } | Command::RecordRun { run, .. } => {
            if matches!(command, Command::RecordRun { .. }) && !(p.agent && p.run.as_ref() == Some(run)) {
                return Err(Error::forbidden(lattice_core::Code::ReservedForLattice, "only the runner records a run's steps, inside that run"));
            }
            let Some(row) = load_run(db, &p.tenant, run).await? else { return Err(Error::NotFound) };
            let thread = ThreadId::from_trusted(row.thread.clone());
            let access = thread_access(db, p, &thread).await?;
            match command {
                // Which requests a respondent may answer, the answer's checks say.
                Command::AnswerDeferred { .. } => access.allow(Action::Submit)?,
                _ => access.allow(Action::Run)?,
            }
            let requests = load_requests(db, &p.tenant, &row.id).await?;
            Ok(Scope { run: Some(Arc::new(LoadedRun { run: row, requests })), ..in_thread(access, thread) })
        }
        Command::SetSwitch { level, .. } => match level {
            Level::Deployment if p.role != TenantRole::DeploymentAdmin => {
                Err(Error::forbidden(lattice_core::Code::AdminOnly, "only a deployment admin sets the deployment's switch"))
            }
            Level::Deployment => Ok(Scope::default()),
            Level::Tenant(tenant) if tenant != &p.tenant => Err(Error::NotFound),
            Level::Tenant(_) if p.role != TenantRole::TenantAdmin => {
                Err(Error::forbidden(lattice_core::Code::AdminOnly, "only a tenant admin sets the tenant's switch"))
            }
            Level::Tenant(_) => Ok(Scope::default()),
            Level::Workspace(workspace) => {
                let access = workspace_access(db, p, workspace.as_str()).await?;
                access.allow(Action::Administer)?;
                Ok(in_workspace(access))
            }
        },
    }
}

/// Refuses anyone but a tenant admin of the principal's tenant.
fn tenant_admin(p: &Principal, refusal: &str) -> Result<(), Error> {
    if p.role == TenantRole::TenantAdmin && p.scope.is_none() { Ok(()) } else { Err(Error::forbidden(lattice_core::Code::AdminOnly, refusal)) }
}

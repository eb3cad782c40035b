//! Reads, each as an authenticated caller: nothing here returns what the
//! caller may not see. The rows come from the store; who may see them is
//! access's to say; the log is read no further than the horizon.

use std::collections::BTreeMap;

use lattice_core::envelope::DEPLOYMENT_TENANT;
use lattice_core::event::Event;
use lattice_core::integrations::resolve;
use lattice_core::policy::Action;
use lattice_core::switch_audit::AuditEntry;
use lattice_core::{
    ArtifactId, Effective, Envelope, Error, Integrations, Level, Role, SwitchKey, SwitchState, TenantId, TenantRole, ThreadId, WorkspaceId,
};
use serde::Serialize;

use crate::access::{artifact_access, listed_in, thread_access, workspace_access};
use crate::auth::Authenticated;
use crate::horizon::Horizon;
use crate::store::envelopes::{self, Audited, Placed};
use crate::store::{
    ArtifactRow, Db, Listed, StoredEnvelope, ThreadSummary, WorkspaceSummary, list_artifacts, load_artifact, members, read_marks, threads,
};
use crate::switches::SwitchStore;

/// A thread the caller can read, with its role there.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThreadAccess {
    pub thread: ThreadSummary,
    pub role: Role,
}

/// What the live stream follows.
#[derive(Debug, Clone)]
pub enum Follow {
    Thread(ThreadId),
    Workspace(String),
}

/// One level the caller administers: what it holds for each key, and the
/// effective value there (the levels below it taken as unset).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LevelStates {
    /// `deployment`, `tenant:{id}` or `workspace:{id}`.
    pub level: String,
    /// The workspace's name, the tenant's id, or "Deployment".
    pub name: String,
    /// How many workspaces a change here reaches.
    pub workspaces: u64,
    pub keys: Vec<KeyState>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KeyState {
    pub key: String,
    pub state: String,
    pub effective: Effective,
}

/// Reads the store through access, the horizon (how far the log may be
/// read) and the switch store.
#[derive(Clone)]
pub(crate) struct Reads {
    db: Db,
    horizon: Horizon,
    switches: SwitchStore,
}

impl Reads {
    pub fn new(db: Db, horizon: Horizon, switches: SwitchStore) -> Self {
        Self { db, horizon, switches }
    }

    /// The caller's workspaces: those it is a member of, or all of its
    /// tenant's for a tenant admin.
    pub async fn workspaces(&self, who: &Authenticated) -> Result<Vec<WorkspaceSummary>, Error> {
        let p = who.principal();
        let user = (p.role != TenantRole::TenantAdmin).then_some(p.user.as_str());
        members::workspaces_of(&self.db, p.tenant.as_str(), user).await
    }

    /// The newest thread the caller can read, and its workspace: one query,
    /// with the visibility rule of [`lattice_core::policy::thread_role`].
    pub async fn latest_thread(&self, who: &Authenticated) -> Result<Option<(ThreadId, String)>, Error> {
        let p = who.principal();
        let user = (p.role != TenantRole::TenantAdmin).then_some(p.user.as_str());
        let latest = threads::latest_readable(&self.db, p.tenant.as_str(), user).await?;
        Ok(latest.map(|(thread, workspace)| (ThreadId::from_trusted(thread), workspace)))
    }

    /// The threads the caller can read in its tenant whose id begins with
    /// `prefix`, newest first, at most `limit`: each with its workspace.
    pub async fn readable_threads(&self, who: &Authenticated, prefix: &str, limit: i64) -> Result<Vec<(ThreadId, String)>, Error> {
        let p = who.principal();
        let user = (p.role != TenantRole::TenantAdmin).then_some(p.user.as_str());
        let found = threads::readable(&self.db, p.tenant.as_str(), user, prefix, limit).await?;
        Ok(found.into_iter().map(|(thread, workspace)| (ThreadId::from_trusted(thread), workspace)).collect())
    }

    /// The workspace's threads the caller can read, newest first: a
    /// restricted one only if the caller is an admin or listed on it.
    pub async fn threads(&self, who: &Authenticated, workspace: &str) -> Result<Vec<ThreadSummary>, Error> {
        let p = who.principal();
        let access = workspace_access(&self.db, p, workspace).await?;
        let reader = self.reader(who).await;
        threads::in_workspace(&self.db, access.workspace.as_str(), &reader, access.role == Role::Admin).await
    }

    /// The caller as a reader of threads: what is new to it is what anyone
    /// else wrote or showed, as far as the log may be read.
    async fn reader<'a>(&self, who: &'a Authenticated) -> threads::Reader<'a> {
        let p = who.principal();
        let actor = serde_json::to_string(&p.actor()).expect("an actor serializes");
        threads::Reader { user: p.user.as_str(), actor, upto: self.horizon.caught_up().await }
    }

    /// Marks the thread read by the caller as far as `seq` (never back,
    /// never past its last envelope): the mark as it now stands.
    pub async fn mark_read(&self, who: &Authenticated, thread: &ThreadId, seq: i64) -> Result<i64, Error> {
        let access = thread_access(&self.db, who.principal(), thread).await?;
        access.allow(Action::Read)?;
        read_marks::mark(&self.db, thread.as_str(), who.principal().user.as_str(), seq).await
    }

    /// The threads the caller is listed on (shared with it from outside
    /// its workspaces, or restricted ones it is a member of), newest first.
    pub async fn listed_threads(&self, who: &Authenticated) -> Result<Vec<ThreadAccess>, Error> {
        let p = who.principal();
        let mut out = Vec::new();
        let reader = self.reader(who).await;
        for thread in threads::listing(&self.db, p.tenant.as_str(), &reader).await? {
            // The role the caller has there, by the one rule.
            let access = thread_access(&self.db, p, &ThreadId::from_trusted(thread.id.clone())).await?;
            out.push(ThreadAccess { thread, role: access.role });
        }
        Ok(out)
    }

    /// The workspace's members and their roles (its admins: who else is in
    /// a workspace is for those who manage it), by user id.
    pub async fn members(&self, who: &Authenticated, workspace: &str) -> Result<Vec<Listed>, Error> {
        let access = workspace_access(&self.db, who.principal(), workspace).await?;
        access.allow(Action::ManageMembers)?;
        members::workspace_members(&self.db, access.workspace.as_str()).await
    }

    /// The people listed on a thread and their roles there (its admins).
    pub async fn thread_members(&self, who: &Authenticated, thread: &ThreadId) -> Result<Vec<Listed>, Error> {
        let access = thread_access(&self.db, who.principal(), thread).await?;
        access.allow(Action::ManageListings)?;
        members::thread_members(&self.db, thread.as_str()).await
    }

    /// A thread the caller can read, and its role there.
    pub async fn thread(&self, who: &Authenticated, thread: &ThreadId) -> Result<ThreadAccess, Error> {
        let access = thread_access(&self.db, who.principal(), thread).await?;
        Ok(ThreadAccess { thread: threads::thread(&self.db, thread.as_str()).await?, role: access.role })
    }

    /// An artifact's head, or one of its versions.
    pub async fn artifact(&self, who: &Authenticated, id: &ArtifactId, version: Option<u64>) -> Result<ArtifactRow, Error> {
        let p = who.principal();
        let (_, head) = artifact_access(&self.db, p, id).await?;
        match version {
            None => Ok(head),
            Some(v) => load_artifact(&self.db, &p.tenant, id, Some(v)).await?.ok_or(Error::NotFound),
        }
    }

    pub async fn artifacts(
        &self,
        who: &Authenticated,
        thread: &ThreadId,
        kind: Option<&str>,
        parent: Option<&str>,
    ) -> Result<Vec<ArtifactRow>, Error> {
        let p = who.principal();
        thread_access(&self.db, p, thread).await?;
        list_artifacts(&self.db, &p.tenant, thread, kind, parent).await
    }

    /// Up to `limit` envelopes after `after`, never past the horizon.
    pub async fn events(&self, who: &Authenticated, follow: &Follow, after: i64, limit: i64) -> Result<Vec<Envelope>, Error> {
        self.events_stored(who, follow, after, limit).await?.iter().map(StoredEnvelope::decode).collect()
    }

    /// Up to `limit` of a thread's envelopes before `before`, never past
    /// `upto` nor the horizon, newest first.
    pub async fn thread_events_backwards(
        &self,
        who: &Authenticated,
        thread: &ThreadId,
        upto: i64,
        before: i64,
        limit: i64,
    ) -> Result<Vec<Envelope>, Error> {
        thread_access(&self.db, who.principal(), thread).await?;
        let horizon = self.horizon.caught_up().await;
        let stored = envelopes::thread_backwards(&self.db, thread.as_str(), upto.min(horizon), before, limit).await?;
        stored.iter().map(StoredEnvelope::decode).collect()
    }

    /// As `events`, with payloads left as their stored JSON text.
    pub async fn events_stored(&self, who: &Authenticated, follow: &Follow, after: i64, limit: i64) -> Result<Vec<StoredEnvelope>, Error> {
        let p = who.principal();
        let workspace;
        let place = match follow {
            Follow::Thread(thread) => {
                thread_access(&self.db, p, thread).await?;
                Placed::Thread(thread.as_str())
            }
            Follow::Workspace(ws) => {
                let access = workspace_access(&self.db, p, ws).await?;
                workspace = access.workspace.to_string();
                // A workspace's events leave out the restricted threads the
                // caller is not listed on.
                let hidden_from = (access.role != Role::Admin).then_some(p.user.as_str());
                Placed::Workspace { workspace: &workspace, hidden_from }
            }
        };
        let horizon = self.horizon.caught_up().await;
        envelopes::placed(&self.db, place, after, horizon, limit).await
    }

    /// One audit row by its envelope id, if the caller can read its thread.
    pub async fn audit_record(&self, who: &Authenticated, id: &str) -> Result<Envelope, Error> {
        let p = who.principal();
        let envelope = envelopes::audit_record(&self.db, p.tenant.as_str(), id).await?.ok_or(Error::NotFound)?;
        let thread = envelope.thread.clone().ok_or(Error::NotFound)?;
        thread_access(&self.db, p, &ThreadId::from_trusted(thread)).await?;
        Ok(envelope)
    }

    /// A workspace's audit rows named `name`, newest first, at most
    /// `limit`: for the workspace's admins.
    pub async fn audit_records(&self, who: &Authenticated, workspace: &str, name: &str, limit: i64) -> Result<Vec<Envelope>, Error> {
        let access = workspace_access(&self.db, who.principal(), workspace).await?;
        access.allow(Action::Administer)?;
        let rows = envelopes::audit_records(&self.db, access.workspace.as_str(), limit).await?;
        Ok(rows.into_iter().filter(|e| matches!(&e.event, Event::AuditRecorded(audit) if audit.name == name)).collect())
    }

    /// Each key's effective value in a workspace the caller can see, or
    /// one a thread shared with the caller is in (what governs that thread).
    pub async fn effective(&self, who: &Authenticated, workspace: &str) -> Result<BTreeMap<SwitchKey, Effective>, Error> {
        let p = who.principal();
        let access = match workspace_access(&self.db, p, workspace).await {
            Err(Error::NotFound) => listed_in(&self.db, p, workspace).await?,
            other => other?,
        };
        let mut out = BTreeMap::new();
        for key in self.switches.connected().keys_for(&access.tenant) {
            out.insert(key, self.switches.effective(&access.tenant, &access.workspace, key).await?);
        }
        Ok(out)
    }

    /// Each key's effective value for the caller's tenant as a workspace
    /// that sets nothing would have it: for a caller with no workspace yet.
    pub async fn tenant_effective(&self, who: &Authenticated) -> Result<BTreeMap<SwitchKey, Effective>, Error> {
        let tenant = Level::Tenant(who.principal().tenant.clone());
        let mut out = BTreeMap::new();
        for key in self.switches.connected().keys_for(&who.principal().tenant) {
            let deployment = self.switches.state(&Level::Deployment, key).await?;
            let own = self.switches.state(&tenant, key).await?;
            out.insert(key, resolve(key, deployment, own, SwitchState::Unset));
        }
        Ok(out)
    }

    /// The workspace a thread the caller can read is in.
    pub async fn thread_workspace(&self, who: &Authenticated, thread: &ThreadId) -> Result<String, Error> {
        let access = thread_access(&self.db, who.principal(), thread).await?;
        Ok(access.workspace.to_string())
    }

    /// Every level the caller administers (REQUIREMENTS.md W7): the deployment for a
    /// deployment admin, the tenant for a tenant admin, and each workspace
    /// the caller is an admin of (a tenant admin's: all of the tenant's).
    pub async fn switch_levels(&self, who: &Authenticated) -> Result<Vec<LevelStates>, Error> {
        let p = who.principal();
        let mut out = Vec::new();
        if p.role == TenantRole::DeploymentAdmin {
            out.push(self.level_states(Level::Deployment, "Deployment".into()).await?);
        }
        if p.role == TenantRole::TenantAdmin {
            out.push(self.level_states(Level::Tenant(p.tenant.clone()), p.tenant.to_string()).await?);
        }
        for ws in self.workspaces(who).await? {
            if ws.role != Role::Admin {
                continue;
            }
            out.push(self.level_states(Level::Workspace(WorkspaceId::from_trusted(ws.id.clone())), ws.name).await?);
        }
        Ok(out)
    }

    /// What one level holds for each key, and the effective value there
    /// (the levels below it taken as unset). A workspace's tenant is read
    /// from the workspace.
    pub async fn level_states(&self, level: Level, name: String) -> Result<LevelStates, Error> {
        let connected = self.switches.connected();
        let (above, all) = match &level {
            Level::Deployment => (vec![], connected.keys()),
            Level::Tenant(tenant) => (vec![Level::Deployment], connected.keys_for(tenant)),
            Level::Workspace(ws) => {
                let tenant = crate::store::access::workspace_tenant(&self.db, ws.as_str()).await?.ok_or(Error::NotFound)?;
                let tenant = TenantId::from_trusted(tenant);
                let keys = connected.keys_for(&tenant);
                (vec![Level::Deployment, Level::Tenant(tenant)], keys)
            }
        };
        let chain_levels: Vec<Level> = above.iter().cloned().chain(std::iter::once(level.clone())).collect();
        let held = self.switches.states_of(&chain_levels, &all).await?;
        let mut keys = Vec::new();
        for (k, key) in all.into_iter().enumerate() {
            let mut chain = [SwitchState::Unset; 3];
            for (i, states) in held.iter().enumerate() {
                chain[i] = states[k];
            }
            let own = chain[above.len()];
            keys.push(KeyState {
                key: key.as_str().to_owned(),
                state: own.as_str().to_owned(),
                effective: resolve(key, chain[0], chain[1], chain[2]),
            });
        }
        let workspaces = match &level {
            Level::Deployment => members::count_workspaces(&self.db, None).await?,
            Level::Tenant(tenant) => members::count_workspaces(&self.db, Some(tenant.as_str())).await?,
            Level::Workspace(_) => 1,
        };
        Ok(LevelStates { level: level.to_string(), name, workspaces, keys })
    }

    /// The switch changes the caller administers: the deployment's for a
    /// deployment admin, the tenant's and its workspaces' for a tenant admin,
    /// a workspace's for its admins. Narrowed by `tenant` and `workspace`.
    pub async fn audit(&self, who: &Authenticated, tenant: Option<&str>, workspace: Option<&str>) -> Result<Vec<AuditEntry>, Error> {
        let p = who.principal();
        let mut rows = Vec::new();
        for scope in self.audit_scopes(who, tenant, workspace).await? {
            for e in envelopes::switch_sets(&self.db, &scope).await? {
                let Event::SwitchSet(set) = e.event else {
                    return Err(Error::unavailable(format!("envelope {} is not a switch_set", e.id)));
                };
                rows.push(AuditEntry { seq: e.seq, actor: e.actor.name().to_owned(), at: e.at, change: set });
            }
        }
        if workspace.is_none() && rows.is_empty() && !is_admin_of_anything(p.role) && tenant.is_some() {
            return Err(Error::forbidden(lattice_core::Code::AdminOnly, "reading the switch audit needs an admin role"));
        }
        rows.sort_by_key(|r| r.seq);
        rows.dedup_by_key(|r| r.seq);
        Ok(rows)
    }

    /// The sequence number of the last switch change [`Self::audit`] would
    /// show the caller (0 when none): one `MAX` per scope, no rows read.
    pub async fn last_audited(&self, who: &Authenticated) -> Result<i64, Error> {
        let mut last = 0;
        for scope in self.audit_scopes(who, None, None).await? {
            last = last.max(envelopes::last_switch_set(&self.db, &scope).await?);
        }
        Ok(last)
    }

    /// Where the caller's audit comes from: one scope per tenant or
    /// workspace it administers.
    async fn audit_scopes(&self, who: &Authenticated, tenant: Option<&str>, workspace: Option<&str>) -> Result<Vec<Audited>, Error> {
        let p = who.principal();
        if let Some(t) = tenant
            && t != p.tenant.as_str()
            && t != DEPLOYMENT_TENANT
        {
            return Err(Error::NotFound);
        }
        let mut scopes = Vec::new();
        if let Some(ws) = workspace {
            let access = workspace_access(&self.db, p, ws).await?;
            access.allow(Action::Administer)?;
            scopes.push(Audited::Workspace(access.workspace.to_string()));
            return Ok(scopes);
        }
        if p.role == TenantRole::DeploymentAdmin && tenant.is_none_or(|t| t == DEPLOYMENT_TENANT) {
            scopes.push(Audited::Tenant(DEPLOYMENT_TENANT.to_owned()));
        }
        if tenant != Some(DEPLOYMENT_TENANT) {
            if p.role == TenantRole::TenantAdmin {
                scopes.push(Audited::Tenant(p.tenant.to_string()));
            } else {
                // A workspace admin sees the workspaces it administers.
                for ws in self.workspaces(who).await?.into_iter().filter(|w| w.role == Role::Admin) {
                    scopes.push(Audited::Workspace(ws.id));
                }
            }
        }
        Ok(scopes)
    }
}

fn is_admin_of_anything(role: TenantRole) -> bool {
    role != TenantRole::Member
}

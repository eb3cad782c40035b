//! Reads, each as an authenticated caller: nothing here returns what the
//! caller may not see.

use std::collections::BTreeMap;

use lattice_core::envelope::DEPLOYMENT_TENANT;
use lattice_core::event::{Event, SwitchSet};
use lattice_core::integrations::resolve;
use lattice_core::policy::Action;
use lattice_core::{ArtifactId, Effective, Envelope, Error, Integrations, Level, Role, SwitchKey, SwitchState, TenantRole, ThreadId, WorkspaceId};
use serde::Serialize;
use sqlx::Row;

use crate::access::{artifact_access, thread_access, workspace_access};
use crate::auth::Authenticated;
use crate::clock::rfc3339;
use crate::db::db_error;
use crate::service::LogService;
use crate::store::{ArtifactRow, ENVELOPE_COLUMNS, StoredEnvelope, envelope_from_row, list_artifacts, load_artifact};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkspaceSummary {
    pub id: String,
    pub name: String,
    pub role: Role,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThreadSummary {
    pub id: String,
    pub workspace: String,
    pub title: String,
    pub created_by: String,
    pub created_at: String,
    pub restricted: bool,
}

/// A thread the caller can read, with its role there.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThreadAccess {
    pub thread: ThreadSummary,
    pub role: Role,
}

const THREAD_COLUMNS: &str = "t.id, t.workspace, t.title, t.created_by, t.created_at, t.restricted";

fn thread_from_row(row: &sqlx::any::AnyRow) -> Result<ThreadSummary, Error> {
    Ok(ThreadSummary {
        id: row.try_get(0).map_err(db_error)?,
        workspace: row.try_get(1).map_err(db_error)?,
        title: row.try_get(2).map_err(db_error)?,
        created_by: row.try_get(3).map_err(db_error)?,
        created_at: rfc3339(row.try_get(4).map_err(db_error)?),
        restricted: row.try_get::<i64, _>(5).map_err(db_error)? != 0,
    })
}

/// A person on a workspace's members list or listed on a thread.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Listed {
    pub user: String,
    pub role: Role,
}

/// What the live stream follows.
#[derive(Debug, Clone)]
pub enum Follow {
    Thread(ThreadId),
    Workspace(String),
}

/// One row of the switch audit trail (I2): who changed what, and when.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AuditRow {
    pub seq: i64,
    pub at: String,
    pub actor: String,
    pub change: SwitchSet,
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

/// Leaves a workspace's restricted threads out unless the caller (`$5`)
/// is listed on them.
const HIDDEN_THREADS: &str = " AND (thread IS NULL OR thread NOT IN (SELECT t.id FROM threads t WHERE t.workspace = $1 \
     AND t.restricted <> 0 AND t.id NOT IN (SELECT thread FROM thread_members WHERE user_id = $5)))";

impl LogService {
    /// The caller's workspaces: those it is a member of, or all of its
    /// tenant's for a tenant admin.
    pub async fn workspaces(&self, who: &Authenticated) -> Result<Vec<WorkspaceSummary>, Error> {
        let p = who.principal();
        let db = &self.inner.db;
        let rows = if p.role == TenantRole::TenantAdmin {
            sqlx::query("SELECT id, name, 'admin' FROM workspaces WHERE tenant = $1 ORDER BY created_at, id")
                .bind(p.tenant.as_str())
                .fetch_all(&db.pool)
                .await
        } else {
            sqlx::query(
                "SELECT w.id, w.name, m.role FROM workspaces w JOIN members m ON m.workspace = w.id \
                 WHERE w.tenant = $1 AND m.user_id = $2 ORDER BY w.created_at, w.id",
            )
            .bind(p.tenant.as_str())
            .bind(p.user.as_str())
            .fetch_all(&db.pool)
            .await
        }
        .map_err(db_error)?;
        rows.iter()
            .map(|row| {
                let role: String = row.try_get(2).map_err(db_error)?;
                Ok(WorkspaceSummary {
                    id: row.try_get(0).map_err(db_error)?,
                    name: row.try_get(1).map_err(db_error)?,
                    role: Role::parse(&role).unwrap_or(Role::Viewer),
                })
            })
            .collect()
    }

    /// The newest thread the caller can read, and its workspace: one query,
    /// with the visibility rule of [`lattice_core::policy::thread_role`].
    pub async fn latest_thread(&self, who: &Authenticated) -> Result<Option<(ThreadId, String)>, Error> {
        let p = who.principal();
        let db = &self.inner.db;
        let row = if p.role == TenantRole::TenantAdmin {
            sqlx::query(
                "SELECT t.id, t.workspace FROM threads t JOIN workspaces w ON w.id = t.workspace \
                 WHERE w.tenant = $1 ORDER BY t.created_at DESC, t.id DESC LIMIT 1",
            )
            .bind(p.tenant.as_str())
            .fetch_optional(&db.pool)
            .await
        } else {
            // A member's threads (an admin's all, anyone else's those not
            // restricted), and the threads the caller is listed on.
            sqlx::query(
                "SELECT t.id, t.workspace FROM threads t JOIN workspaces w ON w.id = t.workspace \
                 LEFT JOIN members m ON m.workspace = w.id AND m.user_id = $2 \
                 LEFT JOIN thread_members s ON s.thread = t.id AND s.user_id = $2 \
                 WHERE w.tenant = $1 AND (s.role IS NOT NULL OR m.role = 'admin' OR (m.role IS NOT NULL AND t.restricted = 0)) \
                 ORDER BY t.created_at DESC, t.id DESC LIMIT 1",
            )
            .bind(p.tenant.as_str())
            .bind(p.user.as_str())
            .fetch_optional(&db.pool)
            .await
        }
        .map_err(db_error)?;
        row.map(|row| Ok((ThreadId::from_trusted(row.try_get::<String, _>(0).map_err(db_error)?), row.try_get(1).map_err(db_error)?))).transpose()
    }

    /// The workspace's threads the caller can read, newest first: a
    /// restricted one only if the caller is an admin or listed on it.
    pub async fn threads(&self, who: &Authenticated, workspace: &str) -> Result<Vec<ThreadSummary>, Error> {
        let p = who.principal();
        let access = workspace_access(&self.inner.db, p, workspace).await?;
        let all = access.role == Role::Admin;
        let visible = if all { String::new() } else { format!(" AND {}", crate::access::visible_thread("t", "$2")) };
        let query = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {THREAD_COLUMNS} FROM threads t WHERE t.workspace = $1{visible} ORDER BY t.created_at DESC, t.id DESC"
        )))
        .bind(access.workspace.as_str());
        let query = if all { query } else { query.bind(p.user.as_str()) };
        let rows = query.fetch_all(&self.inner.db.pool).await.map_err(db_error)?;
        rows.iter().map(thread_from_row).collect()
    }

    /// The threads the caller is listed on (shared with it from outside
    /// its workspaces, or restricted ones it is a member of), newest first.
    pub async fn listed_threads(&self, who: &Authenticated) -> Result<Vec<ThreadAccess>, Error> {
        let p = who.principal();
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {THREAD_COLUMNS}, s.role FROM threads t JOIN workspaces w ON w.id = t.workspace \
             JOIN thread_members s ON s.thread = t.id AND s.user_id = $2 WHERE w.tenant = $1 \
             ORDER BY t.created_at DESC, t.id DESC LIMIT 500"
        )))
        .bind(p.tenant.as_str())
        .bind(p.user.as_str())
        .fetch_all(&self.inner.db.pool)
        .await
        .map_err(db_error)?;
        let mut out = Vec::new();
        for row in &rows {
            let thread = thread_from_row(row)?;
            // The role the caller has there, by the one rule.
            let access = thread_access(&self.inner.db, p, &ThreadId::from_trusted(thread.id.clone())).await?;
            out.push(ThreadAccess { thread, role: access.role });
        }
        Ok(out)
    }

    /// The workspace's members and their roles (its admins: who else is in
    /// a workspace is for those who manage it), by user id.
    pub async fn members(&self, who: &Authenticated, workspace: &str) -> Result<Vec<Listed>, Error> {
        let access = workspace_access(&self.inner.db, who.principal(), workspace).await?;
        access.allow(Action::ManageMembers)?;
        self.listed("SELECT user_id, role FROM members WHERE workspace = $1 ORDER BY user_id LIMIT 10000", access.workspace.as_str()).await
    }

    /// The people listed on a thread and their roles there (its admins).
    pub async fn thread_members(&self, who: &Authenticated, thread: &ThreadId) -> Result<Vec<Listed>, Error> {
        let access = thread_access(&self.inner.db, who.principal(), thread).await?;
        access.allow(Action::ManageListings)?;
        self.listed("SELECT user_id, role FROM thread_members WHERE thread = $1 ORDER BY user_id LIMIT 10000", thread.as_str()).await
    }

    async fn listed(&self, query: &'static str, on: &str) -> Result<Vec<Listed>, Error> {
        let rows = sqlx::query(query).bind(on).fetch_all(&self.inner.db.pool).await.map_err(db_error)?;
        rows.iter()
            .map(|row| {
                let role: String = row.try_get(1).map_err(db_error)?;
                let role = Role::parse(&role).ok_or_else(|| Error::unavailable(format!("stored role {role:?} is unknown")))?;
                Ok(Listed { user: row.try_get(0).map_err(db_error)?, role })
            })
            .collect()
    }

    /// A thread the caller can read, and its role there.
    pub async fn thread(&self, who: &Authenticated, thread: &ThreadId) -> Result<ThreadAccess, Error> {
        let access = thread_access(&self.inner.db, who.principal(), thread).await?;
        let row = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT {THREAD_COLUMNS} FROM threads t WHERE t.id = $1")))
            .bind(thread.as_str())
            .fetch_one(&self.inner.db.pool)
            .await
            .map_err(db_error)?;
        Ok(ThreadAccess { thread: thread_from_row(&row)?, role: access.role })
    }

    /// An artifact's head, or one of its versions.
    pub async fn artifact(&self, who: &Authenticated, id: &ArtifactId, version: Option<u64>) -> Result<ArtifactRow, Error> {
        let p = who.principal();
        let (_, head) = artifact_access(&self.inner.db, p, id).await?;
        match version {
            None => Ok(head),
            Some(v) => load_artifact(&self.inner.db, &p.tenant, id, Some(v)).await?.ok_or(Error::NotFound),
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
        thread_access(&self.inner.db, p, thread).await?;
        list_artifacts(&self.inner.db, &p.tenant, thread, kind, parent).await
    }

    /// Up to `limit` envelopes after `after`, never past the horizon.
    pub async fn events(&self, who: &Authenticated, follow: &Follow, after: i64, limit: i64) -> Result<Vec<Envelope>, Error> {
        self.events_stored(who, follow, after, limit).await?.iter().map(StoredEnvelope::decode).collect()
    }

    /// As `events`, with payloads left as their stored JSON text.
    pub(crate) async fn events_stored(&self, who: &Authenticated, follow: &Follow, after: i64, limit: i64) -> Result<Vec<StoredEnvelope>, Error> {
        let p = who.principal();
        let db = &self.inner.db;
        let (column, key, hidden) = match follow {
            Follow::Thread(thread) => {
                thread_access(db, p, thread).await?;
                ("thread", thread.to_string(), "")
            }
            Follow::Workspace(workspace) => {
                let access = workspace_access(db, p, workspace).await?;
                // A workspace's events leave out the restricted threads the
                // caller is not listed on.
                let hidden = if access.role == Role::Admin { "" } else { HIDDEN_THREADS };
                ("workspace", access.workspace.to_string(), hidden)
            }
        };
        let horizon = self.inner.horizon.caught_up().await;
        let query = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {ENVELOPE_COLUMNS} FROM envelopes WHERE {column} = $1 AND seq > $2 AND seq <= $3{hidden} ORDER BY seq LIMIT $4"
        )))
        .bind(key)
        .bind(after)
        .bind(horizon)
        .bind(limit);
        let rows = if hidden.is_empty() { query } else { query.bind(p.user.as_str()) }.fetch_all(&db.pool).await.map_err(db_error)?;
        rows.iter().map(StoredEnvelope::from_row).collect()
    }

    /// One audit row by its envelope id, if the caller can read its thread.
    pub async fn audit_record(&self, who: &Authenticated, id: &str) -> Result<Envelope, Error> {
        let p = who.principal();
        let row = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT {ENVELOPE_COLUMNS} FROM envelopes WHERE id = $1 AND tenant = $2 AND type = $3")))
            .bind(id)
            .bind(p.tenant.as_str())
            .bind(lattice_core::event::AuditRecorded::NAME)
            .fetch_optional(&self.inner.db.pool)
            .await
            .map_err(db_error)?
            .ok_or(Error::NotFound)?;
        let envelope = envelope_from_row(&row)?;
        let thread = envelope.thread.clone().ok_or(Error::NotFound)?;
        thread_access(&self.inner.db, p, &ThreadId::from_trusted(thread)).await?;
        Ok(envelope)
    }

    /// A workspace's audit rows named `name`, newest first, at most
    /// `limit`: for the workspace's admins.
    pub async fn audit_records(&self, who: &Authenticated, workspace: &str, name: &str, limit: i64) -> Result<Vec<Envelope>, Error> {
        let access = workspace_access(&self.inner.db, who.principal(), workspace).await?;
        access.allow(Action::Administer)?;
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {ENVELOPE_COLUMNS} FROM envelopes WHERE workspace = $1 AND type = $2 ORDER BY seq DESC LIMIT $3"
        )))
        .bind(access.workspace.as_str())
        .bind(lattice_core::event::AuditRecorded::NAME)
        .bind(limit)
        .fetch_all(&self.inner.db.pool)
        .await
        .map_err(db_error)?;
        let mut out = Vec::new();
        for row in &rows {
            let e = envelope_from_row(row)?;
            if matches!(&e.event, Event::AuditRecorded(audit) if audit.name == name) {
                out.push(e);
            }
        }
        Ok(out)
    }

    /// Each key's effective value in a workspace the caller can see, or
    /// one a thread shared with the caller is in (what governs that thread).
    pub async fn effective(&self, who: &Authenticated, workspace: &str) -> Result<BTreeMap<SwitchKey, Effective>, Error> {
        let p = who.principal();
        let access = match workspace_access(&self.inner.db, p, workspace).await {
            Err(Error::NotFound) => crate::access::listed_in(&self.inner.db, p, workspace).await?,
            other => other?,
        };
        let mut out = BTreeMap::new();
        for key in SwitchKey::ALL {
            out.insert(key, self.inner.switches.effective(&access.tenant, &access.workspace, key).await?);
        }
        Ok(out)
    }

    /// Each key's effective value for the caller's tenant as a workspace
    /// that sets nothing would have it: for a caller with no workspace yet.
    pub async fn tenant_effective(&self, who: &Authenticated) -> Result<BTreeMap<SwitchKey, Effective>, Error> {
        let tenant = Level::Tenant(who.principal().tenant.clone());
        let mut out = BTreeMap::new();
        for key in SwitchKey::ALL {
            let deployment = self.inner.switches.state(&Level::Deployment, key).await?;
            let own = self.inner.switches.state(&tenant, key).await?;
            out.insert(key, resolve(key, deployment, own, SwitchState::Unset));
        }
        Ok(out)
    }

    /// The workspace a thread the caller can read is in.
    pub async fn thread_workspace(&self, who: &Authenticated, thread: &ThreadId) -> Result<String, Error> {
        let access = thread_access(&self.inner.db, who.principal(), thread).await?;
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
    pub(crate) async fn level_states(&self, level: Level, name: String) -> Result<LevelStates, Error> {
        let store = &self.inner.switches;
        let above = match &level {
            Level::Deployment => vec![],
            Level::Tenant(_) => vec![Level::Deployment],
            Level::Workspace(ws) => {
                let tenant = crate::trusted::workspace_tenant(&self.inner.db, ws).await?.ok_or(Error::NotFound)?;
                vec![Level::Deployment, Level::Tenant(tenant)]
            }
        };
        let chain_levels: Vec<Level> = above.iter().cloned().chain(std::iter::once(level.clone())).collect();
        let held = store.states_of(&chain_levels).await?;
        let mut keys = Vec::new();
        for (k, key) in SwitchKey::ALL.into_iter().enumerate() {
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
            Level::Deployment => self.count_workspaces(None).await?,
            Level::Tenant(tenant) => self.count_workspaces(Some(tenant)).await?,
            Level::Workspace(_) => 1,
        };
        Ok(LevelStates { level: level.to_string(), name, workspaces, keys })
    }

    /// The workspaces of a tenant, or of the whole deployment.
    async fn count_workspaces(&self, tenant: Option<&lattice_core::TenantId>) -> Result<u64, Error> {
        let query = match tenant {
            Some(t) => sqlx::query("SELECT COUNT(*) FROM workspaces WHERE tenant = $1").bind(t.as_str()),
            None => sqlx::query("SELECT COUNT(*) FROM workspaces"),
        };
        let row = query.fetch_one(&self.inner.db.pool).await.map_err(db_error)?;
        Ok(row.try_get::<i64, _>(0).map_err(db_error)?.max(0) as u64)
    }

    /// Follows the sequence number of the latest switch change the live
    /// streams have been handed: a switch stream recomputes effective
    /// values when it moves, and only then.
    pub fn switch_changes(&self) -> tokio::sync::watch::Receiver<i64> {
        self.inner.fanout.switches()
    }

    /// The switch changes the caller administers: the deployment's for a
    /// deployment admin, the tenant's and its workspaces' for a tenant admin,
    /// a workspace's for its admins. Narrowed by `tenant` and `workspace`.
    pub async fn audit(&self, who: &Authenticated, tenant: Option<&str>, workspace: Option<&str>) -> Result<Vec<AuditRow>, Error> {
        let p = who.principal();
        let mut rows = Vec::new();
        for (filter, value) in self.audit_scopes(who, tenant, workspace).await? {
            rows.extend(self.switch_events(filter, &[value.as_str()]).await?);
        }
        if workspace.is_none() && rows.is_empty() && !is_admin_of_anything(p.role) && tenant.is_some() {
            return Err(Error::forbidden("reading the switch audit needs an admin role"));
        }
        rows.sort_by_key(|r| r.seq);
        rows.dedup_by_key(|r| r.seq);
        Ok(rows)
    }

    /// The sequence number of the last switch change [`Self::audit`] would
    /// show the caller (0 when none): one `MAX` per scope, no rows read.
    pub async fn last_audited(&self, who: &Authenticated) -> Result<i64, Error> {
        let mut last = 0;
        for (filter, value) in self.audit_scopes(who, None, None).await? {
            let sql = format!("SELECT MAX(seq) FROM envelopes WHERE type = '{}' AND {filter}", SwitchSet::NAME);
            let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(value).fetch_one(&self.inner.db.pool).await.map_err(db_error)?;
            last = last.max(row.try_get::<Option<i64>, _>(0).map_err(db_error)?.unwrap_or(0));
        }
        Ok(last)
    }

    /// Where the caller's audit comes from: one `(filter, value)` per
    /// scope, the filter naming `$1`.
    async fn audit_scopes(&self, who: &Authenticated, tenant: Option<&str>, workspace: Option<&str>) -> Result<Vec<(&'static str, String)>, Error> {
        let p = who.principal();
        if let Some(t) = tenant
            && t != p.tenant.as_str()
            && t != DEPLOYMENT_TENANT
        {
            return Err(Error::NotFound);
        }
        let mut scopes = Vec::new();
        if let Some(ws) = workspace {
            let access = workspace_access(&self.inner.db, p, ws).await?;
            access.allow(Action::Administer)?;
            scopes.push(("workspace = $1", access.workspace.to_string()));
            return Ok(scopes);
        }
        if p.role == TenantRole::DeploymentAdmin && tenant.is_none_or(|t| t == DEPLOYMENT_TENANT) {
            scopes.push(("tenant = $1", DEPLOYMENT_TENANT.to_owned()));
        }
        if tenant != Some(DEPLOYMENT_TENANT) {
            if p.role == TenantRole::TenantAdmin {
                scopes.push(("tenant = $1", p.tenant.to_string()));
            } else {
                // A workspace admin sees the workspaces it administers.
                for ws in self.workspaces(who).await?.into_iter().filter(|w| w.role == Role::Admin) {
                    scopes.push(("workspace = $1", ws.id));
                }
            }
        }
        Ok(scopes)
    }

    async fn switch_events(&self, filter: &str, binds: &[&str]) -> Result<Vec<AuditRow>, Error> {
        let sql = format!("SELECT {ENVELOPE_COLUMNS} FROM envelopes WHERE type = '{}' AND {filter} ORDER BY seq", SwitchSet::NAME);
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
        for b in binds {
            query = query.bind(*b);
        }
        let rows = query.fetch_all(&self.inner.db.pool).await.map_err(db_error)?;
        rows.iter()
            .map(|row| {
                let e = envelope_from_row(row)?;
                let Event::SwitchSet(set) = e.event else {
                    return Err(Error::unavailable(format!("envelope {} is not a switch_set", e.id)));
                };
                Ok(AuditRow { seq: e.seq, actor: e.actor.name().to_owned(), at: e.at, change: set })
            })
            .collect()
    }
}

fn is_admin_of_anything(role: TenantRole) -> bool {
    role != TenantRole::Member
}

//! What waits for a person's answer, as stored: the artifacts that ask
//! (`artifacts.asks`, kept by the write path from the kind's
//! `ArtifactKind::asks`) that the person has not answered, and the open
//! requests of paused runs; each in the places the person answers in,
//! soonest deadline first (none last), then newest.
//!
//! What it costs (the indexes of migrations 0011 and before):
//!
//! - the person's places: `members_by_user` and `thread_members_by_user`
//!   (a tenant admin: `workspaces_by_tenant`), one row per workspace and
//!   listing of theirs;
//! - the artifacts that ask: the partial index `artifacts_asking`
//!   (`workspace, asks_until` over the artifacts that ask and are not
//!   archived: only open forms are in it), and `artifacts_by_thread` for the
//!   threads listed outside those workspaces; each row one probe of
//!   `artifacts_by_parent_author` (has the person, or for a form taking one
//!   answer anyone, answered?) and the threads' and workspaces' primary
//!   keys. Rows read grow with the open forms of the person's places, never
//!   with the log, the closed or archived forms, or the answers;
//! - the requests: `runs_by_workspace` and `runs_by_thread` (paused runs),
//!   `run_requests`' primary key, and for each row the pause's envelope
//!   (who asked, when) by `envelopes_by_run`, read backwards from the run's
//!   last envelope: never a scan of the log.
//!
//! Each statement is sorted and cut in the database (`LIMIT`) and binds at
//! most [`PLACES`] places; more places are read in several statements.

use std::collections::{BTreeMap, BTreeSet};

use lattice_core::Error;
use serde_json::Value;
use sqlx::Row;
use sqlx::any::AnyRow;

use super::db::{Db, db_error};

/// The most places (workspaces and threads) one statement binds: well
/// under both backends' limits on bound values.
pub const PLACES: usize = 500;

/// Where a person answers, by the rule (decided above the store).
#[derive(Debug, Default, Clone)]
pub(crate) struct Places {
    /// Workspaces whose every thread (restricted ones too) they answer in.
    pub whole: Vec<String>,
    /// Workspaces whose open threads they answer in.
    pub open: Vec<String>,
    /// Threads outside those, listed, that they answer in.
    pub threads: Vec<String>,
}

impl Places {
    pub fn is_empty(&self) -> bool {
        self.whole.is_empty() && self.open.is_empty() && self.threads.is_empty()
    }
}

/// A person's listing on a thread of their tenant, with what decides
/// their role there.
#[derive(Debug, Clone)]
pub(crate) struct Listing {
    pub thread: String,
    pub workspace: String,
    pub restricted: bool,
    /// The role listed with, as stored.
    pub listed: String,
    /// Their role on the workspace's members list, as stored.
    pub member: Option<String>,
}

/// A person's listings on the threads of their tenant.
pub(crate) async fn listings(db: &Db, tenant: &str, user: &str) -> Result<Vec<Listing>, Error> {
    let rows = sqlx::query(
        "SELECT s.thread, t.workspace, t.restricted, s.role, m.role FROM thread_members s \
         JOIN threads t ON t.id = s.thread JOIN workspaces w ON w.id = t.workspace \
         LEFT JOIN members m ON m.workspace = t.workspace AND m.user_id = s.user_id \
         WHERE s.user_id = $1 AND w.tenant = $2",
    )
    .bind(user)
    .bind(tenant)
    .fetch_all(&db.pool)
    .await
    .map_err(db_error)?;
    rows.iter()
        .map(|r| {
            Ok(Listing {
                thread: r.try_get(0).map_err(db_error)?,
                workspace: r.try_get(1).map_err(db_error)?,
                restricted: r.try_get::<i64, _>(2).map_err(db_error)? != 0,
                listed: r.try_get(3).map_err(db_error)?,
                member: r.try_get(4).map_err(db_error)?,
            })
        })
        .collect()
}

/// Where an item waits.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Where {
    pub thread: String,
    pub thread_title: String,
    pub workspace: String,
    pub workspace_name: String,
}

/// An artifact that asks, unanswered by the person.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AskingRow {
    pub id: String,
    pub kind: String,
    pub version: u64,
    pub title: String,
    pub closes_at: Option<i64>,
    /// Its author (the actor's name) and whether an agent.
    pub author: String,
    pub author_agent: bool,
    /// Its last change.
    pub updated_at: i64,
    pub place: Where,
}

/// An open request of a paused run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RequestRow {
    pub run: String,
    pub tool_call_id: String,
    pub tool_name: String,
    pub args: Value,
    pub expires_at: Option<i64>,
    /// The pause's envelope: its actor (JSON, as stored) and when.
    pub actor_json: String,
    pub paused_at: i64,
    pub place: Where,
}

/// Bound values, numbered as they are added.
#[derive(Default)]
struct Binds {
    values: Vec<Bind>,
}

enum Bind {
    Text(String),
    Int(i64),
}

impl Binds {
    fn text(&mut self, value: &str) -> String {
        self.values.push(Bind::Text(value.to_owned()));
        format!("${}", self.values.len())
    }

    fn int(&mut self, value: i64) -> String {
        self.values.push(Bind::Int(value));
        format!("${}", self.values.len())
    }

    fn list(&mut self, values: &[String]) -> String {
        values.iter().map(|v| self.text(v)).collect::<Vec<_>>().join(", ")
    }

    /// Where `alias`'s row (an artifact, a run) is one of `places`: a
    /// restricted thread only through `whole` or `threads`.
    fn places(&mut self, alias: &str, places: &Places) -> String {
        let mut any = Vec::new();
        if !places.whole.is_empty() {
            any.push(format!("{alias}.workspace IN ({})", self.list(&places.whole)));
        }
        if !places.open.is_empty() {
            any.push(format!("(t.restricted = 0 AND {alias}.workspace IN ({}))", self.list(&places.open)));
        }
        if !places.threads.is_empty() {
            any.push(format!("{alias}.thread IN ({})", self.list(&places.threads)));
        }
        format!("({})", any.join(" OR "))
    }

    /// Leaves out the rows whose `column` (a kind, a tool) is one of
    /// `off`'s in one of its workspaces (where its switch is off).
    fn off(&mut self, column: &str, alias: &str, off: &BTreeMap<String, BTreeSet<String>>) -> String {
        let mut out = String::new();
        for (name, workspaces) in off {
            let workspaces: Vec<String> = workspaces.iter().cloned().collect();
            out.push_str(&format!(" AND NOT ({column} = {} AND {alias}.workspace IN ({}))", self.text(name), self.list(&workspaces)));
        }
        out
    }

    async fn fetch(self, db: &Db, sql: String) -> Result<Vec<AnyRow>, Error> {
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
        for value in self.values {
            query = match value {
                Bind::Text(s) => query.bind(s),
                Bind::Int(i) => query.bind(i),
            };
        }
        query.fetch_all(&db.pool).await.map_err(db_error)
    }
}

fn place_of(r: &AnyRow, from: usize) -> Result<Where, Error> {
    Ok(Where {
        thread: r.try_get(from).map_err(db_error)?,
        thread_title: r.try_get(from + 1).map_err(db_error)?,
        workspace: r.try_get(from + 2).map_err(db_error)?,
        workspace_name: r.try_get(from + 3).map_err(db_error)?,
    })
}

/// The artifacts in `places` that ask at `now` and that `user` has not
/// answered (a form taking one answer: that nobody has), soonest
/// `asks_until` first (none last), then the newest change: `limit` of
/// them, leaving out those of a kind `off` names in one of its workspaces.
pub(crate) async fn asking(
    db: &Db,
    tenant: &str,
    user: &str,
    places: &Places,
    off: &BTreeMap<String, BTreeSet<String>>,
    now: i64,
    limit: usize,
) -> Result<Vec<AskingRow>, Error> {
    if places.is_empty() {
        return Ok(Vec::new());
    }
    let mut b = Binds::default();
    let (tenant, now, user) = (b.text(tenant), b.int(now), b.text(user));
    let scope = b.places("a", places);
    let off = b.off("a.kind", "a", off);
    let limit = b.int(limit as i64);
    let sql = format!(
        "SELECT a.id, a.kind, a.version, a.asks_title, a.asks_until, a.author, a.author_agent, a.updated_at, \
         a.thread, t.title, a.workspace, w.name \
         FROM artifacts a JOIN threads t ON t.id = a.thread JOIN workspaces w ON w.id = a.workspace \
         WHERE a.asks IS NOT NULL AND a.archived = 0 AND a.tenant = {tenant} AND (a.asks_until IS NULL OR a.asks_until > {now}) \
         AND {scope}{off} \
         AND NOT (a.asks = 'anyone' AND EXISTS (SELECT 1 FROM artifacts s WHERE s.tenant = a.tenant AND s.parent = a.id)) \
         AND NOT EXISTS (SELECT 1 FROM artifacts s WHERE s.tenant = a.tenant AND s.parent = a.id AND s.author = {user}) \
         ORDER BY CASE WHEN a.asks_until IS NULL THEN 1 ELSE 0 END, a.asks_until, a.updated_at DESC, a.id \
         LIMIT {limit}"
    );
    let rows = b.fetch(db, sql).await?;
    rows.iter()
        .map(|r| {
            Ok(AskingRow {
                id: r.try_get(0).map_err(db_error)?,
                kind: r.try_get(1).map_err(db_error)?,
                version: r.try_get::<i64, _>(2).map_err(db_error)? as u64,
                title: r.try_get::<Option<String>, _>(3).map_err(db_error)?.unwrap_or_default(),
                closes_at: r.try_get(4).map_err(db_error)?,
                author: r.try_get(5).map_err(db_error)?,
                author_agent: r.try_get::<i64, _>(6).map_err(db_error)? != 0,
                updated_at: r.try_get(7).map_err(db_error)?,
                place: place_of(r, 8)?,
            })
        })
        .collect()
}

/// The open requests (by one of `tools`) of the paused runs in `places`,
/// and the connected servers' questions of running runs that act for `who`
/// (nobody else may answer them), whose deadline has not passed at `now`, soonest deadline first (none
/// last), then the newest pause: `limit` of them, leaving out those of a
/// tool `off` names in one of its workspaces.
pub(crate) async fn requests(
    db: &Db,
    who: &lattice_core::Principal,
    places: &Places,
    tools: &[String],
    off: &BTreeMap<String, BTreeSet<String>>,
    now: i64,
    limit: usize,
) -> Result<Vec<RequestRow>, Error> {
    if places.is_empty() || tools.is_empty() {
        return Ok(Vec::new());
    }
    let mut b = Binds::default();
    let (tenant, now, tools, me) = (b.text(who.tenant.as_str()), b.int(now), b.list(tools), b.text(who.user.as_str()));
    let scope = b.places("r", places);
    let off = b.off("q.tool_name", "r", off);
    let limit = b.int(limit as i64);
    let sql = format!(
        "SELECT q.run, q.tool_call_id, q.tool_name, q.args, q.expires_at, \
         (SELECT x.actor FROM envelopes x WHERE x.run = r.id AND x.type IN ('run_paused', 'run_asked') ORDER BY x.seq DESC LIMIT 1) AS paused_by, \
         (SELECT x.at FROM envelopes x WHERE x.run = r.id AND x.type IN ('run_paused', 'run_asked') ORDER BY x.seq DESC LIMIT 1) AS paused_at, \
         r.thread, t.title, r.workspace, w.name \
         FROM runs r JOIN run_requests q ON q.tenant = r.tenant AND q.run = r.id \
         JOIN threads t ON t.id = r.thread JOIN workspaces w ON w.id = r.workspace \
         WHERE (r.status = 'paused' OR (r.status = 'running' AND q.tool_name = 'elicitation' AND r.acting_for = {me})) AND r.tenant = {tenant} AND q.answered_by IS NULL AND (q.expires_at IS NULL OR q.expires_at > {now}) \
         AND q.tool_name IN ({tools}) AND {scope}{off} \
         ORDER BY CASE WHEN q.expires_at IS NULL THEN 1 ELSE 0 END, q.expires_at, paused_at DESC, q.run, q.tool_call_id \
         LIMIT {limit}"
    );
    let rows = b.fetch(db, sql).await?;
    rows.iter()
        .map(|r| {
            let args: String = r.try_get(3).map_err(db_error)?;
            Ok(RequestRow {
                run: r.try_get(0).map_err(db_error)?,
                tool_call_id: r.try_get(1).map_err(db_error)?,
                tool_name: r.try_get(2).map_err(db_error)?,
                args: serde_json::from_str(&args).unwrap_or(Value::Null),
                expires_at: r.try_get(4).map_err(db_error)?,
                actor_json: r.try_get::<Option<String>, _>(5).map_err(db_error)?.unwrap_or_default(),
                paused_at: r.try_get::<Option<i64>, _>(6).map_err(db_error)?.unwrap_or_default(),
                place: place_of(r, 7)?,
            })
        })
        .collect()
}

//! The log itself: the envelope a commit appends, and every read of the
//! `envelopes` table (the horizon's own are in store/horizon.rs).

use lattice_core::event::{AppContextSet, AuditRecorded, DeferredAnswered, Event, SwitchSet};
use lattice_core::{Actor, Envelope, Error};
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::access::{Holds, bind_holds, holds};
use super::db::{Backend, Db, db_error};
use crate::clock::rfc3339;

/// What a commit appends.
pub(crate) struct NewEnvelope<'a> {
    pub id: &'a str,
    pub tenant: &'a str,
    pub workspace: Option<&'a str>,
    pub thread: Option<&'a str>,
    pub run: Option<&'a str>,
    pub actor: &'a Actor,
    pub at: i64,
    pub event: &'a Event,
    pub traceparent: Option<&'a str>,
}

/// Appends the envelope and answers its `seq`; with `holds`, only if the
/// standing it names still holds as the row is written (`None` if not).
pub(crate) async fn insert_envelope(
    conn: &mut AnyConnection,
    backend: Backend,
    e: &NewEnvelope<'_>,
    holds: Option<&Holds<'_>>,
) -> Result<Option<i64>, Error> {
    let actor = serde_json::to_string(e.actor).expect("an actor serializes");
    let payload = e.event.payload_json();
    let sql: &'static str = match (backend, holds.is_some()) {
        // The transaction takes the writers' shared lock before the
        // envelope takes its sequence number (the CTE is scanned before the
        // row is built) and holds it until it ends, so a reader that sees a
        // gap knows which transactions may still fill it: the lock's
        // holders, and no one else (src/horizon.rs).
        (Backend::Postgres, false) => INSERT_ENVELOPE_POSTGRES,
        (Backend::Postgres, true) => &INSERTS.postgres_holding,
        (Backend::Sqlite, false) => &INSERTS.sqlite,
        (Backend::Sqlite, true) => &INSERTS.sqlite_holding,
    };
    let query = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(e.id)
        .bind(e.tenant)
        .bind(e.workspace)
        .bind(e.thread)
        .bind(actor)
        .bind(e.at)
        .bind(e.event.name())
        .bind(payload)
        .bind(e.traceparent)
        .bind(e.run);
    let query = match holds {
        Some(h) => bind_holds(query, h),
        None => query,
    };
    let row = query.fetch_optional(&mut *conn).await.map_err(db_error)?;
    row.map(|row| row.try_get(0).map_err(db_error)).transpose()
}

pub(crate) const INSERT_ENVELOPE_POSTGRES: &str = "WITH writer AS MATERIALIZED (SELECT pg_advisory_xact_lock_shared(7809651272170300721)) \
     INSERT INTO envelopes (id, tenant, workspace, thread, actor, at, type, payload, traceparent, run) \
     SELECT $1, $2, $3, $4, $5, $6::bigint, $7, $8, $9, $10 FROM writer RETURNING seq";

/// The other appends, written once: SQLite's, and each backend's that
/// writes only while a standing holds.
struct Inserts {
    sqlite: String,
    sqlite_holding: String,
    postgres_holding: String,
}

static INSERTS: std::sync::LazyLock<Inserts> = std::sync::LazyLock::new(|| {
    let columns = "INSERT INTO envelopes (id, tenant, workspace, thread, actor, at, type, payload, traceparent, run)";
    let values = "SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10";
    let holding = holds(11);
    Inserts {
        sqlite: format!("{columns} VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING seq"),
        sqlite_holding: format!("{columns} {values} WHERE {holding} RETURNING seq"),
        postgres_holding: INSERT_ENVELOPE_POSTGRES.replace(" FROM writer RETURNING seq", &format!(" FROM writer WHERE {holding} RETURNING seq")),
    }
});

pub(crate) const ENVELOPE_COLUMNS: &str = "seq, id, tenant, workspace, thread, actor, at, type, payload, traceparent";

pub(crate) fn envelope_from_row(row: &AnyRow) -> Result<Envelope, Error> {
    StoredEnvelope::from_row(row)?.decode()
}

/// An envelope with its actor and payload left as the JSON text they are
/// stored as: what a follower hands on without decoding.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredEnvelope {
    pub seq: i64,
    pub id: String,
    pub tenant: String,
    pub workspace: Option<String>,
    pub thread: Option<String>,
    pub actor_json: String,
    pub at_ms: i64,
    pub event_type: String,
    pub payload_json: String,
    pub traceparent: Option<String>,
}

impl StoredEnvelope {
    pub(crate) fn from_row(row: &AnyRow) -> Result<Self, Error> {
        Ok(Self {
            seq: row.try_get(0).map_err(db_error)?,
            id: row.try_get(1).map_err(db_error)?,
            tenant: row.try_get(2).map_err(db_error)?,
            workspace: row.try_get(3).map_err(db_error)?,
            thread: row.try_get(4).map_err(db_error)?,
            actor_json: row.try_get(5).map_err(db_error)?,
            at_ms: row.try_get(6).map_err(db_error)?,
            event_type: row.try_get(7).map_err(db_error)?,
            payload_json: row.try_get(8).map_err(db_error)?,
            traceparent: row.try_get(9).map_err(db_error)?,
        })
    }

    /// The envelope, decoded.
    pub fn decode(&self) -> Result<Envelope, Error> {
        let corrupt = |e: serde_json::Error| Error::unavailable(format!("stored envelope is not readable: {e}"));
        Ok(Envelope {
            seq: self.seq,
            id: self.id.clone(),
            tenant: self.tenant.clone(),
            workspace: self.workspace.clone(),
            thread: self.thread.clone(),
            actor: serde_json::from_str(&self.actor_json).map_err(corrupt)?,
            at: rfc3339(self.at_ms),
            event: Event::decode(&self.event_type, &self.payload_json).map_err(corrupt)?,
            traceparent: self.traceparent.clone(),
        })
    }

    /// The same JSON as the decoded envelope serializes to (fields in
    /// another order), written straight from the stored text.
    pub fn to_json(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.payload_json.len() + self.actor_json.len() + 256);
        let string = |out: &mut Vec<u8>, s: &str| serde_json::to_writer(&mut *out, s).expect("writing to a Vec");
        out.extend_from_slice(format!("{{\"seq\":{},\"id\":", self.seq).as_bytes());
        string(&mut out, &self.id);
        out.extend_from_slice(b",\"tenant\":");
        string(&mut out, &self.tenant);
        if let Some(w) = &self.workspace {
            out.extend_from_slice(b",\"workspace\":");
            string(&mut out, w);
        }
        if let Some(t) = &self.thread {
            out.extend_from_slice(b",\"thread\":");
            string(&mut out, t);
        }
        out.extend_from_slice(b",\"actor\":");
        out.extend_from_slice(self.actor_json.as_bytes());
        out.extend_from_slice(b",\"at\":");
        string(&mut out, &rfc3339(self.at_ms));
        out.extend_from_slice(b",\"type\":");
        string(&mut out, &self.event_type);
        out.extend_from_slice(b",\"payload\":");
        out.extend_from_slice(self.payload_json.as_bytes());
        if let Some(t) = &self.traceparent {
            out.extend_from_slice(b",\"traceparent\":");
            string(&mut out, t);
        }
        out.push(b'}');
        out
    }
}

/// Up to `limit` envelopes after `from`, up to `to`, in order: what the
/// fan-out hands on and what a follower of the whole log reads.
pub(crate) async fn between(db: &Db, from: i64, to: i64, limit: i64) -> Result<Vec<StoredEnvelope>, Error> {
    let rows =
        sqlx::query(sqlx::AssertSqlSafe(format!("SELECT {ENVELOPE_COLUMNS} FROM envelopes WHERE seq > $1 AND seq <= $2 ORDER BY seq LIMIT $3")))
            .bind(from)
            .bind(to)
            .bind(limit)
            .fetch_all(&db.pool)
            .await
            .map_err(db_error)?;
    rows.iter().map(StoredEnvelope::from_row).collect()
}

/// Where a read of the log looks: one thread, or one workspace with the
/// restricted threads a caller is not listed on left out.
pub(crate) enum Placed<'a> {
    Thread(&'a str),
    /// A workspace; `hidden_from`, when set, is the user whose unlisted
    /// restricted threads are left out (a caller below admin).
    Workspace {
        workspace: &'a str,
        hidden_from: Option<&'a str>,
    },
}

/// Leaves a workspace's restricted threads out unless the caller (`$5`)
/// is listed on them.
const HIDDEN_THREADS: &str = " AND (thread IS NULL OR thread NOT IN (SELECT t.id FROM threads t WHERE t.workspace = $1 \
     AND t.restricted <> 0 AND t.id NOT IN (SELECT thread FROM thread_members WHERE user_id = $5)))";

/// Up to `limit` envelopes of a thread or workspace after `after`, up to
/// `to`, in order.
pub(crate) async fn placed(db: &Db, place: Placed<'_>, after: i64, to: i64, limit: i64) -> Result<Vec<StoredEnvelope>, Error> {
    let (column, key, hidden_from) = match place {
        Placed::Thread(thread) => ("thread", thread, None),
        Placed::Workspace { workspace, hidden_from } => ("workspace", workspace, hidden_from),
    };
    let hidden = if hidden_from.is_some() { HIDDEN_THREADS } else { "" };
    let query = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {ENVELOPE_COLUMNS} FROM envelopes WHERE {column} = $1 AND seq > $2 AND seq <= $3{hidden} ORDER BY seq LIMIT $4"
    )))
    .bind(key)
    .bind(after)
    .bind(to)
    .bind(limit);
    let query = match hidden_from {
        Some(user) => query.bind(user),
        None => query,
    };
    let rows = query.fetch_all(&db.pool).await.map_err(db_error)?;
    rows.iter().map(StoredEnvelope::from_row).collect()
}

/// A thread's envelopes at or before `upto` and before `before`, newest
/// first, at most `limit`.
pub(crate) async fn thread_backwards(db: &Db, thread: &str, upto: i64, before: i64, limit: i64) -> Result<Vec<StoredEnvelope>, Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {ENVELOPE_COLUMNS} FROM envelopes WHERE thread = $1 AND seq <= $2 AND seq < $3 ORDER BY seq DESC LIMIT $4"
    )))
    .bind(thread)
    .bind(upto)
    .bind(before)
    .bind(limit)
    .fetch_all(&db.pool)
    .await
    .map_err(db_error)?;
    rows.iter().map(StoredEnvelope::from_row).collect()
}

/// One audit row of a tenant by its envelope id.
pub(crate) async fn audit_record(db: &Db, tenant: &str, id: &str) -> Result<Option<Envelope>, Error> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT {ENVELOPE_COLUMNS} FROM envelopes WHERE id = $1 AND tenant = $2 AND type = $3")))
        .bind(id)
        .bind(tenant)
        .bind(AuditRecorded::NAME)
        .fetch_optional(&db.pool)
        .await
        .map_err(db_error)?;
    row.as_ref().map(envelope_from_row).transpose()
}

/// A workspace's audit rows, newest first, at most `limit`.
pub(crate) async fn audit_records(db: &Db, workspace: &str, limit: i64) -> Result<Vec<Envelope>, Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {ENVELOPE_COLUMNS} FROM envelopes WHERE workspace = $1 AND type = $2 ORDER BY seq DESC LIMIT $3"
    )))
    .bind(workspace)
    .bind(AuditRecorded::NAME)
    .bind(limit)
    .fetch_all(&db.pool)
    .await
    .map_err(db_error)?;
    rows.iter().map(envelope_from_row).collect()
}

/// Whose switch changes a read of the switch audit takes: a tenant's
/// (the deployment's under its own tenant) or a workspace's.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Audited {
    Tenant(String),
    Workspace(String),
}

impl Audited {
    fn filter(&self) -> (&'static str, &str) {
        match self {
            Audited::Tenant(t) => ("tenant = $1", t),
            Audited::Workspace(w) => ("workspace = $1", w),
        }
    }
}

/// The `switch_set` envelopes of one scope, in order.
pub(crate) async fn switch_sets(db: &Db, scope: &Audited) -> Result<Vec<Envelope>, Error> {
    let (filter, value) = scope.filter();
    let sql = format!("SELECT {ENVELOPE_COLUMNS} FROM envelopes WHERE type = '{}' AND {filter} ORDER BY seq", SwitchSet::NAME);
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(value).fetch_all(&db.pool).await.map_err(db_error)?;
    rows.iter().map(envelope_from_row).collect()
}

/// The sequence number of one scope's last `switch_set` (0 when none).
pub(crate) async fn last_switch_set(db: &Db, scope: &Audited) -> Result<i64, Error> {
    let (filter, value) = scope.filter();
    let sql = format!("SELECT MAX(seq) FROM envelopes WHERE type = '{}' AND {filter}", SwitchSet::NAME);
    let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(value).fetch_one(&db.pool).await.map_err(db_error)?;
    Ok(row.try_get::<Option<i64>, _>(0).map_err(db_error)?.unwrap_or(0))
}

/// The tenants of the `switch_set` envelopes after `after` up to `to`, in
/// order (repeats kept).
pub(crate) async fn switch_set_tenants(db: &Db, after: i64, to: i64) -> Result<Vec<String>, Error> {
    sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT tenant FROM envelopes WHERE type = '{}' AND seq > $1 AND seq <= $2 ORDER BY seq",
        SwitchSet::NAME
    )))
    .bind(after)
    .bind(to)
    .fetch_all(&db.pool)
    .await
    .map_err(db_error)
}

/// Every envelope of a run, in order.
pub(crate) async fn of_run(db: &Db, tenant: &str, run: &str) -> Result<Vec<Envelope>, Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT {ENVELOPE_COLUMNS} FROM envelopes WHERE tenant = $1 AND run = $2 ORDER BY seq")))
        .bind(tenant)
        .bind(run)
        .fetch_all(&db.pool)
        .await
        .map_err(db_error)?;
    rows.iter().map(envelope_from_row).collect()
}

/// The last answer given in a run, if any.
pub(crate) async fn last_answer(db: &Db, tenant: &str, run: &str) -> Result<Option<Envelope>, Error> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {ENVELOPE_COLUMNS} FROM envelopes WHERE run = $1 AND tenant = $2 AND type = $3 ORDER BY seq DESC LIMIT 1"
    )))
    .bind(run)
    .bind(tenant)
    .bind(DeferredAnswered::NAME)
    .fetch_optional(&db.pool)
    .await
    .map_err(db_error)?;
    row.as_ref().map(envelope_from_row).transpose()
}

/// A thread's `app_context_set` envelopes, newest first, at most `limit`.
pub(crate) async fn app_contexts(db: &Db, tenant: &str, thread: &str, limit: i64) -> Result<Vec<Envelope>, Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {ENVELOPE_COLUMNS} FROM envelopes WHERE tenant = $1 AND thread = $2 AND type = $3 ORDER BY seq DESC LIMIT $4"
    )))
    .bind(tenant)
    .bind(thread)
    .bind(AppContextSet::NAME)
    .bind(limit)
    .fetch_all(&db.pool)
    .await
    .map_err(db_error)?;
    rows.iter().map(envelope_from_row).collect()
}

//! Rows and the SQL that reads and writes them. The writers, one per
//! effect, each return the event their envelope records; only the write
//! path's commit (src/commit.rs) calls them, inside its transaction.

mod artifacts;
mod audit;
mod people;
mod runs;
mod workspaces;

pub(crate) use artifacts::{archive_artifact, change_artifact, create_artifact};
pub(crate) use audit::record_audit;
pub(crate) use people::end_sessions;
pub(crate) use runs::{Answering, answer_request, record_step, start_run};
pub(crate) use workspaces::{add_member, create_thread, create_workspace, remove_member, share_thread, unshare_thread};

use lattice_core::event::Event;
use lattice_core::{Actor, ArtifactId, ArtifactView, Envelope, Error, TenantId, ThreadId};
use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use crate::clock::rfc3339;
use crate::db::{Backend, Db, db_error};

/// An artifact's head or one of its versions, as stored.
#[derive(Debug, Clone)]
pub struct ArtifactRow {
    pub id: String,
    pub workspace: String,
    pub thread: String,
    pub kind: String,
    pub version: u64,
    pub data: Value,
    pub digest: String,
    pub author: String,
    pub created_at: i64,
    pub updated_at: i64,
    pub archived: bool,
}

impl ArtifactRow {
    pub fn view(&self) -> ArtifactView {
        ArtifactView {
            id: ArtifactId::from_trusted(self.id.clone()),
            kind: self.kind.clone(),
            thread: ThreadId::from_trusted(self.thread.clone()),
            version: self.version,
            data: self.data.clone(),
            author: self.author.clone(),
            archived: self.archived,
            digest: self.digest.clone(),
        }
    }
}

const ARTIFACT_COLUMNS: &str = "a.id, a.workspace, a.thread, a.kind, a.version, a.data, a.digest, a.author, a.created_at, a.updated_at, a.archived";

pub(crate) fn artifact_from_row(row: &AnyRow) -> Result<ArtifactRow, Error> {
    let data: String = row.try_get(5).map_err(db_error)?;
    Ok(ArtifactRow {
        id: row.try_get(0).map_err(db_error)?,
        workspace: row.try_get(1).map_err(db_error)?,
        thread: row.try_get(2).map_err(db_error)?,
        kind: row.try_get(3).map_err(db_error)?,
        version: row.try_get::<i64, _>(4).map_err(db_error)? as u64,
        data: serde_json::from_str(&data).map_err(|e| Error::unavailable(format!("stored artifact is not JSON: {e}")))?,
        digest: row.try_get(6).map_err(db_error)?,
        author: row.try_get(7).map_err(db_error)?,
        created_at: row.try_get(8).map_err(db_error)?,
        updated_at: row.try_get(9).map_err(db_error)?,
        archived: row.try_get::<i64, _>(10).map_err(db_error)? != 0,
    })
}

/// The head of an artifact, or one version of it (`version`), in a tenant.
pub(crate) async fn load_artifact(db: &Db, tenant: &TenantId, id: &ArtifactId, version: Option<u64>) -> Result<Option<ArtifactRow>, Error> {
    let row = match version {
        None => {
            sqlx::query(sqlx::AssertSqlSafe(format!("SELECT {ARTIFACT_COLUMNS} FROM artifacts a WHERE a.tenant = $1 AND a.id = $2")))
                .bind(tenant.as_str())
                .bind(id.as_str())
                .fetch_optional(&db.pool)
                .await
        }
        Some(version) => {
            sqlx::query(
                "SELECT a.id, a.workspace, a.thread, a.kind, v.version, v.data, v.digest, v.author, \
                 a.created_at, v.at, a.archived \
                 FROM artifacts a JOIN artifact_versions v ON v.tenant = a.tenant AND v.id = a.id \
                 WHERE a.tenant = $1 AND a.id = $2 AND v.version = $3",
            )
            .bind(tenant.as_str())
            .bind(id.as_str())
            .bind(version as i64)
            .fetch_optional(&db.pool)
            .await
        }
    }
    .map_err(db_error)?;
    row.as_ref().map(artifact_from_row).transpose()
}

/// The artifacts of a thread, optionally of one kind or one parent.
pub(crate) async fn list_artifacts(
    db: &Db,
    tenant: &TenantId,
    thread: &ThreadId,
    kind: Option<&str>,
    parent: Option<&str>,
) -> Result<Vec<ArtifactRow>, Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {ARTIFACT_COLUMNS} FROM artifacts a WHERE a.tenant = $1 AND a.thread = $2 \
         AND ($3 = '' OR a.kind = $3) AND ($4 = '' OR a.parent = $4) ORDER BY a.created_at, a.id"
    )))
    .bind(tenant.as_str())
    .bind(thread.as_str())
    .bind(kind.unwrap_or(""))
    .bind(parent.unwrap_or(""))
    .fetch_all(&db.pool)
    .await
    .map_err(db_error)?;
    rows.iter().map(artifact_from_row).collect()
}

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

pub(crate) async fn insert_envelope(conn: &mut AnyConnection, backend: Backend, e: &NewEnvelope<'_>) -> Result<i64, Error> {
    let actor = serde_json::to_string(e.actor).expect("an actor serializes");
    let payload = e.event.payload_json();
    let sql = match backend {
        // The transaction takes the writers' shared lock before the
        // envelope takes its sequence number (the CTE is scanned before the
        // row is built) and holds it until it ends, so a reader that sees a
        // gap knows which transactions may still fill it: the lock's
        // holders, and no one else (src/horizon.rs).
        Backend::Postgres => INSERT_ENVELOPE_POSTGRES,
        Backend::Sqlite => {
            "INSERT INTO envelopes (id, tenant, workspace, thread, actor, at, type, payload, traceparent, run) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING seq"
        }
    };
    let row = sqlx::query(sql)
        .bind(e.id)
        .bind(e.tenant)
        .bind(e.workspace)
        .bind(e.thread)
        .bind(actor)
        .bind(e.at)
        .bind(e.event.name())
        .bind(payload)
        .bind(e.traceparent)
        .bind(e.run)
        .fetch_one(&mut *conn)
        .await
        .map_err(db_error)?;
    row.try_get(0).map_err(db_error)
}

pub(crate) const INSERT_ENVELOPE_POSTGRES: &str = "WITH writer AS MATERIALIZED (SELECT pg_advisory_xact_lock_shared(7809651272170300721)) \
     INSERT INTO envelopes (id, tenant, workspace, thread, actor, at, type, payload, traceparent, run) \
     SELECT $1, $2, $3, $4, $5, $6::bigint, $7, $8, $9, $10 FROM writer RETURNING seq";

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

/// Who writes, where and when: what every writer stamps on its rows.
pub(crate) struct Writing<'a> {
    pub tenant: &'a str,
    pub workspace: Option<&'a str>,
    pub thread: Option<&'a str>,
    /// The principal's user: who starts, creates, answers.
    pub user: &'a str,
    /// The actor's name: an artifact version's author.
    pub author: &'a str,
    pub role: lattice_core::TenantRole,
    /// The run the principal acts in, if any.
    pub run: Option<&'a str>,
    pub at: i64,
}

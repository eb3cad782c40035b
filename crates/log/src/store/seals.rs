//! The `seals` and `seal_checkpoints` tables (docs/SEAL.md): each
//! envelope's place in its workspace's chain and the chains' signed
//! heads, and what an export reads of them.

use lattice_core::Error;
use lattice_seal::{Checkpoint, Seal};
use sqlx::Row;

use super::db::{Db, db_error};
use super::envelopes::{ENVELOPE_COLUMNS, StoredEnvelope};

/// One envelope's seal, to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealRow {
    pub tenant: String,
    pub workspace: String,
    pub seq: i64,
    pub envelope: String,
    pub seal: Seal,
}

/// The highest seq sealed: where the sealer goes on from.
pub(crate) async fn progress(db: &Db) -> Result<i64, Error> {
    let row = sqlx::query("SELECT CAST(COALESCE(MAX(seq), 0) AS BIGINT) FROM seals").fetch_one(&db.pool).await.map_err(db_error)?;
    row.try_get(0).map_err(db_error)
}

/// A chain's last seal: its number and head (0 and no head for none).
pub(crate) async fn last(db: &Db, tenant: &str, workspace: &str) -> Result<Option<(i64, String)>, Error> {
    let row = sqlx::query("SELECT n, head FROM seals WHERE tenant = $1 AND workspace = $2 ORDER BY n DESC LIMIT 1")
        .bind(tenant)
        .bind(workspace)
        .fetch_optional(&db.pool)
        .await
        .map_err(db_error)?;
    row.map(|r| Ok((r.try_get(0).map_err(db_error)?, r.try_get(1).map_err(db_error)?))).transpose()
}

/// Seals written by one statement.
const SEALS_A_STATEMENT: usize = 100;

/// A batch of seals and the checkpoints that close it, together.
pub(crate) async fn write(db: &Db, seals: &[SealRow], checkpoints: &[Checkpoint]) -> Result<(), Error> {
    // SQLite has one writer: the sealer takes its turn (`Db::writer`).
    let _writer = db.writer().await;
    let mut tx = db.begin().await?;
    // Many rows a statement: one round trip for each hundred seals.
    for rows in seals.chunks(SEALS_A_STATEMENT) {
        let values: Vec<String> = (0..rows.len())
            .map(|i| {
                let at = i * 7;
                format!("(${}, ${}, ${}, ${}, ${}, ${}, ${})", at + 1, at + 2, at + 3, at + 4, at + 5, at + 6, at + 7)
            })
            .collect();
        let sql = format!("INSERT INTO seals (tenant, workspace, n, seq, envelope, leaf, head) VALUES {}", values.join(", "));
        let mut insert = sqlx::query(sqlx::AssertSqlSafe(sql));
        for s in rows {
            insert = insert.bind(&s.tenant).bind(&s.workspace).bind(s.seal.n).bind(s.seq).bind(&s.envelope).bind(&s.seal.leaf).bind(&s.seal.head);
        }
        insert.execute(&mut *tx).await.map_err(db_error)?;
    }
    for c in checkpoints {
        sqlx::query(
            "INSERT INTO seal_checkpoints (tenant, workspace, n, seq, head, at_ms, key_id, signature) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(&c.tenant)
        .bind(&c.workspace)
        .bind(c.n)
        .bind(c.seq)
        .bind(&c.head)
        .bind(c.at_ms)
        .bind(&c.key_id)
        .bind(&c.signature)
        .execute(&mut *tx)
        .await
        .map_err(db_error)?;
    }
    tx.commit().await.map_err(db_error)
}

/// Every chain's checkpoints signed after the one whose envelope is
/// `after` (a seq): what the bridge publishes, in the order they were made.
pub(crate) async fn signed_after(db: &Db, after: i64, limit: i64) -> Result<Vec<Checkpoint>, Error> {
    let rows =
        sqlx::query("SELECT tenant, workspace, n, seq, head, at_ms, key_id, signature FROM seal_checkpoints WHERE seq > $1 ORDER BY seq LIMIT $2")
            .bind(after)
            .bind(limit)
            .fetch_all(&db.pool)
            .await
            .map_err(db_error)?;
    rows.iter().map(checkpoint_of).collect()
}

fn checkpoint_of(r: &sqlx::any::AnyRow) -> Result<Checkpoint, Error> {
    Ok(Checkpoint {
        tenant: r.try_get(0).map_err(db_error)?,
        workspace: r.try_get(1).map_err(db_error)?,
        n: r.try_get(2).map_err(db_error)?,
        seq: r.try_get(3).map_err(db_error)?,
        head: r.try_get(4).map_err(db_error)?,
        at_ms: r.try_get(5).map_err(db_error)?,
        key_id: r.try_get(6).map_err(db_error)?,
        signature: r.try_get(7).map_err(db_error)?,
    })
}

/// A chain's checkpoints after its `after`th envelope, oldest first,
/// `limit` at most.
pub(crate) async fn checkpoints(db: &Db, tenant: &str, workspace: &str, after: i64, limit: i64) -> Result<Vec<Checkpoint>, Error> {
    let rows = sqlx::query(
        "SELECT tenant, workspace, n, seq, head, at_ms, key_id, signature FROM seal_checkpoints \
         WHERE tenant = $1 AND workspace = $2 AND n > $3 ORDER BY n LIMIT $4",
    )
    .bind(tenant)
    .bind(workspace)
    .bind(after)
    .bind(limit)
    .fetch_all(&db.pool)
    .await
    .map_err(db_error)?;
    rows.iter().map(checkpoint_of).collect()
}

/// A chain's envelopes after `after` (a seq), with their seals, in log
/// order, `limit` at a time: what an export writes. The tenant's envelopes
/// of no workspace for `workspace` empty.
pub(crate) async fn sealed_envelopes(
    db: &Db,
    tenant: &str,
    workspace: &str,
    after: i64,
    limit: i64,
) -> Result<Vec<(StoredEnvelope, Option<Seal>)>, Error> {
    let columns: String = ENVELOPE_COLUMNS.split(", ").map(|c| format!("e.{c}")).collect::<Vec<_>>().join(", ");
    // The tenant's envelopes of no workspace are the chain of the empty name.
    let place = "(e.workspace = $2 OR (e.workspace IS NULL AND $2 = ''))";
    let sql = format!(
        "SELECT {columns}, s.n, s.leaf, s.head FROM envelopes e LEFT JOIN seals s ON s.envelope = e.id \
         WHERE e.tenant = $1 AND {place} AND e.seq > $3 ORDER BY e.seq LIMIT $4"
    );
    let rows =
        sqlx::query(sqlx::AssertSqlSafe(sql)).bind(tenant).bind(workspace).bind(after).bind(limit).fetch_all(&db.pool).await.map_err(db_error)?;
    rows.iter()
        .map(|r| {
            let envelope = StoredEnvelope::from_row(r)?;
            let n: Option<i64> = r.try_get(10).map_err(db_error)?;
            let seal = match n {
                Some(n) => Some(Seal { n, leaf: r.try_get(11).map_err(db_error)?, head: r.try_get(12).map_err(db_error)? }),
                None => None,
            };
            Ok((envelope, seal))
        })
        .collect()
}

/// An envelope's seal, by its id: its chain (tenant, workspace) and place.
pub(crate) async fn of_envelope(db: &Db, id: &str) -> Result<Option<(String, String, Seal)>, Error> {
    let row = sqlx::query("SELECT tenant, workspace, n, leaf, head FROM seals WHERE envelope = $1")
        .bind(id)
        .fetch_optional(&db.pool)
        .await
        .map_err(db_error)?;
    row.map(|r| {
        Ok((
            r.try_get(0).map_err(db_error)?,
            r.try_get(1).map_err(db_error)?,
            Seal { n: r.try_get(2).map_err(db_error)?, leaf: r.try_get(3).map_err(db_error)?, head: r.try_get(4).map_err(db_error)? },
        ))
    })
    .transpose()
}

/// A chain's newest checkpoint.
pub(crate) async fn latest_checkpoint(db: &Db, tenant: &str, workspace: &str) -> Result<Option<Checkpoint>, Error> {
    let row = sqlx::query(
        "SELECT tenant, workspace, n, seq, head, at_ms, key_id, signature FROM seal_checkpoints \
         WHERE tenant = $1 AND workspace = $2 ORDER BY n DESC LIMIT 1",
    )
    .bind(tenant)
    .bind(workspace)
    .fetch_optional(&db.pool)
    .await
    .map_err(db_error)?;
    row.as_ref().map(checkpoint_of).transpose()
}

/// The tenant a workspace belongs to, if it exists: an operator names the
/// workspace alone (`lattice export --workspace`).
pub(crate) async fn tenant_of_workspace(db: &Db, workspace: &str) -> Result<Option<String>, Error> {
    let row = sqlx::query("SELECT tenant FROM workspaces WHERE id = $1").bind(workspace).fetch_optional(&db.pool).await.map_err(db_error)?;
    row.map(|r| r.try_get(0).map_err(db_error)).transpose()
}

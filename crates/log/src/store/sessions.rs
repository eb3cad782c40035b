//! The `sessions` table: protocol sessions replicas share, each with its
//! owner and a state the log does not read.

use lattice_core::Error;

use super::db::{Db, db_error};

/// Ids asked about in one statement (within every backend's bound on
/// parameters).
const IDS_PER_QUERY: usize = 500;

/// How a session's owner is stored (a person's sign-out drops theirs).
pub(crate) fn owner_key(tenant: &str, user: &str) -> String {
    format!("{tenant}/{user}")
}

/// Records `owner` as `id`'s opener (an owner, once set, stays), and
/// forgets the sessions opened before `forget_before` and the owner's
/// beyond its newest `per_owner`: answers the ids forgotten.
pub(crate) async fn open(db: &Db, id: &str, owner: &str, now: i64, forget_before: i64, per_owner: i64) -> Result<Vec<String>, Error> {
    let _writer = db.writer().await;
    sqlx::query(
        "INSERT INTO sessions (id, owner, opened_at) VALUES ($1, $2, $3) \
         ON CONFLICT (id) DO UPDATE SET owner = COALESCE(sessions.owner, excluded.owner)",
    )
    .bind(id)
    .bind(owner)
    .bind(now)
    .execute(&db.pool)
    .await
    .map_err(db_error)?;
    let mut forgotten: Vec<String> = sqlx::query_scalar("DELETE FROM sessions WHERE opened_at < $1 RETURNING id")
        .bind(forget_before)
        .fetch_all(&db.pool)
        .await
        .map_err(db_error)?;
    forgotten.extend(
        sqlx::query_scalar::<_, String>(
            "DELETE FROM sessions WHERE owner = $1 AND id NOT IN \
             (SELECT id FROM sessions WHERE owner = $1 ORDER BY opened_at DESC, id DESC LIMIT $2) RETURNING id",
        )
        .bind(owner)
        .bind(per_owner)
        .fetch_all(&db.pool)
        .await
        .map_err(db_error)?,
    );
    Ok(forgotten)
}

/// A session's owner; `None` when it has no row or no owner.
pub(crate) async fn owner(db: &Db, id: &str) -> Result<Option<String>, Error> {
    let owner: Option<Option<String>> =
        sqlx::query_scalar("SELECT owner FROM sessions WHERE id = $1").bind(id).fetch_optional(&db.pool).await.map_err(db_error)?;
    Ok(owner.flatten())
}

/// Which of `ids` have their row and its owner.
pub(crate) async fn living(db: &Db, ids: &[String]) -> Result<Vec<String>, Error> {
    let mut living = Vec::new();
    for chunk in ids.chunks(IDS_PER_QUERY) {
        let marks: Vec<String> = (1..=chunk.len()).map(|i| format!("${i}")).collect();
        let sql = format!("SELECT id FROM sessions WHERE owner IS NOT NULL AND id IN ({})", marks.join(", "));
        let mut query = sqlx::query_scalar::<_, String>(sqlx::AssertSqlSafe(sql));
        for id in chunk {
            query = query.bind(id);
        }
        living.extend(query.fetch_all(&db.pool).await.map_err(db_error)?);
    }
    Ok(living)
}

pub(crate) async fn state(db: &Db, id: &str) -> Result<Option<String>, Error> {
    let state: Option<Option<String>> =
        sqlx::query_scalar("SELECT state FROM sessions WHERE id = $1").bind(id).fetch_optional(&db.pool).await.map_err(db_error)?;
    Ok(state.flatten())
}

/// Keeps a session's state, making its row (opened `now`) if it has none.
pub(crate) async fn keep_state(db: &Db, id: &str, state: &str, now: i64) -> Result<(), Error> {
    let _writer = db.writer().await;
    sqlx::query(
        "INSERT INTO sessions (id, state, opened_at) VALUES ($1, $2, $3) \
         ON CONFLICT (id) DO UPDATE SET state = excluded.state",
    )
    .bind(id)
    .bind(state)
    .bind(now)
    .execute(&db.pool)
    .await
    .map_err(db_error)?;
    Ok(())
}

pub(crate) async fn close(db: &Db, id: &str) -> Result<(), Error> {
    let _writer = db.writer().await;
    sqlx::query("DELETE FROM sessions WHERE id = $1").bind(id).execute(&db.pool).await.map_err(db_error)?;
    Ok(())
}

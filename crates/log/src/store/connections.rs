//! People's sign-ins to connected MCP servers, sealed: the store keeps and
//! hands back sealed text, never reads it (`crate::vault` seals and opens).

use lattice_core::Error;
use sqlx::Row;

use super::db::{Db, db_error};

pub(crate) async fn load(db: &Db, tenant: &str, user: &str, server: &str) -> Result<Option<String>, Error> {
    sqlx::query_scalar("SELECT sealed FROM server_connections WHERE tenant = $1 AND user_id = $2 AND server = $3")
        .bind(tenant)
        .bind(user)
        .bind(server)
        .fetch_optional(&db.pool)
        .await
        .map_err(db_error)
}

pub(crate) async fn save(db: &Db, tenant: &str, user: &str, server: &str, sealed: &str, now: i64) -> Result<(), Error> {
    let _writer = db.writer().await;
    sqlx::query(
        "INSERT INTO server_connections (tenant, user_id, server, sealed, connected_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5) \
         ON CONFLICT (tenant, user_id, server) DO UPDATE SET sealed = excluded.sealed, updated_at = excluded.updated_at",
    )
    .bind(tenant)
    .bind(user)
    .bind(server)
    .bind(sealed)
    .bind(now)
    .execute(&db.pool)
    .await
    .map_err(db_error)?;
    Ok(())
}

/// Forgets a person's sign-in to `server`; answers whether there was one.
pub(crate) async fn clear(db: &Db, tenant: &str, user: &str, server: &str) -> Result<bool, Error> {
    let _writer = db.writer().await;
    let done = sqlx::query("DELETE FROM server_connections WHERE tenant = $1 AND user_id = $2 AND server = $3")
        .bind(tenant)
        .bind(user)
        .bind(server)
        .execute(&db.pool)
        .await
        .map_err(db_error)?;
    Ok(done.rows_affected() > 0)
}

/// The servers a person is signed in to: (server, since, last changed).
pub(crate) async fn of_person(db: &Db, tenant: &str, user: &str) -> Result<Vec<(String, i64, i64)>, Error> {
    let rows = sqlx::query("SELECT server, connected_at, updated_at FROM server_connections WHERE tenant = $1 AND user_id = $2 ORDER BY server")
        .bind(tenant)
        .bind(user)
        .fetch_all(&db.pool)
        .await
        .map_err(db_error)?;
    rows.iter().map(|r| Ok((r.try_get(0).map_err(db_error)?, r.try_get(1).map_err(db_error)?, r.try_get(2).map_err(db_error)?))).collect()
}

/// How many people are signed in to `server`: of `tenant`, or of every one.
pub(crate) async fn count(db: &Db, server: &str, tenant: Option<&str>) -> Result<i64, Error> {
    match tenant {
        Some(tenant) => sqlx::query_scalar("SELECT COUNT(*) FROM server_connections WHERE server = $1 AND tenant = $2").bind(server).bind(tenant),
        None => sqlx::query_scalar("SELECT COUNT(*) FROM server_connections WHERE server = $1").bind(server),
    }
    .fetch_one(&db.pool)
    .await
    .map_err(db_error)
}

/// How many sign-ins a person may have begun and not finished: a new one
/// past these forgets their oldest (a tab left open, not a store to fill).
const BEGUN_PER_PERSON: i64 = 8;

/// Keeps a sign-in begun (for `whose`: tenant, user, server), and forgets
/// those past their time.
pub(crate) async fn begin(db: &Db, state: &str, whose: (&str, &str, &str), sealed: &str, expires_at: i64, now: i64) -> Result<(), Error> {
    let (tenant, user, server) = whose;
    let _writer = db.writer().await;
    sqlx::query("DELETE FROM server_sign_ins WHERE expires_at < $1").bind(now).execute(&db.pool).await.map_err(db_error)?;
    sqlx::query("INSERT INTO server_sign_ins (state, tenant, user_id, server, sealed, expires_at) VALUES ($1, $2, $3, $4, $5, $6)")
        .bind(state)
        .bind(tenant)
        .bind(user)
        .bind(server)
        .bind(sealed)
        .bind(expires_at)
        .execute(&db.pool)
        .await
        .map_err(db_error)?;
    sqlx::query(
        "DELETE FROM server_sign_ins WHERE tenant = $1 AND user_id = $2 AND state NOT IN \
         (SELECT state FROM server_sign_ins WHERE tenant = $1 AND user_id = $2 ORDER BY expires_at DESC, state LIMIT $3)",
    )
    .bind(tenant)
    .bind(user)
    .bind(BEGUN_PER_PERSON)
    .execute(&db.pool)
    .await
    .map_err(db_error)?;
    Ok(())
}

/// A sign-in begun, read (not taken: the exchange takes it once it is done).
pub(crate) async fn attempt(db: &Db, state: &str, now: i64) -> Result<Option<(String, String, String, String)>, Error> {
    let row = sqlx::query("SELECT tenant, user_id, server, sealed FROM server_sign_ins WHERE state = $1 AND expires_at >= $2")
        .bind(state)
        .bind(now)
        .fetch_optional(&db.pool)
        .await
        .map_err(db_error)?;
    row.map(|r| {
        Ok((r.try_get(0).map_err(db_error)?, r.try_get(1).map_err(db_error)?, r.try_get(2).map_err(db_error)?, r.try_get(3).map_err(db_error)?))
    })
    .transpose()
}

/// Takes a sign-in begun: once.
pub(crate) async fn finish(db: &Db, state: &str) -> Result<bool, Error> {
    let _writer = db.writer().await;
    let done = sqlx::query("DELETE FROM server_sign_ins WHERE state = $1").bind(state).execute(&db.pool).await.map_err(db_error)?;
    Ok(done.rows_affected() > 0)
}

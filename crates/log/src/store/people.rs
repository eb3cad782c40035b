//! What belongs to a person across a tenant: their last sign-out, and
//! its writer, which ends their sessions.

use lattice_core::Error;
use lattice_core::event::{Event, SessionsEnded};
use sqlx::{AnyConnection, Row};

use super::db::{Db, db_error};
use super::sessions::owner_key;
use super::writing::Writing;

/// When a person last signed out (ms since the epoch), if ever.
pub(crate) async fn signed_out_at(db: &Db, tenant: &str, user: &str) -> Result<Option<i64>, Error> {
    let row = sqlx::query("SELECT at FROM sign_outs WHERE tenant = $1 AND user_id = $2")
        .bind(tenant)
        .bind(user)
        .fetch_optional(&db.pool)
        .await
        .map_err(db_error)?;
    row.map(|r| r.try_get::<i64, _>(0)).transpose().map_err(db_error)
}

/// Ends every token of `user` issued until now, and drops the protocol
/// sessions they opened (an MCP session whose row is gone ends).
pub(crate) async fn end_sessions(conn: &mut AnyConnection, w: &Writing<'_>, user: &str) -> Result<Event, Error> {
    sqlx::query(
        "INSERT INTO sign_outs (tenant, user_id, at) VALUES ($1, $2, $3) \
         ON CONFLICT (tenant, user_id) DO UPDATE SET at = excluded.at",
    )
    .bind(w.tenant)
    .bind(user)
    .bind(w.at)
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    sqlx::query("DELETE FROM sessions WHERE owner = $1").bind(owner_key(w.tenant, user)).execute(&mut *conn).await.map_err(db_error)?;
    Ok(SessionsEnded { user: user.to_owned(), at: w.at }.into())
}

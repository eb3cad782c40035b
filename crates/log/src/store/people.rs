//! Writers of what belongs to a person across a tenant: the end of their
//! sessions.

use lattice_core::Error;
use lattice_core::event::{Event, SessionsEnded};
use sqlx::AnyConnection;

use super::Writing;
use crate::db::db_error;

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
    sqlx::query("DELETE FROM sessions WHERE owner = $1")
        .bind(crate::sessions::owner_key(w.tenant, user))
        .execute(&mut *conn)
        .await
        .map_err(db_error)?;
    Ok(SessionsEnded { user: user.to_owned(), at: w.at }.into())
}

//! The writer of audit rows, and of the once keys that make a confirmation
//! usable once.

use lattice_core::event::{AuditRecorded, Event};
use lattice_core::{Audit, Error};
use sqlx::AnyConnection;

use super::db::db_error;
use super::writing::Writing;

/// An audit row, its once key taken (refused with `Conflict` if it was used).
pub(crate) async fn record_audit(conn: &mut AnyConnection, w: &Writing<'_>, audit: &Audit) -> Result<Event, Error> {
    if let Some(key) = &audit.once {
        let taken = sqlx::query("INSERT INTO once_keys (tenant, key, at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING")
            .bind(w.tenant)
            .bind(key)
            .bind(w.at)
            .execute(&mut *conn)
            .await
            .map_err(db_error)?;
        if taken.rows_affected() == 0 {
            return Err(Error::conflict(lattice_core::Code::AlreadyUsed, format!("{key} was already used")));
        }
    }
    Ok(AuditRecorded { name: audit.name.clone(), data: audit.data.clone() }.into())
}

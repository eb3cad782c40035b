//! Writers of artifacts: created, changed to a next version, archived.
//! Every version stays readable in `artifact_versions`.

use lattice_core::event::{ArtifactArchived, ArtifactChanged, ArtifactCreated, Event};
use lattice_core::{ArtifactId, Error};
use serde_json::Value;
use sqlx::{AnyConnection, Row};

use super::{ArtifactRow, Writing};
use crate::db::db_error;

/// An artifact at version 1; an id already taken is refused.
pub(crate) async fn create_artifact(
    conn: &mut AnyConnection,
    w: &Writing<'_>,
    id: &ArtifactId,
    kind: &str,
    data: Value,
    digest: String,
    parent: Option<&str>,
) -> Result<Event, Error> {
    let data_text = serde_json::to_string(&data).expect("JSON serializes");
    let inserted = sqlx::query(
        "INSERT INTO artifacts (tenant, id, workspace, thread, kind, version, data, digest, author, \
         created_at, updated_at, archived, parent, chain) \
         VALUES ($1, $2, $3, $4, $5, 1, $6, $7, $8, $9, $9, 0, $10, (SELECT chain FROM runs WHERE tenant = $1 AND id = $11)) \
         ON CONFLICT DO NOTHING",
    )
    .bind(w.tenant)
    .bind(id.as_str())
    .bind(w.workspace.expect("an artifact lives in a workspace"))
    .bind(w.thread.expect("an artifact lives in a thread"))
    .bind(kind)
    .bind(&data_text)
    .bind(&digest)
    .bind(w.author)
    .bind(w.at)
    .bind(parent)
    .bind(w.run)
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    if inserted.rows_affected() == 0 {
        return Err(Error::exists(format!("artifact {id}")));
    }
    insert_version(conn, w, id.as_str(), 1, &data_text, &digest).await?;
    Ok(ArtifactCreated { id: id.to_string(), kind: kind.to_owned(), version: 1, data, digest }.into())
}

/// The version after `head`, if `head` is still the head.
pub(crate) async fn change_artifact(
    conn: &mut AnyConnection,
    w: &Writing<'_>,
    head: &ArtifactRow,
    data: &Value,
    digest: String,
    patch: json_patch::Patch,
) -> Result<Event, Error> {
    let version = head.version + 1;
    let data_text = serde_json::to_string(data).expect("JSON serializes");
    let updated = sqlx::query(
        "UPDATE artifacts SET version = $1, data = $2, digest = $3, updated_at = $4 \
         WHERE tenant = $5 AND id = $6 AND version = $7 AND archived = 0",
    )
    .bind(version as i64)
    .bind(&data_text)
    .bind(&digest)
    .bind(w.at)
    .bind(w.tenant)
    .bind(&head.id)
    .bind(head.version as i64)
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    if updated.rows_affected() == 0 {
        // Someone else committed a version since the head was read.
        let row = sqlx::query("SELECT version FROM artifacts WHERE tenant = $1 AND id = $2")
            .bind(w.tenant)
            .bind(&head.id)
            .fetch_one(&mut *conn)
            .await
            .map_err(db_error)?;
        let actual: i64 = row.try_get(0).map_err(db_error)?;
        return Err(Error::version_conflict(head.version, actual as u64));
    }
    insert_version(conn, w, &head.id, version, &data_text, &digest).await?;
    Ok(ArtifactChanged { id: head.id.clone(), kind: head.kind.clone(), version, patch, digest }.into())
}

/// An artifact archived, if it was not already.
pub(crate) async fn archive_artifact(conn: &mut AnyConnection, w: &Writing<'_>, head: &ArtifactRow) -> Result<Event, Error> {
    let updated = sqlx::query("UPDATE artifacts SET archived = 1, updated_at = $1 WHERE tenant = $2 AND id = $3 AND archived = 0")
        .bind(w.at)
        .bind(w.tenant)
        .bind(&head.id)
        .execute(&mut *conn)
        .await
        .map_err(db_error)?;
    if updated.rows_affected() == 0 {
        return Err(Error::invalid_state("the artifact is archived"));
    }
    Ok(ArtifactArchived { id: head.id.clone(), kind: head.kind.clone(), version: head.version }.into())
}

async fn insert_version(conn: &mut AnyConnection, w: &Writing<'_>, id: &str, version: u64, data: &str, digest: &str) -> Result<(), Error> {
    sqlx::query("INSERT INTO artifact_versions (tenant, id, version, data, digest, author, at) VALUES ($1, $2, $3, $4, $5, $6, $7)")
        .bind(w.tenant)
        .bind(id)
        .bind(version as i64)
        .bind(data)
        .bind(digest)
        .bind(w.author)
        .bind(w.at)
        .execute(&mut *conn)
        .await
        .map_err(db_error)?;
    Ok(())
}

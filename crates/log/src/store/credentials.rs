//! API keys for agents and SCIM clients' tokens: their digests, never
//! themselves, each with its tenant, what it may do, and when it was last
//! used, revoked or stops working.

use lattice_core::directory::{KeyScope, MAX_CREDENTIALS, NewApiKey};
use lattice_core::event::{CredentialIssued, CredentialKind, CredentialRevoked, Event};
use lattice_core::{Error, Role};
use sqlx::{AnyConnection, Row};

use super::db::{Db, budget_turn, db_error, unique_or};

use super::writing::Writing;

/// A credential as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct CredentialRow {
    pub id: String,
    pub tenant: String,
    pub kind: CredentialKind,
    pub name: String,
    /// An API key's scope; a SCIM token's is its tenant's directory.
    pub scope: Option<KeyScope>,
    pub created_by: String,
    pub created_at: i64,
    pub expires_at: Option<i64>,
    pub last_used_at: Option<i64>,
    pub revoked_at: Option<i64>,
}

const COLUMNS: &str = "id, tenant, kind, name, scope, created_by, created_at, expires_at, last_used_at, revoked_at";

fn kind_name(kind: CredentialKind) -> &'static str {
    match kind {
        CredentialKind::ApiKey => "api_key",
        CredentialKind::ScimToken => "scim_token",
    }
}

fn row(r: &sqlx::any::AnyRow) -> Result<CredentialRow, Error> {
    let kind: String = r.try_get(2).map_err(db_error)?;
    let scope: String = r.try_get(4).map_err(db_error)?;
    Ok(CredentialRow {
        id: r.try_get(0).map_err(db_error)?,
        tenant: r.try_get(1).map_err(db_error)?,
        kind: if kind == "api_key" { CredentialKind::ApiKey } else { CredentialKind::ScimToken },
        name: r.try_get(3).map_err(db_error)?,
        scope: serde_json::from_str(&scope).ok(),
        created_by: r.try_get(5).map_err(db_error)?,
        created_at: r.try_get(6).map_err(db_error)?,
        expires_at: r.try_get(7).map_err(db_error)?,
        last_used_at: r.try_get(8).map_err(db_error)?,
        revoked_at: r.try_get(9).map_err(db_error)?,
    })
}

/// The credential whose digest is `digest`, revoked or not.
pub(crate) async fn by_digest(db: &Db, digest: &str) -> Result<Option<CredentialRow>, Error> {
    let sql = format!("SELECT {COLUMNS} FROM credentials WHERE digest = $1");
    let r = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(digest).fetch_optional(&db.pool).await.map_err(db_error)?;
    r.as_ref().map(row).transpose()
}

pub(crate) async fn by_id(db: &Db, id: &str) -> Result<Option<CredentialRow>, Error> {
    let sql = format!("SELECT {COLUMNS} FROM credentials WHERE id = $1");
    let r = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(&db.pool).await.map_err(db_error)?;
    r.as_ref().map(row).transpose()
}

/// A tenant's credentials of one kind, newest first.
pub(crate) async fn of_tenant(db: &Db, tenant: &str, kind: CredentialKind) -> Result<Vec<CredentialRow>, Error> {
    let sql = format!("SELECT {COLUMNS} FROM credentials WHERE tenant = $1 AND kind = $2 ORDER BY created_at DESC, id DESC LIMIT 2000");
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(tenant).bind(kind_name(kind)).fetch_all(&db.pool).await.map_err(db_error)?;
    rows.iter().map(row).collect()
}

/// Notes a use. Called at most once a minute per credential by its
/// reader, so a busy agent costs no write per request.
pub(crate) async fn used(db: &Db, id: &str, now: i64) -> Result<(), Error> {
    let _writer = db.writer().await;
    sqlx::query("UPDATE credentials SET last_used_at = $2 WHERE id = $1").bind(id).bind(now).execute(&db.pool).await.map_err(db_error)?;
    Ok(())
}

async fn held(conn: &mut AnyConnection, tenant: &str, kind: CredentialKind) -> Result<i64, Error> {
    sqlx::query_scalar("SELECT COUNT(*) FROM credentials WHERE tenant = $1 AND kind = $2 AND revoked_at IS NULL")
        .bind(tenant)
        .bind(kind_name(kind))
        .fetch_one(&mut *conn)
        .await
        .map_err(db_error)
}

fn too_many(kind: CredentialKind) -> Error {
    let what = if kind == CredentialKind::ApiKey { "API keys" } else { "SCIM tokens" };
    Error::conflict(lattice_core::Code::CredentialLimit, format!("the tenant holds {MAX_CREDENTIALS} {what}, its limit: revoke one first"))
}

/// Issues an API key: its row, and for a key of a workspace, its agent on
/// the workspace's members list with the key's role.
pub(crate) async fn issue_key(conn: &mut AnyConnection, w: &Writing<'_>, key: &NewApiKey) -> Result<Event, Error> {
    budget_turn(conn, &format!("credentials:{}", w.tenant)).await?;
    if held(conn, w.tenant, CredentialKind::ApiKey).await? >= MAX_CREDENTIALS as i64 {
        return Err(too_many(CredentialKind::ApiKey));
    }
    let scope = serde_json::to_string(&key.scope).map_err(|_| Error::unavailable("a key's scope does not serialize"))?;
    sqlx::query(
        "INSERT INTO credentials (id, tenant, kind, name, scope, digest, created_by, created_at, expires_at, last_used_at, revoked_at) \
         VALUES ($1, $2, 'api_key', $3, $4, $5, $6, $7, $8, NULL, NULL)",
    )
    .bind(key.id.as_str())
    .bind(w.tenant)
    .bind(&key.name)
    .bind(&scope)
    .bind(&key.digest)
    .bind(w.author)
    .bind(w.at)
    .bind(key.expires_at)
    .execute(&mut *conn)
    .await
    .map_err(|e| unique_or(e, || Error::conflict(lattice_core::Code::AlreadyExists, "the key exists already")))?;
    if let KeyScope::Workspace { workspace, role } = &key.scope {
        set_member(conn, workspace.as_str(), key.id.as_str(), Some(*role)).await?;
    }
    Ok(CredentialIssued {
        id: key.id.to_string(),
        kind: CredentialKind::ApiKey,
        name: Some(key.name.clone()),
        scope: Some(key.scope.clone()),
        expires_at: key.expires_at,
    }
    .into())
}

/// A workspace member's row for a key's agent: put, or taken away.
async fn set_member(conn: &mut AnyConnection, workspace: &str, user: &str, role: Option<Role>) -> Result<(), Error> {
    match role {
        Some(role) => sqlx::query(
            "INSERT INTO members (workspace, user_id, role) VALUES ($1, $2, $3) ON CONFLICT (workspace, user_id) DO UPDATE SET role = excluded.role",
        )
        .bind(workspace)
        .bind(user)
        .bind(role.as_str())
        .execute(&mut *conn)
        .await
        .map_err(db_error)?,
        None => sqlx::query("DELETE FROM members WHERE workspace = $1 AND user_id = $2")
            .bind(workspace)
            .bind(user)
            .execute(&mut *conn)
            .await
            .map_err(db_error)?,
    };
    Ok(())
}

/// Issues a SCIM token.
pub(crate) async fn issue_scim_token(conn: &mut AnyConnection, w: &Writing<'_>, id: &str, digest: &str) -> Result<Event, Error> {
    budget_turn(conn, &format!("credentials:{}", w.tenant)).await?;
    if held(conn, w.tenant, CredentialKind::ScimToken).await? >= MAX_CREDENTIALS as i64 {
        return Err(too_many(CredentialKind::ScimToken));
    }
    sqlx::query(
        "INSERT INTO credentials (id, tenant, kind, name, scope, digest, created_by, created_at, expires_at, last_used_at, revoked_at) \
         VALUES ($1, $2, 'scim_token', 'SCIM', 'null', $3, $4, $5, NULL, NULL, NULL)",
    )
    .bind(id)
    .bind(w.tenant)
    .bind(digest)
    .bind(w.author)
    .bind(w.at)
    .execute(&mut *conn)
    .await
    .map_err(|e| unique_or(e, || Error::conflict(lattice_core::Code::AlreadyExists, "the token exists already")))?;
    Ok(CredentialIssued { id: id.to_owned(), kind: CredentialKind::ScimToken, name: None, scope: None, expires_at: None }.into())
}

/// Revokes a credential of the tenant (once: a second revocation is a
/// conflict); a key of a workspace leaves its members list.
pub(crate) async fn revoke(conn: &mut AnyConnection, w: &Writing<'_>, id: &str, kind: CredentialKind) -> Result<Event, Error> {
    let r = sqlx::query("SELECT scope, revoked_at FROM credentials WHERE id = $1 AND tenant = $2 AND kind = $3")
        .bind(id)
        .bind(w.tenant)
        .bind(kind_name(kind))
        .fetch_optional(&mut *conn)
        .await
        .map_err(db_error)?;
    let Some(r) = r else { return Err(Error::NotFound) };
    if r.try_get::<Option<i64>, _>(1).map_err(db_error)?.is_some() {
        return Err(Error::invalid_state(lattice_core::Code::AlreadyRevoked, "it was revoked already"));
    }
    sqlx::query("UPDATE credentials SET revoked_at = $2 WHERE id = $1").bind(id).bind(w.at).execute(&mut *conn).await.map_err(db_error)?;
    if let Ok(KeyScope::Workspace { workspace, .. }) = serde_json::from_str::<KeyScope>(&r.try_get::<String, _>(0).map_err(db_error)?) {
        set_member(conn, workspace.as_str(), id, None).await?;
    }
    Ok(CredentialRevoked { id: id.to_owned(), kind }.into())
}

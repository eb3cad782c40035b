//! Sign-ins through a provider: the attempts begun and not yet back (what
//! the browser must not hold), and the sessions their tokens name. Kept
//! beside the log, as protocol sessions are: what a person may read changes
//! only through the log (a sign-out is a command).

use lattice_core::Error;
use sqlx::Row;

use super::db::{Db, db_error};

/// A sign-in begun: its state, the provider, the nonce and PKCE verifier,
/// and the digest of the page's binding secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    pub state: String,
    pub provider: String,
    pub nonce: String,
    pub verifier: String,
    pub binding: Option<String>,
    pub expires_at: i64,
}

/// Keeps an attempt, and forgets those past their time.
pub(crate) async fn begin(db: &Db, attempt: &Attempt, now: i64) -> Result<(), Error> {
    let _writer = db.writer().await;
    sqlx::query("DELETE FROM sign_in_attempts WHERE expires_at < $1").bind(now).execute(&db.pool).await.map_err(db_error)?;
    sqlx::query("INSERT INTO sign_in_attempts (state, provider, nonce, verifier, binding, expires_at) VALUES ($1, $2, $3, $4, $5, $6)")
        .bind(&attempt.state)
        .bind(&attempt.provider)
        .bind(&attempt.nonce)
        .bind(&attempt.verifier)
        .bind(attempt.binding.as_deref())
        .bind(attempt.expires_at)
        .execute(&db.pool)
        .await
        .map_err(db_error)?;
    Ok(())
}

/// Takes an attempt by its state, once: a second callback with the same
/// state finds nothing, as does one past its time.
pub(crate) async fn take(db: &Db, state: &str, now: i64) -> Result<Option<Attempt>, Error> {
    let _writer = db.writer().await;
    let row = sqlx::query("DELETE FROM sign_in_attempts WHERE state = $1 RETURNING provider, nonce, verifier, binding, expires_at")
        .bind(state)
        .fetch_optional(&db.pool)
        .await
        .map_err(db_error)?;
    let Some(row) = row else { return Ok(None) };
    let attempt = Attempt {
        state: state.to_owned(),
        provider: row.try_get(0).map_err(db_error)?,
        nonce: row.try_get(1).map_err(db_error)?,
        verifier: row.try_get(2).map_err(db_error)?,
        binding: row.try_get(3).map_err(db_error)?,
        expires_at: row.try_get(4).map_err(db_error)?,
    };
    Ok((attempt.expires_at >= now).then_some(attempt))
}

/// A sign-in session as opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSignIn<'a> {
    pub id: &'a str,
    pub tenant: &'a str,
    pub user: &'a str,
    pub provider: &'a str,
    pub subject: &'a str,
    pub provider_sid: Option<&'a str>,
    pub now: i64,
    pub expires_at: i64,
    /// The digest of the one-time code the browser trades, and until when.
    pub handoff: &'a str,
    pub handoff_until: i64,
    pub binding: Option<&'a str>,
}

pub(crate) async fn open(db: &Db, s: &NewSignIn<'_>) -> Result<(), Error> {
    let _writer = db.writer().await;
    sqlx::query(
        "INSERT INTO sign_ins (id, tenant, user_id, provider, subject, provider_sid, created_at, renewed_at, expires_at, ended_at, \
         handoff, handoff_until, binding) VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8, NULL, $9, $10, $11)",
    )
    .bind(s.id)
    .bind(s.tenant)
    .bind(s.user)
    .bind(s.provider)
    .bind(s.subject)
    .bind(s.provider_sid)
    .bind(s.now)
    .bind(s.expires_at)
    .bind(s.handoff)
    .bind(s.handoff_until)
    .bind(s.binding)
    .execute(&db.pool)
    .await
    .map_err(db_error)?;
    Ok(())
}

/// A sign-in session as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignInRow {
    pub id: String,
    pub tenant: String,
    pub user: String,
    pub provider: String,
    pub renewed_at: i64,
    pub expires_at: i64,
    pub ended_at: Option<i64>,
    pub binding: Option<String>,
}

const COLUMNS: &str = "id, tenant, user_id, provider, renewed_at, expires_at, ended_at, binding";

fn row(r: &sqlx::any::AnyRow) -> Result<SignInRow, Error> {
    Ok(SignInRow {
        id: r.try_get(0).map_err(db_error)?,
        tenant: r.try_get(1).map_err(db_error)?,
        user: r.try_get(2).map_err(db_error)?,
        provider: r.try_get(3).map_err(db_error)?,
        renewed_at: r.try_get(4).map_err(db_error)?,
        expires_at: r.try_get(5).map_err(db_error)?,
        ended_at: r.try_get(6).map_err(db_error)?,
        binding: r.try_get(7).map_err(db_error)?,
    })
}

/// The session a one-time code's digest names, while it may be traded.
pub(crate) async fn handed_off(db: &Db, handoff: &str, now: i64) -> Result<Option<SignInRow>, Error> {
    let sql = format!("SELECT {COLUMNS} FROM sign_ins WHERE handoff = $1 AND handoff_until >= $2 AND ended_at IS NULL");
    let r = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(handoff).bind(now).fetch_optional(&db.pool).await.map_err(db_error)?;
    r.as_ref().map(row).transpose()
}

/// Trades a one-time code's digest for its session, once and in time.
pub(crate) async fn redeem(db: &Db, handoff: &str, now: i64) -> Result<Option<SignInRow>, Error> {
    let _writer = db.writer().await;
    let sql = format!("UPDATE sign_ins SET handoff = NULL WHERE handoff = $1 AND handoff_until >= $2 AND ended_at IS NULL RETURNING {COLUMNS}");
    let r = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(handoff).bind(now).fetch_optional(&db.pool).await.map_err(db_error)?;
    r.as_ref().map(row).transpose()
}

pub(crate) async fn get(db: &Db, id: &str) -> Result<Option<SignInRow>, Error> {
    let sql = format!("SELECT {COLUMNS} FROM sign_ins WHERE id = $1");
    let r = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(&db.pool).await.map_err(db_error)?;
    r.as_ref().map(row).transpose()
}

/// Marks a session used now, if it has not ended.
pub(crate) async fn renewed(db: &Db, id: &str, now: i64) -> Result<(), Error> {
    let _writer = db.writer().await;
    sqlx::query("UPDATE sign_ins SET renewed_at = $2 WHERE id = $1 AND ended_at IS NULL")
        .bind(id)
        .bind(now)
        .execute(&db.pool)
        .await
        .map_err(db_error)?;
    Ok(())
}

/// The people a provider's session (or, without its `sid`, its subject)
/// signed in: (tenant, user), each once.
pub(crate) async fn signed_in_by(db: &Db, provider: &str, subject: Option<&str>, provider_sid: Option<&str>) -> Result<Vec<(String, String)>, Error> {
    let rows = sqlx::query(
        "SELECT DISTINCT tenant, user_id FROM sign_ins WHERE provider = $1 \
         AND ($2 IS NULL OR subject = $2) AND ($3 IS NULL OR provider_sid = $3) AND ($2 IS NOT NULL OR $3 IS NOT NULL)",
    )
    .bind(provider)
    .bind(subject)
    .bind(provider_sid)
    .fetch_all(&db.pool)
    .await
    .map_err(db_error)?;
    rows.iter().map(|r| Ok((r.try_get(0).map_err(db_error)?, r.try_get(1).map_err(db_error)?))).collect()
}

//! PostgreSQL's notifications, which replicas sharing a database tell
//! each other things on.

use sqlx::postgres::PgListener;

use super::db::Db;

/// A connection of its own to `url` listening on `channel`.
pub(crate) async fn listen(url: &str, channel: &str) -> Result<PgListener, sqlx::Error> {
    let mut listener = PgListener::connect(url).await?;
    listener.listen(channel).await?;
    Ok(listener)
}

/// Says `payload` on `channel`.
pub(crate) async fn say(db: &Db, channel: &str, payload: &str) -> Result<(), sqlx::Error> {
    sqlx::query("SELECT pg_notify($1, $2)").bind(channel).bind(payload).execute(&db.pool).await.map(drop)
}

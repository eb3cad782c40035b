//! The `switches` table: what each level holds for each key (a missing
//! row is `unset`), and the writer of a switch.

use lattice_core::event::{Event, SwitchSet};
use lattice_core::{Error, Level, SwitchKey, SwitchState};
use sqlx::{AnyConnection, Row};

use super::db::{Db, db_error};

/// What each of three levels (deployment, tenant, workspace, as their
/// names) holds for one key.
pub(crate) async fn states(db: &Db, levels: &[String; 3], key: SwitchKey) -> Result<[SwitchState; 3], Error> {
    let rows = sqlx::query("SELECT level, state FROM switches WHERE key = $1 AND level IN ($2, $3, $4)")
        .bind(key.as_str())
        .bind(&levels[0])
        .bind(&levels[1])
        .bind(&levels[2])
        .fetch_all(&db.pool)
        .await
        .map_err(db_error)?;
    let mut states = [SwitchState::Unset; 3];
    for row in rows {
        let level: String = row.try_get(0).map_err(db_error)?;
        let state: String = row.try_get(1).map_err(db_error)?;
        if let Some(i) = levels.iter().position(|l| *l == level) {
            states[i] = SwitchState::parse(&state).unwrap_or(SwitchState::Unset);
        }
    }
    Ok(states)
}

/// What each of `levels` holds for each of `keys`, in one query. Indexed
/// as `levels`, then as `keys`.
pub(crate) async fn states_of(db: &Db, levels: &[Level], keys: &[SwitchKey]) -> Result<Vec<Vec<SwitchState>>, Error> {
    let names: Vec<String> = levels.iter().map(ToString::to_string).collect();
    let mut out = vec![vec![SwitchState::Unset; keys.len()]; levels.len()];
    if names.is_empty() {
        return Ok(out);
    }
    let marks: Vec<String> = (1..=names.len()).map(|i| format!("${i}")).collect();
    let sql = format!("SELECT level, key, state FROM switches WHERE level IN ({})", marks.join(", "));
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
    for name in &names {
        query = query.bind(name);
    }
    for row in query.fetch_all(&db.pool).await.map_err(db_error)? {
        let level: String = row.try_get(0).map_err(db_error)?;
        let key: String = row.try_get(1).map_err(db_error)?;
        let state: String = row.try_get(2).map_err(db_error)?;
        let (Some(i), Some(k)) = (names.iter().position(|n| *n == level), keys.iter().position(|k| k.as_str() == key)) else {
            continue;
        };
        out[i][k] = SwitchState::parse(&state).unwrap_or_default();
    }
    Ok(out)
}

/// What one level holds for one key.
pub(crate) async fn state(db: &Db, level: &Level, key: SwitchKey) -> Result<SwitchState, Error> {
    let row = sqlx::query("SELECT state FROM switches WHERE level = $1 AND key = $2")
        .bind(level.to_string())
        .bind(key.as_str())
        .fetch_optional(&db.pool)
        .await
        .map_err(db_error)?;
    Ok(match row {
        Some(row) => SwitchState::parse(&row.try_get::<String, _>(0).map_err(db_error)?).unwrap_or_default(),
        None => SwitchState::Unset,
    })
}

/// The levels that hold a state for some key, as stored, in order.
pub(crate) async fn levels_held(db: &Db) -> Result<Vec<String>, Error> {
    sqlx::query_scalar("SELECT DISTINCT level FROM switches ORDER BY level").fetch_all(&db.pool).await.map_err(db_error)
}

/// The writer of a switch: one level's state set inside the commit's
/// transaction, the event recording the old state and the new.
pub(crate) async fn set_switch(conn: &mut AnyConnection, level: &Level, key: SwitchKey, state: SwitchState, reason: &str) -> Result<Event, Error> {
    let level = level.to_string();
    let old = sqlx::query("SELECT state FROM switches WHERE level = $1 AND key = $2")
        .bind(&level)
        .bind(key.as_str())
        .fetch_optional(&mut *conn)
        .await
        .map_err(db_error)?
        .map(|row| row.try_get::<String, _>(0))
        .transpose()
        .map_err(db_error)?
        .and_then(|s| SwitchState::parse(&s))
        .unwrap_or_default();
    if state == SwitchState::Unset {
        sqlx::query("DELETE FROM switches WHERE level = $1 AND key = $2")
            .bind(&level)
            .bind(key.as_str())
            .execute(&mut *conn)
            .await
            .map_err(db_error)?;
    } else {
        sqlx::query(
            "INSERT INTO switches (level, key, state) VALUES ($1, $2, $3) \
             ON CONFLICT (level, key) DO UPDATE SET state = excluded.state",
        )
        .bind(&level)
        .bind(key.as_str())
        .bind(state.as_str())
        .execute(&mut *conn)
        .await
        .map_err(db_error)?;
    }
    Ok(SwitchSet { level, key: key.as_str().into(), old: old.as_str().into(), new: state.as_str().into(), reason: reason.into() }.into())
}

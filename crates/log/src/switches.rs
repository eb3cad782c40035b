//! The switch store (REQUIREMENTS.md I1, I2): what each level holds for each key. A
//! missing row is `unset`. Changes are commands (`SetSwitch`) and so leave
//! their audit trail in the log as `switch_set` envelopes.

use lattice_core::event::{Event, SwitchSet};
use lattice_core::integrations::resolve;
use lattice_core::{Effective, Error, Integrations, Level, SwitchKey, SwitchState, TenantId, WorkspaceId};
use sqlx::{AnyConnection, Row};

use crate::db::{Db, db_error};

#[derive(Clone)]
pub struct SwitchStore {
    db: Db,
}

impl SwitchStore {
    pub(crate) fn new(db: Db) -> Self {
        Self { db }
    }

    /// The three levels' states for one key in one workspace.
    pub async fn states(&self, tenant: &TenantId, workspace: &WorkspaceId, key: SwitchKey) -> Result<[SwitchState; 3], Error> {
        let levels = [Level::Deployment.to_string(), Level::Tenant(tenant.clone()).to_string(), Level::Workspace(workspace.clone()).to_string()];
        let rows = sqlx::query("SELECT level, state FROM switches WHERE key = $1 AND level IN ($2, $3, $4)")
            .bind(key.as_str())
            .bind(&levels[0])
            .bind(&levels[1])
            .bind(&levels[2])
            .fetch_all(&self.db.pool)
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

    /// What each of `levels` holds for each key, in one query: a missing
    /// row is `unset`. Indexed as `levels`, then as [`SwitchKey::ALL`].
    pub async fn states_of(&self, levels: &[Level]) -> Result<Vec<[SwitchState; 3]>, Error> {
        let names: Vec<String> = levels.iter().map(ToString::to_string).collect();
        let mut out = vec![[SwitchState::Unset; 3]; levels.len()];
        if names.is_empty() {
            return Ok(out);
        }
        let marks: Vec<String> = (1..=names.len()).map(|i| format!("${i}")).collect();
        let sql = format!("SELECT level, key, state FROM switches WHERE level IN ({})", marks.join(", "));
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
        for name in &names {
            query = query.bind(name);
        }
        for row in query.fetch_all(&self.db.pool).await.map_err(db_error)? {
            let level: String = row.try_get(0).map_err(db_error)?;
            let key: String = row.try_get(1).map_err(db_error)?;
            let state: String = row.try_get(2).map_err(db_error)?;
            let (Some(i), Some(k)) = (names.iter().position(|n| *n == level), SwitchKey::ALL.iter().position(|k| k.as_str() == key)) else {
                continue;
            };
            out[i][k] = SwitchState::parse(&state).unwrap_or_default();
        }
        Ok(out)
    }

    /// What one level holds for one key.
    pub async fn state(&self, level: &Level, key: SwitchKey) -> Result<SwitchState, Error> {
        let row = sqlx::query("SELECT state FROM switches WHERE level = $1 AND key = $2")
            .bind(level.to_string())
            .bind(key.as_str())
            .fetch_optional(&self.db.pool)
            .await
            .map_err(db_error)?;
        Ok(match row {
            Some(row) => SwitchState::parse(&row.try_get::<String, _>(0).map_err(db_error)?).unwrap_or_default(),
            None => SwitchState::Unset,
        })
    }
}

#[async_trait::async_trait]
impl Integrations for SwitchStore {
    async fn effective(&self, tenant: &TenantId, workspace: &WorkspaceId, key: SwitchKey) -> Result<Effective, Error> {
        let [d, t, w] = self.states(tenant, workspace, key).await?;
        Ok(resolve(key, d, t, w))
    }
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

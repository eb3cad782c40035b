//! What a follower reads beside a batch of envelopes, one statement for many
//! keys: whether threads are restricted, the forms and apps submissions
//! name, the requests ask_form answers answer, and files' rows. Each key
//! missing from an answer is not there.

use std::collections::HashMap;

use lattice_core::Error;
use serde_json::Value;
use sqlx::Row;

use super::db::{Db, db_error};
use super::files::FileRow;

/// Keys a statement binds at most: well under SQLite's and PostgreSQL's
/// limits on bound values, for keys of up to three columns. More are read
/// a statement for each this many.
pub const KEYS_PER_QUERY: usize = 256;

/// An artifact at one version: its kind, that version's data (`None` when
/// the artifact has no such version), and the chain it keeps.
#[derive(Debug, Clone, PartialEq)]
pub struct ArtifactAt {
    pub kind: String,
    pub data: Option<Value>,
    pub chain: Option<String>,
}

/// `(c1 = $1 AND c2 = $2) OR (c1 = $3 AND c2 = $4) …` for `keys` keys of
/// `columns`: both backends answer each term from the primary key.
fn any_of(columns: &[&str], keys: usize) -> String {
    let mut n = 0;
    let terms: Vec<String> = (0..keys)
        .map(|_| {
            let equal: Vec<String> = columns
                .iter()
                .map(|c| {
                    n += 1;
                    format!("{c} = ${n}")
                })
                .collect();
            format!("({})", equal.join(" AND "))
        })
        .collect();
    terms.join(" OR ")
}

/// Whether each of `threads` found is restricted.
pub(crate) async fn threads_restricted(db: &Db, threads: &[&str]) -> Result<HashMap<String, bool>, Error> {
    let mut out = HashMap::with_capacity(threads.len());
    for chunk in threads.chunks(KEYS_PER_QUERY) {
        let sql = format!("SELECT id, restricted FROM threads WHERE {}", any_of(&["id"], chunk.len()));
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
        for thread in chunk {
            query = query.bind(*thread);
        }
        for row in query.fetch_all(&db.pool).await.map_err(db_error)? {
            out.insert(row.try_get(0).map_err(db_error)?, row.try_get::<i64, _>(1).map_err(db_error)? != 0);
        }
    }
    Ok(out)
}

/// The artifacts `wanted` names, each `(tenant, id, version)`; one not
/// found is missing, one without the version asked for answers no data.
pub(crate) async fn artifacts_at(db: &Db, wanted: &[(&str, &str, u64)]) -> Result<HashMap<(String, String, u64), ArtifactAt>, Error> {
    let mut out = HashMap::with_capacity(wanted.len());
    for chunk in wanted.chunks(KEYS_PER_QUERY) {
        let mut versions: Vec<i64> = chunk.iter().map(|(_, _, v)| *v as i64).collect();
        versions.sort_unstable();
        versions.dedup();
        // Each artifact once per version asked for that it has (of any
        // artifact's: a few rows more, one statement), or once without.
        let listed: Vec<String> = (0..versions.len()).map(|i| format!("${}", 2 * chunk.len() + i + 1)).collect();
        let sql = format!(
            "SELECT a.tenant, a.id, a.kind, a.chain, v.version, v.data FROM artifacts a \
             LEFT JOIN artifact_versions v ON v.tenant = a.tenant AND v.id = a.id AND v.version IN ({}) WHERE {}",
            listed.join(", "),
            any_of(&["a.tenant", "a.id"], chunk.len())
        );
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
        for (tenant, id, _) in chunk {
            query = query.bind(*tenant).bind(*id);
        }
        for version in &versions {
            query = query.bind(*version);
        }
        let mut found: HashMap<(String, String), (String, Option<String>)> = HashMap::new();
        let mut data: HashMap<(String, String, u64), Value> = HashMap::new();
        for row in query.fetch_all(&db.pool).await.map_err(db_error)? {
            let (tenant, id): (String, String) = (row.try_get(0).map_err(db_error)?, row.try_get(1).map_err(db_error)?);
            if let Some(version) = row.try_get::<Option<i64>, _>(4).map_err(db_error)? {
                let text: String = row.try_get(5).map_err(db_error)?;
                let value = serde_json::from_str(&text).map_err(|e| Error::unavailable(format!("stored artifact is not JSON: {e}")))?;
                data.insert((tenant.clone(), id.clone(), version as u64), value);
            }
            found.insert((tenant, id), (row.try_get(2).map_err(db_error)?, row.try_get(3).map_err(db_error)?));
        }
        for (tenant, id, version) in chunk {
            let Some((kind, chain)) = found.get(&((*tenant).to_owned(), (*id).to_owned())) else { continue };
            let key = ((*tenant).to_owned(), (*id).to_owned(), *version);
            let at = ArtifactAt { kind: kind.clone(), data: data.get(&key).cloned(), chain: chain.clone() };
            out.insert(key, at);
        }
    }
    Ok(out)
}

/// The arguments of the requests `wanted` names, each `(tenant, run, tool_call_id)`.
pub(crate) async fn requests_args(db: &Db, wanted: &[(&str, &str, &str)]) -> Result<HashMap<(String, String, String), Value>, Error> {
    let mut out = HashMap::with_capacity(wanted.len());
    for chunk in wanted.chunks(KEYS_PER_QUERY) {
        let sql =
            format!("SELECT tenant, run, tool_call_id, args FROM run_requests WHERE {}", any_of(&["tenant", "run", "tool_call_id"], chunk.len()));
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
        for (tenant, run, call) in chunk {
            query = query.bind(*tenant).bind(*run).bind(*call);
        }
        for row in query.fetch_all(&db.pool).await.map_err(db_error)? {
            let args: String = row.try_get(3).map_err(db_error)?;
            let key = (row.try_get(0).map_err(db_error)?, row.try_get(1).map_err(db_error)?, row.try_get(2).map_err(db_error)?);
            out.insert(key, serde_json::from_str(&args).unwrap_or(Value::Null));
        }
    }
    Ok(out)
}

/// The rows of the files `wanted` names, each `(tenant, id)`.
pub(crate) async fn files(db: &Db, wanted: &[(&str, &str)]) -> Result<HashMap<(String, String), FileRow>, Error> {
    let mut out = HashMap::with_capacity(wanted.len());
    for chunk in wanted.chunks(KEYS_PER_QUERY) {
        let sql = format!("SELECT {} FROM files WHERE {}", super::files::COLUMNS, any_of(&["tenant", "id"], chunk.len()));
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
        for (tenant, id) in chunk {
            query = query.bind(*tenant).bind(*id);
        }
        for row in query.fetch_all(&db.pool).await.map_err(db_error)? {
            let file = super::files::row(&row)?;
            out.insert((file.tenant.clone(), file.id.clone()), file);
        }
    }
    Ok(out)
}

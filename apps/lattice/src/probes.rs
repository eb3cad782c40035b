//! The health probes of a process: `/healthz` and `/readyz`.

use lattice_log::{Db, LogService};

/// `/healthz` (alive) and `/readyz` (the database answers, and whatever
/// else `readiness` checks), for a service whose own routes have neither.
/// Not ready is 503 `Unavailable` saying why, as the log service's own
/// `/readyz` says it.
pub(crate) fn health_routes(db: impl Into<Pinged>, readiness: Option<lattice_api::state::Readiness>) -> axum::Router {
    let db = db.into();
    axum::Router::new().route("/healthz", axum::routing::get(|| async { "ok" })).route(
        "/readyz",
        axum::routing::get(move || {
            let (db, readiness) = (db.clone(), readiness.clone());
            async move {
                if db.ping().await.is_err() {
                    return Err(lattice_api::ApiError(lattice_core::Error::unavailable("the database does not answer")));
                }
                readiness.map_or(Ok(()), |ready| ready()).map_err(|why| lattice_api::ApiError(lattice_core::Error::unavailable(why)))?;
                Ok("ready")
            }
        }),
    )
}

/// What `/readyz` asks whether the database answers: the log service, or
/// the database a process that runs none opened (the bridge, a process
/// waiting for its schema).
#[derive(Clone)]
pub(crate) enum Pinged {
    Log(LogService),
    Db(Db),
}

impl Pinged {
    async fn ping(&self) -> Result<(), lattice_core::Error> {
        match self {
            Self::Log(log) => log.ping().await,
            Self::Db(db) => db.ping().await,
        }
    }
}

impl From<LogService> for Pinged {
    fn from(log: LogService) -> Self {
        Self::Log(log)
    }
}

impl From<Db> for Pinged {
    fn from(db: Db) -> Self {
        Self::Db(db)
    }
}

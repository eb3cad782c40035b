//! Opening the database with its schema where this binary needs it.
//!
//! Only `lattice migrate` changes a PostgreSQL schema: the services need no
//! DDL rights, and replicas never race a migration. A service that finds
//! the schema behind answers `/healthz` but not `/readyz` (saying what to
//! run) and starts once it is migrated. SQLite is the embedded store of one
//! process, which migrates it itself.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use lattice_log::{Backend, Db, Schema};
use tokio::net::TcpListener;

use crate::config::Config;

/// How often a waiting service looks at the schema again.
const LOOK_AGAIN: Duration = Duration::from_secs(2);

/// What a service does while the schema is behind.
pub enum Behind {
    /// Migrates it: `lattice up`, the embedded default, owns its database.
    Migrate,
    /// Probes on LATTICE_HTTP_ADDR (alive, not ready), until it is migrated.
    Wait,
    /// Refuses to start (a command with no probes, such as `mcp --stdio`).
    Refuse,
}

/// Connects, and returns once the schema is this binary's.
pub async fn open(config: &Config, connections: u32, behind: Behind) -> anyhow::Result<Db> {
    let db = Db::connect(&config.database_url, connections).await?;
    if db.backend() == Backend::Sqlite || matches!(behind, Behind::Migrate) {
        db.migrate().await?;
        return Ok(db);
    }
    let Schema::Behind { applied, known } = db.schema().await? else { return Ok(db) };
    let why = why(applied, known);
    match behind {
        Behind::Refuse => anyhow::bail!("{why}"),
        Behind::Wait => wait(config, &db, why).await?,
        Behind::Migrate => unreachable!("migrated above"),
    }
    Ok(db)
}

fn why(applied: usize, known: usize) -> String {
    format!("the database's schema has {applied} of this binary's {known} migrations: run `lattice migrate` against it")
}

async fn wait(config: &Config, db: &Db, why: String) -> anyhow::Result<()> {
    tracing::error!("{why}; waiting for it, not ready");
    let reason = Arc::new(std::sync::Mutex::new(why));
    let shown = reason.clone();
    let probes = crate::probes::health_routes(db.clone(), Some(Arc::new(move || Err(shown.lock().expect("not poisoned").clone()))));
    let listener = TcpListener::bind(config.http_addr).await.with_context(|| format!("listening on {}", config.http_addr))?;
    let (done, stop) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, probes)
            .with_graceful_shutdown(async move {
                let _ = stop.await;
            })
            .await;
    });
    let mut looks = 0u32;
    loop {
        tokio::select! {
            () = tokio::time::sleep(LOOK_AGAIN) => {}
            () = crate::signals::interrupted() => anyhow::bail!("stopped while waiting for `lattice migrate`"),
        }
        looks += 1;
        match db.schema().await {
            Ok(Schema::Current) => break,
            Ok(Schema::Behind { applied, known }) => {
                let now = self::why(applied, known);
                if looks.is_multiple_of(15) {
                    tracing::error!("{now}; still waiting");
                }
                *reason.lock().expect("not poisoned") = now;
            }
            Err(e) => tracing::warn!(error = %e, "cannot read the schema's migrations; looking again"),
        }
    }
    let _ = done.send(());
    let _ = server.await;
    tracing::info!("the schema is migrated: starting");
    Ok(())
}

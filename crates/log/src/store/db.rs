//! The database handle: PostgreSQL or SQLite behind one sqlx `AnyPool`, with
//! each backend's own migrations. Only this crate touches it.

use std::str::FromStr;
use std::time::Duration;

use lattice_core::Error;
use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyConnection, AnyPool, Connection, Executor, Transaction};

/// How long a pooled connection may sit unused before it is pinged on its
/// way out of the pool.
const IDLE_BEFORE_PING: Duration = Duration::from_secs(1);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Postgres,
    Sqlite,
}

/// A database's schema against the migrations this binary carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schema {
    /// Every migration this binary knows is applied (a newer binary's may be too).
    Current,
    /// `applied` of the `known` migrations are: `lattice migrate` applies the rest.
    Behind { applied: usize, known: usize },
}

#[derive(Clone)]
pub struct Db {
    pub(super) pool: AnyPool,
    pub(super) backend: Backend,
    /// SQLite takes one writer at a time; queueing writers here, rather than
    /// letting them race for the file lock, keeps `SQLITE_BUSY` away.
    write_lock: std::sync::Arc<tokio::sync::Mutex<()>>,
    /// Where it connects: a PostgreSQL listener opens its own connection.
    url: std::sync::Arc<str>,
}

static POSTGRES: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");
static SQLITE: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");

impl Backend {
    /// The name OpenTelemetry's database conventions give it.
    pub fn system_name(self) -> &'static str {
        match self {
            Backend::Postgres => "postgresql",
            Backend::Sqlite => "sqlite",
        }
    }
}

impl Db {
    /// Connects to `postgres://…` or `sqlite://…`; a SQLite file (and its
    /// folder) is created when missing.
    pub async fn connect(url: &str, max_connections: u32) -> Result<Self, Error> {
        sqlx::any::install_default_drivers();
        let backend = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Backend::Postgres
        } else if url.starts_with("sqlite:") {
            Backend::Sqlite
        } else {
            return Err(Error::unavailable(format!(
                "database URL must start with postgres:// or sqlite:, got {:?}",
                url.split(':').next().unwrap_or("")
            )));
        };
        let url = match backend {
            Backend::Sqlite => sqlite_url(url)?,
            Backend::Postgres => url.to_owned(),
        };
        let options = AnyConnectOptions::from_str(&url).map_err(Error::unavailable)?;
        let pool = AnyPoolOptions::new()
            .max_connections(max_connections)
            .acquire_timeout(Duration::from_secs(10))
            // A connection used in the last second is trusted as it is: a
            // ping on every acquire is a round trip more for each read and
            // each commit (sqlx pings each one it takes back anyway, off the
            // request's path, and drops it if broken). One that sat idle
            // longer is pinged first, so a server that went away meanwhile
            // costs a reconnect, not an error.
            .test_before_acquire(false)
            .before_acquire(|conn, meta| {
                Box::pin(async move {
                    if meta.idle_for > IDLE_BEFORE_PING {
                        conn.ping().await?;
                    }
                    Ok(true)
                })
            })
            .after_connect(move |conn, _| {
                Box::pin(async move {
                    if backend == Backend::Sqlite {
                        // WAL lets readers run beside the writer; FULL makes an
                        // acknowledged commit survive a crash of the machine too.
                        // The file mapped (up to SQLite's 2 GB cap): a read of a
                        // large log finds a thread's envelopes each on a page of
                        // its own, which a connection's small page cache does
                        // not hold; mapped, each costs a memory read, not a
                        // read() (`cargo xtask bench data`).
                        conn.execute(
                            "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; \
                             PRAGMA busy_timeout = 10000; PRAGMA foreign_keys = ON; PRAGMA mmap_size = 2147418112;",
                        )
                        .await?;
                    }
                    Ok(())
                })
            })
            .connect_with(options)
            .await
            .map_err(|e| Error::unavailable(format!("cannot connect to the database: {e}")))?;
        Ok(Self { pool, backend, write_lock: Default::default(), url: url.into() })
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Where it connects: a PostgreSQL listener opens its own connection.
    pub(crate) fn url(&self) -> std::sync::Arc<str> {
        self.url.clone()
    }

    /// On SQLite, the one writer's turn. Every write takes it, the write
    /// path's and the bookkeeping's (leases, checkpoints, sessions) alike:
    /// a write between a transaction's read and its write would fail that
    /// transaction at once (`SQLITE_BUSY_SNAPSHOT`), not wait.
    pub(crate) async fn writer(&self) -> Option<tokio::sync::MutexGuard<'_, ()>> {
        match self.backend {
            Backend::Sqlite => Some(self.write_lock.lock().await),
            Backend::Postgres => None,
        }
    }

    /// Where one commit writes: in a transaction, or, for a commit that is
    /// one statement, on a pooled connection of its own (the statement is
    /// its own transaction, and a round trip or two cheaper).
    pub(crate) async fn open_commit(&self, one_statement: bool) -> Result<Commit, Error> {
        Ok(if one_statement {
            Commit::Alone(self.pool.acquire().await.map_err(db_error)?)
        } else {
            Commit::Transaction(self.pool.begin().await.map_err(db_error)?)
        })
    }

    /// Applies the backend's migrations; safe to run again.
    pub async fn migrate(&self) -> Result<(), Error> {
        let migrator = match self.backend {
            Backend::Postgres => &POSTGRES,
            Backend::Sqlite => &SQLITE,
        };
        migrator.run(&self.pool).await.map_err(|e| Error::unavailable(format!("migration failed: {e}")))
    }

    /// Where the schema stands against this binary's migrations, without
    /// changing it.
    pub async fn schema(&self) -> Result<Schema, Error> {
        let migrator = match self.backend {
            Backend::Postgres => &POSTGRES,
            Backend::Sqlite => &SQLITE,
        };
        let exists = match self.backend {
            Backend::Postgres => {
                "SELECT CAST(COUNT(*) AS BIGINT) FROM pg_tables WHERE tablename = '_sqlx_migrations' AND schemaname = current_schema()"
            }
            Backend::Sqlite => "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations'",
        };
        let tables: i64 = sqlx::query_scalar(exists).fetch_one(&self.pool).await.map_err(db_error)?;
        let applied: Vec<i64> = if tables == 0 {
            Vec::new()
        } else {
            sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success").fetch_all(&self.pool).await.map_err(db_error)?
        };
        let known: Vec<i64> = migrator.iter().filter(|m| !m.migration_type.is_down_migration()).map(|m| m.version).collect();
        let missing = known.iter().filter(|v| !applied.contains(v)).count();
        Ok(if missing == 0 { Schema::Current } else { Schema::Behind { applied: known.len() - missing, known: known.len() } })
    }

    /// Answers when the database does (readiness).
    pub async fn ping(&self) -> Result<(), Error> {
        sqlx::query("SELECT 1").execute(&self.pool).await.map_err(db_error)?;
        Ok(())
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// One commit's connection ([`Db::open_commit`]).
pub(crate) enum Commit {
    Transaction(Transaction<'static, Any>),
    Alone(PoolConnection<Any>),
}

impl Commit {
    pub(crate) fn conn(&mut self) -> &mut AnyConnection {
        match self {
            Commit::Transaction(tx) => tx,
            Commit::Alone(conn) => conn,
        }
    }

    /// Commits the transaction (a statement on its own already is).
    pub(crate) async fn finish(self) -> Result<(), Error> {
        if let Commit::Transaction(tx) = self {
            tx.commit().await.map_err(db_error)?;
        }
        Ok(())
    }
}

/// Adds `mode=rwc` so the file is created, and creates its folder.
fn sqlite_url(url: &str) -> Result<String, Error> {
    let path = url.trim_start_matches("sqlite://").trim_start_matches("sqlite:");
    let file = path.split('?').next().unwrap_or(path);
    if let Some(parent) = std::path::Path::new(file).parent()
        && !parent.as_os_str().is_empty()
    {
        std::fs::create_dir_all(parent).map_err(|e| Error::unavailable(format!("cannot create {}: {e}", parent.display())))?;
    }
    Ok(if url.contains("mode=") {
        url.to_owned()
    } else if url.contains('?') {
        format!("{url}&mode=rwc")
    } else {
        format!("{url}?mode=rwc")
    })
}

/// A database failure is never the client's fault: it is `Unavailable`.
pub(crate) fn db_error(e: sqlx::Error) -> Error {
    tracing::error!(error = %e, "database error");
    Error::unavailable("the database did not answer")
}

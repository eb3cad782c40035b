//! The database handle: PostgreSQL or SQLite behind one sqlx `AnyPool`, with
//! each backend's own migrations. Only this crate touches it.

use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use lattice_core::Error;
use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyConnection, AnyPool, Connection, Executor, Transaction};

/// How long a pooled connection may sit unused before it is pinged on its
/// way out of the pool.
const IDLE_BEFORE_PING: Duration = Duration::from_secs(1);

/// On SQLite, how often what was committed is copied from the WAL into the
/// database file, off the write path ([`checkpoint_off_the_write_path`]).
const CHECKPOINT_EVERY: Duration = Duration::from_millis(100);

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
    /// On SQLite, set by every write, taken by the checkpointer: whether
    /// the WAL may hold what the database file does not. Its last handle
    /// dropped, the checkpointer stops.
    written: std::sync::Arc<AtomicBool>,
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
                        // A commit empties every other connection's page cache
                        // (and, were the file mapped, unmaps it: each page then
                        // costs a fault, which made a read after a write on a
                        // large log twice as slow as a read() of it); a cache
                        // of 16 MiB holds a long thread's rows between commits
                        // (`cargo xtask bench data`). No commit checkpoints: the
                        // checkpointer does, beside the writes
                        // ([`checkpoint_off_the_write_path`]).
                        conn.execute(
                            "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; \
                             PRAGMA busy_timeout = 10000; PRAGMA foreign_keys = ON; PRAGMA cache_size = -16384; \
                             PRAGMA wal_autocheckpoint = 0;",
                        )
                        .await?;
                    }
                    Ok(())
                })
            })
            .connect_with(options)
            .await
            .map_err(|e| Error::unavailable(format!("cannot connect to the database: {e}")))?;
        let written = std::sync::Arc::new(AtomicBool::new(false));
        if backend == Backend::Sqlite {
            checkpoint_off_the_write_path(pool.clone(), std::sync::Arc::downgrade(&written));
        }
        Ok(Self { pool, backend, write_lock: Default::default(), url: url.into(), written })
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Where it connects: a PostgreSQL listener opens its own connection.
    pub(crate) fn url(&self) -> std::sync::Arc<str> {
        self.url.clone()
    }

    /// Whether the pool was closed (the process is stopping).
    pub(crate) fn is_closed(&self) -> bool {
        self.pool.is_closed()
    }

    /// On SQLite, the one writer's turn. Every write takes it, the write
    /// path's and the bookkeeping's (leases, checkpoints, sessions) alike:
    /// a write between a transaction's read and its write would fail that
    /// transaction at once (`SQLITE_BUSY_SNAPSHOT`), not wait.
    pub(crate) async fn writer(&self) -> Option<WriterTurn<'_>> {
        match self.backend {
            Backend::Sqlite => Some(WriterTurn { _turn: self.write_lock.lock().await, written: &self.written }),
            Backend::Postgres => None,
        }
    }

    /// A transaction that writes. On SQLite it takes the file's write lock
    /// as it begins (`BEGIN IMMEDIATE`), waiting out another process's
    /// writes (`busy_timeout`): one begun as a reader and lifted to a writer
    /// by its first write is refused at once while another process writes
    /// (`lattice switch` at a terminal beside a server, two replicas), and
    /// at once again if that process committed since the read.
    pub(crate) async fn begin(&self) -> Result<sqlx::Transaction<'static, sqlx::Any>, Error> {
        match self.backend {
            Backend::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await,
            Backend::Postgres => self.pool.begin().await,
        }
        .map_err(db_error)
    }

    /// Where one commit writes: in a transaction, or, for a commit that is
    /// one statement, on a pooled connection of its own (the statement is
    /// its own transaction, and a round trip or two cheaper).
    pub(crate) async fn open_commit(&self, one_statement: bool) -> Result<Commit, Error> {
        Ok(if one_statement { Commit::Alone(self.pool.acquire().await.map_err(db_error)?) } else { Commit::Transaction(self.begin().await?) })
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

/// The one writer's turn on SQLite ([`Db::writer`]). When it ends, what
/// it wrote is in the WAL, and the checkpointer is told so.
pub(crate) struct WriterTurn<'a> {
    _turn: tokio::sync::MutexGuard<'a, ()>,
    written: &'a AtomicBool,
}

impl Drop for WriterTurn<'_> {
    fn drop(&mut self) {
        self.written.store(true, Ordering::Relaxed);
    }
}

/// SQLite's own checkpoint runs in the commit that fills the WAL past a
/// thousand pages: one commit in about a hundred waited for the log's
/// pages to be copied into the database file and synced, and those were a
/// write's p99 (`cargo xtask bench data`: 0.4 to 0.6 ms more on a log of a
/// million envelopes, about 1 ms against 0.2). Here a task does it every
/// [`CHECKPOINT_EVERY`] that something was written (and every 5 s
/// anyway), as a PASSIVE checkpoint:
/// it waits for no reader and no writer (a commit appends beside it), and
/// copies what no reader still needs; the rest waits for the next turn.
/// Closing the pool's last connection checkpoints what is left.
fn checkpoint_off_the_write_path(pool: AnyPool, written: std::sync::Weak<AtomicBool>) {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(CHECKPOINT_EVERY);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        for turn in 0u64.. {
            every.tick().await;
            let Some(flag) = written.upgrade() else { return };
            if pool.is_closed() {
                return;
            }
            // Every turn something was written, and every fiftieth anyway: a
            // write that took no writer's turn is copied too.
            if !flag.swap(false, Ordering::Relaxed) && turn % 50 != 0 {
                continue;
            }
            // (busy, frames in the WAL, frames copied): frames a reader still
            // needs stay, and are tried again next turn.
            match sqlx::query_as::<_, (i64, i64, i64)>("PRAGMA wal_checkpoint(PASSIVE)").fetch_one(&pool).await {
                Ok((_, frames, copied)) if copied < frames => flag.store(true, Ordering::Relaxed),
                Ok(_) => {}
                Err(_) if pool.is_closed() => return,
                Err(e) => {
                    flag.store(true, Ordering::Relaxed);
                    tracing::warn!(error = %e, "cannot checkpoint the SQLite WAL; trying again");
                }
            }
        }
    });
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

/// A database failure is never the client's fault: it is `Unavailable`,
/// but for two writers that met (a unique key another request took first,
/// a serialization failure, a deadlock): that is a `Conflict` the caller
/// can retry after reading again, never an outage. A caller that knows
/// what the key means says so instead ([`unique_or`]).
pub(crate) fn db_error(e: sqlx::Error) -> Error {
    if writers_met(&e) {
        tracing::info!(error = %e, "two writers met");
        return Error::conflict(
            lattice_core::Code::ConcurrentWrite,
            "another request wrote the same thing at the same time: read it again and retry",
        );
    }
    tracing::error!(error = %e, "database error");
    Error::unavailable("the database did not answer")
}

/// Waits, within the transaction on `conn`, for the turn of `budget`
/// (`"files:t1"`): a count and the write it allows are decided by one
/// writer at a time, or concurrent requests would each pass the check and
/// together pass the bound. On PostgreSQL a transaction-scoped advisory
/// lock (the two-key form: the horizon reads only the one-key locks);
/// SQLite has one writer already (`BEGIN IMMEDIATE`).
pub(crate) async fn budget_turn(conn: &mut AnyConnection, budget: &str) -> Result<(), Error> {
    if conn.backend_name() == "PostgreSQL" {
        sqlx::query("SELECT pg_advisory_xact_lock(1818326132, hashtext($1))").bind(budget).execute(&mut *conn).await.map_err(db_error)?;
    }
    Ok(())
}

/// Whether `e` is two writers meeting rather than a database that failed:
/// a unique key taken, or Postgres's serialization failure (40001) or
/// deadlock (40P01).
pub(crate) fn writers_met(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Database(d) => d.is_unique_violation() || matches!(d.code().as_deref(), Some("40001" | "40P01")),
        _ => false,
    }
}

/// A unique key taken by another writer is a conflict the caller can
/// retry or correct, never an outage: `conflict` says what it means.
pub(crate) fn unique_or(e: sqlx::Error, conflict: impl FnOnce() -> Error) -> Error {
    match &e {
        sqlx::Error::Database(d) if d.is_unique_violation() => conflict(),
        _ => db_error(e),
    }
}

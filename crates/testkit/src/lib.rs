//! Fresh databases for tests, on both backends (REQUIREMENTS.md L3: one suite, two
//! stores). PostgreSQL comes from `LATTICE_TEST_POSTGRES_URL`, which
//! `cargo xtask test` sets after starting a throwaway server; without it a
//! PostgreSQL test fails and says so, never passes silently.

mod eventually;
pub mod idp;
pub mod mcp_server;
pub mod nats;
mod node_script;
pub mod protected;
pub mod tls;

use std::time::Duration;

use lattice_core::{Principal, TenantId, TenantRole, UserId};
use lattice_log::{Authenticated, Authenticator, Backend, Db, LogService};
use sqlx::Connection;

pub use eventually::{PATIENCE, eventually, eventually_within, until};

pub const POSTGRES_ENV: &str = "LATTICE_TEST_POSTGRES_URL";

/// A new, empty, migrated database of the given backend.
pub async fn fresh_db(backend: Backend) -> Db {
    let url = fresh_url(backend).await;
    let db = Db::connect(&url, 8).await.unwrap_or_else(|e| panic!("connecting to {url}: {e}"));
    db.migrate().await.expect("migrations apply");
    db
}

/// The URL of a new, empty database (not migrated).
pub async fn fresh_url(backend: Backend) -> String {
    let name = format!("t_{}", ulid::Ulid::generate().to_string().to_lowercase());
    match backend {
        Backend::Sqlite => {
            let dir = std::env::temp_dir().join("lattice-tests");
            std::fs::create_dir_all(&dir).expect("a temp folder");
            format!("sqlite://{}", dir.join(format!("{name}.db")).display())
        }
        Backend::Postgres => {
            let base = postgres_url();
            let mut conn = sqlx::PgConnection::connect(&base).await.unwrap_or_else(|e| panic!("cannot reach PostgreSQL at {base}: {e}"));
            sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}"))).execute(&mut conn).await.expect("CREATE DATABASE");
            conn.close().await.ok();
            match base.rfind('/') {
                Some(i) if base[..i].contains("//") && i > base.find("//").unwrap() + 1 => {
                    let (prefix, rest) = base.split_at(i);
                    let query = rest.find('?').map(|q| &rest[q..]).unwrap_or("");
                    format!("{prefix}/{name}{query}")
                }
                _ => format!("{base}/{name}"),
            }
        }
    }
}

/// The PostgreSQL server's URL, or a failure saying how to get one.
pub fn postgres_url() -> String {
    std::env::var(POSTGRES_ENV).unwrap_or_else(|_| {
        panic!(
            "{POSTGRES_ENV} is not set: run the tests with `cargo xtask test`, which starts a throwaway \
             PostgreSQL, or point {POSTGRES_ENV} at a server you run (postgres://user@host:port/db)"
        )
    })
}

pub const SECRET: &[u8] = b"lattice-test-secret-lattice-test-secret";

pub fn authenticator() -> Authenticator {
    Authenticator::new(SECRET, Duration::from_secs(3600)).expect("a long enough secret")
}

/// The log service as `lattice up` builds it, on a fresh database.
pub async fn service(backend: Backend) -> LogService {
    let db = fresh_db(backend).await;
    service_on(db)
}

pub fn service_on(db: Db) -> LogService {
    builder_on(db).start()
}

/// The log service as `lattice up` builds it, on a fresh database, reading
/// time from `clock` (a `ManualClock` a test moves instead of sleeping).
pub async fn service_with_clock(backend: Backend, clock: lattice_core::clock::SharedClock) -> LogService {
    builder_on(fresh_db(backend).await).clock(clock).start()
}

/// The log service's builder as `lattice up` sets it up, on `db`: for a
/// test that gives it more (a clock), or shares one database among replicas.
pub fn builder_on(db: Db) -> lattice_log::Builder {
    let mut builder = LogService::builder(db, authenticator());
    for kind in lattice_ui::kinds() {
        builder = builder.kind(kind);
    }
    for (command, check) in lattice_ui::checks() {
        builder = builder.check(command, check);
    }
    builder
}

/// A principal, vouched for as a verified token would be.
pub fn who(tenant: &str, user: &str, role: TenantRole) -> Authenticated {
    authenticator().vouch(principal(tenant, user, role, false))
}

pub fn agent(tenant: &str, user: &str) -> Authenticated {
    authenticator().vouch(principal(tenant, user, TenantRole::Member, true))
}

pub fn principal(tenant: &str, user: &str, role: TenantRole, agent: bool) -> Principal {
    Principal {
        tenant: TenantId::parse("tenant", tenant).expect("a valid tenant"),
        user: UserId::parse("user", user).expect("a valid user"),
        role,
        agent,
        run: None,
        within: None,
        scope: None,
    }
}

/// A bearer token for the same principal.
pub fn token(tenant: &str, user: &str, role: TenantRole) -> String {
    authenticator().mint(&principal(tenant, user, role, false))
}

/// Declares one async test per backend: `name::sqlite` and `name::postgres`.
#[macro_export]
macro_rules! both_backends {
    ($(#[$meta:meta])* async fn $name:ident($backend:ident: Backend) $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            async fn run($backend: lattice_log::Backend) $body

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            $(#[$meta])*
            async fn sqlite() {
                run(lattice_log::Backend::Sqlite).await
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            $(#[$meta])*
            async fn postgres() {
                run(lattice_log::Backend::Postgres).await
            }
        }
    };
}

/// The trust lattice's in-process parts act with, over `log` (a runner's).
pub fn trusted(log: &LogService) -> lattice_log::Trusted {
    lattice_log::Trusted::for_tests(log)
}

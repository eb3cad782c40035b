//! The PostgreSQL and SQLite migrations define the same schema: the same
//! tables, columns (type family and nullability), primary keys and
//! indexes. A migration written for one backend and forgotten for the
//! other fails here, not in production.

use std::collections::BTreeSet;

use lattice_log::Backend;
use lattice_testkit::fresh_url;
use sqlx::Row;

/// One fact about a schema, comparable across the backends.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Fact {
    Column { table: String, column: String, family: &'static str, not_null: bool },
    PrimaryKey { table: String, columns: String },
    Index { table: String, columns: String, unique: bool },
}

/// The type family a declared type belongs to: what the two backends store alike.
fn family(declared: &str) -> &'static str {
    let t = declared.to_ascii_lowercase();
    if t.contains("int") || t == "bigserial" || t == "serial" {
        "integer"
    } else if t.contains("char") || t.contains("text") || t.contains("clob") {
        "text"
    } else if t.contains("bool") {
        "boolean"
    } else if t.contains("real") || t.contains("double") || t.contains("float") || t.contains("numeric") {
        "real"
    } else if t.contains("blob") || t.contains("bytea") {
        "blob"
    } else {
        panic!("a column type neither backend's family names: {declared:?}")
    }
}

/// A pool on a new database with every migration applied.
async fn migrated(backend: Backend) -> sqlx::AnyPool {
    let url = fresh_url(backend).await;
    let db = lattice_log::Db::connect(&url, 2).await.unwrap();
    db.migrate().await.unwrap();
    db.close().await;
    sqlx::AnyPool::connect(&url).await.unwrap()
}

async fn postgres_schema() -> BTreeSet<Fact> {
    let pool = migrated(Backend::Postgres).await;
    let mut facts = BTreeSet::new();
    let primary: Vec<(String, String)> = sqlx::query(
        "SELECT t.relname::text, string_agg(a.attname::text, ',' ORDER BY k.n) \
         FROM pg_index ix JOIN pg_class t ON t.oid = ix.indrelid JOIN pg_namespace ns ON ns.oid = t.relnamespace \
         CROSS JOIN LATERAL unnest(ix.indkey) WITH ORDINALITY AS k(attnum, n) \
         JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum \
         WHERE ns.nspname = current_schema() AND ix.indisprimary AND t.relname <> '_sqlx_migrations' \
         GROUP BY t.relname, ix.indexrelid",
    )
    .fetch_all(&pool)
    .await
    .unwrap()
    .iter()
    .map(|r| (r.get(0), r.get(1)))
    .collect();
    for (table, columns) in &primary {
        facts.insert(Fact::PrimaryKey { table: table.clone(), columns: columns.clone() });
    }
    let rows = sqlx::query(
        "SELECT table_name::text, column_name::text, data_type::text, is_nullable::text FROM information_schema.columns \
         WHERE table_schema = current_schema() AND table_name <> '_sqlx_migrations'",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    for r in &rows {
        let nullable: String = r.get(3);
        let data_type: String = r.get(2);
        facts.insert(Fact::Column { table: r.get(0), column: r.get(1), family: family(&data_type), not_null: nullable == "NO" });
    }
    let rows = sqlx::query(
        "SELECT t.relname::text, CASE WHEN ix.indisunique THEN 1 ELSE 0 END, string_agg(a.attname::text, ',' ORDER BY k.n) \
         FROM pg_index ix JOIN pg_class t ON t.oid = ix.indrelid JOIN pg_namespace ns ON ns.oid = t.relnamespace \
         CROSS JOIN LATERAL unnest(ix.indkey) WITH ORDINALITY AS k(attnum, n) \
         JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum \
         WHERE ns.nspname = current_schema() AND NOT ix.indisprimary AND t.relname <> '_sqlx_migrations' \
         GROUP BY t.relname, ix.indexrelid, ix.indisunique",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    for r in &rows {
        facts.insert(Fact::Index { table: r.get(0), unique: r.get::<i32, _>(1) == 1, columns: r.get(2) });
    }
    facts
}

/// The first column of every row of `sql`.
async fn names(pool: &sqlx::AnyPool, sql: String) -> Vec<String> {
    sqlx::query(sqlx::AssertSqlSafe(sql)).fetch_all(pool).await.unwrap().iter().map(|r| r.get(0)).collect()
}

async fn sqlite_schema() -> BTreeSet<Fact> {
    let pool = migrated(Backend::Sqlite).await;
    let mut facts = BTreeSet::new();
    let tables =
        names(&pool, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '_sqlx_migrations'".into()).await;
    for table in tables {
        let columns = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT name, type, \"notnull\", pk FROM pragma_table_info('{table}')")))
            .fetch_all(&pool)
            .await
            .unwrap();
        let mut primary: Vec<(i64, String)> = Vec::new();
        for c in &columns {
            let (name, declared, not_null, pk): (String, String, i64, i64) = (c.get(0), c.get(1), c.get(2), c.get(3));
            if pk > 0 {
                primary.push((pk, name.clone()));
            }
            // A primary key's columns are never null, whatever SQLite's
            // declaration says (PostgreSQL says so of them itself).
            facts.insert(Fact::Column { table: table.clone(), column: name, family: family(&declared), not_null: not_null == 1 || pk > 0 });
        }
        primary.sort();
        if !primary.is_empty() {
            let columns = primary.into_iter().map(|(_, c)| c).collect::<Vec<_>>().join(",");
            facts.insert(Fact::PrimaryKey { table: table.clone(), columns });
        }
        let indexes = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT name, \"unique\", origin FROM pragma_index_list('{table}')")))
            .fetch_all(&pool)
            .await
            .unwrap();
        for i in &indexes {
            let (name, unique, origin): (String, i64, String) = (i.get(0), i.get(1), i.get(2));
            if origin == "pk" {
                continue;
            }
            let columns = names(&pool, format!("SELECT name FROM pragma_index_info('{name}') ORDER BY seqno")).await;
            facts.insert(Fact::Index { table: table.clone(), columns: columns.join(","), unique: unique == 1 });
        }
    }
    facts
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_and_sqlite_migrations_define_the_same_schema() {
    let postgres = postgres_schema().await;
    let sqlite = sqlite_schema().await;
    for facts in [&postgres, &sqlite] {
        assert!(facts.iter().any(|f| matches!(f, Fact::Column { table, .. } if table == "envelopes")), "{facts:#?}");
        assert!(
            facts.iter().any(|f| matches!(f, Fact::PrimaryKey { table, columns } if table == "members" && columns == "workspace,user_id")),
            "{facts:#?}"
        );
        assert!(facts.iter().any(|f| matches!(f, Fact::Index { table, unique: false, .. } if table == "envelopes")), "{facts:#?}");
    }
    let only_postgres: Vec<&Fact> = postgres.difference(&sqlite).collect();
    let only_sqlite: Vec<&Fact> = sqlite.difference(&postgres).collect();
    assert!(
        only_postgres.is_empty() && only_sqlite.is_empty(),
        "the migrations drifted apart:\nonly in PostgreSQL: {only_postgres:#?}\nonly in SQLite: {only_sqlite:#?}"
    );
}

/// A log as it stood before migration 0018 (what makes a thread unread
/// kept on the thread): the migrations before it, then a few envelopes.
async fn a_log_before_the_unread_summary(backend: Backend) -> sqlx::AnyPool {
    let url = fresh_url(backend).await;
    // Made (and its file created) without migrating it.
    lattice_log::Db::connect(&url, 1).await.unwrap().close().await;
    let pool = sqlx::AnyPool::connect(&url).await.unwrap();
    let migrations = match backend {
        Backend::Postgres => sqlx::migrate!("./migrations/postgres"),
        Backend::Sqlite => sqlx::migrate!("./migrations/sqlite"),
    };
    for m in migrations.iter().filter(|m| m.version < 18) {
        sqlx::raw_sql(m.sql.clone()).execute(&pool).await.unwrap();
    }
    sqlx::raw_sql(
        "INSERT INTO workspaces (id, tenant, name, created_by, created_at) VALUES ('ws', 't1', 'W', 'alice', 0);
         INSERT INTO threads (id, workspace, title, created_by, created_at, restricted) VALUES ('th1', 'ws', 'A', 'alice', 0, 0), ('th2', 'ws', 'B', 'alice', 0, 0), ('th3', 'ws', 'C', 'alice', 0, 0);",
    )
    .execute(&pool)
    .await
    .unwrap();
    // th1: alice, then bob twice and a run's step; th2: carol alone; th3: nothing said.
    let said = [
        ("th1", "alice", "message_posted"),
        ("th1", "bob", "artifact_created"),
        ("th1", "bob", "message_posted"),
        ("th1", "agent", "run_started"),
        ("th2", "carol", "message_posted"),
        ("th3", "alice", "run_started"),
    ];
    for (n, (thread, actor, kind)) in said.iter().enumerate() {
        sqlx::query("INSERT INTO envelopes (id, tenant, workspace, thread, actor, at, type, payload) VALUES ($1, 't1', 'ws', $2, $3, 0, $4, '{}')")
            .bind(format!("e{n}"))
            .bind(*thread)
            .bind(*actor)
            .bind(*kind)
            .execute(&pool)
            .await
            .unwrap();
    }
    pool
}

lattice_testkit::both_backends! {
    /// Migration 0018 folds the log as it stands into its threads' rows and
    /// sets the fold's checkpoint at its end: an upgraded deployment's lists
    /// read no more of its log than a new one's.
    async fn the_unread_summary_migration_folds_the_log_as_it_stands(backend: Backend) {
        let pool = a_log_before_the_unread_summary(backend).await;
        let migrations = match backend {
            Backend::Postgres => sqlx::migrate!("./migrations/postgres"),
            Backend::Sqlite => sqlx::migrate!("./migrations/sqlite"),
        };
        let m = migrations.iter().find(|m| m.version == 18).unwrap();
        sqlx::raw_sql(m.sql.clone()).execute(&pool).await.unwrap();
        let rows: Vec<(String, i64, String, i64)> = sqlx::query_as("SELECT id, said_seq, said_by, said_before FROM threads ORDER BY id").fetch_all(&pool).await.unwrap();
        assert_eq!(
            rows,
            [("th1".into(), 3, "bob".into(), 1), ("th2".into(), 5, "carol".into(), 0), ("th3".into(), 0, String::new(), 0)]
        );
        let checkpoint: i64 = sqlx::query_scalar("SELECT seq FROM follower_checkpoints WHERE name = 'unread'").fetch_one(&pool).await.unwrap();
        assert_eq!(checkpoint, 6);
    }
}

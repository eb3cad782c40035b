//! Where seeded rows go: PostgreSQL by COPY, SQLite by multi-row INSERTs
//! in large transactions. Both write into a database the product's own
//! migrations made, so the tables, indexes and sequences are the
//! product's; only the rows come in bulk. Rows of a table are written in
//! the order they are put, so envelopes take sequence numbers 1, 2, 3 …
//! in log order.

use std::collections::BTreeMap;
use std::str::FromStr;

use sqlx::{Connection, Executor};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Table {
    Envelopes,
    Workspaces,
    Members,
    Threads,
    ThreadMembers,
    Artifacts,
    ArtifactVersions,
    Switches,
    Runs,
    RunRequests,
    ReadMarks,
}

impl Table {
    pub const ALL: [Table; 11] = [
        Table::Envelopes,
        Table::Workspaces,
        Table::Members,
        Table::Threads,
        Table::ThreadMembers,
        Table::Artifacts,
        Table::ArtifactVersions,
        Table::Switches,
        Table::Runs,
        Table::RunRequests,
        Table::ReadMarks,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Table::Envelopes => "envelopes",
            Table::Workspaces => "workspaces",
            Table::Members => "members",
            Table::Threads => "threads",
            Table::ThreadMembers => "thread_members",
            Table::Artifacts => "artifacts",
            Table::ArtifactVersions => "artifact_versions",
            Table::Switches => "switches",
            Table::Runs => "runs",
            Table::RunRequests => "run_requests",
            Table::ReadMarks => "read_marks",
        }
    }

    /// The columns the product's writers set (store/*.rs), in the order
    /// rows give them.
    pub fn columns(self) -> &'static [&'static str] {
        match self {
            Table::Envelopes => &["id", "tenant", "workspace", "thread", "actor", "at", "type", "payload", "traceparent", "run"],
            Table::Workspaces => &["id", "tenant", "name", "created_by", "created_at"],
            Table::Members => &["workspace", "user_id", "role"],
            Table::Threads => &["id", "workspace", "title", "created_by", "created_at", "restricted"],
            Table::ThreadMembers => &["thread", "user_id", "role"],
            Table::Artifacts => &[
                "tenant",
                "id",
                "workspace",
                "thread",
                "kind",
                "version",
                "data",
                "digest",
                "author",
                "created_at",
                "updated_at",
                "archived",
                "parent",
                "chain",
                "asks",
                "asks_title",
                "asks_until",
                "author_agent",
            ],
            Table::ArtifactVersions => &["tenant", "id", "version", "data", "digest", "author", "at"],
            Table::Switches => &["level", "key", "state"],
            Table::Runs => &[
                "tenant",
                "id",
                "workspace",
                "thread",
                "status",
                "model",
                "started_by",
                "acting_for",
                "acting_role",
                "started_role",
                "created_at",
                "updated_at",
                "chain",
                "lease_holder",
                "lease_until",
            ],
            Table::RunRequests => &["tenant", "run", "tool_call_id", "tool_name", "args", "answered_by", "answer", "expires_at"],
            Table::ReadMarks => &["thread", "user_id", "seq"],
        }
    }
}

pub enum Val {
    Text(String),
    Int(i64),
    Null,
}

impl From<String> for Val {
    fn from(s: String) -> Self {
        Val::Text(s)
    }
}

impl From<&str> for Val {
    fn from(s: &str) -> Self {
        Val::Text(s.to_owned())
    }
}

impl From<i64> for Val {
    fn from(n: i64) -> Self {
        Val::Int(n)
    }
}

impl<T: Into<Val>> From<Option<T>> for Val {
    fn from(v: Option<T>) -> Self {
        v.map_or(Val::Null, Into::into)
    }
}

/// Rows put per table; written when a table has gathered a batch.
pub struct Sink {
    to: To,
    pending: BTreeMap<Table, Vec<Vec<Val>>>,
    pub counts: BTreeMap<Table, u64>,
    /// SQLite: rows written in the open transaction.
    in_transaction: usize,
}

enum To {
    Postgres(sqlx::PgConnection),
    Sqlite(sqlx::SqliteConnection),
}

const BATCH: usize = 5_000;
/// SQLite: rows per transaction.
const COMMIT_EVERY: usize = 100_000;

impl Sink {
    pub async fn open(url: &str) -> Self {
        let to = if url.starts_with("postgres") {
            let mut conn = sqlx::PgConnection::connect(url).await.expect("connecting to PostgreSQL");
            // Bulk loading: no wait for the disk per batch (the data is
            // flushed by the checkpoint after; a crash would lose a seed).
            conn.execute("SET synchronous_commit = off").await.unwrap();
            To::Postgres(conn)
        } else {
            let options = sqlx::sqlite::SqliteConnectOptions::from_str(url).expect("a SQLite URL");
            let mut conn = sqlx::SqliteConnection::connect_with(&options).await.expect("opening the SQLite file");
            // This connection's own settings: WAL as the product keeps the
            // file, a large page cache and no sync while seeding.
            sqlx::raw_sql("PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF; PRAGMA cache_size = -262144; BEGIN")
                .execute(&mut conn)
                .await
                .unwrap();
            To::Sqlite(conn)
        };
        Self { to, pending: BTreeMap::new(), counts: BTreeMap::new(), in_transaction: 0 }
    }

    pub async fn put(&mut self, table: Table, row: Vec<Val>) {
        debug_assert_eq!(row.len(), table.columns().len(), "{}", table.name());
        let rows = self.pending.entry(table).or_default();
        rows.push(row);
        if rows.len() >= BATCH {
            self.flush(table).await;
        }
    }

    async fn flush(&mut self, table: Table) {
        let Some(rows) = self.pending.remove(&table) else { return };
        if rows.is_empty() {
            return;
        }
        *self.counts.entry(table).or_default() += rows.len() as u64;
        let columns = table.columns().join(", ");
        match &mut self.to {
            To::Postgres(conn) => {
                let mut text = String::with_capacity(rows.len() * 256);
                for row in &rows {
                    for (i, v) in row.iter().enumerate() {
                        if i > 0 {
                            text.push('\t');
                        }
                        match v {
                            Val::Null => text.push_str("\\N"),
                            Val::Int(n) => text.push_str(&n.to_string()),
                            Val::Text(s) => copy_escape(&mut text, s),
                        }
                    }
                    text.push('\n');
                }
                let mut copy = conn.copy_in_raw(&format!("COPY {} ({columns}) FROM STDIN", table.name())).await.unwrap();
                copy.send(text.into_bytes()).await.unwrap();
                copy.finish().await.unwrap();
            }
            To::Sqlite(conn) => {
                let width = table.columns().len();
                let per_statement = (30_000 / width).min(500);
                for chunk in rows.chunks(per_statement) {
                    let marks = format!("({})", vec!["?"; width].join(", "));
                    let sql = format!("INSERT INTO {} ({columns}) VALUES {}", table.name(), vec![marks; chunk.len()].join(", "));
                    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
                    for row in chunk {
                        for v in row {
                            query = match v {
                                Val::Null => query.bind(None::<String>),
                                Val::Int(n) => query.bind(*n),
                                Val::Text(s) => query.bind(s.as_str()),
                            };
                        }
                    }
                    query.execute(&mut *conn).await.unwrap();
                }
                self.in_transaction += rows.len();
                if self.in_transaction >= COMMIT_EVERY {
                    sqlx::raw_sql("COMMIT; BEGIN").execute(&mut *conn).await.unwrap();
                    self.in_transaction = 0;
                }
            }
        }
    }

    /// Writes what is left and closes the connection.
    pub async fn finish(mut self) -> BTreeMap<Table, u64> {
        for table in Table::ALL {
            self.flush(table).await;
        }
        match self.to {
            To::Postgres(conn) => conn.close().await.unwrap(),
            To::Sqlite(mut conn) => {
                sqlx::raw_sql("COMMIT; PRAGMA wal_checkpoint(TRUNCATE)").execute(&mut conn).await.unwrap();
                conn.close().await.unwrap();
            }
        }
        self.counts
    }
}

/// COPY's text format: backslash, tab, newline and carriage return escaped.
fn copy_escape(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
}

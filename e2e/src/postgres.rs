//! A PostgreSQL server of a test's own, which the test may kill and start
//! again (the shared test server must never be).

use std::path::PathBuf;

use crate::stack::{postgres_start, postgres_stop};

pub struct OwnPostgres {
    dir: PathBuf,
    pub port: u16,
}

impl OwnPostgres {
    /// initdb and start, in a temporary folder, on a free port.
    pub fn start() -> Self {
        let port = crate::free_port();
        let dir = std::env::temp_dir().join(format!("lattice-own-pg-{port}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("logs")).unwrap();
        postgres_start(&dir, port).unwrap_or_else(|e| panic!("PostgreSQL: {e}"));
        Self { dir, port }
    }

    /// A new database on it, and its URL.
    pub async fn database(&self, name: &str) -> String {
        use sqlx::Connection;
        let admin = format!("postgres://postgres@127.0.0.1:{}/postgres", self.port);
        let mut conn = sqlx::PgConnection::connect(&admin).await.expect("connecting to the own PostgreSQL");
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}"))).execute(&mut conn).await.expect("CREATE DATABASE");
        format!("postgres://postgres@127.0.0.1:{}/{name}", self.port)
    }

    /// SIGKILL to the postmaster: its backends end with it, nothing is shut
    /// down cleanly, and the next start recovers from the WAL.
    pub fn kill_postmaster(&self) {
        let pid_file = self.dir.join("pg").join("postmaster.pid");
        let pid: i32 = std::fs::read_to_string(&pid_file).expect("postmaster.pid").lines().next().unwrap().trim().parse().unwrap();
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
        // Its children notice and exit; the server is gone once nothing
        // listens on its port.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
            assert!(std::time::Instant::now() < deadline, "PostgreSQL still answers after SIGKILL");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        // An unreaped postmaster would look alive to the next start.
        let _ = std::fs::remove_file(pid_file);
    }

    /// Starts it again on the same data and port (once the killed
    /// server's last backends have let go of its shared memory).
    pub fn restart(&self) {
        let mut tries = 0;
        while let Err(e) = postgres_start(&self.dir, self.port) {
            tries += 1;
            assert!(tries < 20, "PostgreSQL again: {e}");
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
    }
}

impl Drop for OwnPostgres {
    fn drop(&mut self) {
        let _ = postgres_stop(&self.dir);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

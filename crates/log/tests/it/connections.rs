//! Connections to PostgreSQL send each write at once (`TCP_NODELAY`).
//!
//! With Nagle's algorithm on, a client's second small write before the
//! server answers the first waits for the server's delayed ACK, 40 ms on
//! Linux. Opening a connection (TLS, then the start-up) writes so, and a
//! connection the pool opened under load took about 90 ms instead of 5:
//! the replicas benchmark's p99 showed it. sqlx 0.9.0 dropped the option
//! and 0.9.1 set it again.

use std::os::fd::{BorrowedFd, RawFd};
use std::str::FromStr;

use lattice_log::{Backend, Db};
use lattice_testkit::fresh_url;
use socket2::SockRef;
use sqlx::Connection;

/// Socket `fd`'s own port and its peer's, and whether Nagle's algorithm
/// is off on it; `None` for a descriptor that is no TCP socket.
fn tcp(fd: RawFd) -> Option<(u16, u16, bool)> {
    // SAFETY: the descriptor is this process's (listed in /proc/self/fd)
    // and only asked about; one closed meanwhile answers with errors.
    let fd = unsafe { BorrowedFd::borrow_raw(fd) };
    let socket = SockRef::from(&fd);
    let (local, peer) = (socket.local_addr().ok()?.as_socket()?, socket.peer_addr().ok()?.as_socket()?);
    Some((local.port(), peer.port(), socket.tcp_nodelay().ok()?))
}

/// The pool's own connections, told from the other tests' (which share
/// this process and may be halfway through connecting) by the client
/// ports PostgreSQL sees on the test's database.
#[tokio::test]
async fn every_connection_to_postgres_sends_at_once() {
    let url = fresh_url(Backend::Postgres).await;
    let options = sqlx::postgres::PgConnectOptions::from_str(&url).unwrap();
    let (server_port, database) = (options.get_port(), options.get_database().unwrap().to_owned());
    let db = Db::connect(&url, 2).await.unwrap();
    // Opens a connection of the pool's and keeps it idle there.
    db.migrate().await.unwrap();
    let mut asking = sqlx::PgConnection::connect(&url).await.unwrap();
    let pool_ports: Vec<i32> =
        sqlx::query_scalar("SELECT client_port FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND client_port IS NOT NULL")
            .bind(&database)
            .fetch_all(&mut asking)
            .await
            .unwrap();
    assert!(!pool_ports.is_empty(), "PostgreSQL sees no connection of the pool's");
    let sockets: Vec<(RawFd, bool)> = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<RawFd>().ok())
        .filter_map(|fd| match tcp(fd)? {
            (local, peer, nodelay) if peer == server_port && pool_ports.contains(&i32::from(local)) => Some((fd, nodelay)),
            _ => None,
        })
        .collect();
    assert_eq!(
        sockets.len(),
        pool_ports.len(),
        "the pool's connections (client ports {pool_ports:?}) among this process's sockets: {sockets:?}; \
         a server behind a port mapping shows other ports"
    );
    let delayed: Vec<RawFd> = sockets.iter().filter(|(_, on)| !on).map(|(fd, _)| *fd).collect();
    assert!(delayed.is_empty(), "connections to PostgreSQL with Nagle's algorithm on (descriptors {delayed:?} of {sockets:?})");
    asking.close().await.unwrap();
    db.close().await;
}

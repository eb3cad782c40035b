//! Connections to PostgreSQL send each write at once (`TCP_NODELAY`).
//!
//! With Nagle's algorithm on, a client's second small write before the
//! server answers the first waits for the server's delayed ACK, 40 ms on
//! Linux. Opening a connection (TLS, then the start-up) writes so, and a
//! connection the pool opened under load took about 90 ms instead of 5:
//! the replicas benchmark's p99 showed it. sqlx 0.9.0 dropped the option
//! and 0.9.1 set it again.

use std::os::fd::RawFd;
use std::str::FromStr;

use lattice_log::{Backend, Db};
use lattice_testkit::fresh_url;
use sqlx::Connection;

/// The ports of socket `fd`, its own and its peer's, if it is an IPv4 or
/// IPv6 one.
fn ports(fd: RawFd) -> Option<(u16, u16)> {
    Some((port(fd, libc::getsockname)?, port(fd, libc::getpeername)?))
}

type NameOf = unsafe extern "C" fn(libc::c_int, *mut libc::sockaddr, *mut libc::socklen_t) -> libc::c_int;

/// The port of one end of socket `fd` (`getsockname` or `getpeername`).
fn port(fd: RawFd, name_of: NameOf) -> Option<u16> {
    // SAFETY: all zeroes is a valid `sockaddr_storage`.
    let mut addr: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    // SAFETY: `addr` is as large as `len` says; a descriptor that is no
    // socket (or closed meanwhile) is refused with an error.
    if unsafe { name_of(fd, (&raw mut addr).cast(), &mut len) } != 0 {
        return None;
    }
    match i32::from(addr.ss_family) {
        // SAFETY: the family says which address the storage holds.
        libc::AF_INET => Some(u16::from_be(unsafe { (*(&raw const addr).cast::<libc::sockaddr_in>()).sin_port })),
        libc::AF_INET6 => Some(u16::from_be(unsafe { (*(&raw const addr).cast::<libc::sockaddr_in6>()).sin6_port })),
        _ => None,
    }
}

/// Whether Nagle's algorithm is off on TCP socket `fd`.
fn nodelay(fd: RawFd) -> bool {
    let mut on: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `on` is an int, as TCP_NODELAY's value is.
    let got = unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, (&raw mut on).cast(), &mut len) };
    got == 0 && on != 0
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
    let pool_ports: Vec<i32> = sqlx::query_scalar(
        "SELECT client_port FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND client_port IS NOT NULL",
    )
    .bind(&database)
    .fetch_all(&mut asking)
    .await
    .unwrap();
    assert!(!pool_ports.is_empty(), "PostgreSQL sees no connection of the pool's");
    let sockets: Vec<(RawFd, bool)> = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<RawFd>().ok())
        .filter(|&fd| ports(fd).is_some_and(|(local, peer)| peer == server_port && pool_ports.contains(&i32::from(local))))
        .map(|fd| (fd, nodelay(fd)))
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

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

/// The remote port of socket `fd`, if it is an IPv4 or IPv6 one.
fn peer_port(fd: RawFd) -> Option<u16> {
    let mut addr: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    // SAFETY: `addr` is as large as `len` says; a descriptor that is no
    // socket (or closed meanwhile) is refused with an error.
    if unsafe { libc::getpeername(fd, (&raw mut addr).cast(), &mut len) } != 0 {
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

#[tokio::test]
async fn every_connection_to_postgres_sends_at_once() {
    let url = fresh_url(Backend::Postgres).await;
    let port = sqlx::postgres::PgConnectOptions::from_str(&url).unwrap().get_port();
    let db = Db::connect(&url, 2).await.unwrap();
    // Opens a connection of the pool's and keeps it idle there.
    db.migrate().await.unwrap();
    let sockets: Vec<(RawFd, bool)> = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<RawFd>().ok())
        .filter(|&fd| peer_port(fd) == Some(port))
        .map(|fd| (fd, nodelay(fd)))
        .collect();
    assert!(!sockets.is_empty(), "no connection to PostgreSQL's port {port} is open");
    let delayed: Vec<RawFd> = sockets.iter().filter(|(_, on)| !on).map(|(fd, _)| *fd).collect();
    assert!(delayed.is_empty(), "connections to PostgreSQL with Nagle's algorithm on (descriptors {delayed:?} of {sockets:?})");
    drop(db);
}

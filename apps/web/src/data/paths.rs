//! The `/v1` paths of a thread that both the early reads and the thread's
//! page ask for: one spelling, so the page takes over the read started for it.

/// The thread's events after `after` (all of them without), as a live stream.
pub fn events_path(thread: &str, after: Option<&str>) -> String {
    format!("/v1/threads/{thread}/events?after={}", after.unwrap_or("0"))
}

/// The thread's own record (its title, its workspace, the viewer's role).
pub fn record_path(thread: &str) -> String {
    format!("/v1/threads/{thread}")
}

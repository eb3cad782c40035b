//! The W3C trace context of the request a command runs for, kept with its
//! envelope so that the bridge carries it on to NATS (REQUIREMENTS.md O4).

tokio::task_local! {
    static TRACEPARENT: Option<String>;
}

/// Runs `f` with `traceparent` as the context of every command it executes.
pub async fn with_traceparent<F: std::future::Future>(traceparent: Option<String>, f: F) -> F::Output {
    TRACEPARENT.scope(traceparent.filter(|t| is_traceparent(t)), f).await
}

/// The context a command's envelope keeps: the current span's when a trace
/// is recorded (the commit's own span, a child of the request's), else the
/// request's header as it came.
pub(crate) fn current() -> Option<String> {
    lattice_telemetry::traceparent().or_else(|| TRACEPARENT.try_with(Clone::clone).ok().flatten())
}

/// `00-<32 hex>-<16 hex>-<2 hex>`, neither id all zeros.
pub fn is_traceparent(value: &str) -> bool {
    let parts: Vec<&str> = value.split('-').collect();
    let hex = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase());
    parts.len() == 4
        && hex(parts[0], 2)
        && parts[0] != "ff"
        && hex(parts[1], 32)
        && parts[1].bytes().any(|b| b != b'0')
        && hex(parts[2], 16)
        && parts[2].bytes().any(|b| b != b'0')
        && hex(parts[3], 2)
}

//! Time as the log stores it (milliseconds since the Unix epoch, UTC) and as
//! it is shown (RFC 3339).

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

pub fn now_ms() -> i64 {
    (OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000) as i64
}

pub fn rfc3339(ms: i64) -> String {
    OffsetDateTime::from_unix_timestamp_nanos(ms as i128 * 1_000_000)
        .ok()
        .and_then(|t| t.format(&Rfc3339).ok())
        .unwrap_or_default()
}

/// Milliseconds since the epoch of an RFC 3339 time (`rfc3339`'s inverse).
pub fn parse_rfc3339(at: &str) -> Option<i64> {
    OffsetDateTime::parse(at, &Rfc3339).ok().map(|t| (t.unix_timestamp_nanos() / 1_000_000) as i64)
}

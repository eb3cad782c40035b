//! Time as the log stores it (milliseconds since the Unix epoch, UTC) and as
//! it is shown (RFC 3339). There is no "now" here: the time is read from
//! the clock the service was built with ([`crate::Builder::clock`],
//! [`crate::LogService::clock`]), so a test's `ManualClock` moves all of it.

use time::OffsetDateTime;

/// RFC 3339 in UTC with exactly three digits of milliseconds: every time
/// lattice shows has the same width (`2026-11-30T10:00:00.000Z`).
pub fn rfc3339(ms: i64) -> String {
    let Ok(t) = OffsetDateTime::from_unix_timestamp_nanos(ms as i128 * 1_000_000) else { return String::new() };
    format!("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", t.year(), u8::from(t.month()), t.day(), t.hour(), t.minute(), t.second(), t.millisecond())
}

/// Milliseconds since the epoch of an RFC 3339 time (`rfc3339`'s inverse),
/// read as every other part of lattice reads one.
pub use lattice_core::rfc3339::date_time_ms as parse_rfc3339;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_have_one_width_and_read_back() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(1_764_497_984_810), "2025-11-30T10:19:44.810Z");
        for ms in [0, 1, 999, 1_764_497_984_810, 1_764_497_984_000] {
            assert_eq!(parse_rfc3339(&rfc3339(ms)), Some(ms));
        }
    }
}

//! RFC 3339 times as lattice reads them: the grammar of a form's `date`,
//! `time` and `date-time` formats, and a date-time as milliseconds since
//! the Unix epoch (what the log stores). One reading for the log, the
//! agent runner, the MCP exporter and the chat host alike, written out
//! rather than taken from a date library: the chat host's first load
//! carries every byte of code.

fn digits(s: &[u8]) -> Option<u32> {
    if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    s.iter().try_fold(0u32, |n, d| n.checked_mul(10)?.checked_add(u32::from(d - b'0')))
}

fn is_leap(year: u32) -> bool {
    year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400))
}

/// RFC 3339 full-date: `YYYY-MM-DD`, a real calendar day.
#[inline]
pub fn is_date(s: &str) -> bool {
    let Ok(b) = <&[u8; 10]>::try_from(s.as_bytes()) else { return false };
    // `YYYY-MM-` as one word: the dashes checked, then read as zeros so
    // that one test finds whether all eight are digits (this is the first
    // check of many a submission).
    let head = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
    const DASHES: u64 = 0xFF00_00FF_0000_0000;
    if head & DASHES != 0x2D00_002D_0000_0000 {
        return false;
    }
    let head = (head & !DASHES) | 0x3000_0030_0000_0000;
    if !eight_digits(head) || !b[8].is_ascii_digit() || !b[9].is_ascii_digit() {
        return false;
    }
    let d = |i: usize| u32::from(b[i] - b'0');
    let year = d(0) * 1000 + d(1) * 100 + d(2) * 10 + d(3);
    let month = d(5) * 10 + d(6);
    let day = d(8) * 10 + d(9);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(year) => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// Whether each byte of `w` is an ASCII digit: its high half 3, and still
/// 3 with 6 added (`0x3A`–`0x3F` carry into 4).
fn eight_digits(w: u64) -> bool {
    const HIGH: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    const THREES: u64 = 0x3030_3030_3030_3030;
    w & HIGH == THREES && w.wrapping_add(0x0606_0606_0606_0606) & HIGH == THREES
}

/// RFC 3339 full-time: `HH:MM:SS[.frac](Z|±HH:MM)`. A leap second (`:60`)
/// is valid only at 23:59 UTC once the offset is taken away.
pub fn is_time(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 9 || b[2] != b':' || b[5] != b':' {
        return false;
    }
    let (Some(hour), Some(minute), Some(second)) = (digits(&b[0..2]), digits(&b[3..5]), digits(&b[6..8])) else {
        return false;
    };
    let mut rest = &b[8..];
    if rest.first() == Some(&b'.') {
        let frac = rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if frac == 0 {
            return false;
        }
        rest = &rest[1 + frac..];
    }
    let offset_minutes: i64 = match rest {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let (Some(oh), Some(om)) = (digits(&[*h1, *h2]), digits(&[*m1, *m2])) else { return false };
            if oh > 23 || om > 59 {
                return false;
            }
            let minutes = i64::from(oh * 60 + om);
            if *sign == b'+' { minutes } else { -minutes }
        }
        _ => return false,
    };
    if hour > 23 || minute > 59 || second > 60 {
        return false;
    }
    if second == 60 {
        let utc = (i64::from(hour * 60 + minute) - offset_minutes).rem_euclid(24 * 60);
        return utc == 23 * 60 + 59;
    }
    true
}

/// RFC 3339 date-time: a full-date, `T` (either case), a full-time.
pub fn is_date_time(s: &str) -> bool {
    match s.find(['T', 't']) {
        Some(10) => is_date(&s[..10]) && is_time(&s[11..]),
        _ => false,
    }
}

/// Milliseconds since the Unix epoch of an RFC 3339 date-time, `None` when
/// `s` is not one ([`is_date_time`]). Digits past the nanosecond are
/// dropped and the milliseconds truncated toward zero; a leap second reads
/// as the last nanosecond of its minute.
pub fn date_time_ms(s: &str) -> Option<i64> {
    if !is_date_time(s) {
        return None;
    }
    let b = s.as_bytes();
    let n = |at: usize, len: usize| b[at..at + len].iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0'));
    let days = days_from_civil(n(0, 4), n(5, 2), n(8, 2));
    let (second, mut nanos) = match n(17, 2) {
        60 => (59, 999_999_999),
        second => (second, 0),
    };
    let mut rest = &b[19..];
    if rest.first() == Some(&b'.') {
        let frac = rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if nanos == 0 {
            nanos = (0..9).fold(0i64, |n, i| n * 10 + if i < frac { i64::from(rest[1 + i] - b'0') } else { 0 });
        }
        rest = &rest[1 + frac..];
    }
    let offset_minutes = match rest {
        [sign @ (b'+' | b'-'), ..] => {
            let minutes = n(b.len() - 5, 2) * 60 + n(b.len() - 2, 2);
            if *sign == b'+' { minutes } else { -minutes }
        }
        _ => 0,
    };
    let seconds = days * 86_400 + n(11, 2) * 3_600 + n(14, 2) * 60 + second - offset_minutes * 60;
    let total = i128::from(seconds) * 1_000_000_000 + i128::from(nanos);
    i64::try_from(total / 1_000_000).ok()
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar
/// (the civil-from-days algorithm, inverted: years begin in March, so the
/// leap day ends one).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_real_calendar_days() {
        assert!(is_date("2024-02-29"));
        assert!(!is_date("2023-02-29"));
        assert!(!is_date("1900-02-29"));
        assert!(is_date("2000-02-29"));
        assert!(!is_date("2024-13-01"));
        assert!(!is_date("2024-1-01"));
    }

    /// The date check read as the calendar says, one character at a time.
    fn reference_date(s: &str) -> bool {
        let parts: Vec<&str> = s.split('-').collect();
        let [y, m, d] = parts[..] else { return false };
        let digits = |p: &str, n: usize| p.len() == n && p.chars().all(|c| c.is_ascii_digit());
        if !(digits(y, 4) && digits(m, 2) && digits(d, 2)) {
            return false;
        }
        let (y, m, d): (u32, u32, u32) = (y.parse().unwrap(), m.parse().unwrap(), d.parse().unwrap());
        let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
        let days = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
        (1..=12).contains(&m) && d >= 1 && d <= days[m as usize - 1]
    }

    proptest::proptest! {
        #[test]
        fn the_word_at_a_time_date_check_is_the_calendars(
            s in "[0-9]{4}-[0-1][0-9]-[0-3][0-9]|[0-9:/. \\-]{10}|[0-9,.()/-]{10}|.{0,12}"
        ) {
            proptest::prop_assert_eq!(is_date(&s), reference_date(&s), "{:?}", s);
        }
    }

    /// What the `time` crate reads an RFC 3339 date-time as, in ms.
    fn reference_ms(s: &str) -> Option<i64> {
        let t = time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).ok()?;
        Some((t.unix_timestamp_nanos() / 1_000_000) as i64)
    }

    proptest::proptest! {
        #[test]
        fn a_date_time_reads_as_the_time_crate_reads_it(
            s in "[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])[Tt]([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\\.[0-9]{1,12})?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])"
        ) {
            let ours = date_time_ms(&s);
            proptest::prop_assert_eq!(ours.is_some(), is_date_time(&s));
            if let Some(theirs) = reference_ms(&s) {
                proptest::prop_assert_eq!(ours, Some(theirs), "{:?}", s);
            }
        }
    }

    #[test]
    fn date_times_read_as_milliseconds_since_the_epoch() {
        assert_eq!(date_time_ms("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(date_time_ms("2025-11-30T10:19:44.810Z"), Some(1_764_497_984_810));
        assert_eq!(date_time_ms("2025-11-30T11:19:44.8109+01:00"), Some(1_764_497_984_810));
        assert_eq!(date_time_ms("1969-12-31T23:59:59.9995Z"), Some(0));
        assert_eq!(date_time_ms("2000-02-29T00:00:00z"), Some(951_782_400_000));
        assert_eq!(date_time_ms("2000-02-30T00:00:00Z"), None);
        assert_eq!(date_time_ms("2026-11-29 10:00:00Z"), None);
    }

    #[test]
    fn times_need_an_offset_and_leap_seconds_fall_at_midnight_utc() {
        assert!(is_time("23:59:60Z"));
        assert!(is_time("15:59:60-08:00"));
        assert!(!is_time("23:59:60+01:00"));
        assert!(!is_time("12:00:00"));
        assert!(is_date_time("2026-11-29t10:00:00.5z"));
        assert!(!is_date_time("2026-11-29 10:00:00Z"));
    }
}

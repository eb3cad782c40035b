//! `dateTime` values (RFC 7643 §2.3.5, xsd:dateTime as RFC 3339 writes it):
//! read for filter comparisons (`meta.lastModified gt "…"`), written for
//! `meta.created` and `meta.lastModified`. Written out here rather than
//! taken from a date library: two functions do not carry a dependency.

/// An instant, ordered: seconds since the Unix epoch and the nanoseconds past them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Instant {
    secs: i64,
    nanos: u32,
}

fn number(bytes: &[u8]) -> Option<i64> {
    if bytes.is_empty() || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    bytes.iter().try_fold(0i64, |n, d| n.checked_mul(10)?.checked_add(i64::from(d - b'0')))
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
/// `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// `YYYY-MM-DDTHH:MM:SS[.fraction][Z|±HH:MM]`; no offset reads as UTC, as
/// xsd:dateTime leaves it to the reader.
pub(crate) fn parse(text: &str) -> Option<Instant> {
    let b = text.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't') || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (year, month, day) = (number(&b[0..4])?, number(&b[5..7])?, number(&b[8..10])?);
    let (hour, minute, second) = (number(&b[11..13])?, number(&b[14..16])?, number(&b[17..19])?);
    let month_days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(year) => 29,
        2 => 28,
        _ => return None,
    };
    if !(1..=month_days).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut rest = &b[19..];
    let mut nanos = 0u32;
    if let [b'.', tail @ ..] = rest {
        let digits = tail.iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            return None;
        }
        // Nanoseconds are all an Instant keeps; further digits are read past.
        for (i, d) in tail[..digits].iter().take(9).enumerate() {
            nanos += u32::from(d - b'0') * 10u32.pow(8 - i as u32);
        }
        rest = &tail[digits..];
    }
    let offset = match rest {
        [] | [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let (oh, om) = (number(&[*h1, *h2])?, number(&[*m1, *m2])?);
            if oh > 23 || om > 59 {
                return None;
            }
            let minutes = oh * 60 + om;
            if *sign == b'-' { -minutes } else { minutes }
        }
        _ => return None,
    };
    let secs = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset * 60;
    Some(Instant { secs, nanos })
}

/// Milliseconds since the Unix epoch as `2026-05-04T12:34:56.789Z`.
pub(crate) fn format_millis(millis: i64) -> String {
    let secs = millis.div_euclid(1000);
    let ms = millis.rem_euclid(1000);
    let (year, month, day) = civil_from_days(secs.div_euclid(86_400));
    let of_day = secs.rem_euclid(86_400);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{ms:03}Z", of_day / 3600, of_day % 3600 / 60, of_day % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_reads_back_the_same_instant() {
        for millis in [0i64, 1, 999, 1_000, 951_782_400_000, 1_780_000_000_123, -1, -86_400_001, 253_402_300_799_999] {
            let text = format_millis(millis);
            let read = parse(&text).unwrap_or_else(|| panic!("{text} does not parse"));
            assert_eq!(read, Instant { secs: millis.div_euclid(1000), nanos: (millis.rem_euclid(1000) * 1_000_000) as u32 }, "{text}");
        }
        assert_eq!(format_millis(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn offsets_and_fractions_order_correctly() {
        let t = |s| parse(s).unwrap_or_else(|| panic!("{s} does not parse"));
        assert_eq!(t("2011-05-13T04:42:34Z"), t("2011-05-13T06:42:34+02:00"));
        assert!(t("2011-05-13T04:42:34.5Z") > t("2011-05-13T04:42:34Z"));
        assert!(t("2011-05-13T04:42:34.123456789123Z") > t("2011-05-13T04:42:34.123456788Z"));
        assert_eq!(t("2011-05-13T04:42:34"), t("2011-05-13T04:42:34Z"));
    }

    #[test]
    fn refuses_what_is_not_a_date_time() {
        for bad in [
            "",
            "2011-05-13",
            "2011-02-30T00:00:00Z",
            "2011-13-01T00:00:00Z",
            "2011-05-13T24:00:00Z",
            "2011-05-13T04:42:34.Z",
            "2011-05-13T04:42:34+2:00",
            "x011-05-13T04:42:34Z",
            "2011-05-13 04:42:34Z",
        ] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }
}

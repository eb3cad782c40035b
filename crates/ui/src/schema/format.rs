//! The formats a form may assert (REQUIREMENTS.md U1, U4): `date`, `time`,
//! `date-time` (RFC 3339), `email` (RFC 5321 mailbox) and `uri` (RFC 3986,
//! absolute), and `file` (a file uploaded to the thread, by its id:
//! docs/FILES.md). Asserted, not merely annotated: a value that does not
//! match is refused.

use serde::{Deserialize, Serialize};

pub use lattice_core::rfc3339::{date_time_ms, is_date, is_date_time, is_time};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Format {
    #[serde(rename = "date")]
    Date,
    #[serde(rename = "time")]
    Time,
    #[serde(rename = "date-time")]
    DateTime,
    #[serde(rename = "email")]
    Email,
    #[serde(rename = "uri")]
    Uri,
    #[serde(rename = "file")]
    File,
}

impl Format {
    pub const ALL: [Format; 6] = [Self::Date, Self::Time, Self::DateTime, Self::Email, Self::Uri, Self::File];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Date => "date",
            Self::Time => "time",
            Self::DateTime => "date-time",
            Self::Email => "email",
            Self::Uri => "uri",
            Self::File => "file",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.as_str() == name)
    }

    #[inline]
    pub fn matches(self, s: &str) -> bool {
        match self {
            Self::Date => is_date(s),
            Self::Time => is_time(s),
            Self::DateTime => is_date_time(s),
            Self::Email => is_email(s),
            Self::Uri => is_uri(s),
            Self::File => lattice_core::FileId::is_file_id(s),
        }
    }

    /// What a person is told when a value does not match.
    pub fn expectation(self) -> &'static str {
        match self {
            Self::Date => "a calendar date such as 2026-11-29",
            Self::Time => "a time with its offset such as 14:30:00Z",
            Self::DateTime => "a date and time such as 2026-11-29T14:30:00Z",
            Self::Email => "an e-mail address such as name@example.com",
            Self::Uri => "an absolute URI such as https://example.com/page",
            Self::File => "a file uploaded to this thread (its id, such as fil_01jd…)",
        }
    }
}

/// An RFC 5321 mailbox: a dot-atom or quoted local part, `@`, and a domain
/// name or an address literal.
pub fn is_email(s: &str) -> bool {
    let Some(at) = s.rfind('@') else { return false };
    let (local, domain) = (&s[..at], &s[at + 1..]);
    local_part_ok(local) && domain_ok(domain)
}

fn local_part_ok(local: &str) -> bool {
    if local.is_empty() || local.len() > 64 {
        return false;
    }
    if let Some(inner) = local.strip_prefix('"').and_then(|l| l.strip_suffix('"')) {
        let mut escaped = false;
        return inner.chars().all(|c| {
            if escaped {
                escaped = false;
                return (' '..='~').contains(&c);
            }
            if c == '\\' {
                escaped = true;
                return true;
            }
            (' '..='~').contains(&c) && c != '"'
        }) && !escaped;
    }
    const ATEXT: &str = "!#$%&'*+-/=?^_`{|}~";
    local.split('.').all(|atom| !atom.is_empty() && atom.chars().all(|c| c.is_ascii_alphanumeric() || ATEXT.contains(c)))
}

fn domain_ok(domain: &str) -> bool {
    if let Some(literal) = domain.strip_prefix('[').and_then(|d| d.strip_suffix(']')) {
        return match literal.strip_prefix("IPv6:") {
            Some(v6) => v6.parse::<std::net::Ipv6Addr>().is_ok(),
            None => literal.parse::<std::net::Ipv4Addr>().is_ok(),
        };
    }
    !domain.is_empty()
        && domain.len() <= 253
        && domain.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        })
}

/// An absolute RFC 3986 URI (a scheme is required).
pub fn is_uri(s: &str) -> bool {
    fluent_uri::Uri::parse(s).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emails_and_uris() {
        assert!(is_email("a.b@example.com"));
        assert!(is_email("\"a b\"@example.com"));
        assert!(!is_email("a..b@example.com"));
        assert!(is_uri("https://example.com/x?y#z"));
        assert!(!is_uri("/relative"));
    }
}

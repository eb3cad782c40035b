//! The origins a connected server's app may reach (MCP Apps, `_meta.ui.csp`):
//! what the server declares, what the operator allows for that server, and
//! the frame policy of what both say. The apps origin builds the policy of
//! an app's frame with [`policy`]; with nothing granted it is
//! [`crate::app::INNER_POLICY`], no network at all.
//!
//! The rule, in one place: an origin is granted when the operator allowed
//! it for the server (exactly: an allowance is one origin, never a pattern)
//! and the server declared it for its app (exactly, or under a declared
//! `https://*.example.com`). Never `*`, never a scheme alone, never a path,
//! and never the chat's or the apps origin (refused where the allowance is
//! read: [`Domains::allowance`]).

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The most origins of one kind a declaration or an allowance holds: more
/// are not read.
pub const DOMAINS_MAX: usize = 32;
/// The longest origin read (scheme, host and port).
pub const ORIGIN_MAX_CHARS: usize = 262;

/// Origins by what they are for, as the Apps specification names them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Domains {
    /// `connectDomains`: fetch, XHR, WebSocket (`connect-src`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connect: Vec<String>,
    /// `resourceDomains`: scripts, styles, images, fonts, media.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource: Vec<String>,
    /// `frameDomains`: nested frames (`frame-src`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frame: Vec<String>,
    /// `baseUriDomains`: a `<base>` element's address (`base-uri`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub base: Vec<String>,
}

/// Why an operator's allowance is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotAnOrigin(pub String);

impl fmt::Display for NotAnOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NotAnOrigin {}

impl Domains {
    /// What a server declared for its app (`_meta.ui` of the document,
    /// as kept with the app): each kind at most [`DOMAINS_MAX`], each entry
    /// an origin or a wildcard one; anything else is left out.
    pub fn declared(ui: &Value) -> Self {
        let kind = |name: &str| -> Vec<String> {
            ui.pointer(&format!("/csp/{name}"))
                .and_then(Value::as_array)
                .map(|list| list.iter().filter_map(Value::as_str).filter_map(|s| origin(s, true).ok()).take(DOMAINS_MAX).collect())
                .unwrap_or_default()
        };
        Self { connect: kind("connectDomains"), resource: kind("resourceDomains"), frame: kind("frameDomains"), base: kind("baseUriDomains") }
    }

    /// An operator's allowance for a server, checked: each entry one origin
    /// (`https://host[:port]`, or `http://` for a server beside lattice),
    /// none a pattern, none the chat's or the apps origin (`own`), at most
    /// [`DOMAINS_MAX`] of a kind. Written back normalised (lower case, no
    /// default port).
    pub fn allowance(self, own: &[&str]) -> Result<Self, NotAnOrigin> {
        let own: Vec<String> = own.iter().filter_map(|o| origin(o, false).ok()).collect();
        let check = |name: &str, list: Vec<String>| -> Result<Vec<String>, NotAnOrigin> {
            if list.len() > DOMAINS_MAX {
                return Err(NotAnOrigin(format!("{name}: {} origins, at most {DOMAINS_MAX}", list.len())));
            }
            let mut out = Vec::with_capacity(list.len());
            for entry in list {
                let normal = origin(&entry, false).map_err(|why| NotAnOrigin(format!("{name}: {entry:?} {why}")))?;
                if own.contains(&normal) {
                    return Err(NotAnOrigin(format!("{name}: {entry:?} is lattice's own origin: an app never reaches it")));
                }
                if !out.contains(&normal) {
                    out.push(normal);
                }
            }
            Ok(out)
        };
        Ok(Self {
            connect: check("connect", self.connect)?,
            resource: check("resource", self.resource)?,
            frame: check("frame", self.frame)?,
            base: check("base", self.base)?,
        })
    }

    /// What both allow: each origin `self` (an allowance) holds that
    /// `declared` names, kind by kind.
    pub fn granted(&self, declared: &Domains) -> Domains {
        let both = |allowed: &[String], declared: &[String]| -> Vec<String> {
            allowed.iter().filter(|a| declared.iter().any(|d| covers(d, a))).cloned().collect()
        };
        Domains {
            connect: both(&self.connect, &declared.connect),
            resource: both(&self.resource, &declared.resource),
            frame: both(&self.frame, &declared.frame),
            base: both(&self.base, &declared.base),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.connect.is_empty() && self.resource.is_empty() && self.frame.is_empty() && self.base.is_empty()
    }

    /// A declaration read back from the inner frame's address (`connect=`,
    /// `resource=`, `frame=`, `base=` pairs, decoded): what is not an origin
    /// (or a wildcard one) is left out, and no kind holds more than
    /// [`DOMAINS_MAX`].
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut out = Domains::default();
        for (name, value) in pairs {
            let list = match name {
                "connect" => &mut out.connect,
                "resource" => &mut out.resource,
                "frame" => &mut out.frame,
                "base" => &mut out.base,
                _ => continue,
            };
            if list.len() < DOMAINS_MAX
                && let Ok(normal) = origin(value, true)
                && !list.contains(&normal)
            {
                list.push(normal);
            }
        }
        out
    }
}

/// Whether a declared origin (maybe `scheme://*.domain`) covers `origin`.
fn covers(declared: &str, origin: &str) -> bool {
    if declared == origin {
        return true;
    }
    let Some((scheme, rest)) = declared.split_once("://*.") else { return false };
    let Some((o_scheme, o_rest)) = origin.split_once("://") else { return false };
    // `*.example.com` covers `a.example.com` (and deeper), not `example.com`;
    // a port, when declared, must be the same.
    scheme == o_scheme && o_rest.len() > rest.len() + 1 && o_rest.ends_with(rest) && o_rest[..o_rest.len() - rest.len()].ends_with('.')
}

/// An origin normalised: `scheme://host[:port]`, lower case, the default
/// port left out. `wildcard`: a leading `*.` label is kept (a declaration).
fn origin(s: &str, wildcard: bool) -> Result<String, &'static str> {
    let s = s.trim();
    if s.len() > ORIGIN_MAX_CHARS {
        return Err("is too long for an origin");
    }
    let s = s.strip_suffix('/').unwrap_or(s);
    let (scheme, rest) = s.split_once("://").ok_or("is not an origin (scheme://host)")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "https" && scheme != "http" {
        return Err("is not an http or https origin");
    }
    // `host:port`, `[v6]:port`, or a host alone (`[v6]` holds colons).
    let (host, port) = match rest.rsplit_once(':') {
        Some((host, port)) if !rest.ends_with(']') => {
            let port: u16 = port.parse().map_err(|_| "has a port that is not a number")?;
            (host, Some(port))
        }
        _ => (rest, None),
    };
    let (pattern, host) = match host.strip_prefix("*.") {
        Some(under) if wildcard => (true, under),
        Some(_) => return Err("is a pattern: an allowance names one origin"),
        None => (false, host),
    };
    let host = host.to_ascii_lowercase();
    let label_ok = |l: &str| !l.is_empty() && l.len() <= 63 && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    let ipv6 = host.starts_with('[') && host.ends_with(']') && host[1..host.len() - 1].bytes().all(|b| b.is_ascii_hexdigit() || b == b':');
    if !(ipv6 || (!host.is_empty() && host.split('.').all(label_ok))) {
        return Err("is not an origin (a path, a query, a wildcard or a character no host has)");
    }
    if pattern && !host.contains('.') {
        return Err("is a pattern wider than one domain's names");
    }
    let default = if scheme == "https" { 443 } else { 80 };
    let star = if pattern { "*." } else { "" };
    Ok(match port {
        Some(p) if p != default => format!("{scheme}://{star}{host}:{p}"),
        _ => format!("{scheme}://{star}{host}"),
    })
}

/// The policy of an app's document when `granted` (an allowance met by a
/// declaration) is what it may reach: [`crate::app::INNER_POLICY`] widened
/// by exactly those origins, kind by kind.
pub fn policy(granted: &Domains) -> String {
    if granted.is_empty() {
        return crate::app::INNER_POLICY.to_owned();
    }
    let with = |base: &str, list: &[String]| -> String { if list.is_empty() { base.to_owned() } else { format!("{base} {}", list.join(" ")) } };
    let r = &granted.resource;
    [
        "default-src 'none'".to_owned(),
        with("script-src 'unsafe-inline'", r),
        with("style-src 'unsafe-inline'", r),
        with("img-src data:", r),
        with("font-src data:", r),
        with("media-src data:", r),
        format!("connect-src {}", if granted.connect.is_empty() { "'none'".to_owned() } else { granted.connect.join(" ") }),
        "form-action 'none'".to_owned(),
        format!("base-uri {}", if granted.base.is_empty() { "'none'".to_owned() } else { granted.base.join(" ") }),
        format!("frame-src {}", if granted.frame.is_empty() { "'none'".to_owned() } else { granted.frame.join(" ") }),
        "worker-src 'none'".to_owned(),
        "object-src 'none'".to_owned(),
        "manifest-src 'none'".to_owned(),
    ]
    .join("; ")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Domains, policy};
    use crate::app::INNER_POLICY;

    fn of(connect: &[&str], resource: &[&str]) -> Domains {
        Domains {
            connect: connect.iter().map(|s| s.to_string()).collect(),
            resource: resource.iter().map(|s| s.to_string()).collect(),
            ..Domains::default()
        }
    }

    #[test]
    fn nothing_granted_is_no_network() {
        assert_eq!(policy(&Domains::default()), INNER_POLICY);
        let declared = Domains::declared(&json!({"csp": {"resourceDomains": ["https://cdn.example.com"]}}));
        assert_eq!(policy(&Domains::default().granted(&declared)), INNER_POLICY);
    }

    #[test]
    fn only_what_is_both_allowed_and_declared_is_granted() {
        let declared = Domains::declared(&json!({"csp": {
            "connectDomains": ["https://api.example.com"],
            "resourceDomains": ["https://*.cdn.example.com", "https://fonts.example.org"],
        }}));
        let allowed = of(&["https://api.example.com", "https://other.example.com"], &["https://a.cdn.example.com", "https://cdn.example.com"])
            .allowance(&["https://chat.example.com"])
            .unwrap();
        let granted = allowed.granted(&declared);
        assert_eq!(granted.connect, ["https://api.example.com"]);
        // `*.cdn.example.com` covers a name under it, not the domain itself.
        assert_eq!(granted.resource, ["https://a.cdn.example.com"]);
        let p = policy(&granted);
        assert!(p.contains("connect-src https://api.example.com;"), "{p}");
        assert!(p.contains("script-src 'unsafe-inline' https://a.cdn.example.com;"), "{p}");
        assert!(p.contains("frame-src 'none'"), "{p}");
        assert!(!p.contains("other.example.com"), "{p}");
    }

    #[test]
    fn an_allowance_is_one_origin_never_a_pattern_nor_lattices_own() {
        let own = ["https://chat.example.com", "https://apps.example.com"];
        for bad in [
            "*",
            "https://*",
            "https://*.example.com",
            "https://example.com/path",
            "example.com",
            "ftp://example.com",
            "https://a b.com",
            "https://x.com?q",
        ] {
            assert!(of(&[bad], &[]).allowance(&own).is_err(), "{bad}");
        }
        let refused = of(&[], &["https://APPS.example.com:443/"]).allowance(&own).unwrap_err();
        assert!(refused.0.contains("lattice's own"), "{refused}");
        let normal =
            of(&["HTTPS://Api.Example.com:443/", "https://[::1]", "https://[::1]:8443"], &["http://localhost:8081"]).allowance(&own).unwrap();
        assert_eq!(normal.connect, ["https://api.example.com", "https://[::1]", "https://[::1]:8443"]);
        assert_eq!(normal.resource, ["http://localhost:8081"]);
        let many: Vec<String> = (0..=super::DOMAINS_MAX).map(|i| format!("https://h{i}.example.com")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert!(of(&many[..super::DOMAINS_MAX], &[]).allowance(&own).is_ok(), "at the bound");
        assert!(of(&many, &[]).allowance(&own).unwrap_err().0.contains("at most 32"), "one over");
    }

    #[test]
    fn a_declaration_is_bounded_and_what_is_not_an_origin_is_left_out() {
        let many: Vec<String> = (0..100).map(|i| format!("https://h{i}.example.com")).collect();
        let declared =
            Domains::declared(&json!({"csp": {"connectDomains": many, "resourceDomains": ["*", "javascript:alert(1)", "https://ok.example.com"]}}));
        assert_eq!(declared.connect.len(), super::DOMAINS_MAX);
        assert_eq!(declared.resource, ["https://ok.example.com"]);
    }
}

//! By what name and scheme a request came (`X-Forwarded-Host`,
//! `X-Forwarded-Proto`), believed only from the proxies a deployment
//! configured (LATTICE_TRUSTED_PROXIES): anyone can send those headers, and
//! what they say ends up in URLs lattice writes back (`/mcp`'s
//! protected-resource metadata and its `WWW-Authenticate` challenge, the
//! link an MCP client is pointed to). A request from any other peer is
//! taken by its own `Host` and plain HTTP, which is what lattice serves.
//!
//! The edge believes the proxy in front of it (a TLS-terminating ingress)
//! and sets both headers itself on what it passes on, over what a client
//! sent; the services behind it believe the edge.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::ConnectInfo;
use axum::http::{HeaderMap, HeaderName, header};

pub const X_FORWARDED_HOST: HeaderName = HeaderName::from_static("x-forwarded-host");
pub const X_FORWARDED_PROTO: HeaderName = HeaderName::from_static("x-forwarded-proto");

/// The peers whose forwarded headers are believed: IP addresses and CIDR
/// blocks. None by default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies {
    blocks: Arc<[Block]>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Block {
    network: IpAddr,
    prefix: u8,
}

impl Block {
    fn parse(entry: &str) -> Result<Self, String> {
        let (address, prefix) = match entry.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (entry, None),
        };
        let network: IpAddr =
            address.trim_start_matches('[').trim_end_matches(']').parse().map_err(|_| format!("{entry:?} is not an IP address or a CIDR block"))?;
        let bits = if network.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => bits,
            Some(p) => p.parse::<u8>().ok().filter(|p| *p <= bits).ok_or_else(|| format!("{entry:?}: the prefix length is 0 to {bits}"))?,
        };
        Ok(Self { network, prefix })
    }

    fn contains(&self, ip: IpAddr) -> bool {
        match (self.network, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => masked(u32::from(net).into(), 32, self.prefix) == masked(u32::from(ip).into(), 32, self.prefix),
            (IpAddr::V6(net), IpAddr::V6(ip)) => masked(u128::from(net), 128, self.prefix) == masked(u128::from(ip), 128, self.prefix),
            _ => false,
        }
    }
}

/// The top `prefix` bits of a `bits`-wide address.
fn masked(address: u128, bits: u32, prefix: u8) -> u128 {
    let kept = u32::from(prefix);
    if kept == 0 { 0 } else { address >> (bits - kept) }
}

impl TrustedProxies {
    /// Nobody's forwarded headers are believed.
    pub fn none() -> Self {
        Self::default()
    }

    /// `list`: addresses and CIDR blocks, comma-separated
    /// (`10.0.0.0/8, 172.28.0.10, ::1`); empty for none.
    pub fn parse(list: &str) -> Result<Self, String> {
        let blocks = list.split(',').map(str::trim).filter(|e| !e.is_empty()).map(Block::parse).collect::<Result<Vec<_>, _>>()?;
        Ok(Self { blocks: blocks.into() })
    }

    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// Whether `peer` is one of the proxies. An IPv4 peer seen on an IPv6
    /// socket (`::ffff:10.0.0.1`) is its IPv4 address.
    pub fn trusts(&self, peer: IpAddr) -> bool {
        let peer = match peer {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(peer, IpAddr::V4),
            v4 => v4,
        };
        self.blocks.iter().any(|b| b.contains(peer))
    }

    /// By what name and scheme the request with `headers` from `peer` came:
    /// a trusted proxy's forwarded headers where it sent them, else the
    /// request's own `Host` and `http`. A peer that is not known (no
    /// connection information) is not trusted.
    pub fn origin_of(&self, headers: &HeaderMap, peer: Option<IpAddr>) -> Origin {
        let trusted = peer.is_some_and(|p| self.trusts(p));
        let said = |name: &HeaderName| trusted.then(|| headers.get(name).and_then(|v| v.to_str().ok())).flatten();
        let host =
            said(&X_FORWARDED_HOST).or_else(|| headers.get(header::HOST).and_then(|v| v.to_str().ok())).filter(|h| is_host(h)).map(str::to_owned);
        let https = said(&X_FORWARDED_PROTO).is_some_and(|p| p.eq_ignore_ascii_case("https"));
        Origin { host, https }
    }
}

/// A request's peer, when the server was started with connection
/// information (`into_make_service_with_connect_info::<SocketAddr>`).
pub fn peer_of(extensions: &axum::http::Extensions) -> Option<IpAddr> {
    extensions.get::<ConnectInfo<SocketAddr>>().map(|ConnectInfo(addr)| addr.ip())
}

/// A name a URL may carry: letters, digits, `.`, `-`, and a port or an
/// IPv6 literal's `:[]`; nothing that could end the URL or the header it is
/// written into.
fn is_host(value: &str) -> bool {
    !value.is_empty() && value.len() <= 255 && value.bytes().all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b))
}

/// The name and scheme a request came by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// `None` when the request named no usable host.
    pub host: Option<String>,
    pub https: bool,
}

impl Origin {
    pub fn scheme(&self) -> &'static str {
        if self.https { "https" } else { "http" }
    }

    /// `scheme://host`, with `localhost` for a request that named none.
    pub fn url(&self) -> String {
        format!("{}://{}", self.scheme(), self.host.as_deref().unwrap_or("localhost"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(HeaderName::from_bytes(k.as_bytes()).unwrap(), v.parse().unwrap());
        }
        h
    }

    #[test]
    fn blocks_hold_what_their_prefix_covers() {
        let trusted = TrustedProxies::parse(" 10.0.0.0/8, 172.28.0.10 ,fd00::/8, ::1").unwrap();
        for ok in ["10.1.2.3", "10.255.255.255", "172.28.0.10", "fd12::1", "::1", "::ffff:10.0.0.1"] {
            assert!(trusted.trusts(ok.parse().unwrap()), "{ok}");
        }
        for no in ["11.0.0.1", "172.28.0.11", "fe80::1", "::2", "127.0.0.1"] {
            assert!(!trusted.trusts(no.parse().unwrap()), "{no}");
        }
        assert!(TrustedProxies::parse("0.0.0.0/0").unwrap().trusts("203.0.113.9".parse().unwrap()));
        assert!(!TrustedProxies::parse("").unwrap().trusts("127.0.0.1".parse().unwrap()));
        for bad in ["10.0.0.0/33", "::/129", "edge", "10.0.0.0/x", "10.0.0/8"] {
            assert!(TrustedProxies::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn forwarded_headers_count_from_trusted_peers_only() {
        let trusted = TrustedProxies::parse("10.0.0.2").unwrap();
        let sent = headers(&[("host", "mcp:8080"), ("x-forwarded-host", "chat.example"), ("x-forwarded-proto", "https")]);
        let proxy = Some("10.0.0.2".parse().unwrap());
        let client = Some("10.0.0.3".parse().unwrap());
        assert_eq!(trusted.origin_of(&sent, proxy).url(), "https://chat.example");
        assert_eq!(trusted.origin_of(&sent, client).url(), "http://mcp:8080");
        assert_eq!(trusted.origin_of(&sent, None).url(), "http://mcp:8080", "an unknown peer is nobody's proxy");
        // What cannot be a host is not written into a URL.
        let odd = headers(&[("host", "a.example"), ("x-forwarded-host", "evil.example/\"x")]);
        assert_eq!(trusted.origin_of(&odd, proxy).host, None);
        assert_eq!(TrustedProxies::none().origin_of(&HeaderMap::new(), proxy).url(), "http://localhost");
    }
}

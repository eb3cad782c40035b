//! What an OAuth scope may be, read from a server's challenge, from the
//! configuration and from a request alike.

/// The longest a scope may be.
const MAX_SCOPE_BYTES: usize = 128;

/// A scope a server asked for (RFC 6749 §3.3: printable ASCII but `"`,
/// `\` and space), checked before it is asked of an authorization server.
pub fn scope_is_valid(scope: &str) -> bool {
    !scope.is_empty()
        && scope.len() <= MAX_SCOPE_BYTES
        && scope.bytes().all(|b| b == 0x21 || (0x23..=0x5b).contains(&b) || (0x5d..=0x7e).contains(&b))
}

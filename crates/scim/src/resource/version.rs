//! Versions (RFC 7644 §3.14): a weak ETag computed from the stored document,
//! so two readings of the same content carry the same version and a route
//! needs no counter column. `If-Match` and `If-None-Match` compare with it.

use serde_json::Value;

use crate::error::ScimError;

/// `W/"<16 hex digits>"`: FNV-1a (64 bits) of the document's compact JSON.
/// Pass the document `render` is given (with `groups`, if the route adds
/// them), so that the ETag header and `meta.version` agree.
pub fn version_of(document: &Value) -> String {
    let bytes = serde_json::to_vec(document).unwrap_or_default();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("W/\"{hash:016x}\"")
}

/// Whether an `If-Match`/`If-None-Match` header names `version`: `*`, or a
/// comma-separated list of ETags compared weakly (RFC 9110 §8.8.3.2).
pub fn etag_matches(header: &str, version: &str) -> bool {
    let opaque = |tag: &str| tag.trim().trim_start_matches("W/").to_string();
    let want = opaque(version);
    header.split(',').any(|tag| tag.trim() == "*" || opaque(tag) == want)
}

/// A PUT, PATCH or DELETE with `If-Match` goes ahead only on the version
/// it names; without the header it goes ahead.
pub fn check_if_match(if_match: Option<&str>, version: &str) -> Result<(), ScimError> {
    match if_match {
        Some(header) if !etag_matches(header, version) => Err(ScimError::precondition_failed(version)),
        _ => Ok(()),
    }
}

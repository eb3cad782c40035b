//! A file field's own keywords (docs/UI-MODEL.md, "Files"): `accept`, the
//! media types it takes (`image/png`, or `image/*`), and `maxSize`, the
//! most bytes a file may hold. The values are ids (`format: "file"`), so
//! the browser can check only their shape; the server, which knows each
//! file's type and size, checks these with [`FileRule::admits`].

use serde::{Deserialize, Serialize};

/// Media types an `accept` list may name.
pub const ACCEPT_MAX: usize = 16;

/// What a file field takes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRule {
    /// Empty: any type.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accept: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "maxSize")]
    pub max_size: Option<u64>,
    /// Several files (an array of ids) rather than one.
    #[serde(default)]
    pub many: bool,
}

impl FileRule {
    /// Whether a file of this type and size may be the field's value; the
    /// refusal names its keyword and says why, in a person's words.
    pub fn admits(&self, media_type: &str, size: u64) -> Result<(), (&'static str, String)> {
        if !self.accepts(media_type) {
            return Err(("accept", format!("a file of type {media_type} is not accepted here (accepted: {})", self.accept.join(", "))));
        }
        match self.max_size {
            Some(max) if size > max => Err(("maxSize", format!("a file of {size} bytes exceeds the limit {max}"))),
            _ => Ok(()),
        }
    }

    /// Whether `media_type` is one `accept` names (exactly, or by its
    /// `type/*`).
    pub fn accepts(&self, media_type: &str) -> bool {
        let major = media_type.split('/').next().unwrap_or_default();
        self.accept.is_empty() || self.accept.iter().any(|a| a == media_type || a.strip_suffix("/*").is_some_and(|m| m == major))
    }
}

/// Whether `s` is a media type or a `type/*` range as `accept` names them:
/// lower-case RFC 6838 names, no parameters.
pub fn is_media_range(s: &str) -> bool {
    let name = |part: &str| {
        !part.is_empty()
            && part.len() <= 127
            && part.as_bytes()[0].is_ascii_alphanumeric()
            && part.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"!#$&-^_.+".contains(&b))
    };
    match s.split_once('/') {
        Some((major, "*")) => name(major),
        Some((major, minor)) => name(major) && name(minor),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_names_types_exactly_or_by_their_major_type() {
        let rule = FileRule { accept: vec!["image/*".into(), "application/pdf".into()], max_size: Some(10), many: false };
        assert!(rule.admits("image/png", 10).is_ok());
        assert!(rule.admits("application/pdf", 1).is_ok());
        assert_eq!(rule.admits("image/png", 11).unwrap_err(), ("maxSize", "a file of 11 bytes exceeds the limit 10".to_owned()));
        assert!(rule.admits("text/plain", 1).unwrap_err().1.contains("text/plain is not accepted"));
        assert!(rule.admits("imagex/png", 1).is_err(), "a major type is matched whole");
        assert!(FileRule::default().admits("application/octet-stream", u64::MAX).is_ok());
    }

    #[test]
    fn media_ranges() {
        for ok in ["image/png", "image/*", "application/vnd.ms-excel", "text/plain"] {
            assert!(is_media_range(ok), "{ok}");
        }
        for bad in ["image", "*/*", "image/", "Image/PNG", "text/plain; charset=utf-8", ".pdf", "/png"] {
            assert!(!is_media_range(bad), "{bad}");
        }
    }
}

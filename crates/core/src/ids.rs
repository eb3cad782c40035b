//! Identifiers. Tenant and workspace ids become NATS subject tokens, so they
//! never hold a dot, a wildcard or whitespace; every id is checked once, where
//! it enters, and is a plain string afterwards. An id read from JSON enters
//! there: deserializing one runs the same check as [`ThreadId::parse`].

use std::fmt;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};

use crate::error::Error;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $what:literal, $prefix:literal, $max:literal, $extra:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// The prefix of ids that lattice generates for this type.
            pub const PREFIX: &'static str = $prefix;

            /// A new, unique, time-ordered id.
            #[cfg(feature = "generate")]
            pub fn generate() -> Self {
                Self(format!("{}{}", $prefix, ulid::Ulid::generate().to_string().to_ascii_lowercase()))
            }

            /// Checks `value` as an id read from outside; `field` names it in the error.
            pub fn parse(field: &str, value: &str) -> Result<Self, Error> {
                check_token(field, value, $max, $extra)?;
                Ok(Self(value.to_owned()))
            }

            /// Wraps a value already known to be valid (read back from storage).
            pub fn from_trusted(value: impl Into<String>) -> Self {
                Self(value.into())
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        /// Read as a string and checked as [`Self::parse`] checks it: a
        /// bad id in JSON is refused where it is read, naming what it is.
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let value = String::deserialize(deserializer)?;
                match token_problem(&value, $max, $extra) {
                    None => Ok(Self(value)),
                    Some(problem) => Err(de::Error::custom(format_args!("{} {value:?} is not valid: {problem}", $what))),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }
    };
}

id_type!(
    /// A tenant, named by the token that authenticates its people.
    TenantId, "tenant id", "", 64, "-_"
);
id_type!(
    /// A person's or an agent's user name within a tenant.
    UserId, "user id", "", 128, "-_.@"
);
id_type!(WorkspaceId, "workspace id", "ws_", 64, "-_");
id_type!(ThreadId, "thread id", "th_", 64, "-_");
id_type!(
    /// Artifact ids may be chosen by the client (that is how derived
    /// submission ids hold their policy), so they are scoped by tenant.
    ArtifactId, "artifact id", "art_", 128, "-_.:"
);
id_type!(RunId, "run id", "run_", 64, "-_");
id_type!(
    /// A file attached to an answer (docs/FILES.md): what a form's file
    /// field holds.
    FileId, "file id", "fil_", 64, "-_"
);

impl FileId {
    /// Whether `value` reads as a file id: the prefix, then an id token.
    /// A form's `format: "file"` asserts this, in the browser and here.
    pub fn is_file_id(value: &str) -> bool {
        value.len() > Self::PREFIX.len() && value.starts_with(Self::PREFIX) && token_problem(value, 64, "-_").is_none()
    }
}

/// An id token: starts with an ASCII letter or digit, then letters, digits
/// and the `extra` punctuation, at most `max` bytes.
fn check_token(field: &str, value: &str, max: usize, extra: &str) -> Result<(), Error> {
    match token_problem(value, max, extra) {
        None => Ok(()),
        Some(message) => Err(Error::field(field, "id", message)),
    }
}

/// What is wrong with `value` as an id token, if anything.
fn token_problem(value: &str, max: usize, extra: &str) -> Option<String> {
    if value.is_empty() {
        Some("must not be empty".to_owned())
    } else if value.len() > max {
        Some(format!("{} bytes exceeds the limit {max}", value.len()))
    } else if !value.as_bytes()[0].is_ascii_alphanumeric() {
        Some("must start with a letter or a digit".to_owned())
    } else {
        value.chars().find(|c| !(c.is_ascii_alphanumeric() || extra.contains(*c))).map(|c| format!("character {c:?} is not allowed"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_ids_parse_back() {
        let ws = WorkspaceId::generate();
        assert!(ws.as_str().starts_with("ws_"));
        assert_eq!(WorkspaceId::parse("ws", ws.as_str()).unwrap(), ws);
    }

    #[test]
    fn subject_breaking_characters_are_refused() {
        for bad in ["", "a.b", "a*", "a>", "a b", "_x", "-x", &"x".repeat(65)] {
            assert!(TenantId::parse("tenant", bad).is_err(), "{bad:?} accepted");
        }
        assert!(TenantId::parse("tenant", &"x".repeat(64)).is_ok());
        assert!(UserId::parse("user", "alice@example.com").is_ok());
    }

    #[test]
    fn an_id_read_from_json_is_checked_as_parse_checks_it() {
        let ok: ThreadId = serde_json::from_str(r#""th_01abc""#).unwrap();
        assert_eq!(ok, ThreadId::parse("thread", "th_01abc").unwrap());
        assert_eq!(serde_json::to_string(&ok).unwrap(), r#""th_01abc""#, "written as the plain string it is");

        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Posted {
            thread: ThreadId,
            tenant: TenantId,
        }
        let error = |json: &str| serde_json::from_str::<Posted>(json).unwrap_err().to_string();
        expect_test::expect![[r#"thread id "th_a.b" is not valid: character '.' is not allowed at line 1 column 18"#]]
            .assert_eq(&error(r#"{"thread":"th_a.b","tenant":"t1"}"#));
        expect_test::expect![[r#"tenant id "" is not valid: must not be empty at line 1 column 30"#]]
            .assert_eq(&error(r#"{"thread":"th_ok","tenant":""}"#));
        expect_test::expect![[r#"tenant id "lattice.*" is not valid: character '.' is not allowed at line 1 column 39"#]]
            .assert_eq(&error(r#"{"thread":"th_ok","tenant":"lattice.*"}"#));
        assert!(error(&format!(r#"{{"thread":"{}","tenant":"t1"}}"#, "x".repeat(65))).contains("65 bytes exceeds the limit 64"));
        assert!(serde_json::from_str::<UserId>(r#""alice@example.com""#).is_ok());
        assert!(serde_json::from_str::<ArtifactId>(r#""art_form:v1.2""#).is_ok());
        assert!(serde_json::from_str::<RunId>("7").is_err(), "an id is a string");
    }
}

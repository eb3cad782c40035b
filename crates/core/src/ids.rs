//! Identifiers. Tenant and workspace ids become NATS subject tokens, so they
//! never hold a dot, a wildcard or whitespace; every id is checked once, where
//! it enters, and is a plain string afterwards.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::Error;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $prefix:literal, $max:literal, $extra:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
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
    TenantId, "", 64, "-_"
);
id_type!(
    /// A person's or an agent's user name within a tenant.
    UserId, "", 128, "-_.@"
);
id_type!(WorkspaceId, "ws_", 64, "-_");
id_type!(ThreadId, "th_", 64, "-_");
id_type!(
    /// Artifact ids may be chosen by the client (that is how derived
    /// submission ids hold their policy), so they are scoped by tenant.
    ArtifactId, "art_", 128, "-_.:"
);
id_type!(RunId, "run_", 64, "-_");

/// An id token: starts with an ASCII letter or digit, then letters, digits
/// and the `extra` punctuation, at most `max` bytes.
fn check_token(field: &str, value: &str, max: usize, extra: &str) -> Result<(), Error> {
    let message = if value.is_empty() {
        Some("must not be empty".to_owned())
    } else if value.len() > max {
        Some(format!("{} bytes exceeds the limit {max}", value.len()))
    } else if !value.as_bytes()[0].is_ascii_alphanumeric() {
        Some("must start with a letter or a digit".to_owned())
    } else {
        value.chars().find(|c| !(c.is_ascii_alphanumeric() || extra.contains(*c))).map(|c| format!("character {c:?} is not allowed"))
    };
    match message {
        None => Ok(()),
        Some(message) => Err(Error::field(field, "id", message)),
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
}

//! The JWS algorithms a provider's tokens may be signed with: public-key
//! signatures only. `none` and the HMAC family are absent from [`Alg`], so
//! no configuration can let them in: an HMAC "signature" is checked with a
//! shared secret, and a provider's keys are public, so anyone could make one.

use jsonwebtoken::Algorithm;

/// An asymmetric JWS algorithm this crate verifies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Alg {
    RS256,
    RS384,
    RS512,
    PS256,
    PS384,
    PS512,
    ES256,
    ES384,
    EdDSA,
}

/// The key a JWK must be for an algorithm to verify with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyKind {
    Rsa,
    /// An EC key on the named curve (`crv`).
    Ec(&'static str),
    /// An OKP key on the named curve (`crv`).
    Okp(&'static str),
}

impl KeyKind {
    pub(crate) fn describe(self) -> String {
        match self {
            KeyKind::Rsa => "an RSA key".to_owned(),
            KeyKind::Ec(crv) => format!("an EC {crv} key"),
            KeyKind::Okp(crv) => format!("an OKP {crv} key"),
        }
    }
}

/// Every algorithm [`Alg`] holds, in the order a default allow-list lists them.
pub(crate) const ALL: [Alg; 9] = [Alg::RS256, Alg::RS384, Alg::RS512, Alg::PS256, Alg::PS384, Alg::PS512, Alg::ES256, Alg::ES384, Alg::EdDSA];

impl Alg {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Alg::RS256 => "RS256",
            Alg::RS384 => "RS384",
            Alg::RS512 => "RS512",
            Alg::PS256 => "PS256",
            Alg::PS384 => "PS384",
            Alg::PS512 => "PS512",
            Alg::ES256 => "ES256",
            Alg::ES384 => "ES384",
            Alg::EdDSA => "EdDSA",
        }
    }

    /// The algorithm named `name` exactly (JWS names are case-sensitive).
    pub(crate) fn from_name(name: &str) -> Option<Alg> {
        ALL.into_iter().find(|a| a.name() == name)
    }

    pub(crate) fn jwt(self) -> Algorithm {
        match self {
            Alg::RS256 => Algorithm::RS256,
            Alg::RS384 => Algorithm::RS384,
            Alg::RS512 => Algorithm::RS512,
            Alg::PS256 => Algorithm::PS256,
            Alg::PS384 => Algorithm::PS384,
            Alg::PS512 => Algorithm::PS512,
            Alg::ES256 => Algorithm::ES256,
            Alg::ES384 => Algorithm::ES384,
            Alg::EdDSA => Algorithm::EdDSA,
        }
    }

    pub(crate) fn key_kind(self) -> KeyKind {
        match self {
            Alg::RS256 | Alg::RS384 | Alg::RS512 | Alg::PS256 | Alg::PS384 | Alg::PS512 => KeyKind::Rsa,
            Alg::ES256 => KeyKind::Ec("P-256"),
            Alg::ES384 => KeyKind::Ec("P-384"),
            Alg::EdDSA => KeyKind::Okp("Ed25519"),
        }
    }
}

/// Why an algorithm name is never accepted from a provider, whatever its
/// configuration lists: `none` signs nothing, and HMAC is keyed with a
/// shared secret while a provider's keys are public (the classic attack
/// signs a token with HS256 keyed by the provider's public key).
pub(crate) fn never_accepted(name: &str) -> Option<&'static str> {
    match name {
        "none" => Some("alg none is never accepted"),
        "HS256" | "HS384" | "HS512" => Some("an HMAC (shared-secret) signature is never accepted from a provider, whose keys are public"),
        _ => None,
    }
}

/// The names of `algs`, for a message.
pub(crate) fn names(algs: &[Alg]) -> String {
    algs.iter().map(|a| a.name()).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back_and_nothing_symmetric_is_one() {
        for alg in ALL {
            assert_eq!(Alg::from_name(alg.name()), Some(alg));
            assert!(!matches!(alg.jwt().family(), jsonwebtoken::AlgorithmFamily::Hmac), "{alg:?}");
        }
        for name in ["none", "HS256", "HS384", "HS512", "rs256", "ES512", ""] {
            assert_eq!(Alg::from_name(name), None, "{name}");
        }
        assert!(never_accepted("none").is_some() && never_accepted("HS384").is_some() && never_accepted("RS256").is_none());
    }
}

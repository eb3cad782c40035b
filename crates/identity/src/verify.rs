//! The one verifier of a provider's JWTs: ID tokens, access tokens and
//! logout tokens all pass here. It is in two steps around the key lookup:
//! [`Token::read`] bounds the token and decides from its header alone
//! whether it could ever be taken (alg, typ, crit); [`Token::check`] checks
//! the signature with `jsonwebtoken` and then every claim itself, by the
//! deployment's clock, with the provider's bounded skew. jsonwebtoken's own
//! claim checks are off: they read the wall clock and say less about why.
//!
//! Every refusal is `Error::Unauthorized` saying what was wrong; none
//! quotes the token.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{DecodingKey, Validation};
use lattice_core::Error;
use serde_json::{Map, Value};

use crate::alg::{self, Alg};
use crate::config::{Settings, cut};

/// The longest token read: a provider's tokens are a few KiB.
pub(crate) const TOKEN_MAX: usize = 16 * 1024;
/// The most audiences a token may name.
const AUDIENCES_MAX: usize = 64;
const KID_MAX: usize = 256;
/// The event a back-channel logout token declares (Back-Channel Logout 1.0, 2.4).
pub(crate) const BACKCHANNEL_LOGOUT_EVENT: &str = "http://schemas.openid.net/event/backchannel-logout";

/// What a token is presented as.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind<'a> {
    /// From the token endpoint, for the sign-in that sent `nonce`.
    IdToken { nonce: &'a str },
    /// A bearer token for the API or MCP.
    Access,
    /// A back-channel logout token.
    Logout,
}

/// What the token must be for.
pub(crate) struct Expect<'a> {
    pub kind: Kind<'a>,
    /// The token's `aud` must hold one of these.
    pub audiences: Vec<&'a str>,
}

/// A token whose header could be taken, not yet checked.
pub(crate) struct Token<'t> {
    text: &'t str,
    alg: Alg,
    kid: Option<String>,
}

/// A token that verified: its claims, and its times in seconds.
#[derive(Debug)]
pub(crate) struct Verified {
    pub claims: Object,
    pub iat: i64,
    pub exp: Option<i64>,
}

fn refused(reason: impl Into<String>) -> Error {
    Error::unauthorized(lattice_core::Code::TokenInvalid, reason)
}

/// A JSON object: a token's header or claims.
pub(crate) type Object = Map<String, Value>;

/// The three parts of a compact JWS, bounded; its header and payload as
/// JSON objects. Nothing is verified: what this reads only routes a token
/// to its provider (by `iss`) and refuses early.
pub(crate) fn peek(token: &str) -> Result<(Object, Object), Error> {
    if token.len() > TOKEN_MAX {
        return Err(refused(format!("the token is {} bytes, over the limit {TOKEN_MAX}", token.len())));
    }
    let parts: Vec<&str> = token.split('.').collect();
    match parts.len() {
        3 => {}
        5 => return Err(refused("the token is encrypted (JWE): only signed tokens are accepted")),
        _ => return Err(refused("the token is not a signed JWT (three dot-separated parts)")),
    }
    let object = |part: &str, what: &str| -> Result<Object, Error> {
        let bytes = URL_SAFE_NO_PAD.decode(part).map_err(|_| refused(format!("the token's {what} is not base64url")))?;
        match serde_json::from_slice(&bytes) {
            Ok(Value::Object(map)) => Ok(map),
            _ => Err(refused(format!("the token's {what} is not a JSON object"))),
        }
    };
    Ok((object(parts[0], "header")?, object(parts[1], "payload")?))
}

/// The audiences a token names: `aud` as a string or an array of strings.
pub(crate) fn audiences(claims: &Object) -> Result<Vec<&str>, Error> {
    match claims.get("aud") {
        None => Ok(Vec::new()),
        Some(Value::String(aud)) => Ok(vec![aud.as_str()]),
        Some(Value::Array(auds)) if auds.len() > AUDIENCES_MAX => {
            Err(refused(format!("the token names {} audiences, over the limit {AUDIENCES_MAX}", auds.len())))
        }
        Some(Value::Array(auds)) => {
            auds.iter().map(|a| a.as_str().ok_or_else(|| refused("the token's aud is not a string or an array of strings"))).collect()
        }
        Some(_) => Err(refused("the token's aud is not a string or an array of strings")),
    }
}

/// Whether claims declare a back-channel logout event.
pub(crate) fn declares_logout(claims: &Object) -> bool {
    claims.get("events").and_then(Value::as_object).is_some_and(|events| events.contains_key(BACKCHANNEL_LOGOUT_EVENT))
}

/// Whether `typ` names a logout token (`logout+jwt`, media types being
/// case-insensitive and `application/` optional, RFC 7515 4.1.9).
fn is_logout_typ(typ: &str) -> bool {
    let typ = typ.to_ascii_lowercase();
    typ == "logout+jwt" || typ == "application/logout+jwt"
}

impl<'t> Token<'t> {
    /// Bounds `text` and reads its header: refused here, before any key is
    /// looked up, is a token no key could make acceptable.
    pub(crate) fn read(text: &'t str, settings: &Settings, kind: Kind<'_>) -> Result<Self, Error> {
        let (header, _) = peek(text)?;
        let provider = &settings.name;
        let alg = match header.get("alg") {
            Some(Value::String(alg)) => alg.as_str(),
            _ => return Err(refused("the token's header names no alg")),
        };
        if alg == "none" {
            return Err(refused("alg none is never accepted"));
        }
        let allowed = || alg::names(&settings.algorithms);
        let alg = match (Alg::from_name(alg), alg::never_accepted(alg)) {
            (_, Some(why)) => return Err(refused(format!("alg {alg} is not accepted from provider {provider} (allowed: {}): {why}", allowed()))),
            (Some(a), None) if settings.algorithms.contains(&a) => a,
            (Some(a), None) => return Err(refused(format!("alg {} is not accepted from provider {provider} (allowed: {})", a.name(), allowed()))),
            // Not a name this crate knows: quoted, as the token wrote it.
            (None, None) => return Err(refused(format!("alg {:?} is not accepted from provider {provider} (allowed: {})", cut(alg, 16), allowed()))),
        };
        if let Some(crit) = header.get("crit") {
            return Err(refused(format!(
                "the token's header lists critical extensions ({}), and none is understood here",
                cut(&crit.to_string(), 64)
            )));
        }
        let typ = match header.get("typ") {
            None => None,
            Some(Value::String(typ)) => Some(typ.as_str()),
            Some(_) => return Err(refused("the token's typ is not a string")),
        };
        match (kind, typ) {
            (Kind::Logout, Some(typ)) if !is_logout_typ(typ) => {
                return Err(refused(format!("a logout token's typ must be logout+jwt, not {:?}", cut(typ, 32))));
            }
            (Kind::IdToken { .. } | Kind::Access, Some(typ)) if is_logout_typ(typ) => {
                return Err(refused("a logout token is not accepted as a sign-in or a bearer token"));
            }
            _ => {}
        }
        // The key comes from the provider's published set only: a header's
        // jwk, jku, x5u or x5c would let the token name its own key, and is
        // never read.
        let kid = match header.get("kid") {
            None => None,
            Some(Value::String(kid)) if !kid.is_empty() && kid.len() <= KID_MAX => Some(kid.clone()),
            Some(_) => return Err(refused(format!("the token's kid is not a string of 1 to {KID_MAX} bytes"))),
        };
        Ok(Token { text, alg, kid })
    }

    pub(crate) fn alg(&self) -> Alg {
        self.alg
    }

    pub(crate) fn kid(&self) -> Option<&str> {
        self.kid.as_deref()
    }

    /// Checks the signature with `key`, then the claims against `expect`
    /// at `now_secs`.
    pub(crate) fn check(self, key: &DecodingKey, settings: &Settings, expect: &Expect<'_>, now_secs: i64) -> Result<Verified, Error> {
        let provider = &settings.name;
        let mut validation = Validation::new(self.alg.jwt());
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        validation.validate_nbf = false;
        validation.validate_aud = false;
        let claims = match jsonwebtoken::decode::<Object>(self.text, key, &validation) {
            Ok(data) => data.claims,
            Err(e) => {
                let kid = self.kid.as_deref().map(|k| format!(" {:?}", cut(k, 64))).unwrap_or_default();
                return Err(refused(match e.kind() {
                    ErrorKind::InvalidSignature => format!("the token's signature does not verify with provider {provider}'s key{kid}"),
                    ErrorKind::InvalidEcdsaKey | ErrorKind::InvalidEddsaKey | ErrorKind::InvalidRsaKey(_) | ErrorKind::InvalidKeyFormat => {
                        format!("provider {provider}'s key{kid} cannot check alg {}", self.alg.name())
                    }
                    // The other kinds' texts may quote what the token holds.
                    _ => "the token is malformed".to_owned(),
                }));
            }
        };

        match claims.get("iss") {
            Some(Value::String(iss)) if *iss == settings.issuer => {}
            Some(Value::String(iss)) => {
                return Err(refused(format!("the token's issuer {:?} is not provider {provider}'s ({})", cut(iss, 200), settings.issuer)));
            }
            _ => return Err(refused("the token names no issuer")),
        }

        let expected = || expect.audiences.join(" or ");
        let audiences = audiences(&claims)?;
        if audiences.is_empty() {
            return Err(refused(format!("the token names no audience (expected {})", expected())));
        }
        if !audiences.iter().any(|a| expect.audiences.contains(a)) {
            return Err(refused(format!("the token's audience is not this deployment's (expected {})", expected())));
        }

        let skew = settings.skew_secs;
        let exp = time(&claims, "exp")?;
        match (exp, expect.kind) {
            (None, Kind::Logout) => {}
            (None, _) => return Err(refused("the token has no exp")),
            (Some(exp), _) if now_secs > exp.saturating_add(skew) => {
                return Err(Error::unauthorized(
                    lattice_core::Code::TokenExpired,
                    format!("the token has expired ({} s ago, beyond the allowed clock skew of {skew} s)", now_secs - exp),
                ));
            }
            (Some(_), _) => {}
        }
        if let Some(nbf) = time(&claims, "nbf")?
            && nbf > now_secs.saturating_add(skew)
        {
            return Err(refused(format!(
                "the token is not valid yet (nbf is {} s ahead, beyond the allowed clock skew of {skew} s)",
                nbf - now_secs
            )));
        }
        let Some(iat) = time(&claims, "iat")? else {
            return Err(refused("the token has no iat"));
        };
        if iat > now_secs.saturating_add(skew) {
            return Err(refused(format!(
                "the token was issued in the future ({} s ahead, beyond the allowed clock skew of {skew} s)",
                iat - now_secs
            )));
        }

        match expect.kind {
            Kind::IdToken { nonce } => {
                // Core 3.1.3.7: with several audiences, the party it was
                // issued to must be this client; and whenever it is named.
                match claims.get("azp") {
                    Some(Value::String(azp)) if *azp == settings.client_id => {}
                    Some(_) => return Err(refused(format!("the ID token's azp is not this client ({})", settings.client_id))),
                    None if audiences.len() > 1 => {
                        return Err(refused(format!("the ID token names several audiences and no azp (expected {})", settings.client_id)));
                    }
                    None => {}
                }
                match claims.get("nonce") {
                    Some(Value::String(said)) if equal_in_constant_time(said.as_bytes(), nonce.as_bytes()) => {}
                    Some(_) => return Err(refused("the ID token's nonce does not match the sign-in's")),
                    None => return Err(refused("the ID token has no nonce")),
                }
                if declares_logout(&claims) {
                    return Err(refused("a logout token is not accepted as an ID token"));
                }
            }
            Kind::Access => {
                if declares_logout(&claims) {
                    return Err(refused("a logout token is not accepted as a bearer token"));
                }
            }
            Kind::Logout => {
                // Back-Channel Logout 2.6: a nonce makes it an ID token, which
                // must never pass for a logout.
                if claims.contains_key("nonce") {
                    return Err(refused("a logout token must hold no nonce"));
                }
            }
        }
        Ok(Verified { claims, iat, exp })
    }
}

/// A NumericDate claim (RFC 7519 2) in whole seconds, if present.
fn time(claims: &Object, name: &str) -> Result<Option<i64>, Error> {
    match claims.get(name) {
        None => Ok(None),
        Some(Value::Number(n)) => match (n.as_i64(), n.as_f64()) {
            (Some(secs), _) => Ok(Some(secs)),
            (None, Some(secs)) if secs.is_finite() && secs.abs() < 1e15 => Ok(Some(secs.floor() as i64)),
            _ => Err(refused(format!("the token's {name} is not a time in seconds"))),
        },
        Some(_) => Err(refused(format!("the token's {name} is not a number"))),
    }
}

/// Compares without stopping at the first difference, so a forged nonce's
/// timing says nothing of the right one.
fn equal_in_constant_time(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_three_base64url_json_objects_within_the_bound() {
        let part = |v: &str| URL_SAFE_NO_PAD.encode(v);
        let ok = format!("{}.{}.sig", part(r#"{"alg":"RS256"}"#), part(r#"{"iss":"x"}"#));
        assert!(peek(&ok).is_ok());
        let reason = |t: &str| match peek(t) {
            Err(Error::Unauthorized { reason, .. }) => reason,
            other => panic!("{other:?}"),
        };
        assert_eq!(reason("a.b"), "the token is not a signed JWT (three dot-separated parts)");
        assert_eq!(reason("a.b.c.d.e"), "the token is encrypted (JWE): only signed tokens are accepted");
        assert_eq!(reason("!!.b.c"), "the token's header is not base64url");
        assert_eq!(reason(&format!("{}.{}.s", part("[1]"), part("{}"))), "the token's header is not a JSON object");
        assert_eq!(reason(&"a".repeat(TOKEN_MAX + 1)), "the token is 16385 bytes, over the limit 16384");
    }

    #[test]
    fn times_are_whole_seconds() {
        let claims = |v: Value| v.as_object().unwrap().clone();
        assert_eq!(time(&claims(serde_json::json!({"exp": 10})), "exp").unwrap(), Some(10));
        assert_eq!(time(&claims(serde_json::json!({"exp": 10.9})), "exp").unwrap(), Some(10));
        assert_eq!(time(&claims(serde_json::json!({})), "exp").unwrap(), None);
        assert!(time(&claims(serde_json::json!({"exp": "10"})), "exp").is_err());
        assert!(time(&claims(serde_json::json!({"exp": 1e300})), "exp").is_err());
    }

    #[test]
    fn nonces_compare_whole() {
        assert!(equal_in_constant_time(b"abc", b"abc"));
        assert!(!equal_in_constant_time(b"abc", b"abd"));
        assert!(!equal_in_constant_time(b"abc", b"abcd"));
    }
}

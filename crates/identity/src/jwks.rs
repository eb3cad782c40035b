//! A provider's signing keys (its JWK set), fetched from discovery's
//! `jwks_uri` when first needed and kept. A token whose `kid` the set does
//! not hold makes the set be fetched again, but only if the last fetch was
//! at least a minute ago by the clock, and callers that miss together share
//! one fetch: a flood of tokens with made-up kids costs the provider at most
//! one fetch a minute, and a rotated key is picked up within one. A set an
//! hour old is fetched again on its next use, so a key the provider dropped
//! stops being trusted.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::DecodingKey;
use jsonwebtoken::jwk::Jwk;
use lattice_core::{Error, SharedClock};
use serde_json::Value;

use crate::alg::{Alg, KeyKind};
use crate::config::cut;

/// The most keys a set may hold; a set with more is refused whole.
pub(crate) const KEYS_MAX: usize = 100;
/// The longest wait for a key set.
pub(crate) const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// An unknown kid fetches the set again only this long after the last fetch.
pub(crate) const REFETCH_MIN_MS: i64 = 60_000;
/// A set is fetched again on its first use after this age.
const MAX_AGE_MS: i64 = 3600 * 1000;
/// RSA keys shorter than this are not used (NIST SP 800-131A).
const RSA_BITS_MIN: usize = 2048;
const KID_MAX: usize = 256;

/// One usable verification key of a provider.
pub(crate) struct Key {
    kid: Option<String>,
    kind: KeyKind,
    /// The key's own `alg`, when it names one: it is then used for that
    /// algorithm only.
    alg: Option<String>,
    decoding: DecodingKey,
}

/// A provider's usable keys.
#[derive(Default)]
pub(crate) struct KeySet {
    keys: Vec<Key>,
}

/// What a key set holds for a token.
enum Found<'a> {
    Key(&'a Key),
    /// No key with the token's kid (or, for a token without one, no key for
    /// its algorithm): a fetch may find it.
    Missing(String),
    /// A key is there but cannot be the one: fetching again will not help.
    Refused(String),
}

impl Key {
    fn fits(&self, alg: Alg) -> bool {
        self.kind == alg.key_kind() && self.alg.as_deref().is_none_or(|a| a == alg.name())
    }
}

impl KeySet {
    /// Reads a JWK set (RFC 7517 5). Keys that are not for signatures, of
    /// a type or curve not verified here, too short, or holding private
    /// parts are left out, each with the reason in the returned notes.
    pub(crate) fn parse(body: &[u8]) -> Result<(KeySet, Vec<String>), String> {
        let value: Value = serde_json::from_slice(body).map_err(|e| format!("is not JSON: {e}"))?;
        let Some(keys) = value.get("keys").and_then(Value::as_array) else {
            return Err("holds no `keys` array".to_owned());
        };
        if keys.len() > KEYS_MAX {
            return Err(format!("holds {} keys, over the limit {KEYS_MAX}", keys.len()));
        }
        let mut set = KeySet::default();
        let mut notes = Vec::new();
        for (i, key) in keys.iter().enumerate() {
            match parse_key(key) {
                Ok(key) => set.keys.push(key),
                Err(why) => notes.push(format!(
                    "key {i}{}: {why}",
                    key.get("kid").and_then(Value::as_str).map(|k| format!(" ({:?})", cut(k, 64))).unwrap_or_default()
                )),
            }
        }
        Ok((set, notes))
    }

    pub(crate) fn len(&self) -> usize {
        self.keys.len()
    }

    fn find(&self, kid: Option<&str>, alg: Alg, provider: &str) -> Found<'_> {
        match kid {
            Some(kid) => {
                let named: Vec<&Key> = self.keys.iter().filter(|k| k.kid.as_deref() == Some(kid)).collect();
                if named.is_empty() {
                    return Found::Missing(format!("no key of provider {provider} has kid {:?}", cut(kid, 64)));
                }
                match named.iter().find(|k| k.fits(alg)) {
                    Some(key) => Found::Key(key),
                    None => {
                        let key = named[0];
                        let what = match &key.alg {
                            Some(a) if key.kind == alg.key_kind() => format!("is for alg {}", cut(a, 16)),
                            _ => format!("is {}", key.kind.describe()),
                        };
                        Found::Refused(format!("provider {provider}'s key {:?} {what}, which cannot check alg {}", cut(kid, 64), alg.name()))
                    }
                }
            }
            // A token without a kid is taken only when one key could have
            // signed it: the set holds a single key for its algorithm.
            None => {
                let fitting: Vec<&Key> = self.keys.iter().filter(|k| k.fits(alg)).collect();
                match fitting.as_slice() {
                    [key] => Found::Key(key),
                    [] => Found::Missing(format!("the token names no kid, and provider {provider} has no key for alg {}", alg.name())),
                    many => Found::Refused(format!(
                        "the token names no kid, and provider {provider} has {} keys for alg {}: which one signed it is not said",
                        many.len(),
                        alg.name()
                    )),
                }
            }
        }
    }
}

fn parse_key(key: &Value) -> Result<Key, String> {
    let Some(fields) = key.as_object() else {
        return Err("is not an object".to_owned());
    };
    let text = |name: &str| fields.get(name).and_then(Value::as_str);
    if fields.contains_key("d") {
        return Err("holds private key material, which a key set must never publish".to_owned());
    }
    if let Some(usage) = fields.get("use")
        && usage.as_str() != Some("sig")
    {
        return Err("its use is not sig".to_owned());
    }
    if let Some(ops) = fields.get("key_ops")
        && !ops.as_array().is_some_and(|ops| ops.iter().any(|o| o.as_str() == Some("verify")))
    {
        return Err("its key_ops do not hold verify".to_owned());
    }
    let kid = match fields.get("kid") {
        None => None,
        Some(Value::String(kid)) if !kid.is_empty() && kid.len() <= KID_MAX => Some(kid.clone()),
        Some(_) => return Err(format!("its kid is not a string of 1 to {KID_MAX} bytes")),
    };
    let alg = match fields.get("alg") {
        None => None,
        Some(Value::String(alg)) => Some(alg.clone()),
        Some(_) => return Err("its alg is not a string".to_owned()),
    };
    let kind = match (text("kty"), text("crv")) {
        (Some("RSA"), _) => {
            let n = text("n").and_then(|n| URL_SAFE_NO_PAD.decode(n).ok()).ok_or("its modulus n is not base64url")?;
            let bits = significant_bits(&n);
            if bits < RSA_BITS_MIN {
                return Err(format!("an RSA key of {bits} bits is shorter than the {RSA_BITS_MIN} required"));
            }
            KeyKind::Rsa
        }
        (Some("EC"), Some("P-256")) => KeyKind::Ec("P-256"),
        (Some("EC"), Some("P-384")) => KeyKind::Ec("P-384"),
        (Some("OKP"), Some("Ed25519")) => KeyKind::Okp("Ed25519"),
        (Some("oct"), _) => return Err("a symmetric (oct) key is never used to check a provider's token".to_owned()),
        (Some(kty), Some(crv)) => return Err(format!("kty {:?} on curve {:?} is not verified here", cut(kty, 16), cut(crv, 16))),
        (Some(kty), None) => return Err(format!("kty {:?} is not verified here", cut(kty, 16))),
        (None, _) => return Err("it names no kty".to_owned()),
    };
    let jwk: Jwk = serde_json::from_value(key.clone()).map_err(|e| format!("is not a JWK: {e}"))?;
    let decoding = DecodingKey::from_jwk(&jwk).map_err(|e| format!("is not a usable key: {e}"))?;
    Ok(Key { kid, kind, alg, decoding })
}

/// The bit length of a big-endian unsigned integer.
fn significant_bits(bytes: &[u8]) -> usize {
    match bytes.iter().position(|b| *b != 0) {
        None => 0,
        Some(i) => (bytes.len() - i - 1) * 8 + (8 - bytes[i].leading_zeros() as usize),
    }
}

/// A provider's key set as kept between tokens.
#[derive(Default)]
pub(crate) struct KeyCache {
    state: Mutex<State>,
    /// Held while a fetch is in flight: callers that missed wait on it and
    /// take its outcome instead of fetching again.
    flight: tokio::sync::Mutex<()>,
    /// Fetches finished; a caller that saw it move while it waited fetches
    /// nothing.
    attempts: AtomicU64,
    /// Fetches begun (what `Providers::jwks_fetches` reports).
    fetches: AtomicU64,
}

#[derive(Default)]
struct State {
    set: Option<Arc<KeySet>>,
    fetched_ms: i64,
    attempted_ms: Option<i64>,
    last_failure: Option<String>,
}

impl KeyCache {
    pub(crate) fn fetches(&self) -> u64 {
        self.fetches.load(Ordering::SeqCst)
    }

    /// Counts a fetch as begun (the fetch itself is the caller's, which
    /// first learns the key set's URL).
    pub(crate) fn note_fetch(&self) {
        self.fetches.fetch_add(1, Ordering::SeqCst);
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while the lock was held leaves plain data behind.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The key that checks a token signed with `alg` under `kid`, fetching
    /// the set with `fetch` when the rules above allow.
    pub(crate) async fn key<F, Fut>(&self, kid: Option<&str>, alg: Alg, provider: &str, clock: &SharedClock, fetch: F) -> Result<DecodingKey, Error>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<(KeySet, Vec<String>), String>>,
    {
        let unauthorized = |reason: String| Error::unauthorized(lattice_core::Code::TokenInvalid, reason);
        let seen = self.attempts.load(Ordering::SeqCst);
        let now = clock.now_ms();
        let (set, fetched_ms, attempted_ms) = {
            let state = self.state();
            (state.set.clone(), state.fetched_ms, state.attempted_ms)
        };
        let may_fetch = attempted_ms.is_none_or(|at| now.saturating_sub(at) >= REFETCH_MIN_MS);
        let why = match &set {
            None => "first use",
            Some(set) => {
                let stale = may_fetch && now.saturating_sub(fetched_ms) >= MAX_AGE_MS;
                match set.find(kid, alg, provider) {
                    Found::Key(key) if !stale => return Ok(key.decoding.clone()),
                    Found::Refused(reason) if !stale => return Err(unauthorized(reason)),
                    Found::Missing(reason) if !may_fetch => return Err(unauthorized(reason)),
                    _ if stale => "an hour old",
                    _ => "a kid it did not hold",
                }
            }
        };
        {
            let _flight = self.flight.lock().await;
            if self.attempts.load(Ordering::SeqCst) == seen {
                let outcome = fetch().await;
                let now = clock.now_ms();
                let mut state = self.state();
                state.attempted_ms = Some(now);
                match outcome {
                    Ok((set, notes)) => {
                        tracing::info!(provider, keys = set.len(), why, "fetched the provider's key set");
                        if !notes.is_empty() {
                            tracing::warn!(provider, left_out = ?notes, "keys of the provider's key set were left out");
                        }
                        state.set = Some(Arc::new(set));
                        state.fetched_ms = now;
                        state.last_failure = None;
                    }
                    Err(reason) => {
                        tracing::warn!(provider, %reason, why, "the provider's key set could not be fetched");
                        state.last_failure = Some(reason);
                    }
                }
                self.attempts.fetch_add(1, Ordering::SeqCst);
            }
        }
        let state = self.state();
        match &state.set {
            None => Err(Error::unavailable(state.last_failure.as_deref().unwrap_or("the provider's key set could not be fetched"))),
            Some(set) => match set.find(kid, alg, provider) {
                Found::Key(key) => Ok(key.decoding.clone()),
                Found::Missing(reason) | Found::Refused(reason) => Err(unauthorized(reason)),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_are_counted_from_the_first_set_one() {
        assert_eq!(significant_bits(&[]), 0);
        assert_eq!(significant_bits(&[0, 0]), 0);
        assert_eq!(significant_bits(&[1]), 1);
        assert_eq!(significant_bits(&[0, 0x80, 0]), 16);
        assert_eq!(significant_bits(&[0xff; 256]), 2048);
        assert_eq!(significant_bits(&[0x7f; 256]), 2047);
    }

    #[test]
    fn keys_that_cannot_sign_are_left_out_with_a_reason() {
        let body = serde_json::json!({"keys": [
            {"kty": "oct", "k": "c2VjcmV0", "kid": "hmac"},
            {"kty": "RSA", "n": "AQAB", "e": "AQAB", "kid": "short"},
            {"kty": "EC", "crv": "P-521", "x": "AA", "y": "AA", "kid": "p521"},
            {"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "use": "enc"},
            {"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "d": "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"},
            {"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "kid": "ed", "key_ops": ["verify"]},
        ]});
        let (set, notes) = KeySet::parse(body.to_string().as_bytes()).unwrap();
        assert_eq!(set.len(), 1);
        expect_test::expect![[r#"
            key 0 ("hmac"): a symmetric (oct) key is never used to check a provider's token
            key 1 ("short"): an RSA key of 17 bits is shorter than the 2048 required
            key 2 ("p521"): kty "EC" on curve "P-521" is not verified here
            key 3: its use is not sig
            key 4: holds private key material, which a key set must never publish"#]]
        .assert_eq(&notes.join("\n"));
        let too_many = serde_json::json!({"keys": vec![serde_json::json!({}); KEYS_MAX + 1]});
        assert_eq!(KeySet::parse(too_many.to_string().as_bytes()).err().unwrap(), "holds 101 keys, over the limit 100");
        assert_eq!(KeySet::parse(b"{}").err().unwrap(), "holds no `keys` array");
    }
}

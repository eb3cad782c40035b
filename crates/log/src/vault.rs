//! Sealing what a person's sign-in to a connected server gives (its tokens):
//! ChaCha20-Poly1305 under a key derived from the deployment's secret (its
//! own derivation: never a token's, a capability's or a chain's key), each
//! record bound to its person and its server (the associated data), so a
//! row moved to another person or server does not open.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use lattice_core::Error;
use rand::RngCore;

#[derive(Clone)]
pub(crate) struct Vault {
    cipher: ChaCha20Poly1305,
}

impl Vault {
    pub fn new(key: &[u8; 32]) -> Self {
        Self { cipher: ChaCha20Poly1305::new(Key::from_slice(key)) }
    }

    /// `plain`, sealed for `bound` (who and what it is for): the nonce, then
    /// the ciphertext, in base64.
    pub fn seal(&self, plain: &str, bound: &str) -> Result<String, Error> {
        let mut nonce = [0u8; 12];
        rand::rng().fill_bytes(&mut nonce);
        let sealed = self
            .cipher
            .encrypt(Nonce::from_slice(&nonce), Payload { msg: plain.as_bytes(), aad: bound.as_bytes() })
            .map_err(|_| Error::unavailable("a connection could not be sealed"))?;
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        Ok(STANDARD.encode(out))
    }

    /// What `seal` sealed for `bound`; refused for anything else (another
    /// key, another person or server, a byte changed).
    pub fn open(&self, sealed: &str, bound: &str) -> Result<String, Error> {
        let refused = || Error::unavailable("a stored connection does not open under this deployment's secret: sign in to the server again");
        let bytes = STANDARD.decode(sealed).map_err(|_| refused())?;
        if bytes.len() < 12 + 16 {
            return Err(refused());
        }
        let (nonce, ciphertext) = bytes.split_at(12);
        let plain = self.cipher.decrypt(Nonce::from_slice(nonce), Payload { msg: ciphertext, aad: bound.as_bytes() }).map_err(|_| refused())?;
        String::from_utf8(plain).map_err(|_| refused())
    }
}

/// What a sealed record is bound to.
pub(crate) fn bound(tenant: &str, user: &str, server: &str) -> String {
    format!("lattice.server-connection.v1\0{tenant}\0{user}\0{server}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_record_opens_for_its_person_and_server_alone() {
        let vault = Vault::new(&[7; 32]);
        let sealed = vault.seal("{\"access_token\":\"t\"}", &bound("t1", "ana", "notes")).unwrap();
        assert!(!sealed.contains("access_token"));
        assert_eq!(vault.open(&sealed, &bound("t1", "ana", "notes")).unwrap(), "{\"access_token\":\"t\"}");
        assert!(vault.open(&sealed, &bound("t1", "bob", "notes")).is_err(), "another person's");
        assert!(vault.open(&sealed, &bound("t1", "ana", "other")).is_err(), "another server's");
        assert!(Vault::new(&[8; 32]).open(&sealed, &bound("t1", "ana", "notes")).is_err(), "another secret's");
        let mut tampered = STANDARD.decode(&sealed).unwrap();
        *tampered.last_mut().unwrap() ^= 1;
        assert!(vault.open(&STANDARD.encode(tampered), &bound("t1", "ana", "notes")).is_err());
        assert_ne!(sealed, vault.seal("{\"access_token\":\"t\"}", &bound("t1", "ana", "notes")).unwrap(), "a nonce of its own each time");
    }
}

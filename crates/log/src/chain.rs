//! Chains (docs/BRIDGE.md): the id that joins a rule's event, the run a
//! rule starts for it, and people's answers to that run. lattice mints
//! them; nobody else can.
//!
//! A chain is `<id>.<mac>`: the id of the envelope it began at, and an
//! HMAC-SHA256 (cut to 128 bits) over the tenant and that id, under a key
//! derived from the deployment's token secret. It comes in two forms, told
//! apart by the label the MAC is taken under:
//!
//! - **passable**: what the bridge publishes (a message's `new_chain`, an
//!   answer's `chain`) and what a rule passes when it starts a run. Only
//!   those who read the tenant's subjects on NATS ever see one.
//! - **recorded**: what the write path keeps with the run, beside who
//!   started it (`run_started.chain`, the run's forms, its answers). People
//!   who may read the thread see it; it is refused as a run's chain, so
//!   reading the log lends nobody a rule's chain. The bridge turns it back
//!   into the passable form when it publishes an answer.
//!
//! A chain a caller wrote before chains were minted verifies as neither,
//! and the bridge publishes no chain for it.

use lattice_core::Error;
use sha2::{Digest, Sha256};

/// The key chains are minted and checked under.
#[derive(Clone)]
pub struct ChainKey([u8; 32]);

/// The two forms, as MAC labels.
const PASSABLE: &[u8] = b"lattice.chain.passable.v1";
const RECORDED: &[u8] = b"lattice.chain.recorded.v1";

/// Hex digits of the MAC: 128 bits, as RFC 2104 allows a MAC cut to half
/// its hash.
const MAC_HEX: usize = 32;

/// An id may be any chain token without a dot (an envelope id, a ULID, in
/// practice), short enough that id, dot and MAC fit the 128 bytes of a
/// chain (`limits::CHAIN_MAX`).
const ID_MAX: usize = crate::limits::CHAIN_MAX - 1 - MAC_HEX;

impl ChainKey {
    /// The key of a deployment, from its token secret: a key of its own, so
    /// that a chain's MAC is never a token's signature, nor one a chain's.
    pub fn derive(secret: &[u8]) -> Self {
        Self(Sha256::new().chain_update(b"lattice.chain.v1\0").chain_update(secret).finalize().into())
    }

    /// The passable chain that begins at `tenant`'s envelope `id`.
    pub fn mint(&self, tenant: &str, id: &str) -> String {
        format!("{id}.{}", self.mac(PASSABLE, tenant, id))
    }

    /// What the write path records for a run started with `chain` in
    /// `tenant`: its recorded form. Anything but a passable chain minted
    /// for this tenant is refused, naming the field.
    pub fn record(&self, tenant: &str, chain: &str) -> Result<String, Error> {
        let refused = || {
            Error::field(
                "chain",
                "minted",
                "not a chain lattice minted for this tenant: pass on the `chain` or `new_chain` of a message the bridge published",
            )
        };
        let id = self.verify(PASSABLE, tenant, chain).ok_or_else(refused)?;
        Ok(format!("{id}.{}", self.mac(RECORDED, tenant, id)))
    }

    /// The passable form of a recorded chain of `tenant`, for the bridge to
    /// publish; `None` for anything lattice did not record.
    pub fn pass_on(&self, tenant: &str, recorded: &str) -> Option<String> {
        self.verify(RECORDED, tenant, recorded).map(|id| self.mint(tenant, id))
    }

    /// The id of `chain` if its MAC is this key's, under `label`, for `tenant`.
    fn verify<'c>(&self, label: &[u8], tenant: &str, chain: &'c str) -> Option<&'c str> {
        let (id, mac) = chain.split_once('.')?;
        let id_ok = !id.is_empty() && id.len() <= ID_MAX && id.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-:".contains(&b));
        (id_ok && equal(mac.as_bytes(), self.mac(label, tenant, id).as_bytes())).then_some(id)
    }

    fn mac(&self, label: &[u8], tenant: &str, id: &str) -> String {
        // NUL never occurs in a label, a tenant or an id: the parts cannot
        // be shifted into one another.
        let message = [label, b"\0".as_slice(), tenant.as_bytes(), b"\0".as_slice(), id.as_bytes()].concat();
        hex::encode(&hmac_sha256(&self.0, &message)[..MAC_HEX / 2])
    }
}

impl std::fmt::Debug for ChainKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ChainKey(********)")
    }
}

/// RFC 2104 over SHA-256 (the workspace has no HMAC crate, and this is all
/// of it; RFC 4231's vectors check it below).
fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut block = [0u8; 64];
    if key.len() > block.len() {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.map(|k| k ^ byte);
    let inner = Sha256::new().chain_update(pad(0x36)).chain_update(message).finalize();
    Sha256::new().chain_update(pad(0x5c)).chain_update(inner).finalize().into()
}

/// Compares in time that does not depend on where the two differ, so that
/// timing a refusal does not tell a forger how much of a MAC was right.
fn equal(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_sha256_agrees_with_rfc_4231() {
        let check = |key: &[u8], message: &[u8], expected: &str| assert_eq!(hex::encode(hmac_sha256(key, message)), expected);
        check(&[0x0b; 20], b"Hi There", "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
        check(b"Jefe", b"what do ya want for nothing?", "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
        check(&[0xaa; 20], &[0xdd; 50], "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
        // A key longer than the block is hashed first.
        check(
            &[0xaa; 131],
            b"Test Using Larger Than Block-Size Key - Hash Key First",
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
        );
    }

    fn key() -> ChainKey {
        ChainKey::derive(b"a deployment's token secret, 32 bytes or more")
    }

    #[test]
    fn a_minted_chain_is_recorded_and_passed_on_unchanged() {
        let key = key();
        let chain = key.mint("acme", "01JD8Z3K4M5N6P7Q8R9S0T1V2W");
        assert!(chain.starts_with("01JD8Z3K4M5N6P7Q8R9S0T1V2W.") && chain.len() == 26 + 1 + MAC_HEX, "{chain}");
        let recorded = key.record("acme", &chain).unwrap();
        assert_ne!(recorded, chain, "the recorded form is not passable");
        assert_eq!(key.pass_on("acme", &recorded).as_deref(), Some(chain.as_str()));
        // Every hop of a conversation shares one chain: an answer's, passed
        // on again, records the same.
        assert_eq!(key.record("acme", &key.pass_on("acme", &recorded).unwrap()).unwrap(), recorded);
    }

    #[test]
    fn nothing_but_a_passable_chain_of_the_tenant_is_recorded() {
        let key = key();
        let chain = key.mint("acme", "01JD8Z3K4M5N6P7Q8R9S0T1V2W");
        let recorded = key.record("acme", &chain).unwrap();
        let other_deployment = ChainKey::derive(b"another deployment's token secret, 32 bytes").mint("acme", "01JD8Z3K4M5N6P7Q8R9S0T1V2W");
        let (id, mac) = chain.split_once('.').unwrap();
        let flipped = format!("{id}.{}{}", if mac.starts_with('0') { '1' } else { '0' }, &mac[1..]);
        for refused in [
            "01JD8Z3K4M5N6P7Q8R9S0T1V2W",             // a bare envelope id, as rules passed before
            "evt-01J9-rule",                          // whatever a caller liked
            recorded.as_str(),                        // the form anyone reading the thread sees
            other_deployment.as_str(),                // another deployment's
            flipped.as_str(),                         // one digit off
            &format!("{id}.{}", &mac[..MAC_HEX - 1]), // cut short
            &format!("{id}x.{mac}"),                  // another id
            &format!("{}.{mac}", id.to_lowercase()),  // the id in another case
            &format!(".{mac}"),                       // no id
            &format!("{id}.{mac}.{mac}"),             // two MACs
        ] {
            let err = key.record("acme", refused).unwrap_err();
            assert!(matches!(&err, Error::ValidationFailed { errors, .. } if errors[0].path == "chain"), "{refused}: {err:?}");
            if refused != recorded {
                assert_eq!(key.pass_on("acme", refused), None, "{refused}");
            }
        }
        // Another tenant's chain, though minted by this deployment.
        assert!(key.record("globex", &chain).is_err());
        assert_eq!(key.pass_on("globex", &recorded), None);
    }
}

//! Content digests (REQUIREMENTS.md L4): SHA-256 over a canonical JSON form, so the same
//! data has the same receipt whatever order its keys were written in.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// `sha256:` and the hex digest of `data`'s canonical form.
pub fn digest(data: &Value) -> String {
    let mut canonical = Vec::with_capacity(256);
    write_canonical(data, &mut canonical);
    format!("sha256:{}", hex::encode(Sha256::digest(&canonical)))
}

/// The digest a secret (an API key, a SCIM token, a sign-in's one-time
/// code) is kept and looked up by: SHA-256, hex. The secrets are 256 random
/// bits, so a fast hash hides them.
pub fn secret_digest(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// Objects with their keys sorted, no insignificant whitespace, strings and
/// numbers as serde_json writes them.
fn write_canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push(b'{');
            for (i, (key, value)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                serde_json::to_writer(&mut *out, key).expect("writing to a Vec cannot fail");
                out.push(b':');
                write_canonical(value, out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(item, out);
            }
            out.push(b']');
        }
        scalar => serde_json::to_writer(&mut *out, scalar).expect("writing to a Vec cannot fail"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_order_does_not_change_the_digest() {
        let a: Value = serde_json::from_str(r#"{"b": 1, "a": [true, null, "x"]}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"a":[true,null,"x"],"b":1}"#).unwrap();
        assert_eq!(digest(&a), digest(&b));
        assert_ne!(digest(&a), digest(&json!({"a": [true, null, "x"], "b": 2})));
    }

    #[test]
    fn digest_of_a_known_document() {
        // sha256 of the 2 bytes `{}`.
        assert_eq!(digest(&json!({})), "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
    }
}

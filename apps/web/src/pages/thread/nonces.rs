//! The nonce a submission is made with: random, from the browser's crypto.

/// Twelve random bytes, in hex.
pub(super) fn nonce() -> String {
    let mut bytes = [0u8; 12];
    if let Some(crypto) = web_sys::window().and_then(|w| w.crypto().ok()) {
        let _ = crypto.get_random_values_with_u8_array(&mut bytes);
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

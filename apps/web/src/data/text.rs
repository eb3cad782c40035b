//! Numbers read from and written for the page, and capitals, by the
//! browser's own conversions (`+text`, `toString`, `toFixed`,
//! `toUpperCase`, `Intl.NumberFormat` for a person's own way of writing
//! numbers). The standard library's would ship its float parsing and
//! printing and its case tables, with their tables (about 25 KB of the first
//! load before compression), to give the same results.

use js_sys::{JsString, Number};
use wasm_bindgen::JsValue;

/// The number a control's text spells, if it spells one in decimal
/// (`-1.5e3`, `.5`); `None` for anything else, an empty text among them.
/// The browser alone would also take `0x1f`, `Infinity` and blanks.
pub fn number_in(text: &str) -> Option<f64> {
    let decimal =
        text.bytes().any(|b| b.is_ascii_digit()) && text.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E'));
    // `+text`, as `Number(text)`.
    let n = JsValue::from_str(text).unchecked_into_f64();
    (decimal && n.is_finite()).then_some(n)
}

/// The shortest text that reads back as `n` (`1`, `0.1`, `1e+21`).
pub fn number(n: f64) -> String {
    string(Number::from(n).to_string_with_radix(10))
}

/// `n` with `digits` digits after the point (`1.50` for 1.5 and 2).
pub fn fixed(n: f64, digits: u8) -> String {
    string(Number::from(n).to_fixed(digits))
}

/// `n` as the person's language writes numbers (`1,234.5`; `1.234,5` in
/// German), up to three digits after the point.
pub fn local(n: f64) -> String {
    let format = js_sys::Intl::NumberFormat::new(&js_sys::Array::new(), &js_sys::Object::new()).format();
    format.call1(&JsValue::NULL, &JsValue::from_f64(n)).ok().and_then(|s| s.as_string()).unwrap_or_else(|| number(n))
}

/// `s` with its first letter in capitals, by the browser's Unicode tables.
pub fn capitalize(s: &str) -> String {
    let first = s.chars().next().map_or(0, char::len_utf8);
    String::from(JsString::from(&s[..first]).to_upper_case()) + &s[first..]
}

fn string(s: Result<JsString, JsValue>) -> String {
    s.map(String::from).unwrap_or_default()
}

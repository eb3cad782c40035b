//! JSON that is still arriving, made whole: a model streams a tool call's
//! arguments a few characters at a time, and the chat shows the form or
//! dashboard being written from what has come so far. The value answered
//! is the longest prefix that can be closed into valid JSON: an open string
//! value is closed where it stops, an object key or a literal cut short is
//! left out, open arrays and objects are closed. Nothing here validates;
//! the finished arguments are checked as any others.

use serde_json::Value;

/// Deeper than this, a prefix is not worth showing (the finished
/// arguments would be refused by the document limits anyway).
const MAX_DEPTH: usize = 64;

/// The value `text` is a prefix of, as far as it has come; `None` when
/// nothing whole can be made of it yet.
pub fn complete(text: &str) -> Option<Value> {
    let scan = Scan::of(text)?;
    let closers = |depth: usize| -> String { scan.stack[..depth].iter().rev().map(|&b| b as char).collect() };
    let whole = |candidate: String| serde_json::from_str::<Value>(&candidate).ok();
    if scan.in_string && !scan.in_key {
        let open = without_broken_escape(text);
        if let Some(v) = whole(format!("{open}\"{}", closers(scan.stack.len()))) {
            return Some(v);
        }
    }
    if !scan.in_string
        && let Some(v) = whole(format!("{text}{}", closers(scan.stack.len())))
    {
        return Some(v);
    }
    let (end, depth) = scan.safe;
    whole(format!("{}{}", &text[..end], closers(depth)))
}

/// Where a scan of the text ended up.
struct Scan {
    /// The closing bracket of each open container, outermost first.
    stack: Vec<u8>,
    in_string: bool,
    /// The open string is an object's key.
    in_key: bool,
    /// The last place the text could be cut and closed: (byte end, depth).
    safe: (usize, usize),
}

impl Scan {
    fn of(text: &str) -> Option<Self> {
        let mut scan = Scan { stack: Vec::new(), in_string: false, in_key: false, safe: (0, 0) };
        let mut escaped = false;
        // In an object, whether the next string is a key.
        let mut expect_key = false;
        for (i, b) in text.bytes().enumerate() {
            if scan.in_string {
                if escaped {
                    escaped = false;
                } else if b == b'\\' {
                    escaped = true;
                } else if b == b'"' {
                    scan.in_string = false;
                    if !scan.in_key {
                        scan.safe = (i + 1, scan.stack.len());
                    }
                }
                continue;
            }
            match b {
                b'"' => {
                    scan.in_string = true;
                    scan.in_key = expect_key && scan.stack.last() == Some(&b'}');
                }
                b'{' | b'[' => {
                    scan.stack.push(if b == b'{' { b'}' } else { b']' });
                    if scan.stack.len() > MAX_DEPTH {
                        return None;
                    }
                    expect_key = b == b'{';
                    scan.safe = (i + 1, scan.stack.len());
                }
                b'}' | b']' => {
                    scan.stack.pop();
                    expect_key = false;
                    scan.safe = (i + 1, scan.stack.len());
                }
                b':' => expect_key = false,
                b',' => {
                    // What came before the comma is a whole item.
                    scan.safe = (i, scan.stack.len());
                    expect_key = scan.stack.last() == Some(&b'}');
                }
                _ => {}
            }
        }
        Some(scan)
    }
}

/// An open string's text without an escape cut short at its end (`\`,
/// `\u00`), which no closing quote can mend.
fn without_broken_escape(text: &str) -> &str {
    let bytes = text.as_bytes();
    // A run of backslashes at the end: an odd count leaves one open.
    let slashes = bytes.iter().rev().take_while(|&&b| b == b'\\').count();
    if slashes % 2 == 1 {
        return &text[..text.len() - 1];
    }
    if let Some(at) = text.get(text.len().saturating_sub(5)..).and_then(|tail| tail.rfind("\\u")) {
        let start = text.len().saturating_sub(5) + at;
        let before = bytes[..start].iter().rev().take_while(|&&b| b == b'\\').count();
        if before % 2 == 0 && text.len() - start < 6 {
            return &text[..start];
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::complete;

    #[test]
    fn every_prefix_of_a_document_is_made_whole_or_left_out() {
        let doc = r#"{"title": "Incident \"42\" \u00e9", "schema": {"type": "object", "properties": {"severity": {"enum": ["low", "high"]}, "n": 12.5, "ok": true, "none": null}}, "tags": [1, [2, {}], "x"]}"#;
        let finished: serde_json::Value = serde_json::from_str(doc).unwrap();
        let mut shown = 0;
        for end in (0..=doc.len()).filter(|&i| doc.is_char_boundary(i)) {
            if let Some(v) = complete(&doc[..end]) {
                assert!(v.is_object(), "{:?} made {v}", &doc[..end]);
                shown += 1;
            }
        }
        assert!(shown > doc.len() / 2, "{shown} of {} prefixes were shown", doc.len());
        assert_eq!(complete(doc), Some(finished));
    }

    #[test]
    fn open_strings_show_as_far_as_they_came_and_keys_cut_short_are_left_out() {
        assert_eq!(complete(r#"{"title": "Inci"#), Some(json!({"title": "Inci"})));
        assert_eq!(complete(r#"{"title": "A", "sche"#), Some(json!({"title": "A"})));
        assert_eq!(complete(r#"{"title": "A", "schema":"#), Some(json!({"title": "A"})));
        assert_eq!(complete(r#"{"n": 12"#), Some(json!({"n": 12})));
        assert_eq!(complete(r#"{"ok": tr"#), Some(json!({})));
        assert_eq!(complete(r#"{"a": [1, 2, "#), Some(json!({"a": [1, 2]})));
        assert_eq!(complete(r#"{"t": "a\"#), Some(json!({"t": "a"})));
        assert_eq!(complete(r#"{"t": "a\u00"#), Some(json!({"t": "a"})));
        assert_eq!(complete(r#"{"t": "a\\"#), Some(json!({"t": "a\\"})));
        assert_eq!(complete(""), None);
        assert_eq!(complete("   "), None);
    }

    #[test]
    fn nesting_past_the_limit_is_not_shown() {
        assert_eq!(complete(&"[".repeat(65)), None);
        assert_eq!(complete(&"[".repeat(64)), Some(serde_json::from_str(&format!("{}{}", "[".repeat(64), "]".repeat(64))).unwrap()));
    }
}

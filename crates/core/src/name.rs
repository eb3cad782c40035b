//! The one rule for a name a person reads: a file's, a thread's, a
//! workspace's, a form's or a field's title, a person's, a group's, a
//! key's. What is shown must be what is there: a name holds no character
//! that is invisible or that changes how the rest reads (bidirectional
//! controls such as U+202E, which make `invoice`, U+202E, `fdp.exe` show as a PDF;
//! zero-width characters; the byte-order mark; line and paragraph
//! separators; control characters), and is kept in NFC, so one name typed
//! two ways is one name.
//!
//! Where a person gives the name (the API, a form's schema), one that
//! holds such a character is refused, naming it ([`check`]); where it
//! comes from elsewhere (a device's file name, an identity provider's
//! claim), the characters are taken out ([`clean`]). Both are this one
//! test ([`hidden`]).

use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_normalization::UnicodeNormalization;

use crate::FieldError;

/// Whether `c` is invisible or changes how the text around it reads:
/// Unicode's control (Cc) and format (Cf, which holds every bidirectional
/// control, the zero-width characters and U+FEFF) categories, and the
/// line and paragraph separators (Zl, Zp).
pub fn hidden(c: char) -> bool {
    matches!(
        get_general_category(c),
        GeneralCategory::Control | GeneralCategory::Format | GeneralCategory::LineSeparator | GeneralCategory::ParagraphSeparator
    )
}

/// `name` as kept: NFC, hidden characters taken out, trimmed.
pub fn clean(name: &str) -> String {
    let kept: String = name.nfc().filter(|c| !hidden(*c)).collect();
    kept.trim().to_owned()
}

/// `name` as kept (NFC, trimmed), or why it is refused: the first hidden
/// character it holds, by code point and place, at `field`.
pub fn check(field: &str, name: &str) -> Result<String, FieldError> {
    match name.chars().enumerate().find(|(_, c)| hidden(*c)) {
        Some((at, c)) => Err(FieldError::new(
            field,
            "pattern",
            format!("U+{:04X} (character {}) is invisible or changes how the name reads: a name holds none of these", c as u32, at + 1),
        )),
        None => Ok(name.nfc().collect::<String>().trim().to_owned()),
    }
}

/// The key two names are compared by: NFC, then lowercase.
pub fn key(name: &str) -> String {
    name.nfc().collect::<String>().to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_invisible_or_direction_changing_character_is_hidden() {
        let named = ('\u{202A}'..='\u{202E}').chain('\u{2066}'..='\u{2069}').chain('\u{200B}'..='\u{200F}');
        for c in named.chain(['\u{FEFF}', '\u{2028}', '\u{2029}', '\u{00AD}', '\u{061C}', '\0', '\n', '\u{7F}']) {
            assert!(hidden(c), "U+{:04X}", c as u32);
        }
        for c in ['a', 'é', 'ß', 'ж', '中', 'ا', ' ', '-', '.', '😀'] {
            assert!(!hidden(c), "U+{:04X}", c as u32);
        }
    }

    #[test]
    fn a_name_that_lies_is_refused_or_cleaned_and_one_typed_two_ways_is_one() {
        let lie = "invoice\u{202E}fdp.exe";
        let refused = check("name", lie).unwrap_err();
        assert_eq!((refused.path.as_str(), refused.keyword.as_str()), ("name", "pattern"));
        assert!(refused.message.starts_with("U+202E (character 8)"), "{}", refused.message);
        assert_eq!(clean(lie), "invoicefdp.exe");
        assert_eq!(clean("\u{FEFF} report\u{200B}.pdf "), "report.pdf");
        // NFD "José" is kept as NFC: the same bytes as the NFC spelling.
        assert_eq!(check("name", " Jose\u{301} ").unwrap(), "Jos\u{E9}");
        assert_eq!(clean("Jose\u{301}"), "Jos\u{E9}");
        assert_eq!(key("JOSE\u{301}"), key("jos\u{E9}"));
    }
}

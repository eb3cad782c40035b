//! The filter's tokens. Attribute paths, operators, keywords and numbers
//! are all words (runs of anything but space, brackets, parentheses and
//! quotes); the parser tells them apart by place, since `pr` or `and` is an
//! operator where one is expected, and RFC 7644 keeps them case-insensitive.

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Token<'a> {
    LParen,
    RParen,
    LBracket,
    RBracket,
    Word(&'a str),
    /// A JSON string literal, unescaped.
    Str(String),
}

/// A token and the byte where it starts, for the error messages.
pub(crate) type Spanned<'a> = (usize, Token<'a>);

pub(crate) fn tokens(text: &str) -> Result<Vec<Spanned<'_>>, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        match c {
            b' ' | b'\t' | b'\r' | b'\n' => {
                i += 1;
                continue;
            }
            b'(' => out.push((start, Token::LParen)),
            b')' => out.push((start, Token::RParen)),
            b'[' => out.push((start, Token::LBracket)),
            b']' => out.push((start, Token::RBracket)),
            b'"' => {
                let end = string_end(bytes, start).ok_or_else(|| format!("the string at byte {start} is not closed"))?;
                let literal: String = serde_json::from_str(&text[start..=end]).map_err(|_| format!("the string at byte {start} has a bad escape"))?;
                out.push((start, Token::Str(literal)));
                i = end + 1;
                continue;
            }
            _ => {
                while i < bytes.len() && !matches!(bytes[i], b' ' | b'\t' | b'\r' | b'\n' | b'(' | b')' | b'[' | b']' | b'"') {
                    i += 1;
                }
                out.push((start, Token::Word(&text[start..i])));
                continue;
            }
        }
        i += 1;
    }
    Ok(out)
}

/// The index of the quote that closes the string opened at `start`.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

//! The rules a property's keywords become (`lowering.rs` puts them in the
//! order that refuses cheapest): the hot path (`is_valid`) walks only the
//! rules a property has, and stops at the first that fails.

use serde_json::Value;

use super::equal::json_equal;
use super::format::Format;
use super::types::Types;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Rule {
    Type(Types),
    StringEnum(Box<[Box<str>]>),
    Enum(Box<[Value]>),
    Const(Value),
    MaxLength(u64),
    MinLength(u64),
    Format(Format),
    Minimum(f64),
    Maximum(f64),
    ExclusiveMinimum(f64),
    ExclusiveMaximum(f64),
    MultipleOf(f64),
    MinItems(u64),
    MaxItems(u64),
    ItemEnum(Box<[Box<str>]>),
    /// `items` enum and `uniqueItems` together: one pass, each choice a bit
    /// (at most 64 choices, so a u64 holds them).
    UniqueItemEnum(Box<[Box<str>]>),
    UniqueItems,
    /// Several files: each item a file's id.
    FileItems,
}

/// A property's check on the hot path: a typed one when the property has a
/// single type (one match on the value, then only that type's keywords),
/// else the general list of rules.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Fast {
    Text { choices: Option<Box<[Box<str>]>>, min: Option<u64>, max: Option<u64>, format: Option<Format> },
    Choices { choices: Box<[Box<str>]>, unique: bool, min: Option<u64>, max: Option<u64> },
    Boolean,
    Rules(Box<[Rule]>),
}

impl Fast {
    #[inline]
    pub(crate) fn accepts(&self, v: &Value) -> bool {
        match (self, v) {
            (Fast::Text { choices, min, max, format }, Value::String(s)) => {
                if let Some(c) = choices
                    && !c.iter().any(|c| same(c, s))
                {
                    return false;
                }
                if let Some(max) = max
                    && s.len() as u64 > *max
                    && s.chars().count() as u64 > *max
                {
                    return false;
                }
                if let Some(min) = min
                    && (s.len() as u64) < min.saturating_mul(4)
                    && (s.chars().count() as u64) < *min
                {
                    return false;
                }
                format.is_none_or(|f| f.matches(s))
            }
            (Fast::Choices { choices, unique, min, max }, Value::Array(items)) => choices_accept(choices, *unique, *min, *max, items),
            (Fast::Boolean, Value::Bool(_)) => true,
            (Fast::Rules(rules), v) => rules_accept(rules, v),
            _ => false,
        }
    }
}

// The multi-choice and general checks are called, not inlined, into
// `is_valid`: its loop stays small, with the text check (most fields) in
// it, and a form refused at its first field costs little more than that.
#[inline(never)]
fn choices_accept(choices: &[Box<str>], unique: bool, min: Option<u64>, max: Option<u64>, items: &[Value]) -> bool {
    let len = items.len() as u64;
    if min.is_some_and(|m| len < m) || max.is_some_and(|m| len > m) {
        return false;
    }
    let mut seen = 0u64;
    items.iter().all(|item| {
        let Value::String(s) = item else { return false };
        let Some(bit) = choices.iter().position(|c| same(c, s)) else { return false };
        let mask = 1u64 << (bit & 63);
        let fresh = !unique || seen & mask == 0;
        seen |= mask;
        fresh
    })
}

#[inline(never)]
fn rules_accept(rules: &[Rule], v: &Value) -> bool {
    rules.iter().all(|r| r.accepts(v))
}

impl Rule {
    /// Each rule constrains only values of the type it is about (JSON
    /// Schema's meaning); `Type`, the enums and `Const` constrain all.
    #[inline]
    pub(crate) fn accepts(&self, v: &Value) -> bool {
        match (self, v) {
            (Rule::Type(t), v) => t.admits(v),
            (Rule::StringEnum(choices), Value::String(s)) => choices.iter().any(|c| same(c, s)),
            (Rule::StringEnum(_), _) => false,
            (Rule::Enum(choices), v) => choices.iter().any(|c| json_equal(c, v)),
            (Rule::Const(c), v) => json_equal(c, v),
            // A string has at most as many characters as bytes and at
            // least a quarter as many: count only when bytes cannot decide.
            (Rule::MaxLength(max), Value::String(s)) => s.len() as u64 <= *max || s.chars().count() as u64 <= *max,
            (Rule::MinLength(min), Value::String(s)) => {
                s.len() as u64 >= min.saturating_mul(4) || (s.len() as u64 >= *min && s.chars().count() as u64 >= *min)
            }
            (Rule::Format(f), Value::String(s)) => f.matches(s),
            (Rule::Minimum(m), Value::Number(n)) => n.as_f64().is_some_and(|x| x >= *m),
            (Rule::Maximum(m), Value::Number(n)) => n.as_f64().is_some_and(|x| x <= *m),
            (Rule::ExclusiveMinimum(m), Value::Number(n)) => n.as_f64().is_some_and(|x| x > *m),
            (Rule::ExclusiveMaximum(m), Value::Number(n)) => n.as_f64().is_some_and(|x| x < *m),
            (Rule::MultipleOf(m), Value::Number(n)) => is_multiple(n, *m),
            (Rule::MinItems(min), Value::Array(items)) => items.len() as u64 >= *min,
            (Rule::MaxItems(max), Value::Array(items)) => items.len() as u64 <= *max,
            (Rule::ItemEnum(choices), Value::Array(items)) => choices_accept(choices, false, None, None, items),
            (Rule::UniqueItemEnum(choices), Value::Array(items)) => choices_accept(choices, true, None, None, items),
            (Rule::UniqueItems, Value::Array(items)) => super::equal::first_duplicate(items).is_none(),
            (Rule::FileItems, Value::Array(items)) => items.iter().all(|item| item.as_str().is_some_and(|s| Format::File.matches(s))),
            _ => true,
        }
    }
}

/// String equality for the short strings of field names and choices,
/// without a call into `memcmp` for every comparison: eight bytes at a
/// time, then the rest.
#[inline(always)]
pub(crate) fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    if a.len() > 32 {
        return a == b;
    }
    let (mut a_words, mut b_words) = (a.chunks_exact(8), b.chunks_exact(8));
    for (x, y) in a_words.by_ref().zip(b_words.by_ref()) {
        if u64::from_ne_bytes(x.try_into().expect("eight bytes")) != u64::from_ne_bytes(y.try_into().expect("eight bytes")) {
            return false;
        }
    }
    let (a_rest, b_rest) = (a_words.remainder(), b_words.remainder());
    let mut i = 0;
    while i < a_rest.len() {
        if a_rest[i] != b_rest[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Whether `n` is a multiple of `m`: exact for integers, and for decimals
/// exact up to the rounding of the division.
pub(crate) fn is_multiple(n: &serde_json::Number, m: f64) -> bool {
    if let (Some(x), true) = (n.as_i64(), m.fract() == 0.0 && m.abs() < 9.0e15) {
        return x % (m as i64) == 0;
    }
    let x = n.as_f64().unwrap_or(f64::NAN);
    let q = x / m;
    if !q.is_finite() {
        return false;
    }
    (q - q.round()).abs() <= q.abs().max(1.0) * 1e-9
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        /// Whole words, a tail, a difference in either: `same` is `==`.
        #[test]
        fn same_is_string_equality(a in "[a-c_é]{0,40}", b in "[a-c_é]{0,40}", flip in 0usize..40) {
            prop_assert_eq!(super::same(&a, &b), a == b);
            prop_assert!(super::same(&a, &a.clone()));
            if let Some((i, c)) = a.char_indices().nth(flip % a.chars().count().max(1)) {
                let other = format!("{}{}{}", &a[..i], if c == 'a' { 'b' } else { 'a' }, &a[i + c.len_utf8()..]);
                prop_assert_eq!(super::same(&a, &other), a == other);
            }
        }
    }
}

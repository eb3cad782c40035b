//! A property's keywords compiled to a short list of rules, in the order
//! that refuses cheapest: the hot path (`is_valid`) walks only the rules a
//! property has, and stops at the first that fails.

use serde_json::Value;

use super::equal::json_equal;
use super::format::Format;
use super::validate::is_multiple;
use super::{Property, Types};

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
    pub(crate) fn of(p: &Property) -> Self {
        let plain = p.constant.is_none()
            && p.minimum.is_none()
            && p.maximum.is_none()
            && p.exclusive_minimum.is_none()
            && p.exclusive_maximum.is_none()
            && p.multiple_of.is_none();
        match p.types {
            Some(t)
                if t == Types::STRING
                    && plain
                    && p.min_items.is_none()
                    && p.max_items.is_none()
                    && !p.unique_items
                    && p.item_choices.is_none()
                    && (p.choices.is_none() || p.string_choices.is_some()) =>
            {
                Fast::Text {
                    choices: p.string_choices.as_ref().map(|c| c.iter().map(|s| s.as_str().into()).collect()),
                    min: p.min_length,
                    max: p.max_length,
                    format: p.format,
                }
            }
            Some(t) if t == Types::ARRAY && plain && p.choices.is_none() && p.item_choices.is_some() => Fast::Choices {
                choices: p.item_choices.iter().flatten().filter_map(|v| v.as_str()).map(Into::into).collect(),
                unique: p.unique_items,
                min: p.min_items,
                max: p.max_items,
            },
            Some(t) if t == Types::BOOLEAN && plain && p.choices.is_none() => Fast::Boolean,
            _ => Fast::Rules(p.rules.clone()),
        }
    }

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

pub(crate) fn rules_of(p: &Property) -> Box<[Rule]> {
    let mut rules = Vec::new();
    if let Some(t) = p.types {
        rules.push(Rule::Type(t));
    }
    match (&p.string_choices, &p.choices) {
        (Some(strings), _) => rules.push(Rule::StringEnum(strings.iter().map(|s| s.as_str().into()).collect())),
        (None, Some(values)) => rules.push(Rule::Enum(values.clone().into())),
        (None, None) => {}
    }
    if let Some(c) = &p.constant {
        rules.push(Rule::Const(c.clone()));
    }
    rules.extend(p.max_length.map(Rule::MaxLength));
    rules.extend(p.min_length.map(Rule::MinLength));
    rules.extend(p.format.map(Rule::Format));
    rules.extend(p.minimum.map(Rule::Minimum));
    rules.extend(p.maximum.map(Rule::Maximum));
    rules.extend(p.exclusive_minimum.map(Rule::ExclusiveMinimum));
    rules.extend(p.exclusive_maximum.map(Rule::ExclusiveMaximum));
    rules.extend(p.multiple_of.map(Rule::MultipleOf));
    rules.extend(p.min_items.map(Rule::MinItems));
    rules.extend(p.max_items.map(Rule::MaxItems));
    let item_choices = p.item_choices.as_ref().map(|items| items.iter().filter_map(|v| v.as_str()).map(Into::into).collect());
    match (item_choices, p.unique_items) {
        (Some(choices), true) => rules.push(Rule::UniqueItemEnum(choices)),
        (Some(choices), false) => rules.push(Rule::ItemEnum(choices)),
        (None, true) => rules.push(Rule::UniqueItems),
        (None, false) => {}
    }
    if p.file.as_ref().is_some_and(|f| f.many) {
        rules.push(Rule::FileItems);
    }
    rules.into()
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

//! Checking values against a compiled form, with an error per field.

use lattice_core::{Error, FieldError, FieldErrors};
use serde_json::Value;

use super::equal::{first_duplicate, json_equal};
use super::rules::is_multiple;
use super::{CompiledForm, Format, Property, limits};

impl CompiledForm {
    /// Checks submitted values: an object holding only this form's
    /// properties, each valid. Every fault is reported, each at its field
    /// (`severity`, `tags.2`).
    pub fn validate(&self, values: &Value) -> Result<(), Error> {
        let size = json_size(values);
        if size > limits::VALUES_BYTES {
            return Err(Error::too_large(lattice_core::Code::DocumentTooLarge, limits::VALUES_BYTES as u64, size as u64));
        }
        // Most values are valid: only a refusal pays for its messages.
        if self.is_valid(values) {
            return Ok(());
        }
        let mut errors = FieldErrors::new();
        self.check(values, &mut errors);
        errors.into_result()
    }

    /// Whether the values are valid, without building errors: the hot
    /// path, which stops at the first fault. The 64 KB limit on values is
    /// `validate`'s; this checks the schema only. Values usually list the fields
    /// in the form's order, so each key is first compared with the next
    /// property before it is looked up.
    pub fn is_valid(&self, values: &Value) -> bool {
        let Some(map) = values.as_object() else { return false };
        let mut required_seen = 0;
        let mut next = 0;
        for (key, value) in map {
            let index = match self.hot.get(next) {
                Some(p) if super::rules::same(&p.name, key) => next,
                _ => match self.index_of(key) {
                    Some(i) => i,
                    None => return false,
                },
            };
            let property = &self.hot[index];
            if !property.check.accepts(value) {
                return false;
            }
            required_seen += usize::from(property.required);
            next = index + 1;
        }
        required_seen == self.required_count
    }

    fn check(&self, values: &Value, errors: &mut FieldErrors) {
        let Some(map) = values.as_object() else {
            errors.push(FieldError::new("", "type", "the values must be an object of the form's fields"));
            return;
        };
        for key in map.keys() {
            if self.index_of(key).is_none() {
                errors.push_with(|| FieldError::new(key, "additionalProperties", "is not a field of this form"));
            }
        }
        for p in &self.properties {
            match map.get(&p.name) {
                Some(v) => p.check(&p.name, v, errors),
                None if p.required => errors.push(FieldError::new(&p.name, "required", "is required")),
                None => {}
            }
        }
    }
}

impl Property {
    /// Whether `value` is valid for this field, without building errors.
    #[inline]
    pub fn accepts(&self, value: &Value) -> bool {
        self.rules.iter().all(|rule| rule.accepts(value))
    }

    /// JSON Schema's meaning: each keyword constrains only the values of the
    /// type it is about.
    /// Names at most what `errors` keeps: a refusal is built only as far
    /// as it will be read.
    pub fn check(&self, path: &str, value: &Value, errors: &mut FieldErrors) {
        let mut fail = |keyword: &str, message: String| errors.push(FieldError::new(path, keyword, message));
        if let Some(types) = self.types
            && !types.admits(value)
        {
            let names = types.names();
            let expected = if names.len() == 1 { names[0].to_owned() } else { format!("one of {}", names.join(", ")) };
            fail("type", format!("must be {} ({expected})", describe(&names)));
            return;
        }
        if let Some(choices) = &self.choices
            && !choices.iter().any(|c| json_equal(c, value))
        {
            fail("enum", format!("must be one of: {}", list(choices)));
        }
        if let Some(c) = &self.constant
            && !json_equal(c, value)
        {
            fail("const", format!("must be {}", as_json(c)));
        }
        match value {
            Value::String(s) => {
                let chars = s.chars().count() as u64;
                if let Some(min) = self.min_length
                    && chars < min
                {
                    fail("minLength", format!("must be at least {min} characters ({chars} given)"));
                }
                if let Some(max) = self.max_length
                    && chars > max
                {
                    fail("maxLength", format!("{chars} characters exceed the limit {max}"));
                }
                if let Some(format) = self.format
                    && !format.matches(s)
                {
                    fail("format", format!("must be {}", format.expectation()));
                }
            }
            Value::Number(n) => {
                let x = n.as_f64().unwrap_or(f64::NAN);
                if let Some(min) = self.minimum
                    && x < min
                {
                    fail("minimum", format!("must be at least {min}"));
                }
                if let Some(max) = self.maximum
                    && x > max
                {
                    fail("maximum", format!("must be at most {max}"));
                }
                if let Some(min) = self.exclusive_minimum
                    && x <= min
                {
                    fail("exclusiveMinimum", format!("must be more than {min}"));
                }
                if let Some(max) = self.exclusive_maximum
                    && x >= max
                {
                    fail("exclusiveMaximum", format!("must be less than {max}"));
                }
                if let Some(m) = self.multiple_of
                    && !is_multiple(n, m)
                {
                    fail("multipleOf", format!("must be a multiple of {m}"));
                }
            }
            Value::Array(items) => {
                let len = items.len() as u64;
                if let Some(min) = self.min_items
                    && len < min
                {
                    fail("minItems", format!("choose at least {min}"));
                }
                if let Some(max) = self.max_items
                    && len > max
                {
                    fail("maxItems", format!("choose at most {max}"));
                }
                if self.unique_items
                    && let Some(i) = first_duplicate(items)
                {
                    fail("uniqueItems", format!("{} is chosen twice", as_json(&items[i])));
                }
                if self.file.as_ref().is_some_and(|f| f.many) {
                    for (i, item) in items.iter().enumerate() {
                        if !item.as_str().is_some_and(|s| Format::File.matches(s)) {
                            errors.push_with(|| FieldError::new(format!("{path}.{i}"), "format", format!("must be {}", Format::File.expectation())));
                        }
                    }
                }
                if let Some(choices) = &self.item_choices {
                    for (i, item) in items.iter().enumerate() {
                        if !choices.iter().any(|c| json_equal(c, item)) {
                            errors.push_with(|| FieldError::new(format!("{path}.{i}"), "enum", format!("must be one of: {}", list(choices))));
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

fn describe(names: &[&str]) -> &'static str {
    match names {
        ["string"] => "text",
        ["number"] | ["integer", "number"] | ["number", "integer"] => "a number",
        ["integer"] => "a whole number",
        ["boolean"] => "true or false",
        ["array"] => "a list",
        _ => "of another type",
    }
}

/// The choices a message names: the first few, each cut short, so that a
/// message never grows with the form.
fn list(choices: &[Value]) -> String {
    const NAMED: usize = 8;
    let mut named = choices.iter().take(NAMED).map(shown).collect::<Vec<_>>().join(", ");
    if choices.len() > NAMED {
        named.push_str(&format!(" (and {} more)", choices.len() - NAMED));
    }
    named
}

/// A choice as a message names it: text as itself, anything else as JSON,
/// at most 40 bytes of it.
fn shown(value: &Value) -> String {
    match value {
        Value::String(s) => lattice_core::error::truncate(s.clone(), 40),
        other => as_json(other),
    }
}

/// A value as JSON, at most 40 bytes of it (built no further than that).
fn as_json(value: &Value) -> String {
    let mut out = Vec::new();
    let mut bounded = Bounded { out: &mut out, room: 41 };
    let _ = serde_json::to_writer(&mut bounded, value);
    lattice_core::error::truncate(String::from_utf8_lossy(&out).into_owned(), 40)
}

struct Bounded<'a> {
    out: &'a mut Vec<u8>,
    room: usize,
}

impl std::io::Write for Bounded<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.room);
        self.out.extend_from_slice(&buf[..n]);
        self.room -= n;
        if n < buf.len() { Err(std::io::Error::other("enough")) } else { Ok(n) }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The length of `value` serialized as compact JSON, without building it.
pub fn json_size(value: &Value) -> usize {
    lattice_core::document::size(value)
}

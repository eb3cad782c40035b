//! FormSchema (REQUIREMENTS.md U1–U4): a JSON Schema 2020-12 object of an allowed
//! subset, compiled once into a validator.
//!
//! The table of keywords is an allow-list: a keyword not in it is refused,
//! naming the keyword and where it stands (`properties.zip.pattern: keyword
//! not allowed`), never ignored.

mod compile;
mod equal;
mod file;
pub mod format;
mod rules;
mod validate;

use serde_json::Value;

pub use compile::{compile, property_keywords, root_keywords};
pub use equal::json_equal;
pub use file::{ACCEPT_MAX, FileRule, is_media_range};
pub use format::Format;

/// The limits of REQUIREMENTS.md U2 that concern forms.
pub mod limits {
    /// Properties a form may have.
    pub const PROPERTIES: usize = 50;
    /// Choices (`enum` entries) a property may have.
    pub const CHOICES: usize = 64;
    /// Bytes of schema JSON.
    pub const SCHEMA_BYTES: usize = 32 * 1024;
    /// Bytes of submitted values JSON.
    pub const VALUES_BYTES: usize = 64 * 1024;
    /// Characters of a title, a description or another annotation string.
    pub const TEXT_CHARS: usize = 2000;
}

/// JSON types as a set: the `type` keyword's meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Types(u8);

impl Types {
    pub const STRING: Types = Types(1);
    pub const NUMBER: Types = Types(2);
    pub const INTEGER: Types = Types(4);
    pub const BOOLEAN: Types = Types(8);
    pub const ARRAY: Types = Types(16);

    pub fn contains(self, other: Types) -> bool {
        self.0 & other.0 == other.0
    }

    pub fn union(self, other: Types) -> Types {
        Types(self.0 | other.0)
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether a value of this JSON type is allowed. `number` admits
    /// integers; `integer` admits numbers with no fractional part (1.0).
    #[inline]
    pub fn admits(self, value: &Value) -> bool {
        match value {
            Value::String(_) => self.contains(Self::STRING),
            Value::Bool(_) => self.contains(Self::BOOLEAN),
            Value::Array(_) => self.contains(Self::ARRAY),
            Value::Number(n) => self.contains(Self::NUMBER) || (self.contains(Self::INTEGER) && is_integer(n)),
            Value::Null | Value::Object(_) => false,
        }
    }

    pub fn names(self) -> Vec<&'static str> {
        [(Self::STRING, "string"), (Self::NUMBER, "number"), (Self::INTEGER, "integer"), (Self::BOOLEAN, "boolean"), (Self::ARRAY, "array")]
            .into_iter()
            .filter(|(t, _)| self.contains(*t))
            .map(|(_, n)| n)
            .collect()
    }
}

pub(crate) fn is_integer(n: &serde_json::Number) -> bool {
    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.is_finite() && f.fract() == 0.0)
}

/// One field of a compiled form, with its rules.
#[derive(Debug, Clone, PartialEq)]
pub struct Property {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub required: bool,
    /// `None`: any JSON type (JSON Schema's meaning of an absent `type`).
    pub types: Option<Types>,
    pub choices: Option<Vec<Value>>,
    pub constant: Option<Value>,
    pub default: Option<Value>,
    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    pub format: Option<Format>,
    pub minimum: Option<f64>,
    pub maximum: Option<f64>,
    pub exclusive_minimum: Option<f64>,
    pub exclusive_maximum: Option<f64>,
    pub multiple_of: Option<f64>,
    pub min_items: Option<u64>,
    pub max_items: Option<u64>,
    pub unique_items: bool,
    /// A multi-choice array's allowed items.
    pub item_choices: Option<Vec<Value>>,
    /// A file field's (`format: "file"`, or an array of them): what it
    /// takes, which the server checks against each file.
    pub file: Option<FileRule>,
    /// `choices` when they are all strings, for comparing without JSON
    /// equality on the hot path.
    pub(crate) string_choices: Option<Vec<String>>,
    /// The keywords above as the hot path walks them.
    pub(crate) rules: Box<[rules::Rule]>,
}

/// A FormSchema, compiled: check values against it with
/// [`CompiledForm::validate`].
#[derive(Debug, Clone, PartialEq)]
pub struct CompiledForm {
    pub title: Option<String>,
    pub description: Option<String>,
    /// In the order the schema declares them.
    pub properties: Vec<Property>,
    /// Property names, sorted, with their index in `properties`.
    pub(crate) by_name: Vec<(String, usize)>,
    pub(crate) required_count: usize,
    /// What the hot path needs of each property, in the same order, packed
    /// close together.
    pub(crate) hot: Box<[Hot]>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Hot {
    pub(crate) name: Box<str>,
    pub(crate) required: bool,
    pub(crate) check: rules::Fast,
}

impl CompiledForm {
    pub(crate) fn new(title: Option<String>, description: Option<String>, mut properties: Vec<Property>) -> Self {
        for p in &mut properties {
            p.rules = rules::rules_of(p);
        }
        let mut by_name: Vec<(String, usize)> = properties.iter().enumerate().map(|(i, p)| (p.name.clone(), i)).collect();
        by_name.sort_unstable();
        let required_count = properties.iter().filter(|p| p.required).count();
        let hot = properties.iter().map(|p| Hot { name: p.name.as_str().into(), required: p.required, check: rules::Fast::of(p) }).collect();
        Self { title, description, properties, by_name, required_count, hot }
    }

    pub fn property(&self, name: &str) -> Option<&Property> {
        self.index_of(name).map(|i| &self.properties[i])
    }

    pub(crate) fn index_of(&self, name: &str) -> Option<usize> {
        self.by_name.binary_search_by(|(n, _)| n.as_str().cmp(name)).ok().map(|i| self.by_name[i].1)
    }
}

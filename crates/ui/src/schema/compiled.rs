//! A FormSchema once compiled: its properties, each with its rules, and
//! what the hot path reads of them.

use serde_json::Value;

use super::file::FileRule;
use super::format::Format;
use super::rules;
use super::types::Types;

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
    pub fn property(&self, name: &str) -> Option<&Property> {
        self.index_of(name).map(|i| &self.properties[i])
    }

    pub(crate) fn index_of(&self, name: &str) -> Option<usize> {
        self.by_name.binary_search_by(|(n, _)| n.as_str().cmp(name)).ok().map(|i| self.by_name[i].1)
    }
}

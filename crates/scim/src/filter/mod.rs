//! Filters (RFC 7644 §3.4.2.2): parsed against a resource type's schema,
//! bounded while parsing, evaluated over a resource as JSON, and with a way
//! to push the common case (`userName eq "x"`) down to SQL.

mod ast;
mod eval;
mod lexer;
mod parser;
#[cfg(test)]
mod tests;

use std::fmt;

use serde_json::Value;

pub use ast::CompareOp;
pub(crate) use ast::{Expr, Literal};
pub(crate) use eval::{is_present, matches as expr_matches};
pub(crate) use parser::parse_value_filter;

use crate::error::ScimError;
use crate::schema::ResourceType;

/// A parsed filter. Attribute names are resolved (so case-insensitive on
/// input, canonical in [`fmt::Display`]) and every comparison type-checked.
#[derive(Clone, PartialEq)]
pub struct Filter {
    expr: Expr,
}

/// `attribute eq "value"` on one of the attributes a route can look up in
/// its own columns: `id`, `externalId`, `userName`, `displayName`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimpleEq<'a> {
    /// The canonical name: `"id"`, `"externalId"`, `"userName"` or `"displayName"`.
    pub attribute: &'static str,
    pub value: &'a str,
    /// `false` for `userName` and `displayName`: the lookup must ignore
    /// case (compare folded forms, see `resource::unique_key`).
    pub case_exact: bool,
}

const PUSHED_DOWN: [&str; 4] = ["id", "externalId", "userName", "displayName"];

impl Filter {
    /// Parses `text` for `resource_type`. Refusals are `invalidFilter`, and
    /// name the bound met: [`MAX_FILTER_BYTES`](crate::limits::MAX_FILTER_BYTES)
    /// of text, [`MAX_FILTER_DEPTH`](crate::limits::MAX_FILTER_DEPTH) levels
    /// of nesting, [`MAX_FILTER_TERMS`](crate::limits::MAX_FILTER_TERMS) terms.
    pub fn parse(resource_type: ResourceType, text: &str) -> Result<Filter, ScimError> {
        parser::parse_filter(resource_type, text).map(|expr| Filter { expr }).map_err(|why| ScimError::invalid_filter(format!("filter: {why}")))
    }

    /// Whether `resource` matches. `resource` is the resource as rendered
    /// (with `id` and `meta`), so that `id eq …` and `meta.lastModified gt …`
    /// find what they compare.
    pub fn matches(&self, resource: &Value) -> bool {
        eval::matches(&self.expr, resource)
    }

    /// The whole filter is one `eq` a route can answer from its columns.
    pub fn as_simple_eq(&self) -> Option<SimpleEq<'_>> {
        simple_eq(&self.expr)
    }

    /// One `eq` of the top-level `and`s a route can answer from its columns:
    /// every match has it, so the route reads only the resources it finds
    /// there and then keeps those [`Filter::matches`] accepts.
    pub fn narrowing_eq(&self) -> Option<SimpleEq<'_>> {
        fn walk(expr: &Expr) -> Option<SimpleEq<'_>> {
            match expr {
                Expr::And(a, b) => walk(a).or_else(|| walk(b)),
                other => simple_eq(other),
            }
        }
        walk(&self.expr)
    }
}

fn simple_eq(expr: &Expr) -> Option<SimpleEq<'_>> {
    match expr {
        Expr::Compare { target, op: CompareOp::Eq, value: Literal::String(value) }
            if target.extension.is_none() && target.sub.is_none() && PUSHED_DOWN.contains(&target.attr.name) =>
        {
            Some(SimpleEq { attribute: target.attr.name, value, case_exact: target.attr.case_exact })
        }
        _ => None,
    }
}

/// Canonical SCIM syntax: `userName eq "bjensen" and emails[type eq "work"]`.
impl fmt::Display for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.expr.write(f, 0)
    }
}

/// The tree, so precedence shows: `(and (eq userName "a") (pr title))`.
impl fmt::Debug for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        self.expr.tree(&mut out);
        f.write_str(&out)
    }
}

//! Evaluation over a resource as JSON (RFC 7644 §3.4.2.2): a comparison on
//! a multi-valued attribute holds if it holds for any of its values;
//! strings compare case-insensitively unless the attribute is caseExact;
//! a value of the wrong type never matches.

use std::cmp::Ordering;

use serde_json::Value;

use super::ast::{CompareOp, Expr, Literal, Target};
use crate::datetime;

pub(crate) fn matches(expr: &Expr, node: &Value) -> bool {
    match expr {
        Expr::And(a, b) => matches(a, node) && matches(b, node),
        Expr::Or(a, b) => matches(a, node) || matches(b, node),
        Expr::Not(inner) => !matches(inner, node),
        Expr::Present(target) => values(target, node).any(is_present),
        // `eq null` holds for an unassigned attribute, `ne null` for an assigned one.
        Expr::Compare { target, op, value: Literal::Null } => values(target, node).any(is_present) == (*op == CompareOp::Ne),
        // `ne` is the negation of `eq`: an unassigned attribute is "not equal".
        Expr::Compare { target, op: CompareOp::Ne, value } => !values(target, node).any(|v| compare(target, CompareOp::Eq, value, v)),
        Expr::Compare { target, op, value } => values(target, node).any(|v| compare(target, *op, value, v)),
        Expr::ValuePath { target, filter } => items(target, node).any(|item| matches(filter, item)),
    }
}

/// The values of the attribute itself (each value of a multi-valued one).
pub(crate) fn items<'a>(target: &Target, node: &'a Value) -> impl Iterator<Item = &'a Value> {
    let container = match target.extension {
        Some(extension) => node.get(extension.id),
        None => Some(node),
    };
    let value = container.and_then(|c| c.get(target.attr.name));
    let (many, one) = match value {
        Some(Value::Array(values)) => (values.as_slice(), None),
        other => (&[][..], other),
    };
    many.iter().chain(one)
}

/// The values compared: the attribute's, or its sub-attribute's in each value.
fn values<'a>(target: &'a Target, node: &'a Value) -> impl Iterator<Item = &'a Value> {
    items(target, node).filter_map(move |item| match target.sub {
        Some(sub) => item.get(sub.name),
        None => Some(item),
    })
}

pub(crate) fn is_present(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::String(s) => !s.is_empty(),
        Value::Array(values) => values.iter().any(is_present),
        Value::Object(fields) => fields.values().any(is_present),
        Value::Bool(_) | Value::Number(_) => true,
    }
}

fn compare(target: &Target, op: CompareOp, literal: &Literal, value: &Value) -> bool {
    match (literal, value) {
        (Literal::String(want), Value::String(have)) => {
            if target.leaf().case_exact {
                strings(op, have, want)
            } else {
                strings(op, &have.to_lowercase(), &want.to_lowercase())
            }
        }
        (Literal::Bool(want), Value::Bool(have)) => op == CompareOp::Eq && want == have,
        (Literal::Number(want), Value::Number(have)) => match (have.as_f64(), want.as_f64()) {
            (Some(have), Some(want)) => ordered(op, have.partial_cmp(&want)),
            _ => false,
        },
        (Literal::DateTime(want, _), Value::String(have)) => match datetime::parse(have) {
            Some(have) => ordered(op, Some(have.cmp(want))),
            None => false,
        },
        _ => false,
    }
}

fn strings(op: CompareOp, have: &str, want: &str) -> bool {
    match op {
        CompareOp::Co => have.contains(want),
        CompareOp::Sw => have.starts_with(want),
        CompareOp::Ew => have.ends_with(want),
        _ => ordered(op, Some(have.cmp(want))),
    }
}

fn ordered(op: CompareOp, ordering: Option<Ordering>) -> bool {
    let Some(ordering) = ordering else { return false };
    match op {
        CompareOp::Eq => ordering == Ordering::Equal,
        CompareOp::Ne => ordering != Ordering::Equal,
        CompareOp::Gt => ordering == Ordering::Greater,
        CompareOp::Ge => ordering != Ordering::Less,
        CompareOp::Lt => ordering == Ordering::Less,
        CompareOp::Le => ordering != Ordering::Greater,
        CompareOp::Co | CompareOp::Sw | CompareOp::Ew => false,
    }
}

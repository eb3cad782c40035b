//! The parsed filter: attribute names resolved to their definitions, so
//! evaluation needs no schema and cannot fail.

use std::fmt;

use serde_json::Number;

use crate::datetime::Instant;
use crate::schema::{Attribute, Schema};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareOp {
    Eq,
    Ne,
    Co,
    Sw,
    Ew,
    Gt,
    Ge,
    Lt,
    Le,
}

impl CompareOp {
    pub(crate) fn from_word(word: &str) -> Option<Self> {
        const OPS: [(&str, CompareOp); 9] = [
            ("eq", CompareOp::Eq),
            ("ne", CompareOp::Ne),
            ("co", CompareOp::Co),
            ("sw", CompareOp::Sw),
            ("ew", CompareOp::Ew),
            ("gt", CompareOp::Gt),
            ("ge", CompareOp::Ge),
            ("lt", CompareOp::Lt),
            ("le", CompareOp::Le),
        ];
        OPS.iter().find(|(name, _)| name.eq_ignore_ascii_case(word)).map(|(_, op)| *op)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            CompareOp::Eq => "eq",
            CompareOp::Ne => "ne",
            CompareOp::Co => "co",
            CompareOp::Sw => "sw",
            CompareOp::Ew => "ew",
            CompareOp::Gt => "gt",
            CompareOp::Ge => "ge",
            CompareOp::Lt => "lt",
            CompareOp::Le => "le",
        }
    }

    pub(crate) fn is_ordering(self) -> bool {
        matches!(self, CompareOp::Gt | CompareOp::Ge | CompareOp::Lt | CompareOp::Le)
    }

    pub(crate) fn is_substring(self) -> bool {
        matches!(self, CompareOp::Co | CompareOp::Sw | CompareOp::Ew)
    }
}

/// An attribute a filter reads: at the top level of the resource, inside
/// an extension's object, or (inside `[…]`) a sub-attribute of each value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Target {
    pub extension: Option<&'static Schema>,
    pub attr: &'static Attribute,
    pub sub: Option<&'static Attribute>,
}

impl Target {
    /// The attribute whose values are compared.
    pub fn leaf(&self) -> &'static Attribute {
        self.sub.unwrap_or(self.attr)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Literal {
    String(String),
    Number(Number),
    Bool(bool),
    Null,
    /// A string compared with a `dateTime` attribute, read once at parse.
    DateTime(Instant, String),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Expr {
    Compare {
        target: Target,
        op: CompareOp,
        value: Literal,
    },
    Present(Target),
    Not(Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    /// `emails[type eq "work" and value co "@"]`: the inner filter holds for
    /// one and the same value.
    ValuePath {
        target: Target,
        filter: Box<Expr>,
    },
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(extension) = self.extension {
            write!(f, "{}:", extension.id)?;
        }
        f.write_str(self.attr.name)?;
        if let Some(sub) = self.sub {
            write!(f, ".{}", sub.name)?;
        }
        Ok(())
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::String(s) | Literal::DateTime(_, s) => write!(f, "{}", serde_json::Value::from(s.as_str())),
            Literal::Number(n) => write!(f, "{n}"),
            Literal::Bool(b) => write!(f, "{b}"),
            Literal::Null => f.write_str("null"),
        }
    }
}

impl Expr {
    fn precedence(&self) -> u8 {
        match self {
            Expr::Or(..) => 1,
            Expr::And(..) => 2,
            _ => 3,
        }
    }

    /// Canonical SCIM syntax, parenthesized only where precedence needs it.
    pub(crate) fn write(&self, f: &mut fmt::Formatter<'_>, floor: u8) -> fmt::Result {
        let parens = self.precedence() < floor;
        if parens {
            f.write_str("(")?;
        }
        match self {
            Expr::Compare { target, op, value } => write!(f, "{target} {} {value}", op.as_str())?,
            Expr::Present(target) => write!(f, "{target} pr")?,
            Expr::Not(inner) => {
                f.write_str("not (")?;
                inner.write(f, 0)?;
                f.write_str(")")?;
            }
            Expr::And(a, b) => {
                a.write(f, 2)?;
                f.write_str(" and ")?;
                b.write(f, 3)?;
            }
            Expr::Or(a, b) => {
                a.write(f, 1)?;
                f.write_str(" or ")?;
                b.write(f, 2)?;
            }
            Expr::ValuePath { target, filter } => {
                write!(f, "{target}[")?;
                filter.write(f, 0)?;
                f.write_str("]")?;
            }
        }
        if parens {
            f.write_str(")")?;
        }
        Ok(())
    }

    /// The tree as an s-expression: what the tests read to see precedence.
    pub(crate) fn tree(&self, out: &mut String) {
        match self {
            Expr::Compare { target, op, value } => out.push_str(&format!("({} {target} {value})", op.as_str())),
            Expr::Present(target) => out.push_str(&format!("(pr {target})")),
            Expr::Not(inner) => {
                out.push_str("(not ");
                inner.tree(out);
                out.push(')');
            }
            Expr::And(a, b) | Expr::Or(a, b) => {
                out.push_str(if matches!(self, Expr::And(..)) { "(and " } else { "(or " });
                a.tree(out);
                out.push(' ');
                b.tree(out);
                out.push(')');
            }
            Expr::ValuePath { target, filter } => {
                out.push_str(&format!("(each {target} "));
                filter.tree(out);
                out.push(')');
            }
        }
    }
}

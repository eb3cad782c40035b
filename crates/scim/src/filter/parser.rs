//! RFC 7644 §3.4.2.2's grammar, by recursive descent: `or` binds loosest,
//! then `and`, then `not (…)`, `(…)` and the attribute expressions. The
//! bounds (text, nesting, terms) are checked as it goes, so a hostile
//! filter costs no more than a legal one at the limit.

use serde_json::Number;

use super::ast::{CompareOp, Expr, Literal, Target};
use super::lexer::{Spanned, Token, tokens};
use crate::datetime;
use crate::error::excerpt;
use crate::limits::{MAX_FILTER_BYTES, MAX_FILTER_DEPTH, MAX_FILTER_TERMS};
use crate::schema::{AttrType, Attribute, Found, Resolution, ResourceType, find_sub_attribute, resolve_path};

/// What attribute names mean where the parser stands.
#[derive(Clone, Copy)]
enum Scope {
    Resource(ResourceType),
    /// Inside `attr[…]`: names are the sub-attributes of each value.
    Values(&'static Attribute),
}

struct Parser<'a> {
    tokens: Vec<Spanned<'a>>,
    at: usize,
    end: usize,
    depth: usize,
    terms: usize,
}

/// A whole filter over a resource type.
pub(crate) fn parse_filter(resource_type: ResourceType, text: &str) -> Result<Expr, String> {
    parse(Scope::Resource(resource_type), text)
}

/// The filter between the brackets of a PATCH path (`emails[type eq "work"]`),
/// over the values of `attr`.
pub(crate) fn parse_value_filter(attr: &'static Attribute, text: &str) -> Result<Expr, String> {
    parse(Scope::Values(attr), text)
}

fn parse(scope: Scope, text: &str) -> Result<Expr, String> {
    if text.len() > MAX_FILTER_BYTES {
        return Err(format!("{} bytes, over the limit {MAX_FILTER_BYTES}", text.len()));
    }
    let tokens = tokens(text)?;
    let mut parser = Parser { tokens, at: 0, end: text.len(), depth: 0, terms: 0 };
    let expr = parser.or_expr(scope)?;
    match parser.tokens.get(parser.at) {
        None => Ok(expr),
        Some((at, token)) => Err(format!("unexpected {} at byte {at}", describe(token))),
    }
}

fn describe(token: &Token<'_>) -> String {
    match token {
        Token::LParen => "\"(\"".into(),
        Token::RParen => "\")\"".into(),
        Token::LBracket => "\"[\"".into(),
        Token::RBracket => "\"]\"".into(),
        Token::Word(w) => excerpt(w),
        Token::Str(s) => format!("the string {}", excerpt(s)),
    }
}

fn is_keyword(token: Option<&Spanned<'_>>, keyword: &str) -> bool {
    matches!(token, Some((_, Token::Word(w))) if w.eq_ignore_ascii_case(keyword))
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<&Spanned<'a>> {
        self.tokens.get(self.at)
    }

    fn next(&mut self) -> Option<Spanned<'a>> {
        let token = self.tokens.get(self.at).cloned();
        self.at += 1;
        token
    }

    fn here(&self) -> usize {
        self.peek().map_or(self.end, |(at, _)| *at)
    }

    fn expect(&mut self, want: Token<'static>, what: &str) -> Result<(), String> {
        match self.next() {
            Some((_, token)) if token == want => Ok(()),
            Some((at, token)) => Err(format!("expected {what} at byte {at}, found {}", describe(&token))),
            None => Err(format!("expected {what} at byte {}, found the end", self.end)),
        }
    }

    fn enter(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_FILTER_DEPTH {
            return Err(format!("nested {} levels deep, over the limit {MAX_FILTER_DEPTH}", self.depth));
        }
        Ok(())
    }

    fn or_expr(&mut self, scope: Scope) -> Result<Expr, String> {
        let mut left = self.and_expr(scope)?;
        while is_keyword(self.peek(), "or") {
            self.at += 1;
            let right = self.and_expr(scope)?;
            left = Expr::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn and_expr(&mut self, scope: Scope) -> Result<Expr, String> {
        let mut left = self.unary(scope)?;
        while is_keyword(self.peek(), "and") {
            self.at += 1;
            let right = self.unary(scope)?;
            left = Expr::And(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn unary(&mut self, scope: Scope) -> Result<Expr, String> {
        // `not` is a keyword only before "(": RFC 7644 writes `not (…)`.
        if is_keyword(self.peek(), "not") && matches!(self.tokens.get(self.at + 1), Some((_, Token::LParen))) {
            self.at += 2;
            self.enter()?;
            let inner = self.or_expr(scope)?;
            self.expect(Token::RParen, "\")\"")?;
            self.depth -= 1;
            return Ok(Expr::Not(Box::new(inner)));
        }
        match self.next() {
            Some((_, Token::LParen)) => {
                self.enter()?;
                let inner = self.or_expr(scope)?;
                self.expect(Token::RParen, "\")\"")?;
                self.depth -= 1;
                Ok(inner)
            }
            Some((at, Token::Word(word))) => self.attribute_expr(scope, at, word),
            Some((at, token)) => Err(format!("expected an attribute path at byte {at}, found {}", describe(&token))),
            None => Err(format!("expected an attribute path at byte {}, found the end", self.end)),
        }
    }

    fn attribute_expr(&mut self, scope: Scope, at: usize, word: &str) -> Result<Expr, String> {
        if ["and", "or", "not"].iter().any(|k| k.eq_ignore_ascii_case(word)) {
            return Err(format!("expected an attribute path at byte {at}, found {}", excerpt(word)));
        }
        let target = resolve(scope, word)?;
        if matches!(self.peek(), Some((_, Token::LBracket))) {
            return self.value_path(scope, at, word, target);
        }
        let op_at = self.here();
        let op = match self.next() {
            Some((_, Token::Word(op))) if op.eq_ignore_ascii_case("pr") => {
                self.count_term()?;
                return Ok(Expr::Present(target));
            }
            Some((_, Token::Word(op))) => CompareOp::from_word(op)
                .ok_or_else(|| format!("{} at byte {op_at} is not an operator (eq ne co sw ew gt ge lt le pr)", excerpt(op)))?,
            Some((_, token)) => return Err(format!("expected an operator at byte {op_at}, found {}", describe(&token))),
            None => return Err(format!("expected an operator at byte {op_at}, found the end")),
        };
        let value_at = self.here();
        let literal = match self.next() {
            Some((_, Token::Str(s))) => Literal::String(s),
            Some((_, Token::Word(w))) => word_literal(w)
                .ok_or_else(|| format!("{} at byte {value_at} is not a value (a string, a number, true, false or null)", excerpt(w)))?,
            Some((_, token)) => return Err(format!("expected a value at byte {value_at}, found {}", describe(&token))),
            None => return Err(format!("expected a value at byte {value_at}, found the end")),
        };
        self.count_term()?;
        let (target, value) = typed(target, op, literal)?;
        Ok(Expr::Compare { target, op, value })
    }

    fn value_path(&mut self, scope: Scope, at: usize, word: &str, target: Target) -> Result<Expr, String> {
        if matches!(scope, Scope::Values(_)) {
            return Err(format!("{} at byte {at}: a value filter cannot hold another", excerpt(word)));
        }
        if target.sub.is_some() || !target.attr.is_complex() || !target.attr.multi_valued {
            return Err(format!("{target} at byte {at} is not a multi-valued complex attribute, so it takes no \"[…]\""));
        }
        self.at += 1;
        self.enter()?;
        let inner = self.or_expr(Scope::Values(target.attr))?;
        self.expect(Token::RBracket, "\"]\"")?;
        self.depth -= 1;
        Ok(Expr::ValuePath { target, filter: Box::new(inner) })
    }

    fn count_term(&mut self) -> Result<(), String> {
        self.terms += 1;
        if self.terms > MAX_FILTER_TERMS {
            return Err(format!("more than {MAX_FILTER_TERMS} terms, the limit"));
        }
        Ok(())
    }
}

fn word_literal(word: &str) -> Option<Literal> {
    if word.eq_ignore_ascii_case("true") {
        Some(Literal::Bool(true))
    } else if word.eq_ignore_ascii_case("false") {
        Some(Literal::Bool(false))
    } else if word.eq_ignore_ascii_case("null") {
        Some(Literal::Null)
    } else if word.starts_with(|c: char| c == '-' || c.is_ascii_digit()) {
        serde_json::from_str::<Number>(word).ok().map(Literal::Number)
    } else {
        None
    }
}

fn resolve(scope: Scope, word: &str) -> Result<Target, String> {
    match scope {
        Scope::Resource(resource_type) => match resolve_path(resource_type, word)? {
            Resolution::Attribute(Found { extension, attr, sub }) => Ok(Target { extension, attr, sub }),
            Resolution::Extension(schema) => Err(format!("{} is a schema, not an attribute", schema.id)),
            Resolution::Unknown => Err(format!("{} is not an attribute lattice keeps", excerpt(word))),
        },
        Scope::Values(parent) => match find_sub_attribute(parent, word) {
            Some(sub) => Ok(Target { extension: None, attr: sub, sub: None }),
            None => Err(format!("{} is not a sub-attribute of {}", excerpt(word), parent.name)),
        },
    }
}

/// Checks the value against the attribute's type, reading what needs
/// reading once (dates), and points a comparison on a complex attribute at
/// its `value`.
fn typed(mut target: Target, op: CompareOp, literal: Literal) -> Result<(Target, Literal), String> {
    // `eq null` and `ne null` test presence, which any attribute has.
    if literal == Literal::Null {
        return match op {
            CompareOp::Eq | CompareOp::Ne => Ok((target, literal)),
            _ => Err(format!("{target} {} null: null is compared with eq or ne only", op.as_str())),
        };
    }
    if target.leaf().is_complex() {
        match target.attr.value_sub_attribute().filter(|_| target.sub.is_none()) {
            Some(value) => target.sub = Some(value),
            None => return Err(format!("{target} is complex: compare one of its sub-attributes, or test it with pr")),
        }
    }
    let leaf = target.leaf();
    let shown = literal.to_string();
    let refuse = |why: &str| Err(format!("{target} {} {shown}: {why}", op.as_str()));
    let literal = match leaf.kind {
        AttrType::String | AttrType::Reference | AttrType::Binary => match literal {
            Literal::String(_) if leaf.kind == AttrType::Binary && op.is_ordering() => {
                return refuse("binary values have no order");
            }
            Literal::String(_) => literal,
            _ => return refuse(&format!("{} is a {}, compared with strings", leaf.name, leaf.kind.as_str())),
        },
        AttrType::Boolean => {
            if op != CompareOp::Eq && op != CompareOp::Ne {
                return refuse("booleans are compared with eq or ne only");
            }
            match literal {
                Literal::Bool(_) => literal,
                // Entra ID writes booleans as strings: `primary eq "True"`.
                Literal::String(s) if s.eq_ignore_ascii_case("true") => Literal::Bool(true),
                Literal::String(s) if s.eq_ignore_ascii_case("false") => Literal::Bool(false),
                _ => return refuse(&format!("{} is a boolean", leaf.name)),
            }
        }
        AttrType::DateTime => {
            if op.is_substring() {
                return refuse("dates are compared with eq ne gt ge lt le");
            }
            match literal {
                Literal::String(s) => match datetime::parse(&s) {
                    Some(instant) => Literal::DateTime(instant, s),
                    None => return refuse("not a date-time such as \"2011-05-13T04:42:34Z\""),
                },
                _ => return refuse(&format!("{} is a dateTime", leaf.name)),
            }
        }
        AttrType::Integer | AttrType::Decimal => {
            if op.is_substring() {
                return refuse("numbers are compared with eq ne gt ge lt le");
            }
            match literal {
                Literal::Number(_) => literal,
                _ => return refuse(&format!("{} is a number", leaf.name)),
            }
        }
        AttrType::Complex => return refuse("complex values are not compared"),
    };
    Ok((target, literal))
}

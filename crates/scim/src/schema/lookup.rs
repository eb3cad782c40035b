//! From a name a client wrote (`userName`, `NAME.givenname`,
//! `urn:…:enterprise:2.0:User:manager.value`) to the definition it means.
//! Attribute names are case-insensitive (RFC 7643 §2.1); what is found
//! carries the canonical spelling, which is the only one stored.

use super::{Attribute, COMMON_ATTRIBUTES, ResourceType, Schema};
use crate::error::excerpt;

/// An attribute of a resource type: where it lives in a document (at the top
/// level, or inside an extension's object), and the sub-attribute named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Found {
    pub extension: Option<&'static Schema>,
    pub attr: &'static Attribute,
    pub sub: Option<&'static Attribute>,
}

/// What a well-formed name means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resolution {
    Attribute(Found),
    /// The URN of an extension schema alone: its whole object.
    Extension(&'static Schema),
    /// Well formed, but nothing lattice keeps (`password`, a custom
    /// extension's attribute): bodies drop it, filters refuse it.
    Unknown,
}

pub(crate) fn find_attribute(attributes: &'static [Attribute], name: &str) -> Option<&'static Attribute> {
    attributes.iter().find(|a| a.name.eq_ignore_ascii_case(name))
}

pub(crate) fn find_sub_attribute(attr: &'static Attribute, name: &str) -> Option<&'static Attribute> {
    find_attribute(attr.sub_attributes, name)
}

/// RFC 7644 §3.10 ATTRNAME (`ALPHA *(ALPHA / DIGIT / "-" / "_")`), and
/// `$ref`, which the RFC's own schemas use.
pub(crate) fn is_attr_name(name: &str) -> bool {
    let mut chars = name.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() => chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
        Some('$') => name == "$ref",
        _ => false,
    }
}

/// Resolves `[URN ":"] ATTRNAME ["." ATTRNAME]`, or an extension's URN
/// alone. `Err` says why the text is not a path at all.
pub(crate) fn resolve_path(resource_type: ResourceType, text: &str) -> Result<Resolution, String> {
    if text.is_empty() {
        return Err("an attribute path is empty".into());
    }
    let (schema, rest) = if starts_with_ignore_case(text, "urn:") {
        if let Some(extension) = resource_type.extension_by_urn(text) {
            return Ok(Resolution::Extension(extension));
        }
        match split_schema(resource_type, text) {
            Some((schema, rest)) => (Some(schema), rest),
            None => {
                // A schema lattice does not serve (a custom extension): the
                // attribute is after the last colon, since URNs hold dots.
                let Some((_, rest)) = text.rsplit_once(':') else { return Err(format!("{} is not an attribute path", excerpt(text))) };
                check_syntax(text, rest)?;
                return Ok(Resolution::Unknown);
            }
        }
    } else {
        (None, text)
    };
    check_syntax(text, rest)?;
    let (name, sub) = match rest.split_once('.') {
        Some((name, sub)) => (name, Some(sub)),
        None => (rest, None),
    };
    let core = resource_type.schema();
    let (extension, attr) = match schema {
        Some(schema) if schema.id != core.id => (Some(schema), find_attribute(schema.attributes, name)),
        _ => (None, COMMON_ATTRIBUTES.iter().copied().find(|a| a.name.eq_ignore_ascii_case(name)).or_else(|| find_attribute(core.attributes, name))),
    };
    let Some(attr) = attr else { return Ok(Resolution::Unknown) };
    let sub = match sub {
        None => None,
        Some(_) if !attr.is_complex() => return Err(format!("{} is not complex, so {} names no sub-attribute", attr.name, excerpt(text))),
        Some(sub) => match find_sub_attribute(attr, sub) {
            Some(sub) => Some(sub),
            None => return Ok(Resolution::Unknown),
        },
    };
    Ok(Resolution::Attribute(Found { extension, attr, sub }))
}

/// A top-level key of a resource body, which names no sub-attribute.
pub(crate) fn resolve_key(resource_type: ResourceType, key: &str) -> Resolution {
    match resolve_path(resource_type, key) {
        Ok(Resolution::Attribute(found)) if found.sub.is_some() => Resolution::Unknown,
        Ok(resolution) => resolution,
        Err(_) => Resolution::Unknown,
    }
}

fn split_schema(resource_type: ResourceType, text: &str) -> Option<(&'static Schema, &str)> {
    std::iter::once(resource_type.schema()).chain(resource_type.extensions().iter().copied()).find_map(|schema| {
        let n = schema.id.len();
        let head = text.get(..n)?;
        (head.eq_ignore_ascii_case(schema.id) && text.as_bytes().get(n) == Some(&b':')).then(|| (schema, &text[n + 1..]))
    })
}

fn check_syntax(text: &str, rest: &str) -> Result<(), String> {
    let mut parts = rest.split('.');
    let name = parts.next().unwrap_or_default();
    let sub = parts.next();
    if parts.next().is_some() {
        return Err(format!("{} has more than one sub-attribute level", excerpt(text)));
    }
    if !is_attr_name(name) || sub.is_some_and(|s| !is_attr_name(s)) {
        return Err(format!("{} is not an attribute path", excerpt(text)));
    }
    Ok(())
}

fn starts_with_ignore_case(text: &str, prefix: &str) -> bool {
    text.get(..prefix.len()).is_some_and(|head| head.eq_ignore_ascii_case(prefix))
}

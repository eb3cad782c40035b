//! PATCH paths (RFC 7644 §3.5.2): `attrPath`, or
//! `attrPath "[" valFilter "]" ["." subAttr]`, and an extension's URN for
//! its whole object, which clients (and scim2-tester) use.

use crate::error::{ScimError, excerpt};
use crate::filter::{Expr, parse_value_filter};
use crate::limits::MAX_PATH_BYTES;
use crate::schema::{Attribute, Found, Mutability, Resolution, ResourceType, Schema, find_sub_attribute, is_attr_name, resolve_path};

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Target {
    /// Well formed, naming nothing lattice keeps: the operation is skipped
    /// and reported, as a body's unknown attributes are.
    Unknown,
    Extension(&'static Schema),
    Attribute(Found),
    /// The values of a multi-valued attribute the filter selects, or one
    /// sub-attribute of each.
    Filtered {
        extension: Option<&'static Schema>,
        attr: &'static Attribute,
        filter: Expr,
        sub: Option<&'static Attribute>,
    },
}

pub(crate) fn parse_path(resource_type: ResourceType, path: &str) -> Result<Target, ScimError> {
    let bad = |why: String| ScimError::invalid_path(format!("path {}: {why}", excerpt(path)));
    if path.len() > MAX_PATH_BYTES {
        return Err(bad(format!("{} bytes, over the limit {MAX_PATH_BYTES}", path.len())));
    }
    let Some(open) = path.find('[') else {
        return match resolve_path(resource_type, path).map_err(bad)? {
            Resolution::Attribute(found) => Ok(Target::Attribute(found)),
            Resolution::Extension(schema) => Ok(Target::Extension(schema)),
            Resolution::Unknown => Ok(Target::Unknown),
        };
    };
    let close = closing_bracket(path, open).ok_or_else(|| bad("the \"[\" is not closed".into()))?;
    let (head, inner, tail) = (&path[..open], &path[open + 1..close], &path[close + 1..]);
    let sub_name = match tail {
        "" => None,
        _ => match tail.strip_prefix('.') {
            Some(name) if is_attr_name(name) => Some(name),
            _ => return Err(bad(format!("{} after \"]\" is not a sub-attribute", excerpt(tail)))),
        },
    };
    let (extension, attr) = match resolve_path(resource_type, head).map_err(bad)? {
        Resolution::Unknown => return Ok(Target::Unknown),
        Resolution::Attribute(Found { extension, attr, sub: None }) if attr.multi_valued && attr.is_complex() => (extension, attr),
        _ => return Err(bad(format!("{head} is not a multi-valued complex attribute, so it takes no \"[…]\""))),
    };
    let filter = parse_value_filter(attr, inner).map_err(|why| bad(format!("filter: {why}")))?;
    let sub = match sub_name {
        None => None,
        Some(name) => match find_sub_attribute(attr, name) {
            Some(sub) => Some(sub),
            None => return Ok(Target::Unknown),
        },
    };
    Ok(Target::Filtered { extension, attr, filter, sub })
}

/// The `]` closing the `[` at `open`, past any in a quoted string.
fn closing_bracket(path: &str, open: usize) -> Option<usize> {
    let bytes = path.as_bytes();
    let mut in_string = false;
    let mut i = open + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if in_string => i += 1,
            b'"' => in_string = !in_string,
            b']' if !in_string => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

/// RFC 7644 §3.5.2: an operation naming a readOnly attribute fails with
/// `mutability` (a body's readOnly values are ignored instead).
pub(crate) fn check_writable(target: &Target, path: &str) -> Result<(), ScimError> {
    fn read_only(attr: &Attribute) -> bool {
        attr.mutability == Mutability::ReadOnly
    }
    let refused = match target {
        Target::Attribute(Found { attr, sub, .. }) => read_only(attr) || sub.is_some_and(read_only),
        Target::Filtered { attr, sub, .. } => read_only(attr) || sub.is_some_and(read_only),
        Target::Unknown | Target::Extension(_) => false,
    };
    if refused {
        return Err(ScimError::mutability(format!("path {}: readOnly, a client cannot change it", excerpt(path))));
    }
    Ok(())
}

//! Applying PATCH operations (RFC 7644 §3.5.2) to a stored document. Each
//! operation's value is normalized against what its path names before it
//! lands; the result is then checked as a PUT body would be, so a PATCH
//! can store nothing a PUT could not. All or nothing: the first refusal
//! returns, and the stored document is untouched.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::message::{OpKind, PatchOperation, PatchRequest};
use super::path::{Target, check_writable, parse_path};
use crate::error::ScimError;
use crate::filter::{CompareOp, Expr, Literal, expr_matches};
use crate::resource::normalize_replace;
use crate::schema::{Attribute, Found, Mutability, ResourceType, Schema, find_attribute};
use crate::value::{self, Ignored};

/// The patched document, what was skipped, and whether anything changed
/// (a route can then leave `meta.lastModified` alone).
#[derive(Debug, Clone, PartialEq)]
pub struct Patched {
    pub document: Value,
    pub ignored: Vec<String>,
    pub changed: bool,
}

/// Applies `request` to `existing` (the stored document).
pub fn apply(resource_type: ResourceType, existing: &Value, request: &PatchRequest) -> Result<Patched, ScimError> {
    let mut fields = existing.as_object().cloned().unwrap_or_default();
    let mut ignored = Ignored::new();
    for (i, operation) in request.operations.iter().enumerate() {
        apply_operation(resource_type, &mut fields, operation, &mut ignored)
            .map_err(|e| ScimError { detail: format!("Operations[{i}]: {}", e.detail), ..e })?;
    }
    fields.insert("schemas".into(), Value::from(vec![resource_type.schema().id]));
    let normalized = normalize_replace(resource_type, &Value::Object(fields), existing)?;
    ignored.extend(normalized.ignored);
    let changed = normalized.document != *existing;
    Ok(Patched { document: normalized.document, ignored: value::reported(ignored), changed })
}

fn apply_operation(
    resource_type: ResourceType,
    fields: &mut Map<String, Value>,
    operation: &PatchOperation,
    ignored: &mut Ignored,
) -> Result<(), ScimError> {
    let value = operation.value.as_ref().unwrap_or(&Value::Null);
    if let Some(path) = &operation.path {
        let target = parse_path(resource_type, path)?;
        check_writable(&target, path)?;
        return on_target(fields, operation.op, &target, value, path, ignored);
    }
    // Without a path the value's members are the targets (RFC 7644
    // §3.5.2.1). Entra ID also writes paths there (`"name.givenName"`,
    // `"emails[type eq \"work\"].value"`), which read as paths do.
    let Value::Object(members) = value else {
        return Err(ScimError::invalid_value(format!("{} without a path needs an object of attributes", operation.op.as_str())));
    };
    for (key, value) in members {
        if key.eq_ignore_ascii_case("schemas") {
            continue;
        }
        let target = match parse_path(resource_type, key) {
            Ok(Target::Unknown) | Err(_) => {
                ignored.push(key.clone());
                continue;
            }
            Ok(target) => target,
        };
        // As in a body, readOnly members are ignored: Okta renames a group
        // with `{"id": …, "displayName": …}`.
        if check_writable(&target, key).is_err() {
            continue;
        }
        on_target(fields, operation.op, &target, value, key, ignored)?;
    }
    Ok(())
}

fn on_target(
    fields: &mut Map<String, Value>,
    op: OpKind,
    target: &Target,
    value: &Value,
    shown: &str,
    ignored: &mut Ignored,
) -> Result<(), ScimError> {
    match target {
        Target::Unknown => {
            ignored.push(shown.to_string());
            Ok(())
        }
        Target::Extension(extension) => on_extension(fields, op, extension, value, shown, ignored),
        Target::Attribute(Found { extension, attr, sub }) => {
            in_container(fields, *extension, |container| on_attribute(container, op, attr, *sub, value, shown, ignored))
        }
        Target::Filtered { extension, attr, filter, sub } => {
            in_container(fields, *extension, |container| on_values(container, op, attr, Some(filter), *sub, value, shown, ignored))
        }
    }
}

/// The whole extension object: its members are applied one by one, as a
/// complex attribute's sub-attributes are (those not named are left alone).
fn on_extension(
    fields: &mut Map<String, Value>,
    op: OpKind,
    extension: &'static Schema,
    value: &Value,
    shown: &str,
    ignored: &mut Ignored,
) -> Result<(), ScimError> {
    let members = match (op, value) {
        (OpKind::Remove, _) | (OpKind::Replace, Value::Null) => {
            fields.remove(extension.id);
            return Ok(());
        }
        (OpKind::Add, Value::Null) => return Ok(()),
        (_, Value::Object(members)) => members,
        _ => return Err(ScimError::invalid_value(format!("{shown}: expected an object"))),
    };
    for (key, value) in members {
        if key.eq_ignore_ascii_case("schemas") {
            continue;
        }
        match find_attribute(extension.attributes, key) {
            None => ignored.push(format!("{}:{key}", extension.id)),
            Some(attr) if attr.mutability == Mutability::ReadOnly => {}
            Some(attr) => {
                let shown = format!("{}:{}", extension.id, attr.name);
                in_container(fields, Some(extension), |container| on_attribute(container, op, attr, None, value, &shown, ignored))?;
            }
        }
    }
    Ok(())
}

/// Runs `f` on the object holding the attribute: the document, or an
/// extension's object (made when missing, dropped when left empty).
fn in_container<R>(fields: &mut Map<String, Value>, extension: Option<&'static Schema>, f: impl FnOnce(&mut Map<String, Value>) -> R) -> R {
    let Some(extension) = extension else { return f(fields) };
    let mut inner = match fields.remove(extension.id) {
        Some(Value::Object(inner)) => inner,
        _ => Map::new(),
    };
    let result = f(&mut inner);
    if !inner.is_empty() {
        fields.insert(extension.id.to_string(), Value::Object(inner));
    }
    result
}

fn on_attribute(
    container: &mut Map<String, Value>,
    op: OpKind,
    attr: &'static Attribute,
    sub: Option<&'static Attribute>,
    value: &Value,
    shown: &str,
    ignored: &mut Ignored,
) -> Result<(), ScimError> {
    match (attr.multi_valued, sub) {
        (false, None) => {
            let new = if op == OpKind::Remove { None } else { value::normalize(attr, value, shown, ignored)? };
            match (new, container.get_mut(attr.name)) {
                (None, _) => {
                    container.remove(attr.name);
                }
                // RFC 7644 §3.5.2.1 and §3.5.2.3: a complex value's
                // sub-attributes are set, those not named stay.
                (Some(Value::Object(new)), Some(Value::Object(old))) => old.extend(new),
                (Some(new), _) => {
                    container.insert(attr.name.to_string(), new);
                }
            }
        }
        (false, Some(sub)) => {
            let new = if op == OpKind::Remove { None } else { value::normalize_scalar(sub, value, shown)? };
            let parent = container.entry(attr.name).or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(parent) = parent {
                match new {
                    Some(new) => parent.insert(sub.name.to_string(), new),
                    None => parent.remove(sub.name),
                };
            }
            if matches!(container.get(attr.name), Some(Value::Object(parent)) if parent.is_empty()) {
                container.remove(attr.name);
            }
        }
        (true, None) => on_list(container, op, attr, value, shown, ignored)?,
        (true, Some(sub)) => on_values(container, op, attr, None, Some(sub), value, shown, ignored)?,
    }
    Ok(())
}

/// A multi-valued attribute as a whole: `add` appends (a value already
/// there is updated, not repeated), `replace` sets the list, `remove`
/// clears it, or, given values (Entra ID's way to drop group members),
/// removes those.
fn on_list(
    container: &mut Map<String, Value>,
    op: OpKind,
    attr: &'static Attribute,
    value: &Value,
    shown: &str,
    ignored: &mut Ignored,
) -> Result<(), ScimError> {
    let given = match (op, value) {
        (OpKind::Remove, Value::Null) => {
            container.remove(attr.name);
            return Ok(());
        }
        _ => match value::normalize(attr, value, shown, ignored)? {
            Some(Value::Array(items)) => items,
            _ => Vec::new(),
        },
    };
    if op == OpKind::Replace {
        if given.is_empty() {
            container.remove(attr.name);
        } else {
            container.insert(attr.name.to_string(), Value::Array(given));
        }
        return Ok(());
    }
    let mut items = take_items(container, attr);
    // Members are found by id through an index: ten thousand added to ten
    // thousand must not cost a hundred million comparisons.
    let mut index: HashMap<String, usize> = match identity(attr) {
        Some(id) => items.iter().enumerate().filter_map(|(i, item)| Some((item.get(id)?.as_str()?.to_string(), i))).collect(),
        None => HashMap::new(),
    };
    let find = |index: &HashMap<String, usize>, items: &[Value], given: &Value| match identity(attr) {
        Some(id) => given.get(id).and_then(Value::as_str).and_then(|v| index.get(v).copied()),
        None => items.iter().position(|item| same_value(attr, given, item)),
    };
    if op == OpKind::Remove {
        let mut gone = vec![false; items.len()];
        for g in &given {
            match identity(attr) {
                Some(_) => find(&index, &items, g).into_iter().for_each(|i| gone[i] = true),
                None => items.iter().enumerate().filter(|(_, item)| same_value(attr, g, item)).for_each(|(i, _)| gone[i] = true),
            }
        }
        let mut i = 0;
        items.retain(|_| {
            i += 1;
            !gone[i - 1]
        });
    } else {
        let mut touched = Vec::with_capacity(given.len());
        for new in given {
            match find(&index, &items, &new) {
                Some(i) => {
                    merge(attr, &mut items[i], new, shown)?;
                    touched.push(i);
                }
                None => {
                    if let Some(key) = identity(attr).and_then(|id| new.get(id)).and_then(Value::as_str) {
                        index.insert(key.to_string(), items.len());
                    }
                    items.push(new);
                    touched.push(items.len() - 1);
                }
            }
        }
        demote_primary(&mut items, &touched);
    }
    put_items(container, attr, items);
    Ok(())
}

/// The values a filter selects (or all, without one), or one sub-attribute
/// of each. RFC 7644 §3.5.2: no match is `noTarget`, except that `add` and
/// `replace` on an `eq` filter make the value the filter describes (Entra
/// ID adds `emails[type eq "work"].value` to a user with no work email),
/// and `remove` of nothing is done already.
#[allow(clippy::too_many_arguments)]
fn on_values(
    container: &mut Map<String, Value>,
    op: OpKind,
    attr: &'static Attribute,
    filter: Option<&Expr>,
    sub: Option<&'static Attribute>,
    value: &Value,
    shown: &str,
    ignored: &mut Ignored,
) -> Result<(), ScimError> {
    let mut items = take_items(container, attr);
    let matched: Vec<usize> = (0..items.len()).filter(|&i| filter.is_none_or(|f| expr_matches(f, &items[i]))).collect();
    let new = match (op, sub) {
        (OpKind::Remove, _) => None,
        (_, Some(sub)) => value::normalize_scalar(sub, value, shown)?,
        (_, None) => value::normalize_one(attr, value, shown, ignored)?,
    };
    let result = (|| {
        let Some(new) = new else {
            // remove, or a null value: what is selected goes.
            match sub {
                Some(sub) => {
                    for &i in &matched {
                        if let Value::Object(item) = &mut items[i] {
                            item.remove(sub.name);
                        }
                    }
                }
                None => {
                    let mut gone = vec![false; items.len()];
                    matched.iter().for_each(|&i| gone[i] = true);
                    let mut i = 0;
                    items.retain(|_| {
                        i += 1;
                        !gone[i - 1]
                    });
                }
            }
            return Ok(());
        };
        if matched.is_empty() {
            let Some(mut made) = filter.and_then(eq_terms) else {
                return Err(ScimError::no_target(format!("{shown}: no value matches")));
            };
            match (sub, new) {
                (Some(sub), new) => {
                    made.insert(sub.name.to_string(), new);
                }
                (None, Value::Object(new)) => made.extend(new),
                (None, _) => {}
            }
            if let Some(made) = value::normalize_one(attr, &Value::Object(made), shown, ignored)? {
                items.push(made);
                let last = items.len() - 1;
                demote_primary(&mut items, &[last]);
            }
            return Ok(());
        }
        for &i in &matched {
            match (sub, op) {
                (Some(sub), _) => set_sub(&mut items[i], sub, new.clone(), shown)?,
                (None, OpKind::Add) => merge(attr, &mut items[i], new.clone(), shown)?,
                (None, _) => {
                    check_immutable_subs(attr, &items[i], &new, shown)?;
                    items[i] = new.clone();
                }
            }
        }
        demote_primary(&mut items, &matched);
        Ok(())
    })();
    items.retain(|item| !matches!(item, Value::Object(fields) if fields.is_empty()));
    put_items(container, attr, items);
    result
}

fn take_items(container: &mut Map<String, Value>, attr: &Attribute) -> Vec<Value> {
    match container.remove(attr.name) {
        Some(Value::Array(items)) => items,
        Some(Value::Null) | None => Vec::new(),
        Some(other) => vec![other],
    }
}

fn put_items(container: &mut Map<String, Value>, attr: &Attribute, items: Vec<Value>) {
    if !items.is_empty() {
        container.insert(attr.name.to_string(), Value::Array(items));
    }
}

/// The sub-attribute that identifies a value, where there is one: an
/// immutable `value` (a group's members are their ids).
fn identity(attr: &Attribute) -> Option<&'static str> {
    attr.value_sub_attribute().filter(|v| v.mutability == Mutability::Immutable).map(|v| v.name)
}

/// Whether `given` names `item`: by identity where there is one, else by
/// every field `given` has.
fn same_value(attr: &Attribute, given: &Value, item: &Value) -> bool {
    if let Some(id) = identity(attr) {
        return given.get(id).is_some() && given.get(id) == item.get(id);
    }
    match (given, item) {
        (Value::Object(given), Value::Object(item)) => given.iter().all(|(k, v)| item.get(k) == Some(v)),
        _ => given == item,
    }
}

fn merge(attr: &Attribute, item: &mut Value, new: Value, shown: &str) -> Result<(), ScimError> {
    check_immutable_subs(attr, item, &new, shown)?;
    match (item, new) {
        (Value::Object(item), Value::Object(new)) => item.extend(new),
        (item, new) => *item = new,
    }
    Ok(())
}

fn set_sub(item: &mut Value, sub: &'static Attribute, new: Value, shown: &str) -> Result<(), ScimError> {
    let Value::Object(fields) = item else { return Ok(()) };
    if sub.mutability == Mutability::Immutable && fields.get(sub.name).is_some_and(|old| *old != new) {
        return Err(ScimError::mutability(format!("{shown}: immutable, and has a value")));
    }
    fields.insert(sub.name.to_string(), new);
    Ok(())
}

/// An immutable sub-attribute keeps its value within one value of a list
/// (a member's `value` is who the member is).
fn check_immutable_subs(attr: &Attribute, item: &Value, new: &Value, shown: &str) -> Result<(), ScimError> {
    for sub in attr.sub_attributes.iter().filter(|s| s.mutability == Mutability::Immutable) {
        if let (Some(old), Some(new)) = (item.get(sub.name), new.get(sub.name))
            && old != new
        {
            return Err(ScimError::mutability(format!("{shown}: {}.{} is immutable, and has a value", attr.name, sub.name)));
        }
    }
    Ok(())
}

/// RFC 7644 §3.5.2: a value made primary makes the others not primary.
fn demote_primary(items: &mut [Value], touched: &[usize]) {
    let is_primary = |item: &Value| item.get("primary") == Some(&Value::Bool(true));
    if !touched.iter().any(|&i| items.get(i).is_some_and(is_primary)) {
        return;
    }
    for (i, item) in items.iter_mut().enumerate() {
        if !touched.contains(&i)
            && is_primary(item)
            && let Value::Object(fields) = item
        {
            fields.insert("primary".into(), Value::Bool(false));
        }
    }
}

/// The value an `eq`-only filter describes: `type eq "work" and primary eq
/// true` is `{"type": "work", "primary": true}`.
fn eq_terms(filter: &Expr) -> Option<Map<String, Value>> {
    fn walk(expr: &Expr, out: &mut Map<String, Value>) -> bool {
        match expr {
            Expr::And(a, b) => walk(a, out) && walk(b, out),
            Expr::Compare { target, op: CompareOp::Eq, value } if target.sub.is_none() && target.extension.is_none() => {
                let value = match value {
                    Literal::String(s) => Value::from(s.as_str()),
                    Literal::Bool(b) => Value::Bool(*b),
                    Literal::Number(n) => Value::Number(n.clone()),
                    Literal::Null | Literal::DateTime(..) => return false,
                };
                out.insert(target.attr.name.to_string(), value);
                true
            }
            _ => false,
        }
    }
    let mut out = Map::new();
    walk(filter, &mut out).then_some(out)
}

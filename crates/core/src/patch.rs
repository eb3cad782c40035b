//! RFC 6902 JSON Patch, applied within bounds. Every operation is checked
//! before it is done: a value that would nest the document deeper than
//! [`MAX_DEPTH`](crate::document::MAX_DEPTH) or grow it past its size limit
//! is refused there, so a hostile patch stops at the limit instead of
//! building its result first. `copy` into the source's own subtree is
//! refused as `move` is. The patch works on a copy of the document: a
//! refusal leaves nothing half-done and needs no rollback.
//!
//! The document's size is kept exactly, as bytes of compact JSON, by the
//! change each operation makes, so no step re-measures the whole document.

use json_patch::PatchOperation;
use serde_json::{Map, Value};

use crate::document::{self, MAX_DEPTH, size_within, string_size};
use crate::error::{Error, FieldError};

/// The most JSON a patch may measure, copy and compare in all, in bytes:
/// far beyond any edit a person or an agent makes, and a bound on the work
/// a hostile patch of a thousand `copy` and `test` operations costs.
pub const WORK_BYTES: usize = 16 * 1024 * 1024;

/// Applies `ops` to a copy of `doc`, which may grow to `max_bytes`.
pub fn apply(doc: &Value, ops: &[PatchOperation], max_bytes: usize) -> Result<Value, Error> {
    let mut patcher = Patcher { size: document::size(doc), work: 0, max_bytes, doc: doc.clone() };
    for (i, op) in ops.iter().enumerate() {
        patcher.apply(op).map_err(|refusal| refusal.at(i))?;
    }
    Ok(patcher.doc)
}

struct Patcher {
    doc: Value,
    /// `doc`'s length as compact JSON.
    size: usize,
    /// Bytes measured, copied or compared so far.
    work: usize,
    max_bytes: usize,
}

/// Why one operation was refused; `at` names it.
enum Refusal {
    Invalid { keyword: &'static str, message: String },
    TooLarge { size: usize, limit: usize },
}

impl Refusal {
    fn invalid(message: impl Into<String>) -> Self {
        Self::Invalid { keyword: "patch", message: message.into() }
    }

    fn at(self, op: usize) -> Error {
        match self {
            Self::Invalid { keyword, message } => {
                Error::ValidationFailed { errors: vec![FieldError::new(format!("patch.{op}"), keyword, message).bounded()], more: 0 }
            }
            Self::TooLarge { size, limit } => Error::too_large(crate::Code::DocumentTooLarge, limit as u64, size as u64),
        }
    }
}

type Step<T = ()> = Result<T, Refusal>;

impl Patcher {
    fn apply(&mut self, op: &PatchOperation) -> Step {
        match op {
            PatchOperation::Add(op) => {
                let path = tokens(op.path.as_str())?;
                let size = self.admit(&op.value, &path)?;
                self.spend(size)?;
                self.add(&path, op.value.clone(), size)
            }
            PatchOperation::Remove(op) => {
                let path = tokens(op.path.as_str())?;
                self.remove(&path).map(drop)
            }
            PatchOperation::Replace(op) => {
                let path = tokens(op.path.as_str())?;
                let size = self.admit(&op.value, &path)?;
                self.spend(size)?;
                self.lookup(&path)?;
                if !path.is_empty() {
                    self.remove(&path)?;
                }
                self.add(&path, op.value.clone(), size)
            }
            PatchOperation::Move(op) => {
                let (from, path) = (tokens(op.from.as_str())?, tokens(op.path.as_str())?);
                if from.is_empty() {
                    return Err(Refusal::invalid("cannot move the whole document"));
                }
                if from == path {
                    return self.lookup(&from).map(drop);
                }
                if path.starts_with(&from) {
                    return Err(Refusal::invalid("cannot move a value into itself"));
                }
                let size = self.admit(self.lookup(&from)?, &path)?;
                let value = self.remove(&from)?;
                self.add(&path, value, size)
            }
            PatchOperation::Copy(op) => {
                let (from, path) = (tokens(op.from.as_str())?, tokens(op.path.as_str())?);
                if path.len() > from.len() && path.starts_with(&from) {
                    return Err(Refusal::invalid("cannot copy a value into itself"));
                }
                let source = self.lookup(&from)?;
                let size = self.admit(source, &path)?;
                let value = source.clone();
                self.spend(size)?;
                self.add(&path, value, size)
            }
            PatchOperation::Test(op) => {
                let path = tokens(op.path.as_str())?;
                self.spend(document::size(&op.value))?;
                let found = self.lookup(&path)?;
                if *found == op.value { Ok(()) } else { Err(Refusal::invalid(format!("the value at {} is not the one tested", op.path.as_str()))) }
            }
        }
    }

    /// Refuses a value that, placed at `path`, would nest too deep or could
    /// not fit in the document; answers its size.
    fn admit(&self, value: &Value, path: &[String]) -> Step<usize> {
        let room = MAX_DEPTH.saturating_sub(path.len());
        if document::depth_within(value, room).is_err() {
            return Err(Refusal::Invalid {
                keyword: "maxDepth",
                message: format!("the document would nest deeper than the limit of {MAX_DEPTH} levels"),
            });
        }
        size_within(value, self.max_bytes).map_err(|size| Refusal::TooLarge { size: self.size.saturating_add(size), limit: self.max_bytes })
    }

    fn spend(&mut self, bytes: usize) -> Step {
        self.work = self.work.saturating_add(bytes);
        if self.work > WORK_BYTES {
            return Err(Refusal::Invalid {
                keyword: "work",
                message: format!("the patch measures, copies and compares more than {WORK_BYTES} bytes of JSON in all"),
            });
        }
        Ok(())
    }

    fn grow(&mut self, by: usize) -> Step {
        let size = self.size.saturating_add(by);
        if size > self.max_bytes {
            return Err(Refusal::TooLarge { size, limit: self.max_bytes });
        }
        self.size = size;
        Ok(())
    }

    fn lookup(&self, path: &[String]) -> Step<&Value> {
        let mut here = &self.doc;
        for (depth, token) in path.iter().enumerate() {
            here = match here {
                Value::Object(map) => map.get(token.as_str()),
                Value::Array(items) => index(token, items.len(), false).ok().and_then(|i| items.get(i)),
                _ => None,
            }
            .ok_or_else(|| Refusal::invalid(format!("nothing at {}", pointer(&path[..=depth]))))?;
        }
        Ok(here)
    }

    fn parent_mut(&mut self, path: &[String]) -> Step<&mut Value> {
        let mut here = &mut self.doc;
        for (depth, token) in path.iter().enumerate() {
            here = match here {
                Value::Object(map) => map.get_mut(token.as_str()),
                Value::Array(items) => {
                    let len = items.len();
                    index(token, len, false).ok().and_then(move |i| items.get_mut(i))
                }
                _ => None,
            }
            .ok_or_else(|| Refusal::invalid(format!("nothing at {}", pointer(&path[..=depth]))))?;
        }
        Ok(here)
    }

    /// Adds `value`, whose size is `value_size`, at `path`.
    fn add(&mut self, path: &[String], value: Value, value_size: usize) -> Step {
        let Some((last, parent)) = path.split_last() else {
            // The whole document is replaced.
            if value_size > self.max_bytes {
                return Err(Refusal::TooLarge { size: value_size, limit: self.max_bytes });
            }
            self.doc = value;
            self.size = value_size;
            return Ok(());
        };
        // Work out the growth first, then change the document.
        let growth = match self.lookup(parent)? {
            Value::Object(map) => match map.get(last.as_str()) {
                Some(old) => Growth::Replace(document::size(old)),
                None => Growth::By(value_size + string_size(last) + 1 + usize::from(!map.is_empty())),
            },
            Value::Array(items) => {
                index(last, items.len(), true).map_err(Refusal::invalid)?;
                Growth::By(value_size + usize::from(!items.is_empty()))
            }
            _ => return Err(Refusal::invalid(format!("{} is neither an object nor an array", pointer(parent)))),
        };
        match growth {
            Growth::By(n) => self.grow(n)?,
            Growth::Replace(old) => {
                self.spend(old)?;
                self.size -= old;
                if let Err(refusal) = self.grow(value_size) {
                    self.size += old;
                    return Err(refusal);
                }
            }
        }
        match self.parent_mut(parent)? {
            Value::Object(map) => {
                map.insert(last.clone(), value);
            }
            Value::Array(items) => {
                let at = index(last, items.len(), true).map_err(Refusal::invalid)?;
                items.insert(at, value);
            }
            _ => unreachable!("the parent was an object or an array a moment ago"),
        }
        Ok(())
    }

    fn remove(&mut self, path: &[String]) -> Step<Value> {
        let Some((last, parent)) = path.split_last() else {
            return Err(Refusal::invalid("cannot remove the whole document"));
        };
        let removed = match self.parent_mut(parent)? {
            Value::Object(map) => take(map, last).ok_or_else(|| Refusal::invalid(format!("nothing at {}", pointer(path))))?,
            Value::Array(items) => {
                let at = index(last, items.len(), false).map_err(Refusal::invalid)?;
                let value = items.remove(at);
                let separator = usize::from(!items.is_empty());
                (value, separator)
            }
            _ => return Err(Refusal::invalid(format!("nothing at {}", pointer(path)))),
        };
        let (value, overhead) = removed;
        let size = document::size(&value);
        self.spend(size)?;
        self.size -= size + overhead;
        Ok(value)
    }
}

enum Growth {
    By(usize),
    Replace(usize),
}

/// Takes `key` out of `map`, with the bytes its member took besides the
/// value (the key, the colon, a comma).
fn take(map: &mut Map<String, Value>, key: &str) -> Option<(Value, usize)> {
    let value = map.remove(key)?;
    Some((value, string_size(key) + 1 + usize::from(!map.is_empty())))
}

/// An array index (RFC 6901): digits without a leading zero, or `-` (the
/// end) where a value is added.
fn index(token: &str, len: usize, adding: bool) -> Result<usize, String> {
    if token == "-" && adding {
        return Ok(len);
    }
    let digits = !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit()) && (token == "0" || !token.starts_with('0'));
    let at = if digits { token.parse::<usize>().ok() } else { None };
    match at {
        Some(at) if at < len || (adding && at == len) => Ok(at),
        Some(at) => Err(format!("index {at} is out of bounds (the array has {len} items)")),
        None => Err(format!("{token:?} is not an array index")),
    }
}

/// A JSON Pointer's reference tokens, unescaped.
fn tokens(pointer: &str) -> Step<Vec<String>> {
    if pointer.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = pointer.strip_prefix('/') else {
        return Err(Refusal::invalid(format!("{pointer:?} is not a JSON Pointer")));
    };
    Ok(rest.split('/').map(|t| t.replace("~1", "/").replace("~0", "~")).collect())
}

fn pointer(tokens: &[String]) -> String {
    tokens.iter().map(|t| format!("/{}", t.replace('~', "~0").replace('/', "~1"))).collect()
}

#[cfg(test)]
mod tests {
    use json_patch::Patch;
    use serde_json::json;

    use super::*;

    fn ops(v: Value) -> Patch {
        serde_json::from_value(v).unwrap()
    }

    fn run(doc: Value, patch: Value) -> Result<Value, Error> {
        apply(&doc, &ops(patch), document::MAX_BYTES)
    }

    #[test]
    fn applies_each_operation_as_rfc_6902_says() {
        let doc = json!({"a": {"b": [1, 2]}, "c": "x"});
        let out = run(
            doc,
            json!([
                {"op": "add", "path": "/a/b/1", "value": 9},
                {"op": "add", "path": "/a/b/-", "value": 3},
                {"op": "remove", "path": "/c"},
                {"op": "replace", "path": "/a/b/0", "value": {"k": "v"}},
                {"op": "copy", "from": "/a/b", "path": "/d"},
                {"op": "move", "from": "/d/0", "path": "/e"},
                {"op": "test", "path": "/e", "value": {"k": "v"}},
                {"op": "add", "path": "/a~1b", "value": true},
            ]),
        )
        .unwrap();
        assert_eq!(out, json!({"a": {"b": [{"k": "v"}, 9, 2, 3]}, "d": [9, 2, 3], "e": {"k": "v"}, "a/b": true}));
        assert_eq!(run(json!({}), json!([{"op": "add", "path": "", "value": [1]}])).unwrap(), json!([1]));
    }

    #[test]
    fn refuses_what_does_not_apply_naming_the_operation() {
        let check = |patch: Value, expect: &str| {
            let e = run(json!({"a": [1], "b": {"c": 1}}), patch).unwrap_err();
            assert!(e.to_string().contains(expect), "{e}");
        };
        check(json!([{"op": "remove", "path": "/x"}]), "patch.0: nothing at /x");
        check(json!([{"op": "add", "path": "/a/1", "value": 1}, {"op": "add", "path": "/a/5", "value": 1}]), "patch.1: index 5 is out of bounds");
        check(json!([{"op": "add", "path": "/a/01", "value": 1}]), "is not an array index");
        check(json!([{"op": "replace", "path": "/z", "value": 1}]), "nothing at /z");
        check(json!([{"op": "move", "from": "/b", "path": "/b/c/d"}]), "cannot move a value into itself");
        check(json!([{"op": "copy", "from": "/b", "path": "/b/x"}]), "cannot copy a value into itself");
        check(json!([{"op": "test", "path": "/a/0", "value": 2}]), "is not the one tested");
        check(json!([{"op": "remove", "path": ""}]), "cannot remove the whole document");
        check(json!([{"op": "add", "path": "/b/c/d", "value": 1}]), "/b/c is neither an object nor an array");
    }

    #[test]
    fn a_failed_operation_after_a_move_leaves_the_document_as_it_was() {
        let doc = json!({"a": 1, "b": [2]});
        let e = run(doc.clone(), json!([{"op": "move", "from": "/a", "path": "/c"}, {"op": "remove", "path": "/nope"}])).unwrap_err();
        assert!(e.to_string().contains("patch.1"), "{e}");
        assert_eq!(doc, json!({"a": 1, "b": [2]}));
    }

    #[test]
    fn growth_stops_at_the_size_limit() {
        let doc = json!({"a": "x".repeat(100)});
        let limit = document::size(&doc) * 3;
        let copies: Vec<Value> = (0..40).map(|i| json!({"op": "copy", "from": "/a", "path": format!("/k{i}")})).collect();
        let e = apply(&doc, &ops(Value::Array(copies)), limit).unwrap_err();
        assert_eq!(e.type_name(), "TooLarge");
        // Exactly at the limit is allowed.
        let member = json!({"op": "add", "path": "/b", "value": ""});
        let room = limit - document::size(&doc) - string_size("b") - 1 - 1 - 2;
        let mut fits = member.clone();
        fits["value"] = json!("y".repeat(room));
        let out = apply(&doc, &ops(json!([fits])), limit).unwrap();
        assert_eq!(document::size(&out), limit);
        let mut over = member;
        over["value"] = json!("y".repeat(room + 1));
        assert_eq!(apply(&doc, &ops(json!([over])), limit).unwrap_err().type_name(), "TooLarge");
    }

    #[test]
    fn nesting_stops_at_the_depth_limit() {
        // Copying a subtree under itself is refused outright; copying the
        // document into a child again and again would double its depth
        // each time and is stopped at the limit.
        let mut doc = json!({"a": {}});
        let mut patch = Vec::new();
        for _ in 0..40 {
            patch.push(json!({"op": "copy", "from": "", "path": "/a"}));
        }
        let e = run(doc.clone(), Value::Array(patch)).unwrap_err();
        assert!(e.to_string().contains("cannot copy a value into itself"), "{e}");
        // One level at a time: /a/a/a/… reaches the limit and stops there.
        let mut path = String::new();
        let mut steps = Vec::new();
        for _ in 0..MAX_DEPTH {
            path.push_str("/n");
            steps.push(json!({"op": "add", "path": path, "value": {}}));
        }
        let e = run(doc.clone(), Value::Array(steps.clone())).unwrap_err();
        assert!(e.to_string().contains(&format!("patch.{}: the document would nest deeper", MAX_DEPTH - 1)), "{e}");
        steps.pop();
        doc = run(doc, Value::Array(steps)).unwrap();
        assert_eq!(document::depth_within(&doc, MAX_DEPTH), Ok(MAX_DEPTH));
    }

    #[test]
    fn the_work_of_one_patch_is_bounded() {
        let doc = json!({"a": "x".repeat(200_000)});
        let tests: Vec<Value> = (0..1000).map(|_| json!({"op": "copy", "from": "/a", "path": "/b"})).collect();
        let e = run(doc, Value::Array(tests)).unwrap_err();
        assert!(e.to_string().contains("more than 16777216 bytes"), "{e}");
    }
}

#[cfg(test)]
mod agreement {
    //! The bounded patcher against the `json-patch` crate on generated
    //! documents and patches: the same result wherever both apply, and the
    //! size kept step by step is the document's.
    use json_patch::Patch;
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::*;

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(json!(null)),
            any::<bool>().prop_map(Value::from),
            (-5i64..5).prop_map(Value::from),
            "[a-z\"\\\\\n]{0,4}".prop_map(Value::from)
        ]
    }

    fn value() -> impl Strategy<Value = Value> {
        leaf().prop_recursive(4, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map("[ab~/]{1,2}", inner, 0..4).prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn pointer() -> impl Strategy<Value = String> {
        prop::collection::vec(prop_oneof![Just("a"), Just("b"), Just("0"), Just("1"), Just("-"), Just("~0"), Just("~1")], 0..4)
            .prop_map(|t| t.iter().map(|t| format!("/{t}")).collect())
    }

    fn op() -> impl Strategy<Value = Value> {
        prop_oneof![
            (pointer(), value()).prop_map(|(p, v)| json!({"op": "add", "path": p, "value": v})),
            pointer().prop_map(|p| json!({"op": "remove", "path": p})),
            (pointer(), value()).prop_map(|(p, v)| json!({"op": "replace", "path": p, "value": v})),
            (pointer(), pointer()).prop_map(|(f, p)| json!({"op": "move", "from": f, "path": p})),
            (pointer(), pointer()).prop_map(|(f, p)| json!({"op": "copy", "from": f, "path": p})),
            (pointer(), value()).prop_map(|(p, v)| json!({"op": "test", "path": p, "value": v})),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn agrees_with_json_patch(doc in value(), ops in prop::collection::vec(op(), 1..5)) {
            let patch: Patch = serde_json::from_value(Value::Array(ops.clone())).unwrap();
            let copies_into_itself = ops.iter().any(|op| {
                let (Some(from), Some(path)) = (op["from"].as_str(), op["path"].as_str()) else { return false };
                op["op"] == "copy" && path.len() > from.len() && path.starts_with(&format!("{from}/"))
            });
            let mut patcher = Patcher { size: document::size(&doc), work: 0, max_bytes: usize::MAX / 2, doc: doc.clone() };
            let ours = patch.iter().try_for_each(|op| patcher.apply(op));
            if ours.is_ok() {
                prop_assert_eq!(patcher.size, document::size(&patcher.doc));
            }
            let mut theirs = doc.clone();
            let theirs_ok = json_patch::patch_unsafe(&mut theirs, &patch).is_ok();
            if !copies_into_itself {
                prop_assert_eq!(ours.is_ok(), theirs_ok, "ops {:?} on {}", ops, doc);
                if theirs_ok {
                    prop_assert_eq!(&patcher.doc, &theirs);
                }
            }
        }
    }
}

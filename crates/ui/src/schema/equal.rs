//! JSON equality as JSON Schema defines it for `enum`, `const` and
//! `uniqueItems`: numbers compare by value (1 equals 1.0), objects by their
//! members whatever the order.

use serde_json::Value;

#[inline]
pub fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
            (Some(x), Some(y), _, _) => x == y,
            (_, _, Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equal(a, b)),
        (Value::Object(x), Value::Object(y)) => x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w))),
        _ => a == b,
    }
}

/// The index of the first item equal (as [`json_equal`] says) to an
/// earlier one. Items are grouped by a key that equal values share, so the
/// search is linear in the items rather than quadratic.
pub fn first_duplicate(items: &[Value]) -> Option<usize> {
    // A short list is compared pair by pair: fewer steps than hashing it.
    const PAIRWISE: usize = 16;
    if items.len() <= PAIRWISE {
        return (1..items.len()).find(|&i| items[..i].iter().any(|x| json_equal(x, &items[i])));
    }
    let mut seen: std::collections::HashMap<String, Vec<usize>> = std::collections::HashMap::with_capacity(items.len());
    let mut key = String::new();
    for (i, item) in items.iter().enumerate() {
        key.clear();
        bucket_key(item, &mut key);
        let earlier = seen.entry(key.clone()).or_default();
        if earlier.iter().any(|&j| json_equal(&items[j], item)) {
            return Some(i);
        }
        earlier.push(i);
    }
    None
}

/// A key that values [`json_equal`] calls equal always share: numbers by
/// their value as a double, objects with their members sorted.
fn bucket_key(value: &Value, out: &mut String) {
    use std::fmt::Write;
    match value {
        Value::Number(n) => {
            let _ = write!(out, "n{}", n.as_f64().unwrap_or(f64::NAN));
        }
        Value::String(s) => {
            let _ = write!(out, "s{}:{s}", s.len());
        }
        Value::Array(items) => {
            out.push('[');
            for item in items {
                bucket_key(item, out);
                out.push(',');
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut members: Vec<_> = map.iter().collect();
            members.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (k, v) in members {
                let _ = write!(out, "{}:{k}=", k.len());
                bucket_key(v, out);
                out.push(',');
            }
            out.push('}');
        }
        other => {
            let _ = write!(out, "{other}");
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::first_duplicate;

    #[test]
    fn duplicates_are_found_by_json_equality() {
        let dup = |v: serde_json::Value| first_duplicate(v.as_array().unwrap());
        assert_eq!(dup(json!([1, 2, 3])), None);
        assert_eq!(dup(json!([1, 2, 1.0])), Some(2));
        assert_eq!(dup(json!([{"a": 1, "b": [2]}, {"b": [2.0], "a": 1}])), Some(1));
        assert_eq!(dup(json!(["1", 1, [1], {"1": 1}])), None);
        assert_eq!(dup(json!([9007199254740993u64, 9007199254740992u64])), None);
        assert_eq!(dup(json!([null, false, null])), Some(2));
    }
}

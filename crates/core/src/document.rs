//! Bounds on every JSON document lattice stores: an artifact's data, an
//! answer, an application event, a run's step. One nesting limit and one
//! size limit, checked by the write path before anything is written, so
//! that every stored document can be read back.
//!
//! Why these numbers: readers parse stored JSON with serde_json, which
//! refuses documents nested deeper than 128. The deepest a stored document
//! is wrapped is an edit's envelope (`payload.patch[i].value`, three levels)
//! inside the live stream's event (one more), so a document of at most
//! [`MAX_DEPTH`] levels is always far inside what every reader accepts. The
//! forms, dashboards and apps lattice knows need fewer than ten.

use serde_json::Value;

use crate::error::{Error, FieldError};

/// The deepest nesting of arrays and objects in a stored document (a
/// scalar is 0 deep, `[]` is 1, `{"a": [1]}` is 2).
pub const MAX_DEPTH: usize = 32;

/// The largest stored document, in bytes of compact JSON. Each artifact
/// kind has its own limit; this one bounds everything else.
pub const MAX_BYTES: usize = 512 * 1024;

/// The most any artifact kind may declare as its limit (a connected MCP
/// server's app, which carries its framework inline, is the largest).
pub const KIND_MAX_BYTES: usize = 4 * 1024 * 1024;

/// How deeply `value` nests, counting no further than `limit + 1`: the
/// walk stops as soon as it knows the answer exceeds `limit`.
pub fn depth_within(value: &Value, limit: usize) -> Result<usize, usize> {
    let mut deepest = 0;
    let mut stack: Vec<(&Value, usize)> = vec![(value, 0)];
    while let Some((v, above)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match v {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(map) => Box::new(map.values()),
            _ => continue,
        };
        let here = above + 1;
        if here > limit {
            return Err(here);
        }
        deepest = deepest.max(here);
        stack.extend(children.map(|c| (c, here)));
    }
    Ok(deepest)
}

/// The length of `value` as compact JSON, counting no further than
/// `limit`: `Err(n)` with some `n > limit` once it is known to be larger.
pub fn size_within(value: &Value, limit: usize) -> Result<usize, usize> {
    struct Count {
        n: usize,
        limit: usize,
    }
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.n += buf.len();
            if self.n > self.limit { Err(std::io::Error::other("over the limit")) } else { Ok(buf.len()) }
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count { n: 0, limit };
    match serde_json::to_writer(&mut count, value) {
        Ok(()) => Ok(count.n),
        Err(_) => Err(count.n.max(limit.saturating_add(1))),
    }
}

/// The length of `value` as compact JSON, without building it.
pub fn size(value: &Value) -> usize {
    size_within(value, usize::MAX - 1).unwrap_or(usize::MAX)
}

/// The length of `s` as a JSON string, quotes and escapes included, as
/// serde_json writes it.
pub fn string_size(s: &str) -> usize {
    2 + s
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
            0x00..=0x1f => 6,
            _ => 1,
        })
        .sum::<usize>()
}

/// Refuses a document nested deeper than [`MAX_DEPTH`] or larger than
/// `max_bytes`, naming `path` (the field it came in).
pub fn check(value: &Value, path: &str, max_bytes: usize) -> Result<(), Error> {
    check_depth(value, path, 0)?;
    size_within(value, max_bytes).map_err(|size| Error::too_large(crate::Code::DocumentTooLarge, max_bytes as u64, size as u64))?;
    Ok(())
}

/// Refuses a document that, placed `below` levels deep, would nest deeper
/// than [`MAX_DEPTH`].
pub fn check_depth(value: &Value, path: &str, below: usize) -> Result<(), Error> {
    let limit = MAX_DEPTH.saturating_sub(below);
    depth_within(value, limit).map(drop).map_err(|_| too_deep(path))
}

pub fn too_deep(path: &str) -> Error {
    Error::ValidationFailed { errors: vec![FieldError::new(path, "maxDepth", format!("nests deeper than the limit of {MAX_DEPTH} levels"))], more: 0 }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn nested(levels: usize) -> Value {
        let mut v = json!(1);
        for _ in 0..levels {
            v = json!([v]);
        }
        v
    }

    #[test]
    fn depth_counts_containers_and_stops_past_the_limit() {
        assert_eq!(depth_within(&json!(1), 0), Ok(0));
        assert_eq!(depth_within(&json!([]), 1), Ok(1));
        assert_eq!(depth_within(&json!({"a": [1, {"b": {}}]}), 10), Ok(4));
        assert_eq!(depth_within(&nested(MAX_DEPTH), MAX_DEPTH), Ok(MAX_DEPTH));
        assert_eq!(depth_within(&nested(MAX_DEPTH + 1), MAX_DEPTH), Err(MAX_DEPTH + 1));
        assert!(check(&nested(MAX_DEPTH), "data", MAX_BYTES).is_ok());
        let e = check(&nested(MAX_DEPTH + 1), "data", MAX_BYTES).unwrap_err();
        assert_eq!(e.type_name(), "ValidationFailed");
        assert!(e.to_string().contains("data: nests deeper than the limit of 32"), "{e}");
    }

    #[test]
    fn size_is_the_compact_json_length_and_stops_past_the_limit() {
        let v = json!({"a": "x\"y\n\u{1}é", "b": [1, 2.5, null, true]});
        let text = serde_json::to_string(&v).unwrap();
        assert_eq!(size(&v), text.len());
        assert_eq!(size_within(&v, text.len()), Ok(text.len()));
        assert!(size_within(&v, text.len() - 1).is_err());
        assert_eq!(check(&v, "data", text.len() - 1).unwrap_err().type_name(), "TooLarge");
        for s in ["", "plain", "q\"b\\", "\u{0}\u{8}\u{c}\u{1f}\u{7f}", "ünïcødé\t"] {
            assert_eq!(string_size(s), serde_json::to_string(s).unwrap().len(), "{s:?}");
        }
    }
}

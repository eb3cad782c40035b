//! Reading a tagged enum in one pass: its variants' fields read side by
//! side into one flat struct (`ActorWire`, `ErrorWire`), then the variant
//! built by its tag, each field it needs taken with [`need`]. serde's
//! derived reading of an internally tagged enum buffers the whole object
//! first.

/// The field a variant needs, or the error serde would have given.
pub(crate) fn need<T>(field: Option<T>, name: &str) -> Result<T, String> {
    field.ok_or_else(|| format!("missing field `{name}`"))
}

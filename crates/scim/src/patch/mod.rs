//! PATCH (RFC 7644 §3.5.2): the PatchOp message, its paths, and applying
//! its operations to a stored document.

mod apply;
mod message;
mod path;
#[cfg(test)]
mod tests;

pub use apply::{Patched, apply};
pub use message::{OpKind, PATCH_OP_URN, PatchOperation, PatchRequest};

use serde_json::Value;

use crate::error::ScimError;
use crate::schema::ResourceType;

/// Reads a PATCH body and applies it to `existing`: what a route calls.
pub fn apply_body(resource_type: ResourceType, existing: &Value, body: &Value) -> Result<Patched, ScimError> {
    apply(resource_type, existing, &PatchRequest::parse(body)?)
}

//! The PatchOp message (RFC 7644 §3.5.2) as plain data: read for its shape
//! only, so a route can log it; paths are read against the schema when
//! the operations are applied.

use serde_json::{Map, Value};

use crate::error::{ScimError, excerpt};
use crate::limits::MAX_PATCH_OPERATIONS;

pub const PATCH_OP_URN: &str = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    Add,
    Replace,
    Remove,
}

impl OpKind {
    pub fn as_str(self) -> &'static str {
        match self {
            OpKind::Add => "add",
            OpKind::Replace => "replace",
            OpKind::Remove => "remove",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct PatchOperation {
    pub op: OpKind,
    pub path: Option<String>,
    pub value: Option<Value>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PatchRequest {
    pub operations: Vec<PatchOperation>,
}

fn field<'a>(fields: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    fields.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v)
}

impl PatchRequest {
    /// Reads a PATCH body. `op` is matched case-insensitively (Entra ID
    /// writes `"Replace"`), and so are the member names.
    pub fn parse(body: &Value) -> Result<PatchRequest, ScimError> {
        let Value::Object(fields) = body else { return Err(ScimError::invalid_syntax("the body is not a JSON object")) };
        let lists_patch_op = match field(fields, "schemas") {
            Some(Value::Array(urns)) => urns.iter().any(|u| u.as_str().is_some_and(|u| u.eq_ignore_ascii_case(PATCH_OP_URN))),
            _ => false,
        };
        if !lists_patch_op {
            return Err(ScimError::invalid_syntax(format!("schemas: must be a list holding {PATCH_OP_URN:?}")));
        }
        let Some(Value::Array(operations)) = field(fields, "Operations") else {
            return Err(ScimError::invalid_syntax("Operations: must be a list of operations"));
        };
        if operations.is_empty() {
            return Err(ScimError::invalid_syntax("Operations: is empty"));
        }
        if operations.len() > MAX_PATCH_OPERATIONS {
            return Err(ScimError::invalid_value(format!("Operations: {} operations, over the limit {MAX_PATCH_OPERATIONS}", operations.len())));
        }
        let operations = operations.iter().enumerate().map(|(i, op)| read_operation(i, op)).collect::<Result<_, _>>()?;
        Ok(PatchRequest { operations })
    }
}

fn read_operation(i: usize, op: &Value) -> Result<PatchOperation, ScimError> {
    let at = format!("Operations[{i}]");
    let Value::Object(fields) = op else { return Err(ScimError::invalid_syntax(format!("{at}: not an object"))) };
    let kind = match field(fields, "op").and_then(Value::as_str) {
        Some(op) if op.eq_ignore_ascii_case("add") => OpKind::Add,
        Some(op) if op.eq_ignore_ascii_case("replace") => OpKind::Replace,
        Some(op) if op.eq_ignore_ascii_case("remove") => OpKind::Remove,
        Some(op) => return Err(ScimError::invalid_syntax(format!("{at}.op: {} is not add, replace or remove", excerpt(op)))),
        None => return Err(ScimError::invalid_syntax(format!("{at}.op: must be add, replace or remove"))),
    };
    let path = match field(fields, "path") {
        None | Some(Value::Null) => None,
        Some(Value::String(path)) => Some(path.clone()),
        Some(_) => return Err(ScimError::invalid_path(format!("{at}.path: must be a string"))),
    };
    let value = field(fields, "value").cloned();
    // RFC 7644 §3.5.2.2: a remove without a path has no target.
    if kind == OpKind::Remove && path.is_none() {
        return Err(ScimError::no_target(format!("{at}: remove needs a path")));
    }
    if kind != OpKind::Remove && value.is_none() {
        return Err(ScimError::invalid_value(format!("{at}: {} needs a value", kind.as_str())));
    }
    Ok(PatchOperation { op: kind, path, value })
}

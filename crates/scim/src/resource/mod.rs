//! Resources: a request body to the stored document, the stored document
//! to a response, its version, and the few readings a route needs from it
//! (the uniqueness key, whether a user is active, a group's members).

mod normalize;
mod projection;
mod render;
#[cfg(test)]
mod tests;
mod version;

use serde_json::Value;

pub use normalize::{Normalized, normalize_create, normalize_replace};
pub use projection::Projection;
pub use render::{ResourceMeta, location, render};
pub use version::{check_if_match, etag_matches, version_of};

use crate::schema::ResourceType;

/// The folded `userName` a route keeps unique per tenant (RFC 7643 §4.1.1:
/// unique, compared case-insensitively); `None` for groups, whose
/// `displayName` lattice does not hold unique.
pub fn unique_key(resource_type: ResourceType, document: &Value) -> Option<String> {
    match resource_type {
        ResourceType::User => document.get("userName").and_then(Value::as_str).map(str::to_lowercase),
        ResourceType::Group => None,
    }
}

/// Whether the user may sign in: `active` unassigned reads as true (the
/// document keeps it unassigned, so a `remove` reads back as removed).
pub fn is_active(document: &Value) -> bool {
    document.get("active") != Some(&Value::Bool(false))
}

/// A group's members' ids, as stored.
pub fn member_ids(document: &Value) -> impl Iterator<Item = &str> {
    document.get("members").and_then(Value::as_array).into_iter().flatten().filter_map(|m| m.get("value").and_then(Value::as_str))
}

/// A user's document with its readOnly `groups` written in, from the
/// groups lattice knows it in (`(id, displayName)`); render the result.
pub fn with_groups<'a>(document: &Value, base_url: &str, groups: impl IntoIterator<Item = (&'a str, &'a str)>) -> Value {
    let groups: Vec<Value> = groups
        .into_iter()
        .map(|(id, display)| {
            serde_json::json!({
                "value": id,
                "$ref": location(ResourceType::Group, base_url, id),
                "display": display,
                "type": "direct",
            })
        })
        .collect();
    let mut document = document.clone();
    if let Value::Object(fields) = &mut document {
        if groups.is_empty() {
            fields.retain(|key, _| key != "groups");
        } else {
            fields.insert("groups".into(), Value::Array(groups));
        }
    }
    document
}

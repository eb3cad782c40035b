//! A stored document as a response writes it (RFC 7643 §3, §3.1): `schemas`,
//! `id`, `externalId`, `meta`, the attributes, the extensions, then the
//! projection the request asked for.

use serde_json::{Map, Value};

use super::projection::Projection;
use super::version::version_of;
use crate::datetime::format_millis;
use crate::schema::ResourceType;

/// What a route keeps beside the document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResourceMeta<'a> {
    pub id: &'a str,
    /// Milliseconds since the Unix epoch.
    pub created_ms: i64,
    pub last_modified_ms: i64,
    /// The SCIM base URL, e.g. `https://host/scim/v2`.
    pub base_url: &'a str,
}

/// The URL of a resource: `{base}/Users/{id}`.
pub fn location(resource_type: ResourceType, base_url: &str, id: &str) -> String {
    format!("{}{}/{id}", base_url.trim_end_matches('/'), resource_type.endpoint())
}

/// The resource as a response carries it. `meta.version` is
/// [`version_of`]`(document)`; the route sends the same as the `ETag`
/// header and `meta.location` as `Location` after a POST.
pub fn render(resource_type: ResourceType, document: &Value, meta: &ResourceMeta<'_>, projection: &Projection) -> Value {
    let mut out = Map::new();
    out.insert("schemas".into(), Value::Null);
    out.insert("id".into(), Value::from(meta.id));
    let fields = document.as_object();
    if let Some(external_id) = fields.and_then(|f| f.get("externalId")) {
        out.insert("externalId".into(), external_id.clone());
    }
    let mut meta_fields = Map::new();
    meta_fields.insert("resourceType".into(), Value::from(resource_type.name()));
    meta_fields.insert("created".into(), Value::from(format_millis(meta.created_ms)));
    meta_fields.insert("lastModified".into(), Value::from(format_millis(meta.last_modified_ms)));
    meta_fields.insert("location".into(), Value::from(location(resource_type, meta.base_url, meta.id)));
    meta_fields.insert("version".into(), Value::from(version_of(document)));
    out.insert("meta".into(), Value::Object(meta_fields));
    for (key, value) in fields.into_iter().flatten() {
        // The document's own copies of what the route owns lose to the route's.
        if !matches!(key.as_str(), "externalId" | "schemas" | "id" | "meta") {
            out.insert(key.clone(), value.clone());
        }
    }
    projection.project(resource_type, Value::Object(out))
}

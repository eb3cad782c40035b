//! The SCIM error response (RFC 7644 §3.12). Every refusal this crate makes
//! is one of these, so a route answers with `error.status` and
//! `error.to_json()` and nothing else to map.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

/// The `schemas` URN of an error response.
pub const ERROR_URN: &str = "urn:ietf:params:scim:api:messages:2.0:Error";

/// The `scimType` values of RFC 7644 §3.12, table 9: the stable codes a
/// client may act on. The wire names are the RFC's (camelCase).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScimType {
    InvalidFilter,
    TooMany,
    Uniqueness,
    Mutability,
    InvalidSyntax,
    InvalidPath,
    NoTarget,
    InvalidValue,
    InvalidVers,
    Sensitive,
}

impl ScimType {
    /// Every code, in the RFC's order: the table the docs are made from.
    pub const ALL: [ScimType; 10] = [
        ScimType::InvalidFilter,
        ScimType::TooMany,
        ScimType::Uniqueness,
        ScimType::Mutability,
        ScimType::InvalidSyntax,
        ScimType::InvalidPath,
        ScimType::NoTarget,
        ScimType::InvalidValue,
        ScimType::InvalidVers,
        ScimType::Sensitive,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ScimType::InvalidFilter => "invalidFilter",
            ScimType::TooMany => "tooMany",
            ScimType::Uniqueness => "uniqueness",
            ScimType::Mutability => "mutability",
            ScimType::InvalidSyntax => "invalidSyntax",
            ScimType::InvalidPath => "invalidPath",
            ScimType::NoTarget => "noTarget",
            ScimType::InvalidValue => "invalidValue",
            ScimType::InvalidVers => "invalidVers",
            ScimType::Sensitive => "sensitive",
        }
    }

    /// The HTTP status the RFC pairs with the code.
    pub fn status(self) -> u16 {
        match self {
            ScimType::Uniqueness => 409,
            ScimType::Sensitive => 403,
            _ => 400,
        }
    }

    /// One line for the documentation table.
    pub fn description(self) -> &'static str {
        match self {
            ScimType::InvalidFilter => "the filter is malformed, names an attribute lattice does not keep, or is over a bound",
            ScimType::TooMany => "the query would return more results than lattice returns at once",
            ScimType::Uniqueness => "a value that must be unique (userName) is taken",
            ScimType::Mutability => "the request changes a readOnly or immutable attribute",
            ScimType::InvalidSyntax => "the request body is not a SCIM message of the expected kind",
            ScimType::InvalidPath => "a PATCH path is malformed",
            ScimType::NoTarget => "a PATCH path matched nothing to operate on",
            ScimType::InvalidValue => "a value has the wrong type, is missing where required, or is over a bound",
            ScimType::InvalidVers => "the SCIM version is not supported",
            ScimType::Sensitive => "the request carries sensitive information in its URI",
        }
    }
}

impl std::fmt::Display for ScimType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A SCIM error: the HTTP status, the optional `scimType` and a detail that
/// names the field and the limit, e.g. `filter: 17 levels of nesting, over the limit 16`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{status}{}: {detail}", scim_type.map(|t| format!(" {t}")).unwrap_or_default())]
pub struct ScimError {
    pub status: u16,
    pub scim_type: Option<ScimType>,
    pub detail: String,
}

impl ScimError {
    pub fn new(status: u16, scim_type: Option<ScimType>, detail: impl Into<String>) -> Self {
        Self { status, scim_type, detail: detail.into() }
    }

    fn typed(scim_type: ScimType, detail: impl Into<String>) -> Self {
        Self::new(scim_type.status(), Some(scim_type), detail)
    }

    pub fn invalid_filter(detail: impl Into<String>) -> Self {
        Self::typed(ScimType::InvalidFilter, detail)
    }
    pub fn too_many(detail: impl Into<String>) -> Self {
        Self::typed(ScimType::TooMany, detail)
    }
    /// 409: for the route that finds a taken userName (the check needs the database).
    pub fn uniqueness(detail: impl Into<String>) -> Self {
        Self::typed(ScimType::Uniqueness, detail)
    }
    pub fn mutability(detail: impl Into<String>) -> Self {
        Self::typed(ScimType::Mutability, detail)
    }
    pub fn invalid_syntax(detail: impl Into<String>) -> Self {
        Self::typed(ScimType::InvalidSyntax, detail)
    }
    pub fn invalid_path(detail: impl Into<String>) -> Self {
        Self::typed(ScimType::InvalidPath, detail)
    }
    pub fn no_target(detail: impl Into<String>) -> Self {
        Self::typed(ScimType::NoTarget, detail)
    }
    pub fn invalid_value(detail: impl Into<String>) -> Self {
        Self::typed(ScimType::InvalidValue, detail)
    }

    /// 404, also for another tenant's resource: the SCIM token's tenant
    /// learns nothing of others, not even that an id exists.
    pub fn not_found(detail: impl Into<String>) -> Self {
        Self::new(404, None, detail)
    }
    /// 405: the discovery endpoints answer GET only (scim2-tester checks it).
    pub fn method_not_allowed(method: &str) -> Self {
        Self::new(405, None, format!("{method} is not allowed here"))
    }
    /// 412: `If-Match` names a version that is no longer the resource's.
    pub fn precondition_failed(current: &str) -> Self {
        Self::new(412, None, format!("If-Match does not match the current version {current}"))
    }
    /// 501: what ServiceProviderConfig says lattice does not do (bulk, changePassword).
    pub fn not_implemented(detail: impl Into<String>) -> Self {
        Self::new(501, None, detail)
    }
    pub fn unauthorized(detail: impl Into<String>) -> Self {
        Self::new(401, None, detail)
    }
    pub fn forbidden(detail: impl Into<String>) -> Self {
        Self::new(403, None, detail)
    }

    /// The response body: `{"schemas":[ERROR_URN],"status":"400","scimType":"…","detail":"…"}`.
    /// `status` is a string, as RFC 7644 §3.12 writes it.
    pub fn to_json(&self) -> Value {
        let mut body = serde_json::Map::new();
        body.insert("schemas".into(), Value::from(vec![ERROR_URN]));
        body.insert("status".into(), Value::from(self.status.to_string()));
        if let Some(scim_type) = self.scim_type {
            body.insert("scimType".into(), Value::from(scim_type.as_str()));
        }
        body.insert("detail".into(), Value::from(self.detail.as_str()));
        Value::Object(body)
    }
}

impl Serialize for ScimError {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("schemas", &[ERROR_URN])?;
        map.serialize_entry("status", &self.status.to_string())?;
        if let Some(scim_type) = self.scim_type {
            map.serialize_entry("scimType", scim_type.as_str())?;
        }
        map.serialize_entry("detail", &self.detail)?;
        map.end()
    }
}

/// A client's text as a `detail` quotes it: in quotes, and cut to 64
/// characters, so a refusal of a 4 KiB path does not send it all back.
pub(crate) fn excerpt(text: &str) -> String {
    const KEEP: usize = 64;
    match text.char_indices().nth(KEEP) {
        None => format!("{text:?}"),
        Some((cut, _)) => format!("{:?}…", &text[..cut]),
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    #[test]
    fn the_wire_shape() {
        let errors = [
            ScimError::invalid_filter("filter: nested 17 levels deep, over the limit 16"),
            ScimError::uniqueness("userName \"bjensen\" is taken"),
            ScimError::not_found("User 2819c223 not found"),
            ScimError::method_not_allowed("DELETE"),
        ];
        let out: Vec<String> = errors.iter().map(|e| format!("{e}\n  {}", e.to_json())).collect();
        expect![[r#"
            400 invalidFilter: filter: nested 17 levels deep, over the limit 16
              {"schemas":["urn:ietf:params:scim:api:messages:2.0:Error"],"status":"400","scimType":"invalidFilter","detail":"filter: nested 17 levels deep, over the limit 16"}
            409 uniqueness: userName "bjensen" is taken
              {"schemas":["urn:ietf:params:scim:api:messages:2.0:Error"],"status":"409","scimType":"uniqueness","detail":"userName \"bjensen\" is taken"}
            404: User 2819c223 not found
              {"schemas":["urn:ietf:params:scim:api:messages:2.0:Error"],"status":"404","detail":"User 2819c223 not found"}
            405: DELETE is not allowed here
              {"schemas":["urn:ietf:params:scim:api:messages:2.0:Error"],"status":"405","detail":"DELETE is not allowed here"}"#]].assert_eq(&out.join("\n"));
        for error in errors {
            assert_eq!(serde_json::to_value(&error).ok(), Some(error.to_json()), "Serialize and to_json agree");
        }
    }

    #[test]
    fn every_scim_type_is_one_code() {
        let out: Vec<String> = ScimType::ALL.iter().map(|t| format!("{} {}: {}", t.status(), t, t.description())).collect();
        expect![[r#"
            400 invalidFilter: the filter is malformed, names an attribute lattice does not keep, or is over a bound
            400 tooMany: the query would return more results than lattice returns at once
            409 uniqueness: a value that must be unique (userName) is taken
            400 mutability: the request changes a readOnly or immutable attribute
            400 invalidSyntax: the request body is not a SCIM message of the expected kind
            400 invalidPath: a PATCH path is malformed
            400 noTarget: a PATCH path matched nothing to operate on
            400 invalidValue: a value has the wrong type, is missing where required, or is over a bound
            400 invalidVers: the SCIM version is not supported
            403 sensitive: the request carries sensitive information in its URI"#]]
        .assert_eq(&out.join("\n"));
    }

    #[test]
    fn long_input_is_cut_in_details() {
        assert_eq!(excerpt("short"), "\"short\"");
        assert_eq!(excerpt(&"é".repeat(100)), format!("{:?}…", "é".repeat(64)));
    }
}

//! The discovery documents (RFC 7644 §4, RFC 7643 §5–7): what lattice
//! serves and supports, said honestly. `/ServiceProviderConfig`,
//! `/ResourceTypes` and `/Schemas` answer GET only; a route answers the
//! other methods with `ScimError::method_not_allowed`.

use serde_json::{Map, Value, json};

use crate::limits::MAX_PAGE;
use crate::list::list_response;
use crate::schema::{ALL_SCHEMAS, AttrType, Attribute, ResourceType, Schema};

pub const SERVICE_PROVIDER_CONFIG_URN: &str = "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig";
pub const RESOURCE_TYPE_URN: &str = "urn:ietf:params:scim:schemas:core:2.0:ResourceType";
pub const SCHEMA_URN: &str = "urn:ietf:params:scim:schemas:core:2.0:Schema";

fn base(base_url: &str) -> &str {
    base_url.trim_end_matches('/')
}

/// PATCH yes; filters yes, at most [`MAX_PAGE`] results a page; sorting
/// yes; ETags yes (weak, see `resource::version_of`); bulk and
/// changePassword no (sign-in is the provider's, not a password here).
pub fn service_provider_config(base_url: &str) -> Value {
    json!({
        "schemas": [SERVICE_PROVIDER_CONFIG_URN],
        "patch": {"supported": true},
        "bulk": {"supported": false, "maxOperations": 0, "maxPayloadSize": 0},
        "filter": {"supported": true, "maxResults": MAX_PAGE},
        "changePassword": {"supported": false},
        "sort": {"supported": true},
        "etag": {"supported": true},
        "authenticationSchemes": [{
            "type": "oauthbearertoken",
            "name": "OAuth Bearer Token",
            "description": "A SCIM token of the tenant (POST /v1/scim-tokens), sent as Authorization: Bearer",
            "specUri": "https://www.rfc-editor.org/info/rfc6750",
            "primary": true
        }],
        "meta": {"resourceType": "ServiceProviderConfig", "location": format!("{}/ServiceProviderConfig", base(base_url))}
    })
}

/// `/ResourceTypes`: a ListResponse of User and Group.
pub fn resource_types(base_url: &str) -> Value {
    let all: Vec<Value> = ResourceType::ALL.iter().map(|t| resource_type_json(*t, base_url)).collect();
    list_response(all.len(), 1, all)
}

/// `/ResourceTypes/{id}`; `None` is a 404.
pub fn resource_type(base_url: &str, id: &str) -> Option<Value> {
    ResourceType::from_name(id).map(|t| resource_type_json(t, base_url))
}

fn resource_type_json(resource_type: ResourceType, base_url: &str) -> Value {
    let mut out = Map::new();
    out.insert("schemas".into(), json!([RESOURCE_TYPE_URN]));
    out.insert("id".into(), json!(resource_type.name()));
    out.insert("name".into(), json!(resource_type.name()));
    out.insert("endpoint".into(), json!(resource_type.endpoint()));
    out.insert("description".into(), json!(resource_type.description()));
    out.insert("schema".into(), json!(resource_type.schema().id));
    let extensions: Vec<Value> = resource_type.extensions().iter().map(|e| json!({"schema": e.id, "required": false})).collect();
    if !extensions.is_empty() {
        out.insert("schemaExtensions".into(), Value::Array(extensions));
    }
    out.insert(
        "meta".into(),
        json!({"resourceType": "ResourceType", "location": format!("{}/ResourceTypes/{}", base(base_url), resource_type.name())}),
    );
    Value::Object(out)
}

/// `/Schemas`: a ListResponse of the User, EnterpriseUser and Group schemas.
pub fn schemas(base_url: &str) -> Value {
    let all: Vec<Value> = ALL_SCHEMAS.iter().map(|s| schema_json(s, base_url)).collect();
    list_response(all.len(), 1, all)
}

/// `/Schemas/{urn}`, the URN compared case-insensitively; `None` is a 404.
pub fn schema(base_url: &str, id: &str) -> Option<Value> {
    ALL_SCHEMAS.iter().find(|s| s.id.eq_ignore_ascii_case(id)).map(|s| schema_json(s, base_url))
}

fn schema_json(schema: &Schema, base_url: &str) -> Value {
    json!({
        "schemas": [SCHEMA_URN],
        "id": schema.id,
        "name": schema.name,
        "description": schema.description,
        "attributes": schema.attributes.iter().map(attribute_json).collect::<Vec<_>>(),
        "meta": {"resourceType": "Schema", "location": format!("{}/Schemas/{}", base(base_url), schema.id)},
    })
}

fn attribute_json(attr: &Attribute) -> Value {
    let mut out = Map::new();
    out.insert("name".into(), json!(attr.name));
    out.insert("type".into(), json!(attr.kind.as_str()));
    out.insert("multiValued".into(), json!(attr.multi_valued));
    out.insert("description".into(), json!(attr.description));
    out.insert("required".into(), json!(attr.required));
    out.insert("caseExact".into(), json!(attr.case_exact));
    out.insert("mutability".into(), json!(attr.mutability.as_str()));
    out.insert("returned".into(), json!(attr.returned.as_str()));
    out.insert("uniqueness".into(), json!(attr.uniqueness.as_str()));
    if !attr.canonical_values.is_empty() {
        out.insert("canonicalValues".into(), json!(attr.canonical_values));
    }
    if attr.kind == AttrType::Reference {
        out.insert("referenceTypes".into(), json!(attr.reference_types));
    }
    if attr.is_complex() {
        out.insert("subAttributes".into(), Value::Array(attr.sub_attributes.iter().map(attribute_json).collect()));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use expect_test::expect;
    use serde_json::Value;

    use super::*;

    /// One line per attribute, as a person reviews a schema.
    fn outline(attributes: &Value, depth: usize, out: &mut Vec<String>) {
        for attr in attributes.as_array().into_iter().flatten() {
            let flag = |name: &str, shown: &str| if attr[name] == Value::Bool(true) { format!(" {shown}") } else { String::new() };
            let mut line = format!(
                "{}{} {}{}{}{} {} {} {}",
                "  ".repeat(depth),
                attr["name"].as_str().unwrap_or("?"),
                attr["type"].as_str().unwrap_or("?"),
                flag("multiValued", "multi"),
                flag("required", "required"),
                flag("caseExact", "caseExact"),
                attr["mutability"].as_str().unwrap_or("?"),
                attr["returned"].as_str().unwrap_or("?"),
                attr["uniqueness"].as_str().unwrap_or("?"),
            );
            if let Some(values) = attr.get("canonicalValues") {
                line.push_str(&format!(" canonical={values}"));
            }
            if let Some(types) = attr.get("referenceTypes") {
                line.push_str(&format!(" refs={types}"));
            }
            out.push(line);
            outline(&attr["subAttributes"], depth + 1, out);
        }
    }

    #[test]
    fn the_schemas_lattice_serves() {
        let all = schemas("https://lattice.example/scim/v2/");
        let mut out = vec![format!("totalResults={} itemsPerPage={}", all["totalResults"], all["itemsPerPage"])];
        for schema in all["Resources"].as_array().into_iter().flatten() {
            out.push(format!(
                "{} ({}) at {}",
                schema["id"].as_str().unwrap_or("?"),
                schema["name"].as_str().unwrap_or("?"),
                schema["meta"]["location"].as_str().unwrap_or("?")
            ));
            outline(&schema["attributes"], 1, &mut out);
        }
        expect![[r#"
            totalResults=3 itemsPerPage=3
            urn:ietf:params:scim:schemas:core:2.0:User (User) at https://lattice.example/scim/v2/Schemas/urn:ietf:params:scim:schemas:core:2.0:User
              userName string required readWrite default server
              name complex readWrite default none
                formatted string readWrite default none
                familyName string readWrite default none
                givenName string readWrite default none
                middleName string readWrite default none
                honorificPrefix string readWrite default none
                honorificSuffix string readWrite default none
              displayName string readWrite default none
              nickName string readWrite default none
              profileUrl reference caseExact readWrite default none refs=["external"]
              title string readWrite default none
              userType string readWrite default none
              preferredLanguage string readWrite default none
              locale string readWrite default none
              timezone string readWrite default none
              active boolean readWrite default none
              emails complex multi readWrite default none
                value string readWrite default none
                display string readWrite default none
                type string readWrite default none canonical=["work","home","other"]
                primary boolean readWrite default none
              phoneNumbers complex multi readWrite default none
                value string readWrite default none
                display string readWrite default none
                type string readWrite default none canonical=["work","home","mobile","fax","pager","other"]
                primary boolean readWrite default none
              addresses complex multi readWrite default none
                formatted string readWrite default none
                streetAddress string readWrite default none
                locality string readWrite default none
                region string readWrite default none
                postalCode string readWrite default none
                country string readWrite default none
                type string readWrite default none canonical=["work","home","other"]
                primary boolean readWrite default none
              groups complex multi readOnly default none
                value string caseExact readOnly default none
                $ref reference caseExact readOnly default none refs=["Group"]
                display string readOnly default none
                type string readOnly default none canonical=["direct","indirect"]
            urn:ietf:params:scim:schemas:extension:enterprise:2.0:User (EnterpriseUser) at https://lattice.example/scim/v2/Schemas/urn:ietf:params:scim:schemas:extension:enterprise:2.0:User
              employeeNumber string readWrite default none
              costCenter string readWrite default none
              organization string readWrite default none
              division string readWrite default none
              department string readWrite default none
              manager complex readWrite default none
                value string caseExact readWrite default none
                $ref reference caseExact readWrite default none refs=["User"]
                displayName string readWrite default none
            urn:ietf:params:scim:schemas:core:2.0:Group (Group) at https://lattice.example/scim/v2/Schemas/urn:ietf:params:scim:schemas:core:2.0:Group
              displayName string required readWrite default none
              members complex multi readWrite default none
                value string required caseExact immutable default none
                $ref reference caseExact immutable default none refs=["User","Group"]
                type string immutable default none canonical=["User","Group"]
                display string readWrite default none"#]].assert_eq(&out.join("\n"));
    }

    #[test]
    fn each_schema_and_resource_type_by_id() {
        let base = "https://lattice.example/scim/v2";
        assert_eq!(schema(base, "URN:IETF:PARAMS:SCIM:SCHEMAS:CORE:2.0:GROUP").map(|s| s["name"].clone()), Some(Value::from("Group")));
        assert_eq!(schema(base, "urn:ietf:params:scim:schemas:core:2.0:Nope"), None);
        assert_eq!(resource_type(base, "user").map(|t| t["endpoint"].clone()), Some(Value::from("/Users")));
        assert_eq!(resource_type(base, "4486deda-98f0-4408-be79-a1477e4dd42d"), None);
        expect![[r#"
            {
              "schemas": [
                "urn:ietf:params:scim:api:messages:2.0:ListResponse"
              ],
              "totalResults": 2,
              "startIndex": 1,
              "itemsPerPage": 2,
              "Resources": [
                {
                  "schemas": [
                    "urn:ietf:params:scim:schemas:core:2.0:ResourceType"
                  ],
                  "id": "User",
                  "name": "User",
                  "endpoint": "/Users",
                  "description": "A person of the tenant",
                  "schema": "urn:ietf:params:scim:schemas:core:2.0:User",
                  "schemaExtensions": [
                    {
                      "schema": "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User",
                      "required": false
                    }
                  ],
                  "meta": {
                    "resourceType": "ResourceType",
                    "location": "https://lattice.example/scim/v2/ResourceTypes/User"
                  }
                },
                {
                  "schemas": [
                    "urn:ietf:params:scim:schemas:core:2.0:ResourceType"
                  ],
                  "id": "Group",
                  "name": "Group",
                  "endpoint": "/Groups",
                  "description": "A group of people; its membership can grant roles in lattice",
                  "schema": "urn:ietf:params:scim:schemas:core:2.0:Group",
                  "meta": {
                    "resourceType": "ResourceType",
                    "location": "https://lattice.example/scim/v2/ResourceTypes/Group"
                  }
                }
              ]
            }"#]]
        .assert_eq(&serde_json::to_string_pretty(&resource_types(base)).unwrap_or_default());
    }

    #[test]
    fn what_lattice_says_it_supports() {
        expect![[r#"
            {
              "schemas": [
                "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"
              ],
              "patch": {
                "supported": true
              },
              "bulk": {
                "supported": false,
                "maxOperations": 0,
                "maxPayloadSize": 0
              },
              "filter": {
                "supported": true,
                "maxResults": 200
              },
              "changePassword": {
                "supported": false
              },
              "sort": {
                "supported": true
              },
              "etag": {
                "supported": true
              },
              "authenticationSchemes": [
                {
                  "type": "oauthbearertoken",
                  "name": "OAuth Bearer Token",
                  "description": "A SCIM token of the tenant (POST /v1/scim-tokens), sent as Authorization: Bearer",
                  "specUri": "https://www.rfc-editor.org/info/rfc6750",
                  "primary": true
                }
              ],
              "meta": {
                "resourceType": "ServiceProviderConfig",
                "location": "https://lattice.example/scim/v2/ServiceProviderConfig"
              }
            }"#]]
        .assert_eq(&serde_json::to_string_pretty(&service_provider_config("https://lattice.example/scim/v2")).unwrap_or_default());
    }
}

//! PATCH at its boundary: a stored document, the operations, and what the
//! document becomes (or the refusal), as inline snapshots. The cases are
//! RFC 7644 §3.5.2's examples, what Entra ID and Okta send, and what
//! scim2-tester sends.

use expect_test::{Expect, expect};
use serde_json::{Value, json};

use super::{PATCH_OP_URN, apply_body};
use crate::limits::{MAX_PATCH_OPERATIONS, MAX_PATH_BYTES};
use crate::resource::normalize_create;
use crate::schema::{ENTERPRISE_USER_URN, GROUP_URN, ResourceType, USER_URN};

fn stored(resource_type: ResourceType, body: Value) -> Value {
    normalize_create(resource_type, &body).expect("a valid document").document
}

fn user() -> Value {
    stored(
        ResourceType::User,
        json!({
            "schemas": [USER_URN], "userName": "bjensen", "name": {"givenName": "Barbara", "familyName": "Jensen"},
            "emails": [{"value": "bjensen@example.com", "type": "work", "primary": true}, {"value": "babs@jensen.org", "type": "home"}],
            "phoneNumbers": [{"value": "555-555-8377", "type": "mobile"}],
            "addresses": [{"type": "work", "streetAddress": "100 Universal City Plaza", "locality": "Hollywood"}]
        }),
    )
}

fn group() -> Value {
    stored(
        ResourceType::Group,
        json!({"schemas": [GROUP_URN], "displayName": "Tour Guides", "members": [
            {"value": "2819c223", "display": "Babs Jensen", "type": "User"},
            {"value": "902c246b", "display": "Mandy Pepperidge", "type": "User"}
        ]}),
    )
}

fn patched(resource_type: ResourceType, existing: &Value, operations: Value) -> String {
    let body = json!({"schemas": [PATCH_OP_URN], "Operations": operations});
    match apply_body(resource_type, existing, &body) {
        Ok(p) => {
            let mut out = if p.changed { p.document.to_string() } else { "unchanged".to_string() };
            if !p.ignored.is_empty() {
                out.push_str(&format!("\n    ignored: {}", p.ignored.join(", ")));
            }
            out
        }
        Err(e) => format!("{} {}: {}", e.status, e.scim_type.map(|t| t.as_str()).unwrap_or("-"), e.detail),
    }
}

fn check(resource_type: ResourceType, existing: Value, cases: &[Value], expect: Expect) {
    let out: Vec<String> = cases.iter().map(|ops| format!("{ops}\n  {}", patched(resource_type, &existing, ops.clone()))).collect();
    expect.assert_eq(&out.join("\n"));
}

#[test]
fn rfc_7644_examples_on_a_group() {
    check(
        ResourceType::Group,
        group(),
        &[
            json!([{"op": "add", "path": "members", "value": [{"display": "James Smith", "$ref": "https://example.com/v2/Users/08e1d05d", "value": "08e1d05d"}]}]),
            json!([{"op": "remove", "path": "members[value eq \"2819c223\"]"}]),
            json!([{"op": "remove", "path": "members"}]),
            json!([
                {"op": "remove", "path": "members[value eq \"2819c223\"]"},
                {"op": "add", "path": "members", "value": [{"display": "James Smith", "value": "08e1d05d"}]}
            ]),
            json!([{"op": "replace", "path": "members", "value": [{"display": "James Smith", "value": "08e1d05d"}]}]),
            json!([{"op": "replace", "path": "members[value eq \"2819c223\"].display", "value": "Babs"}]),
        ],
        expect![[r#"
            [{"op":"add","path":"members","value":[{"display":"James Smith","$ref":"https://example.com/v2/Users/08e1d05d","value":"08e1d05d"}]}]
              {"displayName":"Tour Guides","members":[{"value":"2819c223","type":"User","display":"Babs Jensen"},{"value":"902c246b","type":"User","display":"Mandy Pepperidge"},{"value":"08e1d05d","$ref":"https://example.com/v2/Users/08e1d05d","display":"James Smith"}]}
            [{"op":"remove","path":"members[value eq \"2819c223\"]"}]
              {"displayName":"Tour Guides","members":[{"value":"902c246b","type":"User","display":"Mandy Pepperidge"}]}
            [{"op":"remove","path":"members"}]
              {"displayName":"Tour Guides"}
            [{"op":"remove","path":"members[value eq \"2819c223\"]"},{"op":"add","path":"members","value":[{"display":"James Smith","value":"08e1d05d"}]}]
              {"displayName":"Tour Guides","members":[{"value":"902c246b","type":"User","display":"Mandy Pepperidge"},{"value":"08e1d05d","display":"James Smith"}]}
            [{"op":"replace","path":"members","value":[{"display":"James Smith","value":"08e1d05d"}]}]
              {"displayName":"Tour Guides","members":[{"value":"08e1d05d","display":"James Smith"}]}
            [{"op":"replace","path":"members[value eq \"2819c223\"].display","value":"Babs"}]
              {"displayName":"Tour Guides","members":[{"value":"2819c223","type":"User","display":"Babs"},{"value":"902c246b","type":"User","display":"Mandy Pepperidge"}]}"#]],
    );
}

#[test]
fn rfc_7644_examples_on_a_user() {
    check(
        ResourceType::User,
        user(),
        &[
            json!([{"op": "add", "value": {"emails": [{"value": "babs@jensen.org", "type": "home"}, {"value": "b@jensen.net", "type": "other"}], "nickname": "Babs"}}]),
            json!([{"op": "remove", "path": "emails[type eq \"work\" and value ew \"example.com\"]"}]),
            json!([{"op": "replace", "value": {"emails": [{"value": "bjensen@example.com", "type": "work", "primary": true}], "nickName": "Babs"}}]),
            json!([{"op": "replace", "path": "addresses[type eq \"work\"]", "value": {"type": "work", "streetAddress": "911 Universal City Plaza", "locality": "Hollywood"}}]),
            json!([{"op": "replace", "path": "addresses[type eq \"work\"].streetAddress", "value": "1010 Broadway Ave"}]),
            json!([{"op": "replace", "path": "name", "value": {"givenName": "Babs"}}]),
            json!([{"op": "add", "path": "name.middleName", "value": "Jane"}]),
            json!([{"op": "remove", "path": "name.givenName"}, {"op": "remove", "path": "name.familyName"}]),
            json!([{"op": "replace", "path": "urn:ietf:params:scim:schemas:core:2.0:User:userName", "value": "babs"}]),
        ],
        expect![[r#"
            [{"op":"add","value":{"emails":[{"value":"babs@jensen.org","type":"home"},{"value":"b@jensen.net","type":"other"}],"nickname":"Babs"}}]
              {"userName":"bjensen","name":{"familyName":"Jensen","givenName":"Barbara"},"nickName":"Babs","emails":[{"value":"bjensen@example.com","type":"work","primary":true},{"value":"babs@jensen.org","type":"home"},{"value":"b@jensen.net","type":"other"}],"phoneNumbers":[{"value":"555-555-8377","type":"mobile"}],"addresses":[{"streetAddress":"100 Universal City Plaza","locality":"Hollywood","type":"work"}]}
            [{"op":"remove","path":"emails[type eq \"work\" and value ew \"example.com\"]"}]
              {"userName":"bjensen","name":{"familyName":"Jensen","givenName":"Barbara"},"emails":[{"value":"babs@jensen.org","type":"home"}],"phoneNumbers":[{"value":"555-555-8377","type":"mobile"}],"addresses":[{"streetAddress":"100 Universal City Plaza","locality":"Hollywood","type":"work"}]}
            [{"op":"replace","value":{"emails":[{"value":"bjensen@example.com","type":"work","primary":true}],"nickName":"Babs"}}]
              {"userName":"bjensen","name":{"familyName":"Jensen","givenName":"Barbara"},"nickName":"Babs","emails":[{"value":"bjensen@example.com","type":"work","primary":true}],"phoneNumbers":[{"value":"555-555-8377","type":"mobile"}],"addresses":[{"streetAddress":"100 Universal City Plaza","locality":"Hollywood","type":"work"}]}
            [{"op":"replace","path":"addresses[type eq \"work\"]","value":{"type":"work","streetAddress":"911 Universal City Plaza","locality":"Hollywood"}}]
              {"userName":"bjensen","name":{"familyName":"Jensen","givenName":"Barbara"},"emails":[{"value":"bjensen@example.com","type":"work","primary":true},{"value":"babs@jensen.org","type":"home"}],"phoneNumbers":[{"value":"555-555-8377","type":"mobile"}],"addresses":[{"streetAddress":"911 Universal City Plaza","locality":"Hollywood","type":"work"}]}
            [{"op":"replace","path":"addresses[type eq \"work\"].streetAddress","value":"1010 Broadway Ave"}]
              {"userName":"bjensen","name":{"familyName":"Jensen","givenName":"Barbara"},"emails":[{"value":"bjensen@example.com","type":"work","primary":true},{"value":"babs@jensen.org","type":"home"}],"phoneNumbers":[{"value":"555-555-8377","type":"mobile"}],"addresses":[{"streetAddress":"1010 Broadway Ave","locality":"Hollywood","type":"work"}]}
            [{"op":"replace","path":"name","value":{"givenName":"Babs"}}]
              {"userName":"bjensen","name":{"familyName":"Jensen","givenName":"Babs"},"emails":[{"value":"bjensen@example.com","type":"work","primary":true},{"value":"babs@jensen.org","type":"home"}],"phoneNumbers":[{"value":"555-555-8377","type":"mobile"}],"addresses":[{"streetAddress":"100 Universal City Plaza","locality":"Hollywood","type":"work"}]}
            [{"op":"add","path":"name.middleName","value":"Jane"}]
              {"userName":"bjensen","name":{"familyName":"Jensen","givenName":"Barbara","middleName":"Jane"},"emails":[{"value":"bjensen@example.com","type":"work","primary":true},{"value":"babs@jensen.org","type":"home"}],"phoneNumbers":[{"value":"555-555-8377","type":"mobile"}],"addresses":[{"streetAddress":"100 Universal City Plaza","locality":"Hollywood","type":"work"}]}
            [{"op":"remove","path":"name.givenName"},{"op":"remove","path":"name.familyName"}]
              {"userName":"bjensen","emails":[{"value":"bjensen@example.com","type":"work","primary":true},{"value":"babs@jensen.org","type":"home"}],"phoneNumbers":[{"value":"555-555-8377","type":"mobile"}],"addresses":[{"streetAddress":"100 Universal City Plaza","locality":"Hollywood","type":"work"}]}
            [{"op":"replace","path":"urn:ietf:params:scim:schemas:core:2.0:User:userName","value":"babs"}]
              {"userName":"babs","name":{"familyName":"Jensen","givenName":"Barbara"},"emails":[{"value":"bjensen@example.com","type":"work","primary":true},{"value":"babs@jensen.org","type":"home"}],"phoneNumbers":[{"value":"555-555-8377","type":"mobile"}],"addresses":[{"streetAddress":"100 Universal City Plaza","locality":"Hollywood","type":"work"}]}"#]],
    );
}

#[test]
fn primary_moves_to_the_value_made_primary() {
    check(
        ResourceType::User,
        user(),
        &[
            json!([{"op": "add", "path": "emails", "value": [{"value": "new@x", "type": "other", "primary": true}]}]),
            json!([{"op": "replace", "path": "emails[type eq \"home\"].primary", "value": true}]),
            json!([{"op": "add", "path": "emails[type eq \"home\"]", "value": {"primary": "True"}}]),
            json!([{"op": "add", "path": "emails", "value": [{"value": "a@x", "primary": true}, {"value": "b@x", "primary": true}]}]),
        ],
        expect![[r#"
            [{"op":"add","path":"emails","value":[{"value":"new@x","type":"other","primary":true}]}]
              {"userName":"bjensen","name":{"familyName":"Jensen","givenName":"Barbara"},"emails":[{"value":"bjensen@example.com","type":"work","primary":false},{"value":"babs@jensen.org","type":"home"},{"value":"new@x","type":"other","primary":true}],"phoneNumbers":[{"value":"555-555-8377","type":"mobile"}],"addresses":[{"streetAddress":"100 Universal City Plaza","locality":"Hollywood","type":"work"}]}
            [{"op":"replace","path":"emails[type eq \"home\"].primary","value":true}]
              {"userName":"bjensen","name":{"familyName":"Jensen","givenName":"Barbara"},"emails":[{"value":"bjensen@example.com","type":"work","primary":false},{"value":"babs@jensen.org","type":"home","primary":true}],"phoneNumbers":[{"value":"555-555-8377","type":"mobile"}],"addresses":[{"streetAddress":"100 Universal City Plaza","locality":"Hollywood","type":"work"}]}
            [{"op":"add","path":"emails[type eq \"home\"]","value":{"primary":"True"}}]
              {"userName":"bjensen","name":{"familyName":"Jensen","givenName":"Barbara"},"emails":[{"value":"bjensen@example.com","type":"work","primary":false},{"value":"babs@jensen.org","type":"home","primary":true}],"phoneNumbers":[{"value":"555-555-8377","type":"mobile"}],"addresses":[{"streetAddress":"100 Universal City Plaza","locality":"Hollywood","type":"work"}]}
            [{"op":"add","path":"emails","value":[{"value":"a@x","primary":true},{"value":"b@x","primary":true}]}]
              400 invalidValue: Operations[0]: emails: 2 values are primary, and one at most may be"#]],
    );
}

#[test]
fn what_entra_id_sends() {
    let alex = stored(
        ResourceType::User,
        json!({"schemas": [USER_URN, ENTERPRISE_USER_URN], "userName": "AlexW@contoso.com", "active": true, "phoneNumbers": [{"type": "mobile", "value": "+1 555 0100"}]}),
    );
    check(
        ResourceType::User,
        alex,
        &[
            json!([{"op": "Replace", "path": "active", "value": "False"}]),
            json!([{"op": "Add", "path": "emails[type eq \"work\"].value", "value": "AlexW@contoso.com"}]),
            json!([{"op": "Replace", "path": "phoneNumbers[type eq \"mobile\"].value", "value": "+1 555 0199"}]),
            json!([{"op": "Add", "path": "addresses[type eq \"work\"].locality", "value": "Redmond"}, {"op": "Add", "path": "addresses[type eq \"work\"].postalCode", "value": "98052"}]),
            json!([{"op": "Replace", "value": {"name.givenName": "Alex", "name.familyName": "Wilber", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department": "Retail", "emails[type eq \"work\"].value": "alex@contoso.com", "active": "True", "roles": []}}]),
            json!([{"op": "Add", "path": "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager", "value": "26118915"}]),
            json!([{"op": "Replace", "path": "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber", "value": "1234"}, {"op": "Remove", "path": "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber"}]),
            json!([{"op": "Add", "path": "roles", "value": [{"primary": "True", "value": "Admin"}]}]),
            json!([{"op": "Replace", "path": "userName", "value": "AlexW@contoso.com"}]),
        ],
        expect![[r#"
            [{"op":"Replace","path":"active","value":"False"}]
              {"userName":"AlexW@contoso.com","active":false,"phoneNumbers":[{"value":"+1 555 0100","type":"mobile"}]}
            [{"op":"Add","path":"emails[type eq \"work\"].value","value":"AlexW@contoso.com"}]
              {"userName":"AlexW@contoso.com","active":true,"emails":[{"value":"AlexW@contoso.com","type":"work"}],"phoneNumbers":[{"value":"+1 555 0100","type":"mobile"}]}
            [{"op":"Replace","path":"phoneNumbers[type eq \"mobile\"].value","value":"+1 555 0199"}]
              {"userName":"AlexW@contoso.com","active":true,"phoneNumbers":[{"value":"+1 555 0199","type":"mobile"}]}
            [{"op":"Add","path":"addresses[type eq \"work\"].locality","value":"Redmond"},{"op":"Add","path":"addresses[type eq \"work\"].postalCode","value":"98052"}]
              {"userName":"AlexW@contoso.com","active":true,"phoneNumbers":[{"value":"+1 555 0100","type":"mobile"}],"addresses":[{"locality":"Redmond","postalCode":"98052","type":"work"}]}
            [{"op":"Replace","value":{"name.givenName":"Alex","name.familyName":"Wilber","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department":"Retail","emails[type eq \"work\"].value":"alex@contoso.com","active":"True","roles":[]}}]
              {"userName":"AlexW@contoso.com","name":{"familyName":"Wilber","givenName":"Alex"},"active":true,"emails":[{"value":"alex@contoso.com","type":"work"}],"phoneNumbers":[{"value":"+1 555 0100","type":"mobile"}],"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"department":"Retail"}}
                ignored: roles
            [{"op":"Add","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager","value":"26118915"}]
              {"userName":"AlexW@contoso.com","active":true,"phoneNumbers":[{"value":"+1 555 0100","type":"mobile"}],"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"manager":{"value":"26118915"}}}
            [{"op":"Replace","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber","value":"1234"},{"op":"Remove","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber"}]
              unchanged
            [{"op":"Add","path":"roles","value":[{"primary":"True","value":"Admin"}]}]
              unchanged
                ignored: roles
            [{"op":"Replace","path":"userName","value":"AlexW@contoso.com"}]
              unchanged"#]],
    );
    check(
        ResourceType::Group,
        group(),
        &[
            json!([{"op": "Remove", "path": "members", "value": [{"value": "2819c223"}]}]),
            json!([{"op": "Add", "path": "members", "value": [{"value": "2819c223"}, {"value": "08e1d05d"}]}]),
            json!([{"op": "Replace", "path": "displayName", "value": "Tour Leads"}]),
            json!([{"op": "Remove", "path": "members", "value": [{"value": "nobody"}]}]),
        ],
        expect![[r#"
            [{"op":"Remove","path":"members","value":[{"value":"2819c223"}]}]
              {"displayName":"Tour Guides","members":[{"value":"902c246b","type":"User","display":"Mandy Pepperidge"}]}
            [{"op":"Add","path":"members","value":[{"value":"2819c223"},{"value":"08e1d05d"}]}]
              {"displayName":"Tour Guides","members":[{"value":"2819c223","type":"User","display":"Babs Jensen"},{"value":"902c246b","type":"User","display":"Mandy Pepperidge"},{"value":"08e1d05d"}]}
            [{"op":"Replace","path":"displayName","value":"Tour Leads"}]
              {"displayName":"Tour Leads","members":[{"value":"2819c223","type":"User","display":"Babs Jensen"},{"value":"902c246b","type":"User","display":"Mandy Pepperidge"}]}
            [{"op":"Remove","path":"members","value":[{"value":"nobody"}]}]
              unchanged"#]],
    );
}

#[test]
fn what_okta_sends() {
    check(
        ResourceType::User,
        user(),
        &[json!([{"op": "replace", "value": {"active": false}}])],
        expect![[r#"
            [{"op":"replace","value":{"active":false}}]
              {"userName":"bjensen","name":{"familyName":"Jensen","givenName":"Barbara"},"active":false,"emails":[{"value":"bjensen@example.com","type":"work","primary":true},{"value":"babs@jensen.org","type":"home"}],"phoneNumbers":[{"value":"555-555-8377","type":"mobile"}],"addresses":[{"streetAddress":"100 Universal City Plaza","locality":"Hollywood","type":"work"}]}"#]],
    );
    check(
        ResourceType::Group,
        group(),
        &[
            json!([{"op": "replace", "value": {"id": "abf4dd94-a4c0-4f67-89c9-76b03340cb9b", "displayName": "Tour Leads"}}]),
            json!([{"op": "remove", "path": "members[value eq \"902c246b\"]"}]),
            json!([{"op": "add", "path": "members", "value": [{"value": "08e1d05d", "display": "james@example.com"}]}]),
        ],
        expect![[r#"
            [{"op":"replace","value":{"id":"abf4dd94-a4c0-4f67-89c9-76b03340cb9b","displayName":"Tour Leads"}}]
              {"displayName":"Tour Leads","members":[{"value":"2819c223","type":"User","display":"Babs Jensen"},{"value":"902c246b","type":"User","display":"Mandy Pepperidge"}]}
            [{"op":"remove","path":"members[value eq \"902c246b\"]"}]
              {"displayName":"Tour Guides","members":[{"value":"2819c223","type":"User","display":"Babs Jensen"}]}
            [{"op":"add","path":"members","value":[{"value":"08e1d05d","display":"james@example.com"}]}]
              {"displayName":"Tour Guides","members":[{"value":"2819c223","type":"User","display":"Babs Jensen"},{"value":"902c246b","type":"User","display":"Mandy Pepperidge"},{"value":"08e1d05d","display":"james@example.com"}]}"#]],
    );
}

#[test]
fn what_scim2_tester_sends() {
    check(
        ResourceType::User,
        stored(ResourceType::User, json!({"schemas": [USER_URN], "userName": "t"})),
        &[
            json!([{"op": "add", "path": ENTERPRISE_USER_URN, "value": {"schemas": [ENTERPRISE_USER_URN], "employeeNumber": "1", "manager": {"value": "m", "$ref": "http://h/v2/Users/m"}}}]),
            json!([{"op": "replace", "path": "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager", "value": {"value": "m", "$ref": "http://h/v2/Users/m"}}]),
            json!([{"op": "add", "path": "active", "value": true}, {"op": "remove", "path": "active"}]),
            json!([{"op": "remove", "path": ENTERPRISE_USER_URN}]),
        ],
        expect![[r#"
            [{"op":"add","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User","value":{"schemas":["urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],"employeeNumber":"1","manager":{"value":"m","$ref":"http://h/v2/Users/m"}}}]
              {"userName":"t","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"employeeNumber":"1","manager":{"value":"m","$ref":"http://h/v2/Users/m"}}}
            [{"op":"replace","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager","value":{"value":"m","$ref":"http://h/v2/Users/m"}}]
              {"userName":"t","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"manager":{"value":"m","$ref":"http://h/v2/Users/m"}}}
            [{"op":"add","path":"active","value":true},{"op":"remove","path":"active"}]
              unchanged
            [{"op":"remove","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"}]
              unchanged"#]],
    );
}

#[test]
fn refusals() {
    check(
        ResourceType::User,
        user(),
        &[
            json!([{"op": "move", "path": "title", "value": "x"}]),
            json!([{"path": "title", "value": "x"}]),
            json!([{"op": "remove"}]),
            json!([{"op": "add", "path": "title"}]),
            json!([{"op": "add", "path": 7, "value": "x"}]),
            json!([{"op": "add", "value": "not an object"}]),
            json!([{"op": "replace", "path": "id", "value": "x"}]),
            json!([{"op": "remove", "path": "meta.created"}]),
            json!([{"op": "add", "path": "groups", "value": [{"value": "g"}]}]),
            json!([{"op": "add", "path": "emails[type eq \"work\"", "value": "x"}]),
            json!([{"op": "add", "path": "emails[type eq \"work\"]x", "value": "x"}]),
            json!([{"op": "add", "path": "name[givenName eq \"x\"]", "value": "x"}]),
            json!([{"op": "add", "path": "emails[kind eq \"work\"]", "value": {"value": "x"}}]),
            json!([{"op": "replace", "path": "emails[value co \"nobody\"].display", "value": "x"}]),
            json!([{"op": "replace", "path": "emails[type eq \"other\" or type eq \"home\"].display", "value": "x"}, {"op": "replace", "path": "phoneNumbers[type eq \"pager\" or type eq \"fax\"].display", "value": "x"}]),
            json!([{"op": "add", "path": "name.givenName.first", "value": "x"}]),
            json!([{"op": "replace", "path": "userName", "value": ""}]),
            json!([{"op": "remove", "path": "userName"}]),
            json!([{"op": "add", "path": "emails", "value": [{"value": "x", "type": "weird"}]}]),
            json!([{"op": "add", "path": "title", "value": ["a list"]}]),
            json!([{"op": "replace", "path": "active", "value": "maybe"}]),
        ],
        expect![[r#"
            [{"op":"move","path":"title","value":"x"}]
              400 invalidSyntax: Operations[0].op: "move" is not add, replace or remove
            [{"path":"title","value":"x"}]
              400 invalidSyntax: Operations[0].op: must be add, replace or remove
            [{"op":"remove"}]
              400 noTarget: Operations[0]: remove needs a path
            [{"op":"add","path":"title"}]
              400 invalidValue: Operations[0]: add needs a value
            [{"op":"add","path":7,"value":"x"}]
              400 invalidPath: Operations[0].path: must be a string
            [{"op":"add","value":"not an object"}]
              400 invalidValue: Operations[0]: add without a path needs an object of attributes
            [{"op":"replace","path":"id","value":"x"}]
              400 mutability: Operations[0]: path "id": readOnly, a client cannot change it
            [{"op":"remove","path":"meta.created"}]
              400 mutability: Operations[0]: path "meta.created": readOnly, a client cannot change it
            [{"op":"add","path":"groups","value":[{"value":"g"}]}]
              400 mutability: Operations[0]: path "groups": readOnly, a client cannot change it
            [{"op":"add","path":"emails[type eq \"work\"","value":"x"}]
              400 invalidPath: Operations[0]: path "emails[type eq \"work\"": the "[" is not closed
            [{"op":"add","path":"emails[type eq \"work\"]x","value":"x"}]
              400 invalidPath: Operations[0]: path "emails[type eq \"work\"]x": "x" after "]" is not a sub-attribute
            [{"op":"add","path":"name[givenName eq \"x\"]","value":"x"}]
              400 invalidPath: Operations[0]: path "name[givenName eq \"x\"]": name is not a multi-valued complex attribute, so it takes no "[…]"
            [{"op":"add","path":"emails[kind eq \"work\"]","value":{"value":"x"}}]
              400 invalidPath: Operations[0]: path "emails[kind eq \"work\"]": filter: "kind" is not a sub-attribute of emails
            [{"op":"replace","path":"emails[value co \"nobody\"].display","value":"x"}]
              400 noTarget: Operations[0]: emails[value co "nobody"].display: no value matches
            [{"op":"replace","path":"emails[type eq \"other\" or type eq \"home\"].display","value":"x"},{"op":"replace","path":"phoneNumbers[type eq \"pager\" or type eq \"fax\"].display","value":"x"}]
              400 noTarget: Operations[1]: phoneNumbers[type eq "pager" or type eq "fax"].display: no value matches
            [{"op":"add","path":"name.givenName.first","value":"x"}]
              400 invalidPath: Operations[0]: path "name.givenName.first": "name.givenName.first" has more than one sub-attribute level
            [{"op":"replace","path":"userName","value":""}]
              400 invalidValue: userName is required
            [{"op":"remove","path":"userName"}]
              400 invalidValue: userName is required
            [{"op":"add","path":"emails","value":[{"value":"x","type":"weird"}]}]
              400 invalidValue: Operations[0]: emails[0].type: "weird" is not one of work, home, other
            [{"op":"add","path":"title","value":["a list"]}]
              400 invalidValue: Operations[0]: title: expected a string, found a list
            [{"op":"replace","path":"active","value":"maybe"}]
              400 invalidValue: Operations[0]: active: expected true or false, found a string"#]],
    );
    check(
        ResourceType::Group,
        group(),
        &[
            json!([{"op": "replace", "path": "members[value eq \"2819c223\"].value", "value": "someone-else"}]),
            json!([{"op": "replace", "path": "members[value eq \"2819c223\"]", "value": {"value": "someone-else"}}]),
            json!([{"op": "add", "path": "members", "value": [{"value": "2819c223", "type": "Group"}]}]),
            json!([{"op": "add", "path": "members", "value": [{"display": "no id"}]}]),
        ],
        expect![[r#"
            [{"op":"replace","path":"members[value eq \"2819c223\"].value","value":"someone-else"}]
              400 mutability: Operations[0]: members[value eq "2819c223"].value: immutable, and has a value
            [{"op":"replace","path":"members[value eq \"2819c223\"]","value":{"value":"someone-else"}}]
              400 mutability: Operations[0]: members[value eq "2819c223"]: members.value is immutable, and has a value
            [{"op":"add","path":"members","value":[{"value":"2819c223","type":"Group"}]}]
              400 mutability: Operations[0]: members: members.type is immutable, and has a value
            [{"op":"add","path":"members","value":[{"display":"no id"}]}]
              400 invalidValue: Operations[0]: members[0].value is required"#]],
    );
    let message = |body: Value| match apply_body(ResourceType::User, &user(), &body) {
        Ok(_) => "ok".to_string(),
        Err(e) => format!("{} {}: {}", e.status, e.scim_type.map(|t| t.as_str()).unwrap_or("-"), e.detail),
    };
    let out = [
        message(json!("not an object")),
        message(json!({"Operations": [{"op": "add", "path": "title", "value": "x"}]})),
        message(json!({"schemas": [PATCH_OP_URN]})),
        message(json!({"schemas": [PATCH_OP_URN], "Operations": []})),
        message(json!({"schemas": [PATCH_OP_URN], "operations": [{"OP": "ADD", "PATH": "title", "VALUE": "lower-case member names"}]})),
    ]
    .join("\n");
    expect![[r#"
        400 invalidSyntax: the body is not a JSON object
        400 invalidSyntax: schemas: must be a list holding "urn:ietf:params:scim:api:messages:2.0:PatchOp"
        400 invalidSyntax: Operations: must be a list of operations
        400 invalidSyntax: Operations: is empty
        ok"#]]
    .assert_eq(&out);
}

#[test]
fn bounds_at_the_limit_pass_and_one_over_fails() {
    let outcome = |body: Value| match apply_body(ResourceType::User, &user(), &body) {
        Ok(_) => "ok".to_string(),
        Err(e) => e.detail,
    };
    let operations = |n: usize| json!({"schemas": [PATCH_OP_URN], "Operations": vec![json!({"op": "add", "path": "title", "value": "x"}); n]});
    let path = |len: usize| {
        let head = "emails[value eq \"";
        let tail = "\"].display";
        json!({"schemas": [PATCH_OP_URN], "Operations": [{"op": "remove", "path": format!("{head}{}{tail}", "v".repeat(len - head.len() - tail.len()))}]})
    };
    let out = [
        ("operations at the limit", outcome(operations(MAX_PATCH_OPERATIONS))),
        ("operations one over", outcome(operations(MAX_PATCH_OPERATIONS + 1))),
        ("a path at the limit", outcome(path(MAX_PATH_BYTES))),
        ("a path one over", outcome(path(MAX_PATH_BYTES + 1))),
    ]
    .map(|(what, result)| format!("{what}: {result}"))
    .join("\n");
    expect![[r#"
        operations at the limit: ok
        operations one over: Operations: 1001 operations, over the limit 1000
        a path at the limit: ok
        a path one over: Operations[0]: path "emails[value eq \"vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv"…: 4097 bytes, over the limit 4096"#]]
    .assert_eq(&out);
}

#[test]
fn ten_thousand_members_in_and_out() {
    use crate::limits::MAX_MEMBERS;
    let half = MAX_MEMBERS / 2;
    let members = |range: std::ops::Range<usize>| range.map(|i| json!({"value": format!("u-{i}")})).collect::<Vec<_>>();
    let group = stored(ResourceType::Group, json!({"schemas": [GROUP_URN], "displayName": "All", "members": members(0..half)}));
    // Half already there, half new: the members come out once each.
    let body = json!({"schemas": [PATCH_OP_URN], "Operations": [{"op": "add", "path": "members", "value": members(0..MAX_MEMBERS)}]});
    let grown = apply_body(ResourceType::Group, &group, &body).expect("fits").document;
    assert_eq!(crate::resource::member_ids(&grown).count(), MAX_MEMBERS);
    let body = json!({"schemas": [PATCH_OP_URN], "Operations": [{"op": "add", "path": "members", "value": [{"value": "one-too-many"}]}]});
    let refused = apply_body(ResourceType::Group, &grown, &body).expect_err("over the limit");
    assert_eq!(refused.detail, "members: 10001 values, over the limit 10000");
    let body = json!({"schemas": [PATCH_OP_URN], "Operations": [
        {"op": "remove", "path": "members", "value": members(0..half)},
        {"op": "remove", "path": "members[value sw \"u-9\"]"}
    ]});
    let shrunk = apply_body(ResourceType::Group, &grown, &body).expect("fits").document;
    assert_eq!(crate::resource::member_ids(&shrunk).count(), half - (9000..10000).len());
}

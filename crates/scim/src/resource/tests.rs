//! Bodies to stored documents, stored documents to responses: one line per
//! case, the document (or the refusal) as an inline snapshot.

use expect_test::{Expect, expect};
use serde_json::{Value, json};

use super::{
    Projection, ResourceMeta, check_if_match, etag_matches, is_active, member_ids, normalize_create, normalize_replace, render, unique_key,
    version_of, with_groups,
};
use crate::limits::{MAX_MEMBERS, MAX_STRING_BYTES, MAX_USER_BYTES, MAX_VALUES};
use crate::schema::{ENTERPRISE_USER_URN, GROUP_URN, ResourceType, USER_URN};

fn created(resource_type: ResourceType, body: &Value) -> String {
    match normalize_create(resource_type, body) {
        Ok(n) if n.ignored.is_empty() => n.document.to_string(),
        Ok(n) => format!("{}\n  ignored: {}", n.document, n.ignored.join(", ")),
        Err(e) => format!("{} {}: {}", e.status, e.scim_type.map(|t| t.as_str()).unwrap_or("-"), e.detail),
    }
}

fn check(resource_type: ResourceType, bodies: &[Value], expect: Expect) {
    let out: Vec<String> = bodies.iter().map(|b| created(resource_type, b)).collect();
    expect.assert_eq(&out.join("\n"));
}

#[test]
fn users_as_clients_send_them() {
    check(
        ResourceType::User,
        &[
            json!({"schemas": [USER_URN], "userName": "bjensen"}),
            // RFC 7643 §8.2, abridged: readOnly id, meta and groups dropped;
            // what lattice does not keep reported.
            json!({
                "schemas": [USER_URN, ENTERPRISE_USER_URN],
                "id": "2819c223-7f76-453a-919d-413861904646",
                "externalId": "701984",
                "userName": "bjensen@example.com",
                "name": {"formatted": "Ms. Barbara J Jensen, III", "familyName": "Jensen", "givenName": "Barbara", "middleName": "Jane", "honorificPrefix": "Ms.", "honorificSuffix": "III"},
                "displayName": "Babs Jensen",
                "nickName": "Babs",
                "profileUrl": "https://login.example.com/bjensen",
                "emails": [{"value": "bjensen@example.com", "type": "work", "primary": true}, {"value": "babs@jensen.org", "type": "home"}],
                "addresses": [{"type": "work", "streetAddress": "100 Universal City Plaza", "locality": "Hollywood", "region": "CA", "postalCode": "91608", "country": "USA", "formatted": "100 Universal City Plaza\nHollywood, CA 91608 USA", "primary": true}],
                "phoneNumbers": [{"value": "555-555-5555", "type": "work"}, {"value": "555-555-4444", "type": "mobile"}],
                "ims": [{"value": "someaimhandle", "type": "aim"}],
                "photos": [{"value": "https://photos.example.com/profilephoto/72930000000Ccne/F", "type": "photo"}],
                "userType": "Employee",
                "title": "Tour Guide",
                "preferredLanguage": "en-US",
                "locale": "en-US",
                "timezone": "America/Los_Angeles",
                "active": true,
                "password": "t1meMa$heen",
                "groups": [{"value": "e9e30dba-f08f-4109-8486-d5c6a331660a", "$ref": "https://example.com/v2/Groups/e9e30dba", "display": "Tour Guides"}],
                "x509Certificates": [{"value": "MIIDQzCCAqygAwIBAgICEAAwDQYJKoZIhvcNAQEFBQAwTjELMAkGA1UEBhMCVVMx"}],
                "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": {
                    "employeeNumber": "701984", "costCenter": "4130", "organization": "Universal Studios", "division": "Theme Park", "department": "Tour Operations",
                    "manager": {"value": "26118915-6090-4610-87e4-49d8ca9f808d", "$ref": "../Users/26118915-6090-4610-87e4-49d8ca9f808d", "displayName": "John Smith"}
                },
                "meta": {"resourceType": "User", "created": "2010-01-23T04:56:22Z", "version": "W/\"3694e05e9dff591\""}
            }),
            // Entra ID's create: `meta.resourceType` and an extension with the
            // manager as a bare id.
            json!({
                "active": true, "displayName": "Alex Wilber", "emails": [{"primary": true, "type": "work", "value": "AlexW@contoso.com"}],
                "externalId": "alexw", "meta": {"resourceType": "User"}, "name": {"formatted": "Alex Wilber", "familyName": "Wilber", "givenName": "Alex"},
                "schemas": [USER_URN, ENTERPRISE_USER_URN], "userName": "AlexW@contoso.onmicrosoft.com", "title": "Marketing Assistant", "preferredLanguage": "en-US",
                "phoneNumbers": [{"type": "work", "value": "+1 858 555 0110"}, {"type": "mobile", "value": "+1 858 555 0111"}, {"type": "fax", "value": "+1 858 555 0112"}],
                "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": {"department": "Marketing", "employeeNumber": "1234", "manager": "26118915"}
            }),
            // Okta's create: `groups` (readOnly) and `password` (not kept).
            json!({
                "schemas": [USER_URN], "userName": "isaac.brock@example.com", "name": {"givenName": "Isaac", "familyName": "Brock"},
                "emails": [{"primary": true, "value": "isaac.brock@example.com", "type": "work"}], "displayName": "Isaac Brock", "locale": "en-US",
                "externalId": "00ujl29u0le5T6Aj10h7", "groups": [], "password": "1mz050nq", "active": true
            }),
            // Names in any case come out canonical; "Work" in its declared
            // spelling; a boolean written as a string read as one.
            json!({"SCHEMAS": [USER_URN.to_uppercase()], "USERNAME": "x", "Name": {"GIVENNAME": "y"}, "Emails": [{"Value": "a@b.c", "TYPE": "Work", "Primary": "True"}], "ACTIVE": "false"}),
            // A qualified name, an unknown extension, a single value where a list is due.
            json!({"schemas": [USER_URN], "urn:ietf:params:scim:schemas:core:2.0:User:userName": "q", "emails": {"value": "one@b.c"}, "urn:ietf:params:scim:schemas:extension:acme:2.0:User": {"badge": "7"}, "emails2": 1}),
            // Unassigned values (null, [], {}) are not stored.
            json!({"schemas": [USER_URN], "userName": "n", "nickName": null, "emails": [], "name": {}, "phoneNumbers": [{}], "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": {}}),
        ],
        expect![[r#"
            {"userName":"bjensen"}
            {"externalId":"701984","userName":"bjensen@example.com","name":{"formatted":"Ms. Barbara J Jensen, III","familyName":"Jensen","givenName":"Barbara","middleName":"Jane","honorificPrefix":"Ms.","honorificSuffix":"III"},"displayName":"Babs Jensen","nickName":"Babs","profileUrl":"https://login.example.com/bjensen","title":"Tour Guide","userType":"Employee","preferredLanguage":"en-US","locale":"en-US","timezone":"America/Los_Angeles","active":true,"emails":[{"value":"bjensen@example.com","type":"work","primary":true},{"value":"babs@jensen.org","type":"home"}],"phoneNumbers":[{"value":"555-555-5555","type":"work"},{"value":"555-555-4444","type":"mobile"}],"addresses":[{"formatted":"100 Universal City Plaza\nHollywood, CA 91608 USA","streetAddress":"100 Universal City Plaza","locality":"Hollywood","region":"CA","postalCode":"91608","country":"USA","type":"work","primary":true}],"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"employeeNumber":"701984","costCenter":"4130","organization":"Universal Studios","division":"Theme Park","department":"Tour Operations","manager":{"value":"26118915-6090-4610-87e4-49d8ca9f808d","$ref":"../Users/26118915-6090-4610-87e4-49d8ca9f808d","displayName":"John Smith"}}}
              ignored: ims, photos, password, x509Certificates
            {"externalId":"alexw","userName":"AlexW@contoso.onmicrosoft.com","name":{"formatted":"Alex Wilber","familyName":"Wilber","givenName":"Alex"},"displayName":"Alex Wilber","title":"Marketing Assistant","preferredLanguage":"en-US","active":true,"emails":[{"value":"AlexW@contoso.com","type":"work","primary":true}],"phoneNumbers":[{"value":"+1 858 555 0110","type":"work"},{"value":"+1 858 555 0111","type":"mobile"},{"value":"+1 858 555 0112","type":"fax"}],"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"employeeNumber":"1234","department":"Marketing","manager":{"value":"26118915"}}}
            {"externalId":"00ujl29u0le5T6Aj10h7","userName":"isaac.brock@example.com","name":{"familyName":"Brock","givenName":"Isaac"},"displayName":"Isaac Brock","locale":"en-US","active":true,"emails":[{"value":"isaac.brock@example.com","type":"work","primary":true}]}
              ignored: password
            {"userName":"x","name":{"givenName":"y"},"active":false,"emails":[{"value":"a@b.c","type":"work","primary":true}]}
            {"userName":"q","emails":[{"value":"one@b.c"}]}
              ignored: urn:ietf:params:scim:schemas:extension:acme:2.0:User, emails2
            {"userName":"n"}"#]],
    );
}

#[test]
fn groups_as_clients_send_them() {
    check(
        ResourceType::Group,
        &[
            json!({"schemas": [GROUP_URN], "displayName": "Tour Guides"}),
            json!({
                "schemas": [GROUP_URN], "displayName": "Tour Guides", "externalId": "okta-00g1",
                "members": [{"value": "2819c223", "$ref": "https://example.com/v2/Users/2819c223", "display": "Babs Jensen", "type": "user"}, {"value": "902c246b", "type": "Group"}]
            }),
            json!({"schemas": [GROUP_URN], "displayName": "Tour Guides", "members": [{"display": "who?"}]}),
            json!({"schemas": [GROUP_URN], "displayName": "Tour Guides", "members": [{"value": "u1", "type": "Robot"}]}),
            json!({"schemas": [GROUP_URN]}),
            json!({"schemas": [USER_URN], "displayName": "Tour Guides"}),
        ],
        expect![[r#"
            {"displayName":"Tour Guides"}
            {"externalId":"okta-00g1","displayName":"Tour Guides","members":[{"value":"2819c223","$ref":"https://example.com/v2/Users/2819c223","type":"User","display":"Babs Jensen"},{"value":"902c246b","type":"Group"}]}
            400 invalidValue: members[0].value is required
            400 invalidValue: members[0].type: "Robot" is not one of User, Group
            400 invalidValue: displayName is required
            400 invalidSyntax: schemas: must be a list holding "urn:ietf:params:scim:schemas:core:2.0:Group""#]],
    );
}

#[test]
fn refusals() {
    check(
        ResourceType::User,
        &[
            json!(["not", "an", "object"]),
            json!({"userName": "no schemas"}),
            json!({"schemas": "urn:ietf:params:scim:schemas:core:2.0:User", "userName": "x"}),
            json!({"schemas": [GROUP_URN], "userName": "x"}),
            json!({"schemas": [USER_URN]}),
            json!({"schemas": [USER_URN], "userName": ""}),
            json!({"schemas": [USER_URN], "userName": 42}),
            json!({"schemas": [USER_URN], "userName": "x", "username": "y"}),
            json!({"schemas": [USER_URN], "userName": "x", "emails": [{"value": "a@b", "primary": true}, {"value": "c@d", "primary": true}]}),
            json!({"schemas": [USER_URN], "userName": "x", "emails": [{"value": "a@b", "type": "weird"}]}),
            json!({"schemas": [USER_URN], "userName": "x", "active": "yes"}),
            json!({"schemas": [USER_URN], "userName": "x", "name": "Barbara Jensen"}),
            json!({"schemas": [USER_URN], "userName": "x", "emails": ["a@b"]}),
            json!({"schemas": [USER_URN], "userName": "x", "emails": [["a@b"]]}),
            json!({"schemas": [USER_URN], "userName": "x", "name": {"givenName": "a", "GivenName": "b"}}),
            json!({"schemas": [USER_URN], "userName": "x", ENTERPRISE_USER_URN: "Sales"}),
            json!({"schemas": [USER_URN], "userName": "x", ENTERPRISE_USER_URN: {"department": ["Sales"]}}),
        ],
        expect![[r#"
            400 invalidSyntax: the body is not a JSON object
            400 invalidSyntax: schemas: must be a list holding "urn:ietf:params:scim:schemas:core:2.0:User"
            400 invalidSyntax: schemas: must be a list holding "urn:ietf:params:scim:schemas:core:2.0:User"
            400 invalidSyntax: schemas: must be a list holding "urn:ietf:params:scim:schemas:core:2.0:User"
            400 invalidValue: userName is required
            400 invalidValue: userName is required
            400 invalidValue: userName: expected a string, found a number
            400 invalidSyntax: userName is given twice
            400 invalidValue: emails: 2 values are primary, and one at most may be
            400 invalidValue: emails[0].type: "weird" is not one of work, home, other
            400 invalidValue: active: expected true or false, found a string
            400 invalidValue: name: expected an object of formatted, familyName, givenName, middleName, honorificPrefix, honorificSuffix
            {"userName":"x","emails":[{"value":"a@b"}]}
            400 invalidValue: emails[0]: expected an object of value, display, type, primary
            400 invalidSyntax: name.givenName is given twice
            400 invalidValue: urn:ietf:params:scim:schemas:extension:enterprise:2.0:User: expected an object
            400 invalidValue: urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department: expected a string, found a list"#]],
    );
}

#[test]
fn bounds_at_the_limit_pass_and_one_over_fails() {
    let outcome = |resource_type, body: &Value| match normalize_create(resource_type, body) {
        Ok(_) => "ok".to_string(),
        Err(e) => e.detail,
    };
    let user = |extra: Value| {
        let mut body = json!({"schemas": [USER_URN], "userName": "x"});
        if let Some(fields) = body.as_object_mut() {
            fields.extend(extra.as_object().cloned().unwrap_or_default());
        }
        body
    };
    let emails = |n: usize| json!({"emails": (0..n).map(|i| json!({"value": format!("{i}@x")})).collect::<Vec<_>>()});
    let members = |n: usize| json!({"schemas": [GROUP_URN], "displayName": "g", "members": (0..n).map(|i| json!({"value": i.to_string()})).collect::<Vec<_>>()});
    // A document of exactly MAX_USER_BYTES: 40 long emails and one more
    // whose length lands the whole on the limit.
    let sized = |last: usize| {
        let mut list: Vec<Value> = (0..40).map(|_| json!({"value": "e".repeat(1600)})).collect();
        list.push(json!({"value": "e".repeat(last)}));
        user(json!({"emails": list}))
    };
    let base = serde_json::to_vec(&normalize_create(ResourceType::User, &sized(0)).expect("fits").document).map(|b| b.len()).unwrap_or(0);
    let fill = MAX_USER_BYTES - base;
    let out = [
        ("a string at the limit", outcome(ResourceType::User, &user(json!({"title": "t".repeat(MAX_STRING_BYTES)})))),
        ("a string one over", outcome(ResourceType::User, &user(json!({"title": "t".repeat(MAX_STRING_BYTES + 1)})))),
        ("emails at the limit", outcome(ResourceType::User, &user(emails(MAX_VALUES)))),
        ("emails one over", outcome(ResourceType::User, &user(emails(MAX_VALUES + 1)))),
        ("members at the limit", outcome(ResourceType::Group, &members(MAX_MEMBERS))),
        ("members one over", outcome(ResourceType::Group, &members(MAX_MEMBERS + 1))),
        ("a user at the limit", outcome(ResourceType::User, &sized(fill))),
        ("a user one over", outcome(ResourceType::User, &sized(fill + 1))),
    ]
    .map(|(what, result)| format!("{what}: {result}"))
    .join("\n");
    expect![[r#"
        a string at the limit: ok
        a string one over: title: 2049 bytes, over the limit 2048
        emails at the limit: ok
        emails one over: emails: 65 values, over the limit 64
        members at the limit: ok
        members one over: members: 10001 values, over the limit 10000
        a user at the limit: ok
        a user one over: the User is 65537 bytes, over the limit 65536"#]]
    .assert_eq(&out);
}

#[test]
fn a_put_replaces_what_it_omits() {
    let existing = normalize_create(ResourceType::User, &json!({"schemas": [USER_URN], "userName": "b", "title": "Guide", "nickName": "Babs"}))
        .expect("ok")
        .document;
    let replaced =
        normalize_replace(ResourceType::User, &json!({"schemas": [USER_URN], "userName": "b", "title": "Manager", "id": "ignored"}), &existing)
            .expect("ok");
    expect![[r#"{"userName":"b","title":"Manager"}"#]].assert_eq(&replaced.document.to_string());
}

fn rendered(resource_type: ResourceType, document: &Value, attributes: Option<&str>, excluded: Option<&str>) -> String {
    let meta =
        ResourceMeta { id: "u-1", created_ms: 1_700_000_000_000, last_modified_ms: 1_700_000_123_456, base_url: "https://lattice.example/scim/v2/" };
    match Projection::parse(resource_type, attributes, excluded) {
        Ok(projection) => render(resource_type, document, &meta, &projection).to_string(),
        Err(e) => format!("{} {}: {}", e.status, e.scim_type.map(|t| t.as_str()).unwrap_or("-"), e.detail),
    }
}

#[test]
fn renders_with_meta_and_the_projection_asked_for() {
    let user = normalize_create(
        ResourceType::User,
        &json!({
            "schemas": [USER_URN, ENTERPRISE_USER_URN], "externalId": "e-1", "userName": "bjensen",
            "name": {"givenName": "Barbara", "familyName": "Jensen"},
            "emails": [{"value": "b@x", "type": "work", "primary": true}, {"value": "babs@y", "type": "home"}],
            ENTERPRISE_USER_URN: {"department": "Tours", "manager": {"value": "m-1"}}
        }),
    )
    .expect("ok")
    .document;
    let user = with_groups(&user, "https://lattice.example/scim/v2", [("g-1", "Tour Guides")]);
    let cases: [(Option<&str>, Option<&str>); 12] = [
        (None, None),
        (Some("userName"), None),
        (Some("USERNAME, name.givenName,emails.value"), None),
        (Some("id,meta"), None),
        (Some("urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department"), None),
        (Some(ENTERPRISE_USER_URN), None),
        (Some("password,ims"), None),
        (None, Some("name,emails.type,groups,meta")),
        (None, Some("id,schemas,urn:ietf:params:scim:schemas:extension:enterprise:2.0:User")),
        (Some("userName"), Some("name")),
        (Some("name.givenName.x"), None),
        (Some(&"a,".repeat(65)), None),
    ];
    let out: Vec<String> =
        cases.iter().map(|(a, e)| format!("attributes={a:?} excludedAttributes={e:?}\n  {}", rendered(ResourceType::User, &user, *a, *e))).collect();
    expect![[r#"
        attributes=None excludedAttributes=None
          {"schemas":["urn:ietf:params:scim:schemas:core:2.0:User","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],"id":"u-1","externalId":"e-1","meta":{"resourceType":"User","created":"2023-11-14T22:13:20.000Z","lastModified":"2023-11-14T22:15:23.456Z","location":"https://lattice.example/scim/v2/Users/u-1","version":"W/\"21cc9adbee749d32\""},"userName":"bjensen","name":{"familyName":"Jensen","givenName":"Barbara"},"emails":[{"value":"b@x","type":"work","primary":true},{"value":"babs@y","type":"home"}],"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"department":"Tours","manager":{"value":"m-1"}},"groups":[{"value":"g-1","$ref":"https://lattice.example/scim/v2/Groups/g-1","display":"Tour Guides","type":"direct"}]}
        attributes=Some("userName") excludedAttributes=None
          {"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"id":"u-1","userName":"bjensen"}
        attributes=Some("USERNAME, name.givenName,emails.value") excludedAttributes=None
          {"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"id":"u-1","userName":"bjensen","name":{"givenName":"Barbara"},"emails":[{"value":"b@x"},{"value":"babs@y"}]}
        attributes=Some("id,meta") excludedAttributes=None
          {"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"id":"u-1","meta":{"resourceType":"User","created":"2023-11-14T22:13:20.000Z","lastModified":"2023-11-14T22:15:23.456Z","location":"https://lattice.example/scim/v2/Users/u-1","version":"W/\"21cc9adbee749d32\""}}
        attributes=Some("urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department") excludedAttributes=None
          {"schemas":["urn:ietf:params:scim:schemas:core:2.0:User","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],"id":"u-1","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"department":"Tours"}}
        attributes=Some("urn:ietf:params:scim:schemas:extension:enterprise:2.0:User") excludedAttributes=None
          {"schemas":["urn:ietf:params:scim:schemas:core:2.0:User","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],"id":"u-1","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"department":"Tours","manager":{"value":"m-1"}}}
        attributes=Some("password,ims") excludedAttributes=None
          {"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"id":"u-1"}
        attributes=None excludedAttributes=Some("name,emails.type,groups,meta")
          {"schemas":["urn:ietf:params:scim:schemas:core:2.0:User","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],"id":"u-1","externalId":"e-1","userName":"bjensen","emails":[{"value":"b@x","primary":true},{"value":"babs@y"}],"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"department":"Tours","manager":{"value":"m-1"}}}
        attributes=None excludedAttributes=Some("id,schemas,urn:ietf:params:scim:schemas:extension:enterprise:2.0:User")
          {"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"id":"u-1","externalId":"e-1","meta":{"resourceType":"User","created":"2023-11-14T22:13:20.000Z","lastModified":"2023-11-14T22:15:23.456Z","location":"https://lattice.example/scim/v2/Users/u-1","version":"W/\"21cc9adbee749d32\""},"userName":"bjensen","name":{"familyName":"Jensen","givenName":"Barbara"},"emails":[{"value":"b@x","type":"work","primary":true},{"value":"babs@y","type":"home"}],"groups":[{"value":"g-1","$ref":"https://lattice.example/scim/v2/Groups/g-1","display":"Tour Guides","type":"direct"}]}
        attributes=Some("userName") excludedAttributes=Some("name")
          400 invalidValue: attributes and excludedAttributes are mutually exclusive
        attributes=Some("name.givenName.x") excludedAttributes=None
          400 invalidValue: attributes: "name.givenName.x" has more than one sub-attribute level
        attributes=Some("a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,") excludedAttributes=None
          400 invalidValue: attributes: 65 paths, over the limit 64"#]].assert_eq(&out.join("\n"));
}

#[test]
fn versions_follow_the_content() {
    let a = json!({"userName": "a"});
    let b = json!({"userName": "b"});
    let version = version_of(&a);
    assert_eq!(version, version_of(&json!({"userName": "a"})));
    assert_ne!(version, version_of(&b));
    let opaque = version.trim_start_matches("W/");
    let cases =
        [("*", true), (version.as_str(), true), (opaque, true), (&format!("W/\"other\", {version}"), true), ("W/\"other\"", false), ("", false)];
    for (header, want) in cases {
        assert_eq!(etag_matches(header, &version), want, "{header:?}");
    }
    assert_eq!(check_if_match(None, &version), Ok(()));
    assert_eq!(check_if_match(Some(&version), &version), Ok(()));
    expect![[r#"{"schemas":["urn:ietf:params:scim:api:messages:2.0:Error"],"status":"412","detail":"If-Match does not match the current version W/\"5192078d3ed4c684\""}"#]].assert_eq(&check_if_match(Some("W/\"stale\""), &version).expect_err("412").to_json().to_string().replace(&version, "<version>"));
}

#[test]
fn readings_a_route_needs() {
    let user = json!({"userName": "BJensen@Example.COM", "active": false});
    assert_eq!(unique_key(ResourceType::User, &user).as_deref(), Some("bjensen@example.com"));
    assert_eq!(unique_key(ResourceType::Group, &json!({"displayName": "G"})), None);
    assert!(!is_active(&user));
    assert!(is_active(&json!({"userName": "x"})));
    let group = json!({"displayName": "G", "members": [{"value": "u-1"}, {"value": "g-2", "type": "Group"}]});
    assert_eq!(member_ids(&group).collect::<Vec<_>>(), ["u-1", "g-2"]);
    assert_eq!(with_groups(&json!({"userName": "x", "groups": [1]}), "https://h/scim/v2", []), json!({"userName": "x"}));
}

#[test]
fn projection_bounds_at_the_limit_pass_and_one_over_fails() {
    use crate::limits::{MAX_PARAMETER_BYTES, MAX_PROJECTION_PATHS};
    let outcome = |attributes: &str| match Projection::parse(ResourceType::User, Some(attributes), None) {
        Ok(_) => "ok".to_string(),
        Err(e) => e.detail,
    };
    let paths = |n: usize| vec!["title"; n].join(",");
    let bytes = |n: usize| format!("title{}", " ".repeat(n - "title".len()));
    let out = [
        ("paths at the limit", outcome(&paths(MAX_PROJECTION_PATHS))),
        ("paths one over", outcome(&paths(MAX_PROJECTION_PATHS + 1))),
        ("bytes at the limit", outcome(&bytes(MAX_PARAMETER_BYTES))),
        ("bytes one over", outcome(&bytes(MAX_PARAMETER_BYTES + 1))),
    ]
    .map(|(what, result)| format!("{what}: {result}"))
    .join("\n");
    expect![[r#"
        paths at the limit: ok
        paths one over: attributes: 65 paths, over the limit 64
        bytes at the limit: ok
        bytes one over: attributes: 4097 bytes, over the limit 4096"#]]
    .assert_eq(&out);
}

#[test]
fn the_report_of_ignored_names_is_cut() {
    let mut body = json!({"schemas": [USER_URN], "userName": "x"});
    if let Some(fields) = body.as_object_mut() {
        fields.extend((0..40).map(|i| (format!("junk{i}"), json!(i))));
    }
    let ignored = normalize_create(ResourceType::User, &body).expect("ok").ignored;
    assert_eq!(ignored.len(), 33);
    assert_eq!(ignored.first().map(String::as_str), Some("junk0"));
    assert_eq!(ignored.last().map(String::as_str), Some("and 8 more"));
}

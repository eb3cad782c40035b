//! The grammar at its boundary: one line per filter, the tree it parses to
//! (or the refusal), as inline snapshots; then evaluation over one user.

use expect_test::{Expect, expect};
use serde_json::json;

use super::Filter;
use crate::limits::{MAX_FILTER_BYTES, MAX_FILTER_DEPTH, MAX_FILTER_TERMS};
use crate::schema::ResourceType;

fn parsed(resource_type: ResourceType, text: &str) -> String {
    match Filter::parse(resource_type, text) {
        Ok(filter) => {
            // What Display writes parses back to the same tree.
            let again = Filter::parse(resource_type, &filter.to_string()).expect("the canonical form parses");
            assert_eq!(again, filter, "{filter}");
            format!("{filter:?}  =  {filter}")
        }
        Err(e) => format!("{} {}: {}", e.status, e.scim_type.map(|t| t.as_str()).unwrap_or("-"), e.detail),
    }
}

fn check_users(cases: &[&str], expect: Expect) {
    let out: Vec<String> = cases.iter().map(|text| format!("{text}\n  {}", parsed(ResourceType::User, text))).collect();
    expect.assert_eq(&out.join("\n"));
}

#[test]
fn rfc_7644_examples() {
    check_users(
        &[
            r#"userName Eq "john""#,
            r#"name.familyName co "O'Malley""#,
            r#"userName sw "J""#,
            r#"urn:ietf:params:scim:schemas:core:2.0:User:userName sw "J""#,
            r#"title pr"#,
            r#"meta.lastModified gt "2011-05-13T04:42:34Z""#,
            r#"meta.lastModified ge "2011-05-13T04:42:34Z""#,
            r#"meta.lastModified lt "2011-05-13T04:42:34Z""#,
            r#"meta.lastModified le "2011-05-13T04:42:34Z""#,
            r#"title pr and userType eq "Employee""#,
            r#"title pr or userType eq "Intern""#,
            r#"schemas eq "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User""#,
            r#"userType eq "Employee" and (emails co "example.com" or emails.value co "example.org")"#,
            r#"userType ne "Employee" and not (emails co "example.com" or emails.value co "example.org")"#,
            r#"userType eq "Employee" and (emails.type eq "work")"#,
            r#"userType eq "Employee" and emails[type eq "work" and value co "@example.com"]"#,
            r#"emails[type eq "work" and value co "@example.com"] or ims[type eq "xmpp" and value co "@foo.com"]"#,
        ],
        expect![[r#"
            userName Eq "john"
              (eq userName "john")  =  userName eq "john"
            name.familyName co "O'Malley"
              (co name.familyName "O'Malley")  =  name.familyName co "O'Malley"
            userName sw "J"
              (sw userName "J")  =  userName sw "J"
            urn:ietf:params:scim:schemas:core:2.0:User:userName sw "J"
              (sw userName "J")  =  userName sw "J"
            title pr
              (pr title)  =  title pr
            meta.lastModified gt "2011-05-13T04:42:34Z"
              (gt meta.lastModified "2011-05-13T04:42:34Z")  =  meta.lastModified gt "2011-05-13T04:42:34Z"
            meta.lastModified ge "2011-05-13T04:42:34Z"
              (ge meta.lastModified "2011-05-13T04:42:34Z")  =  meta.lastModified ge "2011-05-13T04:42:34Z"
            meta.lastModified lt "2011-05-13T04:42:34Z"
              (lt meta.lastModified "2011-05-13T04:42:34Z")  =  meta.lastModified lt "2011-05-13T04:42:34Z"
            meta.lastModified le "2011-05-13T04:42:34Z"
              (le meta.lastModified "2011-05-13T04:42:34Z")  =  meta.lastModified le "2011-05-13T04:42:34Z"
            title pr and userType eq "Employee"
              (and (pr title) (eq userType "Employee"))  =  title pr and userType eq "Employee"
            title pr or userType eq "Intern"
              (or (pr title) (eq userType "Intern"))  =  title pr or userType eq "Intern"
            schemas eq "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
              (eq schemas "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User")  =  schemas eq "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
            userType eq "Employee" and (emails co "example.com" or emails.value co "example.org")
              (and (eq userType "Employee") (or (co emails.value "example.com") (co emails.value "example.org")))  =  userType eq "Employee" and (emails.value co "example.com" or emails.value co "example.org")
            userType ne "Employee" and not (emails co "example.com" or emails.value co "example.org")
              (and (ne userType "Employee") (not (or (co emails.value "example.com") (co emails.value "example.org"))))  =  userType ne "Employee" and not (emails.value co "example.com" or emails.value co "example.org")
            userType eq "Employee" and (emails.type eq "work")
              (and (eq userType "Employee") (eq emails.type "work"))  =  userType eq "Employee" and emails.type eq "work"
            userType eq "Employee" and emails[type eq "work" and value co "@example.com"]
              (and (eq userType "Employee") (each emails (and (eq type "work") (co value "@example.com"))))  =  userType eq "Employee" and emails[type eq "work" and value co "@example.com"]
            emails[type eq "work" and value co "@example.com"] or ims[type eq "xmpp" and value co "@foo.com"]
              400 invalidFilter: filter: "ims" is not an attribute lattice keeps"#]],
    );
}

#[test]
fn precedence_and_case() {
    check_users(
        &[
            r#"title pr or userType eq "a" and nickName eq "b""#,
            r#"(title pr or userType eq "a") and nickName eq "b""#,
            r#"title pr and userType eq "a" or nickName eq "b" and locale pr"#,
            r#"not (title pr) and not(locale pr)"#,
            r#"not (not (title pr or locale pr))"#,
            r#"((((title pr))))"#,
            r#"USERNAME EQ "Bjensen" AND Emails[TYPE Eq "work"]"#,
            r#"Name.GivenName sw "b" OR name.FAMILYNAME ew "n""#,
            "userName\teq\n\"x\"",
        ],
        expect![[r#"
            title pr or userType eq "a" and nickName eq "b"
              (or (pr title) (and (eq userType "a") (eq nickName "b")))  =  title pr or userType eq "a" and nickName eq "b"
            (title pr or userType eq "a") and nickName eq "b"
              (and (or (pr title) (eq userType "a")) (eq nickName "b"))  =  (title pr or userType eq "a") and nickName eq "b"
            title pr and userType eq "a" or nickName eq "b" and locale pr
              (or (and (pr title) (eq userType "a")) (and (eq nickName "b") (pr locale)))  =  title pr and userType eq "a" or nickName eq "b" and locale pr
            not (title pr) and not(locale pr)
              (and (not (pr title)) (not (pr locale)))  =  not (title pr) and not (locale pr)
            not (not (title pr or locale pr))
              (not (not (or (pr title) (pr locale))))  =  not (not (title pr or locale pr))
            ((((title pr))))
              (pr title)  =  title pr
            USERNAME EQ "Bjensen" AND Emails[TYPE Eq "work"]
              (and (eq userName "Bjensen") (each emails (eq type "work")))  =  userName eq "Bjensen" and emails[type eq "work"]
            Name.GivenName sw "b" OR name.FAMILYNAME ew "n"
              (or (sw name.givenName "b") (ew name.familyName "n"))  =  name.givenName sw "b" or name.familyName ew "n"
            userName	eq
            "x"
              (eq userName "x")  =  userName eq "x""#]],
    );
}

#[test]
fn what_entra_id_and_okta_send() {
    check_users(
        &[
            r#"userName eq "AlexW@contoso.onmicrosoft.com""#,
            r#"externalId eq "3f4a8a2c-1e5b-4f7a-9a55-0c1d2e3f4a5b""#,
            r#"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department eq "Sales""#,
            r#"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.value eq "26118915-6090-4610-87e4-49d8ca9f808d""#,
            r#"active eq "False""#,
            r#"emails[primary eq "True"]"#,
            r#"id eq "6dc1e2cc" and active eq true"#,
        ],
        expect![[r#"
            userName eq "AlexW@contoso.onmicrosoft.com"
              (eq userName "AlexW@contoso.onmicrosoft.com")  =  userName eq "AlexW@contoso.onmicrosoft.com"
            externalId eq "3f4a8a2c-1e5b-4f7a-9a55-0c1d2e3f4a5b"
              (eq externalId "3f4a8a2c-1e5b-4f7a-9a55-0c1d2e3f4a5b")  =  externalId eq "3f4a8a2c-1e5b-4f7a-9a55-0c1d2e3f4a5b"
            urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department eq "Sales"
              (eq urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department "Sales")  =  urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department eq "Sales"
            urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.value eq "26118915-6090-4610-87e4-49d8ca9f808d"
              (eq urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.value "26118915-6090-4610-87e4-49d8ca9f808d")  =  urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.value eq "26118915-6090-4610-87e4-49d8ca9f808d"
            active eq "False"
              (eq active false)  =  active eq false
            emails[primary eq "True"]
              (each emails (eq primary true))  =  emails[primary eq true]
            id eq "6dc1e2cc" and active eq true
              (and (eq id "6dc1e2cc") (eq active true))  =  id eq "6dc1e2cc" and active eq true"#]],
    );
    let groups: Vec<String> = [
        r#"displayName eq "Sales Team""#,
        r#"members[value eq "2819c223-7f76-453a-919d-413861904646"]"#,
        r#"id eq "8a9f" and members[value eq "2819c223"]"#,
        r#"members.value eq "2819c223" and members.type eq "User""#,
        r#"userName eq "x""#,
    ]
    .iter()
    .map(|text| format!("{text}\n  {}", parsed(ResourceType::Group, text)))
    .collect();
    expect![[r#"
        displayName eq "Sales Team"
          (eq displayName "Sales Team")  =  displayName eq "Sales Team"
        members[value eq "2819c223-7f76-453a-919d-413861904646"]
          (each members (eq value "2819c223-7f76-453a-919d-413861904646"))  =  members[value eq "2819c223-7f76-453a-919d-413861904646"]
        id eq "8a9f" and members[value eq "2819c223"]
          (and (eq id "8a9f") (each members (eq value "2819c223")))  =  id eq "8a9f" and members[value eq "2819c223"]
        members.value eq "2819c223" and members.type eq "User"
          (and (eq members.value "2819c223") (eq members.type "User"))  =  members.value eq "2819c223" and members.type eq "User"
        userName eq "x"
          400 invalidFilter: filter: "userName" is not an attribute lattice keeps"#]]
    .assert_eq(&groups.join("\n"));
}

#[test]
fn values_and_types() {
    check_users(
        &[
            r#"userName eq "quote \" and \\ and \u00e9""#,
            r#"emails eq "bjensen@example.com""#,
            r#"active eq true"#,
            r#"active ne FALSE"#,
            r#"userName eq null"#,
            r#"emails ne null"#,
            r#"meta.created eq "2011-05-13T06:42:34+02:00""#,
            r#"userName gt "m""#,
            r#"addresses[type eq "work"].postalCode eq "x""#,
        ],
        expect![[r#"
            userName eq "quote \" and \\ and \u00e9"
              (eq userName "quote \" and \\ and é")  =  userName eq "quote \" and \\ and é"
            emails eq "bjensen@example.com"
              (eq emails.value "bjensen@example.com")  =  emails.value eq "bjensen@example.com"
            active eq true
              (eq active true)  =  active eq true
            active ne FALSE
              (ne active false)  =  active ne false
            userName eq null
              (eq userName null)  =  userName eq null
            emails ne null
              (ne emails null)  =  emails ne null
            meta.created eq "2011-05-13T06:42:34+02:00"
              (eq meta.created "2011-05-13T06:42:34+02:00")  =  meta.created eq "2011-05-13T06:42:34+02:00"
            userName gt "m"
              (gt userName "m")  =  userName gt "m"
            addresses[type eq "work"].postalCode eq "x"
              400 invalidFilter: filter: unexpected ".postalCode" at byte 25"#]],
    );
}

#[test]
fn refusals() {
    check_users(
        &[
            r#""#,
            r#"userName eq"#,
            r#"userName"#,
            r#"userName foo "x""#,
            r#"userName eq "x" extra"#,
            r#"password eq "x""#,
            r#"roles[value eq "admin"]"#,
            r#"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User eq "x""#,
            r#"urn:ietf:params:scim:schemas:extension:acme:2.0:User:badge eq "x""#,
            r#"name eq "x""#,
            r#"name.givenName.first eq "x""#,
            r#"userName.first eq "x""#,
            r#"active gt true"#,
            r#"active eq "yes""#,
            r#"active co "t""#,
            r#"meta.created co "2011""#,
            r#"meta.created gt "yesterday""#,
            r#"userName eq 42"#,
            r#"userName gt null"#,
            r#"userName eq tru"#,
            r#"emails[type eq "work""#,
            r#"emails[type eq "work"]]"#,
            r#"name[givenName eq "x"]"#,
            r#"emails[type eq "work" and emails[type eq "home"]]"#,
            r#"emails[nope eq "x"]"#,
            r#"(userName eq "a""#,
            r#"userName eq "a")"#,
            r#"userName eq "a" and"#,
            r#"and userName eq "a""#,
            r#"not userName eq "a""#,
            r#"userName eq "unterminated"#,
            r#"userName eq "bad \q escape""#,
            r#""x" eq "y""#,
            r#"user$name eq "y""#,
        ],
        expect![[r#"

              400 invalidFilter: filter: expected an attribute path at byte 0, found the end
            userName eq
              400 invalidFilter: filter: expected a value at byte 11, found the end
            userName
              400 invalidFilter: filter: expected an operator at byte 8, found the end
            userName foo "x"
              400 invalidFilter: filter: "foo" at byte 9 is not an operator (eq ne co sw ew gt ge lt le pr)
            userName eq "x" extra
              400 invalidFilter: filter: unexpected "extra" at byte 16
            password eq "x"
              400 invalidFilter: filter: "password" is not an attribute lattice keeps
            roles[value eq "admin"]
              400 invalidFilter: filter: "roles" is not an attribute lattice keeps
            urn:ietf:params:scim:schemas:extension:enterprise:2.0:User eq "x"
              400 invalidFilter: filter: urn:ietf:params:scim:schemas:extension:enterprise:2.0:User is a schema, not an attribute
            urn:ietf:params:scim:schemas:extension:acme:2.0:User:badge eq "x"
              400 invalidFilter: filter: "urn:ietf:params:scim:schemas:extension:acme:2.0:User:badge" is not an attribute lattice keeps
            name eq "x"
              400 invalidFilter: filter: name is complex: compare one of its sub-attributes, or test it with pr
            name.givenName.first eq "x"
              400 invalidFilter: filter: "name.givenName.first" has more than one sub-attribute level
            userName.first eq "x"
              400 invalidFilter: filter: userName is not complex, so "userName.first" names no sub-attribute
            active gt true
              400 invalidFilter: filter: active gt true: booleans are compared with eq or ne only
            active eq "yes"
              400 invalidFilter: filter: active eq "yes": active is a boolean
            active co "t"
              400 invalidFilter: filter: active co "t": booleans are compared with eq or ne only
            meta.created co "2011"
              400 invalidFilter: filter: meta.created co "2011": dates are compared with eq ne gt ge lt le
            meta.created gt "yesterday"
              400 invalidFilter: filter: meta.created gt "yesterday": not a date-time such as "2011-05-13T04:42:34Z"
            userName eq 42
              400 invalidFilter: filter: userName eq 42: userName is a string, compared with strings
            userName gt null
              400 invalidFilter: filter: userName gt null: null is compared with eq or ne only
            userName eq tru
              400 invalidFilter: filter: "tru" at byte 12 is not a value (a string, a number, true, false or null)
            emails[type eq "work"
              400 invalidFilter: filter: expected "]" at byte 21, found the end
            emails[type eq "work"]]
              400 invalidFilter: filter: unexpected "]" at byte 22
            name[givenName eq "x"]
              400 invalidFilter: filter: name at byte 0 is not a multi-valued complex attribute, so it takes no "[…]"
            emails[type eq "work" and emails[type eq "home"]]
              400 invalidFilter: filter: "emails" is not a sub-attribute of emails
            emails[nope eq "x"]
              400 invalidFilter: filter: "nope" is not a sub-attribute of emails
            (userName eq "a"
              400 invalidFilter: filter: expected ")" at byte 16, found the end
            userName eq "a")
              400 invalidFilter: filter: unexpected ")" at byte 15
            userName eq "a" and
              400 invalidFilter: filter: expected an attribute path at byte 19, found the end
            and userName eq "a"
              400 invalidFilter: filter: expected an attribute path at byte 0, found "and"
            not userName eq "a"
              400 invalidFilter: filter: expected an attribute path at byte 0, found "not"
            userName eq "unterminated
              400 invalidFilter: filter: the string at byte 12 is not closed
            userName eq "bad \q escape"
              400 invalidFilter: filter: the string at byte 12 has a bad escape
            "x" eq "y"
              400 invalidFilter: filter: expected an attribute path at byte 0, found the string "x"
            user$name eq "y"
              400 invalidFilter: filter: "user$name" is not an attribute path"#]],
    );
}

#[test]
fn bounds_at_the_limit_pass_and_one_over_fails() {
    let outcome = |text: &str| match Filter::parse(ResourceType::User, text) {
        Ok(_) => "ok".to_string(),
        Err(e) => e.detail,
    };
    // Text: padded with spaces to exactly the limit, then one byte more.
    let term = r#"userName eq "x""#;
    let at_limit = format!("{term}{}", " ".repeat(MAX_FILTER_BYTES - term.len()));
    let over = format!("{at_limit} ");
    // Nesting: parentheses, `not (` and `[` all count.
    let nested = |depth: usize| format!("{}title pr{}", "(".repeat(depth), ")".repeat(depth));
    let mixed = |depth: usize| format!("{}emails[type eq \"work\"]{}", "not (".repeat(depth - 1), ")".repeat(depth - 1));
    // Terms: comparisons and `pr` tests, anywhere in the tree.
    let terms = |n: usize| vec!["title pr"; n].join(" or ");
    let inner_terms = |n: usize| format!("emails[{}]", vec!["type eq \"work\""; n].join(" and "));
    let out = [
        ("text at the limit", outcome(&at_limit)),
        ("text one over", outcome(&over)),
        ("parentheses at the limit", outcome(&nested(MAX_FILTER_DEPTH))),
        ("parentheses one over", outcome(&nested(MAX_FILTER_DEPTH + 1))),
        ("not and [ at the limit", outcome(&mixed(MAX_FILTER_DEPTH))),
        ("not and [ one over", outcome(&mixed(MAX_FILTER_DEPTH + 1))),
        ("terms at the limit", outcome(&terms(MAX_FILTER_TERMS))),
        ("terms one over", outcome(&terms(MAX_FILTER_TERMS + 1))),
        ("terms in [] one over", outcome(&inner_terms(MAX_FILTER_TERMS + 1))),
    ]
    .map(|(what, result)| format!("{what}: {result}"))
    .join("\n");
    expect![[r#"
        text at the limit: ok
        text one over: filter: 4097 bytes, over the limit 4096
        parentheses at the limit: ok
        parentheses one over: filter: nested 17 levels deep, over the limit 16
        not and [ at the limit: ok
        not and [ one over: filter: nested 17 levels deep, over the limit 16
        terms at the limit: ok
        terms one over: filter: more than 64 terms, the limit
        terms in [] one over: filter: more than 64 terms, the limit"#]]
    .assert_eq(&out);
}

#[test]
fn pushes_down_only_what_a_column_answers() {
    let show = |rt: ResourceType, text: &str| {
        let filter = Filter::parse(rt, text).expect("parses");
        format!("{text}\n  whole: {:?}\n  narrowing: {:?}", filter.as_simple_eq(), filter.narrowing_eq())
    };
    let out = [
        show(ResourceType::User, r#"userName eq "Bjensen""#),
        show(ResourceType::User, r#"USERNAME eq "Bjensen""#),
        show(ResourceType::User, r#"externalId eq "e-1""#),
        show(ResourceType::User, r#"id eq "u-1""#),
        show(ResourceType::User, r#"userName co "b""#),
        show(ResourceType::User, r#"title pr and (externalId eq "e-1" and userName eq "b")"#),
        show(ResourceType::User, r#"userName eq "b" or externalId eq "e-1""#),
        show(ResourceType::User, r#"not (userName eq "b")"#),
        show(ResourceType::User, r#"name.givenName eq "b""#),
        show(ResourceType::Group, r#"displayName eq "Sales""#),
        show(ResourceType::Group, r#"id eq "g-1" and members[value eq "u-1"]"#),
    ]
    .join("\n");
    expect![[r#"
        userName eq "Bjensen"
          whole: Some(SimpleEq { attribute: "userName", value: "Bjensen", case_exact: false })
          narrowing: Some(SimpleEq { attribute: "userName", value: "Bjensen", case_exact: false })
        USERNAME eq "Bjensen"
          whole: Some(SimpleEq { attribute: "userName", value: "Bjensen", case_exact: false })
          narrowing: Some(SimpleEq { attribute: "userName", value: "Bjensen", case_exact: false })
        externalId eq "e-1"
          whole: Some(SimpleEq { attribute: "externalId", value: "e-1", case_exact: true })
          narrowing: Some(SimpleEq { attribute: "externalId", value: "e-1", case_exact: true })
        id eq "u-1"
          whole: Some(SimpleEq { attribute: "id", value: "u-1", case_exact: true })
          narrowing: Some(SimpleEq { attribute: "id", value: "u-1", case_exact: true })
        userName co "b"
          whole: None
          narrowing: None
        title pr and (externalId eq "e-1" and userName eq "b")
          whole: None
          narrowing: Some(SimpleEq { attribute: "externalId", value: "e-1", case_exact: true })
        userName eq "b" or externalId eq "e-1"
          whole: None
          narrowing: None
        not (userName eq "b")
          whole: None
          narrowing: None
        name.givenName eq "b"
          whole: None
          narrowing: None
        displayName eq "Sales"
          whole: Some(SimpleEq { attribute: "displayName", value: "Sales", case_exact: false })
          narrowing: Some(SimpleEq { attribute: "displayName", value: "Sales", case_exact: false })
        id eq "g-1" and members[value eq "u-1"]
          whole: None
          narrowing: Some(SimpleEq { attribute: "id", value: "g-1", case_exact: true })"#]]
    .assert_eq(&out);
}

#[test]
fn evaluates_over_a_rendered_user() {
    let user = json!({
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],
        "id": "2819c223",
        "externalId": "Ext-1",
        "meta": {"resourceType": "User", "created": "2011-08-01T18:29:49.793Z", "lastModified": "2011-08-01T20:31:02.315Z"},
        "userName": "Bjensen@Example.com",
        "name": {"familyName": "Jensen", "givenName": "Barbara"},
        "title": "",
        "userType": "Employee",
        "active": false,
        "emails": [
            {"value": "bjensen@example.com", "type": "work", "primary": true},
            {"value": "babs@jensen.org", "type": "home"}
        ],
        "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": {"department": "Tour Operations", "manager": {"value": "26118915"}}
    });
    let cases: &[(&str, bool)] = &[
        (r#"userName eq "bjensen@example.com""#, true),
        (r#"userName eq "bjensen""#, false),
        (r#"externalId eq "ext-1""#, false),
        (r#"externalId eq "Ext-1""#, true),
        (r#"id eq "2819c223""#, true),
        (r#"name.familyName co "ENS""#, true),
        (r#"name.givenName sw "bar""#, true),
        (r#"name.givenName ew "RA""#, true),
        (r#"userName gt "a" and userName lt "c""#, true),
        (r#"userName ge "bjensen@example.com" and userName le "BJENSEN@EXAMPLE.COM""#, true),
        (r#"title pr"#, false),
        (r#"nickName pr"#, false),
        (r#"name pr"#, true),
        (r#"emails pr"#, true),
        (r#"nickName eq null"#, true),
        (r#"name ne null"#, true),
        (r#"nickName ne "x""#, true),
        (r#"userType ne "Employee""#, false),
        (r#"active eq false"#, true),
        (r#"active eq "True""#, false),
        (r#"emails co "jensen.org""#, true),
        (r#"emails.type eq "home""#, true),
        (r#"emails[type eq "home" and primary eq true]"#, false),
        (r#"emails.type eq "home" and emails.primary eq true"#, true),
        (r#"emails[type eq "work" and value ew "example.com"]"#, true),
        (r#"emails[primary eq "True"]"#, true),
        (r#"not (emails[type eq "other"])"#, true),
        (r#"meta.lastModified gt "2011-08-01T18:29:49.793Z""#, true),
        (r#"meta.lastModified gt "2011-08-01T22:31:02.315+02:00""#, false),
        (r#"meta.lastModified ge "2011-08-01T22:31:02.315+02:00""#, true),
        (r#"meta.created lt "2012-01-01T00:00:00Z""#, true),
        (r#"schemas eq "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User""#, true),
        (r#"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department sw "tour""#, true),
        (r#"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager eq "26118915""#, true),
        (r#"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.value eq "2611""#, false),
        (r#"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:division pr"#, false),
        (r#"title pr or (userType eq "employee" and not (active eq true))"#, true),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .filter(|(text, want)| Filter::parse(ResourceType::User, text).expect("parses").matches(&user) != *want)
        .map(|(text, want)| format!("{text} should be {want}"))
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
}

//! List queries at their boundary (parameters in, query or refusal out),
//! and whole lists answered in memory.

use expect_test::{Expect, expect};
use serde_json::{Value, json};

use super::{ListQuery, SEARCH_REQUEST_URN, list_response};
use crate::resource::{Projection, ResourceMeta, normalize_create, render};
use crate::schema::{ResourceType, USER_URN};

fn read(params: &[(&str, &str)]) -> String {
    match ListQuery::from_query(ResourceType::User, params.iter().copied()) {
        Ok(q) => format!(
            "filter={} startIndex={} count={} sort={} projection={}",
            q.filter.map(|f| f.to_string()).unwrap_or_default(),
            q.start_index,
            q.count,
            q.sort.map(|s| s.to_string()).unwrap_or_default(),
            if q.projection == Projection::default() { "default" } else { "given" },
        ),
        Err(e) => format!("{} {}: {}", e.status, e.scim_type.map(|t| t.as_str()).unwrap_or("-"), e.detail),
    }
}

fn check(cases: &[&[(&str, &str)]], expect: Expect) {
    let out: Vec<String> = cases.iter().map(|params| format!("{params:?}\n  {}", read(params))).collect();
    expect.assert_eq(&out.join("\n"));
}

#[test]
fn query_parameters() {
    check(
        &[
            &[],
            &[("filter", "userName eq \"bjensen\""), ("startIndex", "1"), ("count", "100")],
            &[("FILTER", "USERNAME eq \"x\""), ("StartIndex", "3"), ("COUNT", "7"), ("other", "left to the route")],
            &[("startIndex", "0"), ("count", "-5")],
            &[("startIndex", "-9"), ("count", "1000")],
            &[("startIndex", "99999999999")],
            &[("sortBy", "name.familyName"), ("sortOrder", "DESCENDING")],
            &[("sortBy", "emails")],
            &[("sortOrder", "descending")],
            &[("attributes", "userName,emails")],
            &[("excludedAttributes", "members")],
            &[("count", "ten")],
            &[("startIndex", "1.5")],
            &[("startIndex", "99999999999999999999")],
            &[("count", "1"), ("count", "2")],
            &[("sortBy", "name")],
            &[("sortBy", "password")],
            &[("sortBy", "title"), ("sortOrder", "sideways")],
            &[("filter", "userName eq")],
            &[("attributes", "userName"), ("excludedAttributes", "name")],
        ],
        expect![[r#"
            []
              filter= startIndex=1 count=200 sort= projection=default
            [("filter", "userName eq \"bjensen\""), ("startIndex", "1"), ("count", "100")]
              filter=userName eq "bjensen" startIndex=1 count=100 sort= projection=default
            [("FILTER", "USERNAME eq \"x\""), ("StartIndex", "3"), ("COUNT", "7"), ("other", "left to the route")]
              filter=userName eq "x" startIndex=3 count=7 sort= projection=default
            [("startIndex", "0"), ("count", "-5")]
              filter= startIndex=1 count=0 sort= projection=default
            [("startIndex", "-9"), ("count", "1000")]
              filter= startIndex=1 count=200 sort= projection=default
            [("startIndex", "99999999999")]
              filter= startIndex=2147483647 count=200 sort= projection=default
            [("sortBy", "name.familyName"), ("sortOrder", "DESCENDING")]
              filter= startIndex=1 count=200 sort=name.familyName descending projection=default
            [("sortBy", "emails")]
              filter= startIndex=1 count=200 sort=emails.value ascending projection=default
            [("sortOrder", "descending")]
              filter= startIndex=1 count=200 sort= projection=default
            [("attributes", "userName,emails")]
              filter= startIndex=1 count=200 sort= projection=given
            [("excludedAttributes", "members")]
              filter= startIndex=1 count=200 sort= projection=given
            [("count", "ten")]
              400 invalidValue: count: "ten" is not an integer
            [("startIndex", "1.5")]
              400 invalidValue: startIndex: "1.5" is not an integer
            [("startIndex", "99999999999999999999")]
              400 invalidValue: startIndex: "99999999999999999999" is not an integer
            [("count", "1"), ("count", "2")]
              400 invalidValue: count is given twice
            [("sortBy", "name")]
              400 invalidValue: sortBy: name is complex; name a sub-attribute
            [("sortBy", "password")]
              400 invalidValue: sortBy: "password" is not an attribute lattice keeps
            [("sortBy", "title"), ("sortOrder", "sideways")]
              400 invalidValue: sortOrder: "sideways" is not ascending or descending
            [("filter", "userName eq")]
              400 invalidFilter: filter: expected a value at byte 11, found the end
            [("attributes", "userName"), ("excludedAttributes", "name")]
              400 invalidValue: attributes and excludedAttributes are mutually exclusive"#]],
    );
}

#[test]
fn search_requests() {
    let read = |body: Value| match ListQuery::from_search_request(ResourceType::User, &body) {
        Ok(q) => format!(
            "filter={} startIndex={} count={} projection={:?}",
            q.filter.map(|f| f.to_string()).unwrap_or_default(),
            q.start_index,
            q.count,
            q.projection == Projection::default()
        ),
        Err(e) => format!("{} {}: {}", e.status, e.scim_type.map(|t| t.as_str()).unwrap_or("-"), e.detail),
    };
    let out = [
        // RFC 7644 §3.4.3's example.
        read(json!({"schemas": [SEARCH_REQUEST_URN], "attributes": ["displayName", "userName"], "filter": "displayName sw \"smith\"", "startIndex": 1, "count": 10})),
        read(json!({"schemas": [SEARCH_REQUEST_URN], "excludedAttributes": "name, emails", "count": null})),
        read(json!({"schemas": [SEARCH_REQUEST_URN], "startIndex": "2", "count": 2.5})),
        read(json!({"attributes": ["userName"]})),
        read(json!({"schemas": [SEARCH_REQUEST_URN], "filter": 7})),
        read(json!({"schemas": [SEARCH_REQUEST_URN], "attributes": [1, 2]})),
        read(json!([])),
    ]
    .join("\n");
    expect![[r#"
        filter=displayName sw "smith" startIndex=1 count=10 projection=false
        filter= startIndex=1 count=200 projection=false
        400 invalidValue: count: "2.5" is not an integer
        400 invalidSyntax: schemas: must be a list holding "urn:ietf:params:scim:api:messages:2.0:SearchRequest"
        400 invalidValue: filter: expected a string
        400 invalidValue: attributes: expected a list of strings
        400 invalidSyntax: the body is not a JSON object"#]]
    .assert_eq(&out);
}

fn people() -> Vec<Value> {
    let rows = [
        json!({"userName": "cmiller", "name": {"familyName": "Miller"}, "title": "Guide", "emails": [{"value": "c@x", "type": "home"}, {"value": "c@work", "type": "work", "primary": true}]}),
        json!({"userName": "ajensen", "name": {"familyName": "jensen"}, "emails": [{"value": "a@x"}]}),
        json!({"userName": "Bjensen", "name": {"familyName": "Jensen"}, "title": "Guide", "active": false}),
        json!({"userName": "dsmith", "title": "Manager"}),
    ];
    rows.into_iter()
        .enumerate()
        .map(|(i, mut row)| {
            row["schemas"] = json!([USER_URN]);
            let document = normalize_create(ResourceType::User, &row).expect("valid").document;
            let id = format!("u-{i}");
            let meta = ResourceMeta { id: &id, created_ms: 1_000 * i as i64, last_modified_ms: 1_000 * i as i64, base_url: "https://h/scim/v2" };
            render(ResourceType::User, &document, &meta, &Projection::default())
        })
        .collect()
}

fn answered(params: &[(&str, &str)]) -> String {
    let query = ListQuery::from_query(ResourceType::User, params.iter().copied()).expect("valid");
    let response = query.respond(ResourceType::User, people());
    let ids: Vec<String> = response["Resources"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let rest: Vec<String> = r
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(k, _)| !["schemas", "id", "meta"].contains(&k.as_str()))
                .map(|(k, _)| k.clone())
                .collect();
            format!("{}({})", r["id"].as_str().unwrap_or("?"), rest.join(" "))
        })
        .collect();
    format!("total={} start={} items={}: {}", response["totalResults"], response["startIndex"], response["itemsPerPage"], ids.join(", "))
}

#[test]
fn lists_answered_in_memory() {
    let cases: &[&[(&str, &str)]] = &[
        &[],
        &[("filter", "title eq \"guide\"")],
        &[("filter", "userName sw \"B\" or userName sw \"a\""), ("sortBy", "userName")],
        &[("sortBy", "name.familyName")],
        &[("sortBy", "name.familyName"), ("sortOrder", "descending")],
        &[("sortBy", "emails")],
        &[("sortBy", "active")],
        &[("sortBy", "meta.created"), ("sortOrder", "descending"), ("startIndex", "2"), ("count", "2")],
        &[("startIndex", "4"), ("count", "5")],
        &[("startIndex", "5")],
        &[("count", "0")],
        &[("filter", "title pr"), ("attributes", "userName")],
        &[("excludedAttributes", "name,emails,userName,title,active")],
    ];
    let out: Vec<String> = cases.iter().map(|params| format!("{params:?}\n  {}", answered(params))).collect();
    expect![[r#"
        []
          total=4 start=1 items=4: u-0(userName name title emails), u-1(userName name emails), u-2(userName name title active), u-3(userName title)
        [("filter", "title eq \"guide\"")]
          total=2 start=1 items=2: u-0(userName name title emails), u-2(userName name title active)
        [("filter", "userName sw \"B\" or userName sw \"a\""), ("sortBy", "userName")]
          total=2 start=1 items=2: u-1(userName name emails), u-2(userName name title active)
        [("sortBy", "name.familyName")]
          total=4 start=1 items=4: u-1(userName name emails), u-2(userName name title active), u-0(userName name title emails), u-3(userName title)
        [("sortBy", "name.familyName"), ("sortOrder", "descending")]
          total=4 start=1 items=4: u-3(userName title), u-0(userName name title emails), u-1(userName name emails), u-2(userName name title active)
        [("sortBy", "emails")]
          total=4 start=1 items=4: u-1(userName name emails), u-0(userName name title emails), u-2(userName name title active), u-3(userName title)
        [("sortBy", "active")]
          total=4 start=1 items=4: u-2(userName name title active), u-0(userName name title emails), u-1(userName name emails), u-3(userName title)
        [("sortBy", "meta.created"), ("sortOrder", "descending"), ("startIndex", "2"), ("count", "2")]
          total=4 start=2 items=2: u-2(userName name title active), u-1(userName name emails)
        [("startIndex", "4"), ("count", "5")]
          total=4 start=4 items=1: u-3(userName title)
        [("startIndex", "5")]
          total=4 start=5 items=0: 
        [("count", "0")]
          total=4 start=1 items=0: 
        [("filter", "title pr"), ("attributes", "userName")]
          total=3 start=1 items=3: u-0(userName), u-2(userName), u-3(userName)
        [("excludedAttributes", "name,emails,userName,title,active")]
          total=4 start=1 items=4: u-0(), u-1(), u-2(), u-3()"#]]
    .assert_eq(&out.join("\n"));
}

#[test]
fn an_empty_list_response() {
    expect![[
        r#"{"schemas":["urn:ietf:params:scim:api:messages:2.0:ListResponse"],"totalResults":0,"startIndex":1,"itemsPerPage":0,"Resources":[]}"#
    ]]
    .assert_eq(&list_response(0, 1, Vec::new()).to_string());
}

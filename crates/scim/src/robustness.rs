//! No input panics: filters, PATCH paths and bodies made from the grammar's
//! own pieces, shuffled by a fixed-seed generator so a failure replays.
//! Whatever parses must print back to itself.

use serde_json::{Value, json};

use crate::filter::Filter;
use crate::patch::{PATCH_OP_URN, apply_body};
use crate::resource::normalize_create;
use crate::schema::{ResourceType, USER_URN};

/// xorshift64*: enough to shuffle pieces, with no dependency.
struct Pieces(u64);

impl Pieces {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[(self.next() % from.len() as u64) as usize]
    }

    fn text(&mut self, from: &[&str], most: u64) -> String {
        let n = self.next() % most;
        (0..n).map(|_| self.pick(from)).collect::<Vec<_>>().join(" ")
    }
}

const FILTER_PIECES: &[&str] = &[
    "userName",
    "name.givenName",
    "emails",
    "emails.value",
    "emails[",
    "]",
    "type",
    "value",
    "primary",
    "(",
    ")",
    "not",
    "not(",
    "and",
    "or",
    "eq",
    "ne",
    "co",
    "sw",
    "gt",
    "le",
    "pr",
    "\"x\"",
    "\"\\\"\"",
    "\"é\"",
    "\"2011-05-13T04:42:34Z\"",
    "meta.created",
    "active",
    "true",
    "null",
    "42",
    "-1.5e3",
    "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.value",
    "urn:",
    "$ref",
    "\"",
    "[",
    ".",
    "é",
    "members",
    "\\",
];

/// A filter from the grammar, so that most parse.
fn grammatical(pieces: &mut Pieces, depth: u32) -> String {
    let attrs = [
        "userName",
        "NAME.givenName",
        "emails",
        "emails.value",
        "active",
        "meta.created",
        "title",
        "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department",
    ];
    let values = ["\"x\"", "\"a \\\" b\"", "\"é\"", "true", "\"False\"", "null", "\"2011-05-13T04:42:34Z\"", "7"];
    let ops = ["eq", "NE", "co", "sw", "ew", "gt", "ge", "lt", "le"];
    match if depth == 0 { pieces.next() % 2 } else { pieces.next() % 7 } {
        0 => format!("{} {} {}", pieces.pick(&attrs), pieces.pick(&ops), pieces.pick(&values)),
        1 => format!("{} pr", pieces.pick(&attrs)),
        2 => format!("{} and {}", grammatical(pieces, depth - 1), grammatical(pieces, depth - 1)),
        3 => format!("{} OR {}", grammatical(pieces, depth - 1), grammatical(pieces, depth - 1)),
        4 => format!("not ({})", grammatical(pieces, depth - 1)),
        5 => format!("({})", grammatical(pieces, depth - 1)),
        _ => format!("emails[type eq \"work\" and value {} {}]", pieces.pick(&ops), pieces.pick(&values)),
    }
}

#[test]
fn filters_never_panic_and_print_back() {
    let mut pieces = Pieces(0x9E37_79B9_7F4A_7C15);
    let resource = json!({"userName": "x", "emails": [{"value": "a", "type": "work", "primary": true}], "active": true, "meta": {"created": "2011-05-13T04:42:34Z"}});
    let mut parsed = 0;
    for i in 0..20_000u32 {
        let mut text = grammatical(&mut pieces, 4);
        // One in two is damaged: a piece cut out or one put in.
        if !i.is_multiple_of(2) {
            let at = (pieces.next() as usize) % (text.len() + 1);
            let at = (0..=at).rev().find(|&j| text.is_char_boundary(j)).unwrap_or(0);
            if pieces.next().is_multiple_of(2) {
                let end = (at..=text.len()).find(|&j| j > at && text.is_char_boundary(j)).unwrap_or(at);
                text.replace_range(at..end, "");
            } else {
                text.insert_str(at, pieces.pick(FILTER_PIECES));
            }
        }
        if let Ok(filter) = Filter::parse(ResourceType::User, &text) {
            parsed += 1;
            let again = Filter::parse(ResourceType::User, &filter.to_string());
            assert_eq!(again.as_ref().ok(), Some(&filter), "{text:?} printed as {filter}");
            filter.matches(&resource);
        }
        let _ = Filter::parse(ResourceType::Group, &pieces.text(FILTER_PIECES, 12));
    }
    assert!(parsed > 5_000, "most grammatical filters parse; {parsed} did");
}

#[test]
fn patch_paths_and_values_never_panic() {
    let mut pieces = Pieces(0xD1B5_4A32_D192_ED03);
    let values = [
        json!("x"),
        json!(true),
        json!("False"),
        json!(null),
        json!([]),
        json!({}),
        json!([{"value": "v", "primary": true}]),
        json!({"value": "v"}),
        json!(7),
    ];
    let existing = normalize_create(ResourceType::User, &json!({"schemas": [USER_URN], "userName": "u", "emails": [{"value": "a", "type": "work"}]}))
        .map(|n| n.document)
        .unwrap_or(Value::Null);
    for _ in 0..10_000 {
        let path = pieces.text(FILTER_PIECES, 6).replace(' ', if pieces.next().is_multiple_of(2) { "" } else { " " });
        let op = pieces.pick(&["add", "replace", "remove", "Add"]);
        let value = values[(pieces.next() % values.len() as u64) as usize].clone();
        let body = json!({"schemas": [PATCH_OP_URN], "Operations": [{"op": op, "path": path, "value": value}]});
        let _ = apply_body(ResourceType::User, &existing, &body);
        let keyed = json!({"schemas": [PATCH_OP_URN], "Operations": [{"op": op, "value": {path: value}}]});
        let _ = apply_body(ResourceType::User, &existing, &keyed);
    }
}

#[test]
fn bodies_never_panic() {
    let mut pieces = Pieces(0x94D0_49BB_1331_11EB);
    let keys = [
        "userName",
        "USERNAME",
        "name",
        "emails",
        "active",
        "groups",
        "id",
        "meta",
        "schemas",
        "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User",
        "members",
        "displayName",
        "x",
    ];
    let values = [
        json!("s"),
        json!(1),
        json!(true),
        json!(null),
        json!([]),
        json!({}),
        json!([{"value": 1}]),
        json!({"givenName": ["x"]}),
        json!([[]]),
        json!({"manager": "m"}),
        json!([USER_URN]),
    ];
    for _ in 0..20_000 {
        let mut body = serde_json::Map::new();
        for _ in 0..(pieces.next() % 6) {
            let key = keys[(pieces.next() % keys.len() as u64) as usize];
            body.insert(key.to_string(), values[(pieces.next() % values.len() as u64) as usize].clone());
        }
        let rt = if pieces.next().is_multiple_of(2) { ResourceType::User } else { ResourceType::Group };
        let _ = normalize_create(rt, &Value::Object(body));
    }
}

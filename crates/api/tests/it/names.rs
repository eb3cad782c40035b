//! One rule for every name a person reads (`lattice_core::name`): a name
//! given with an invisible or direction-changing character is refused,
//! naming the character; one typed two ways is kept one way (NFC).

use axum::http::StatusCode;
use lattice_core::TenantRole;
use serde_json::json;

use crate::App;

/// U+202E RIGHT-TO-LEFT OVERRIDE: `Pay` then it makes `llor` read `roll`.
const RLO: &str = "\u{202E}";

lattice_testkit::both_backends! {
    async fn a_name_that_reads_otherwise_is_refused_wherever_a_person_gives_one(backend: Backend) {
        let app = App::new(backend).await;
        let ana = app.token("t1", "ana", TenantRole::TenantAdmin, false).await;
        let refused = |reply: &crate::Reply, path: &str| {
            assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", reply.body);
            let error = &reply.body["error"]["errors"][0];
            assert_eq!((error["path"].as_str(), error["keyword"].as_str()), (Some(path), Some("pattern")), "{}", reply.body);
            assert!(error["message"].as_str().unwrap().starts_with("U+"), "{}", reply.body);
        };
        refused(&app.post("/v1/workspaces", &ana, json!({"name": format!("Pay{RLO}llor")})).await, "name");
        // Each of the invisible kinds, at the edge of the class.
        for hidden in ["\u{200B}", "\u{200F}", "\u{2066}", "\u{2069}", "\u{FEFF}", "\u{2028}"] {
            refused(&app.post("/v1/workspaces", &ana, json!({"name": format!("Ops{hidden}")})).await, "name");
        }
        // NFD in, NFC kept: one name, however it was typed.
        let made = app.post("/v1/workspaces", &ana, json!({"name": " Jose\u{301} "})).await;
        assert_eq!(made.status, StatusCode::OK, "{}", made.body);
        let ws = made.body["id"].as_str().unwrap().to_owned();
        let listed = app.get("/v1/workspaces", &ana).await.body;
        let kept = listed.as_array().unwrap().iter().find(|w| w["id"] == ws.as_str()).unwrap();
        assert_eq!(kept["name"], "Jos\u{E9}");
        refused(&app.post(&format!("/v1/workspaces/{ws}/threads"), &ana, json!({"title": format!("Q3{RLO}")})).await, "title");
        let th = app.post(&format!("/v1/workspaces/{ws}/threads"), &ana, json!({"title": "Leave"})).await.body["id"].as_str().unwrap().to_owned();

        // A form's title, a field's title, a section's title.
        let form = |title: &str, field: &str, section: &str| {
            json!({"kind": "form", "data": {"title": title,
                "schema": {"type": "object", "properties": {"days": {"type": "integer", "title": field}}},
                "ui": {"sections": [{"title": section, "properties": ["days"]}]}}})
        };
        let artifacts = format!("/v1/threads/{th}/artifacts");
        let ok = app.post(&artifacts, &ana, form("Leave", "Days", "When")).await;
        assert_eq!(ok.status, StatusCode::OK, "{}", ok.body);
        refused(&app.post(&artifacts, &ana, form(&format!("Leave{RLO}"), "Days", "When")).await, "title");
        refused(&app.post(&artifacts, &ana, form("Leave", "Days\u{200D}", "When")).await, "schema.properties.days.title");
        refused(&app.post(&artifacts, &ana, form("Leave", "Days", "\u{2067}When")).await, "ui.sections.0.title");

        // A person's name from the directory: refused with the character,
        // and one typed two ways is taken once.
        let scim = app.post("/v1/scim-tokens", &ana, json!({})).await.body["token"].as_str().unwrap().to_owned();
        let user = |name: &str| json!({"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": name, "active": true});
        let lie = app.send_scim("POST", "/scim/v2/Users", &scim, Some(user(&format!("bob{RLO}")))).await;
        assert_eq!(lie.status, StatusCode::BAD_REQUEST, "{}", lie.body);
        let nfd = app.send_scim("POST", "/scim/v2/Users", &scim, Some(user("jose\u{301}"))).await;
        assert_eq!(nfd.status, StatusCode::CREATED, "{}", nfd.body);
        let nfc = app.send_scim("POST", "/scim/v2/Users", &scim, Some(user("JOS\u{C9}"))).await;
        assert_eq!(nfc.status, StatusCode::CONFLICT, "{}", nfc.body);
    }
}

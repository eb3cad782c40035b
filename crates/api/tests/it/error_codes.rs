//! Every refusal over HTTP names its stable `code` and a `link` to the
//! code's documentation, which the deployment serves itself; the OpenAPI
//! document lists the codes.

use axum::http::StatusCode;
use lattice_core::TenantRole;
use serde_json::json;

use crate::App;

lattice_testkit::both_backends! {
    async fn a_refusal_names_its_code_and_the_link_answers(backend: Backend) {
        let app = App::new(backend).await;
        let ana = app.token("t1", "ana", TenantRole::Member, false).await;
        let (_, th) = app.workspace_with_thread(&ana).await;

        // A closed form: the one refusal a client would otherwise tell
        // apart from others of its type by the English.
        let data = json!({"title": "F", "schema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}, "closed": true});
        let made = app.post(&format!("/v1/threads/{th}/artifacts"), &ana, json!({"kind": "form", "data": data})).await;
        assert_eq!(made.status, StatusCode::OK, "{:?}", made.body);
        let form = made.body["id"].as_str().unwrap().to_owned();
        let sent = app
            .post(
                &format!("/v1/threads/{th}/artifacts"),
                &ana,
                json!({"kind": "submission", "data": {"form_id": form, "form_version": 1, "values": {"ok": true}, "nonce": "n-1"}}),
            )
            .await;
        assert_eq!(sent.status, StatusCode::CONFLICT, "{:?}", sent.body);
        assert_eq!((&sent.body["error"]["type"], &sent.body["error"]["code"]), (&json!("InvalidState"), &json!("form_closed")), "{:?}", sent.body);
        assert_eq!(sent.body["error"]["link"], "/docs/errors#form_closed");

        // Others, each with its own code and a link of that code.
        let no_token = app.send("GET", "/v1/me", None, None).await;
        let bad_json = app.send("POST", &format!("/v1/threads/{th}/messages"), Some(&ana), Some("{")).await;
        let nothing = app.send("GET", "/v1/no-such-route", Some(&ana), None).await;
        for (reply, status, code) in [
            (&no_token, StatusCode::UNAUTHORIZED, "token_missing"),
            (&bad_json, StatusCode::BAD_REQUEST, "malformed_body"),
            (&nothing, StatusCode::NOT_FOUND, "not_found"),
        ] {
            assert_eq!((reply.status, reply.body["error"]["code"].as_str()), (status, Some(code)), "{:?}", reply.body);
            assert_eq!(reply.body["error"]["link"], format!("/docs/errors#{code}"));
        }

        // The link's page answers, without a token, and names the code.
        let page = app.send("GET", "/docs/errors", None, None).await;
        assert_eq!(page.status, StatusCode::OK);
        let page = page.body.as_str().unwrap_or_default().to_owned();
        for code in ["form_closed", "token_missing", "malformed_body", "not_found"] {
            assert!(page.contains(&format!("id=\"{code}\"")), "the page has no row for {code}");
        }

        // The OpenAPI document lists every code in the error body's schema.
        let openapi = app.send("GET", "/openapi.json", None, None).await;
        let codes = &openapi.body["components"]["schemas"]["ErrorCode"]["enum"];
        assert_eq!(codes.as_array().map(Vec::len), Some(lattice_core::Code::ALL.len()), "{codes:?}");
        assert!(codes.as_array().unwrap().contains(&json!("form_closed")));
        assert_eq!(openapi.body["components"]["schemas"]["ErrorBody"]["properties"]["error"]["properties"]["code"]["$ref"], "#/components/schemas/ErrorCode");
    }
}

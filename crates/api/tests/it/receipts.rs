//! `GET /v1/receipts/{seq}` at its edges: no envelope (0, the extremes of
//! the number, not a number) is 404 or 400, never a failure; an envelope
//! not sealed yet is 409; sealed, its receipt; another tenant's is 404.

use axum::http::StatusCode;
use lattice_core::TenantRole;
use serde_json::json;

use crate::App;

lattice_testkit::both_backends! {
    async fn a_receipt_is_asked_by_seq_and_given_once_sealed(backend: Backend) {
        let app = App::new(backend).await;
        let ana = app.token("t1", "ana", TenantRole::Member, false).await;
        let (_, th) = app.workspace_with_thread(&ana).await;
        let posted = app.post(&format!("/v1/threads/{th}/messages"), &ana, json!({"text": "sealed soon"})).await;
        let seq = posted.body["seq"].as_i64().unwrap();
        for at in ["0", "-1", "-9223372036854775808", "9223372036854775807"] {
            assert_eq!(app.get(&format!("/v1/receipts/{at}"), &ana).await.status, StatusCode::NOT_FOUND, "{at}");
        }
        assert_eq!(app.get("/v1/receipts/9223372036854775808", &ana).await.status, StatusCode::BAD_REQUEST);
        assert_eq!(app.get("/v1/receipts/x", &ana).await.status, StatusCode::BAD_REQUEST);
        let early = app.get(&format!("/v1/receipts/{seq}"), &ana).await;
        assert_eq!(early.status, StatusCode::CONFLICT, "not sealed yet: {:?}", early.body);
        // Sealed: the receipt names the envelope, its place and a checkpoint after it.
        let reader = lattice_log::LogReader::of(&app.log);
        let _following = reader.horizon();
        let sealer = lattice_log::Sealer::new(reader, app.log.authenticator().seal_key().clone());
        let receipt = lattice_testkit::eventually("the receipt", async || {
            sealer.step().await.unwrap();
            let got = app.get(&format!("/v1/receipts/{seq}"), &ana).await;
            (got.status == StatusCode::OK).then_some(got.body)
        })
        .await;
        assert_eq!(receipt["envelope"]["seq"], seq, "{receipt}");
        assert_eq!(receipt["envelope"]["payload"]["text"], "sealed soon");
        assert!(receipt["checkpoint"]["n"].as_i64().unwrap() >= receipt["seal"]["n"].as_i64().unwrap());
        let key = app.get("/v1/checkpoint-key", &ana).await;
        assert_eq!(receipt["checkpoint"]["key_id"], key.body["key_id"]);
        // Another tenant learns nothing of it.
        let eve = app.token("t2", "eve", TenantRole::TenantAdmin, false).await;
        assert_eq!(app.get(&format!("/v1/receipts/{seq}"), &eve).await.status, StatusCode::NOT_FOUND);
    }
}

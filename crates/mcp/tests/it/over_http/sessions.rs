//! A session is its owner's for its whole life, and lives while its row in
//! the shared table does: once the row is gone (forgotten for its owner's
//! newer sessions, closed, its person signed out), the session answers 404
//! to everyone, its owner included, and rmcp closes it (its event stream
//! ends) on the replica that ended it, on one a request reaches, and on
//! the others at their sweep.

use axum::http::StatusCode;
use lattice_core::TenantRole;
use lattice_log::SESSIONS_PER_CALLER;
use serde_json::json;

use super::{Replica, Sse, refusal, token};

/// What a session that is not there answers, to anyone: the 404 every
/// HTTP surface answers, `NotFound` as JSON.
async fn not_found(r: &Replica, token: &str, session: &str) {
    let res = r.post(token, Some(session), json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"})).await;
    let (status, body) = refusal(res).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(body, r#"{"error":{"type":"NotFound","code":"not_found","link":"/docs/errors#not_found"}}"#);
}

lattice_testkit::both_backends! {
    async fn a_session_forgotten_for_newer_ones_ends_for_everyone(backend: Backend) {
        let log = lattice_testkit::service(backend).await;
        let r = Replica::unlimited(&log);
        let ana = token("t1", "ana", TenantRole::Member);
        let eve = token("t2", "eve", TenantRole::Member);
        let oldest = r.open(&ana).await;
        let stream = Sse::new(r.events(&ana, &oldest).await);
        r.request(&ana, &oldest, "tools/list", json!({})).await.expect("the owner is served");
        not_found(&r, &eve, &oldest).await;

        // Opening as many more as a caller keeps forgets the oldest.
        for _ in 0..SESSIONS_PER_CALLER {
            r.open(&ana).await;
        }
        not_found(&r, &ana, &oldest).await;
        not_found(&r, &eve, &oldest).await;
        // Closed in rmcp's manager: its event stream ends.
        stream.ended().await;
    }
}

lattice_testkit::both_backends! {
    async fn a_session_whose_row_is_gone_is_refused_and_closed(backend: Backend) {
        let log = lattice_testkit::service(backend).await;
        let r = Replica::unlimited(&log);
        let ana = token("t1", "ana", TenantRole::Member);
        let session = r.open(&ana).await;
        let stream = Sse::new(r.events(&ana, &session).await);
        // As a sign-out or another replica's eviction leaves it.
        log.sessions().close(&session).await.unwrap();
        not_found(&r, &ana, &session).await;
        stream.ended().await;
        // And it stays ended: no replay brings it back.
        not_found(&r, &ana, &session).await;
    }
}

lattice_testkit::both_backends! {
    async fn another_replica_closes_a_session_that_ended_elsewhere(backend: Backend) {
        let log = lattice_testkit::service(backend).await;
        let (a, b) = (Replica::unlimited(&log), Replica::unlimited(&log));
        let ana = token("t1", "ana", TenantRole::Member);
        let session = a.open(&ana).await;
        // b has not seen it: it replays the handshake from the table.
        b.request(&ana, &session, "tools/list", json!({})).await.expect("any replica serves the session");
        let on_b = Sse::new(b.events(&ana, &session).await);
        // Ended elsewhere, with no request to b naming it: b's sweep finds
        // the row gone and closes the session there too.
        log.sessions().close(&session).await.unwrap();
        on_b.ended().await;
        not_found(&a, &ana, &session).await;
    }
}

lattice_testkit::both_backends! {
    async fn a_client_ends_its_session_with_delete_and_is_told_204(backend: Backend) {
        let log = lattice_testkit::service(backend).await;
        let r = Replica::unlimited(&log);
        let ana = token("t1", "ana", TenantRole::Member);
        let eve = token("t2", "eve", TenantRole::Member);
        let session = r.open(&ana).await;
        let stream = Sse::new(r.events(&ana, &session).await);
        let delete = |token: &str| {
            axum::http::Request::delete("/mcp")
                .header("host", "localhost")
                .header("authorization", format!("Bearer {token}"))
                .header("mcp-session-id", &session)
                .header("mcp-protocol-version", "2025-06-18")
                .body(axum::body::Body::empty())
                .unwrap()
        };
        // Another caller cannot end it: for them it is not there.
        assert_eq!(r.send(delete(&eve)).await.status(), StatusCode::NOT_FOUND);
        r.request(&ana, &session, "tools/list", json!({})).await.expect("still served");
        // The SDKs take 200 or 204 as ended (rmcp's own 202 they report as
        // a failure).
        assert_eq!(r.send(delete(&ana)).await.status(), StatusCode::NO_CONTENT);
        stream.ended().await;
        not_found(&r, &ana, &session).await;
    }
}

//! API keys for agents (R6): made by a tenant's or a workspace's admin,
//! shown once, kept as a digest; a key acts at its scope and nowhere else,
//! and answers 401 the moment it is revoked or past its time.

use axum::http::StatusCode;
use lattice_core::TenantRole;
use serde_json::json;

use crate::{App, error_type};

lattice_testkit::both_backends! {
    async fn a_workspace_key_acts_in_its_workspace_alone_until_revoked(backend: Backend) {
        let app = App::new(backend).await;
        let ada = app.token("t1", "ada", TenantRole::Member, false).await;
        let (ws, th) = app.workspace_with_thread(&ada).await;
        let (other_ws, other_th) = app.workspace_with_thread(&ada).await;

        let made = app.post("/v1/api-keys", &ada, json!({"name": "triage bot", "role": "editor", "workspace": ws})).await;
        assert_eq!(made.status, StatusCode::OK, "{:?}", made.body);
        let (id, key) = (made.body["id"].as_str().unwrap().to_owned(), made.body["key"].as_str().unwrap().to_owned());
        assert!(id.starts_with("key_") && key.starts_with("lk_") && key.len() > 40, "{id} {key}");

        // At its scope: an agent, an editor of its workspace.
        let me = app.get("/v1/me", &key).await;
        assert_eq!((me.status, &me.body["user"], &me.body["agent"]), (StatusCode::OK, &json!(id), &json!(true)), "{:?}", me.body);
        let posted = app.post(&format!("/v1/threads/{th}/messages"), &key, json!({"text": "triaged"})).await;
        assert_eq!(posted.status, StatusCode::OK, "{:?}", posted.body);
        let listed = app.get("/v1/workspaces", &key).await;
        assert_eq!(listed.body.as_array().map(Vec::len), Some(1), "its workspace only: {:?}", listed.body);

        // Not beyond: another workspace is as missing, even once it is made a
        // member there; no workspace of its own; no keys, no SCIM.
        for path in [format!("/v1/threads/{other_th}"), format!("/v1/workspaces/{other_ws}/threads")] {
            assert_eq!(app.get(&path, &key).await.status, StatusCode::NOT_FOUND, "{path}");
        }
        app.post(&format!("/v1/workspaces/{other_ws}/members"), &ada, json!({"user": id, "role": "editor"})).await;
        assert_eq!(app.get(&format!("/v1/threads/{other_th}"), &key).await.status, StatusCode::NOT_FOUND, "listed elsewhere, still out of scope");
        let own = app.post("/v1/workspaces", &key, json!({"name": "Mine"})).await;
        assert_eq!((own.status, error_type(&own)), (StatusCode::FORBIDDEN, "Forbidden"), "{:?}", own.body);
        let minted = app.post("/v1/api-keys", &key, json!({"name": "child", "role": "viewer", "workspace": ws})).await;
        assert_eq!(minted.status, StatusCode::FORBIDDEN, "{:?}", minted.body);
        assert_eq!(app.post("/v1/scim-tokens", &key, json!({})).await.status, StatusCode::FORBIDDEN);

        // Listed for its workspace's admin, never with the key itself.
        let keys = app.get("/v1/api-keys", &ada).await;
        assert_eq!(keys.status, StatusCode::OK, "{:?}", keys.body);
        let row = keys.body.as_array().unwrap().iter().find(|k| k["id"] == json!(id)).cloned().unwrap();
        assert_eq!((&row["name"], &row["role"], &row["workspace"]), (&json!("triage bot"), &json!("editor"), &json!(ws)));
        assert!(row.get("last_used_at").is_some(), "its use is noted: {row}");
        assert!(!keys.body.to_string().contains(&key), "the key is shown once");

        // Revoked: 401 at once.
        let revoked = app.send("DELETE", &format!("/v1/api-keys/{id}"), Some(&ada), None).await;
        assert_eq!(revoked.status, StatusCode::OK, "{:?}", revoked.body);
        let after = app.get("/v1/me", &key).await;
        assert_eq!((after.status, error_type(&after)), (StatusCode::UNAUTHORIZED, "Unauthorized"));
        assert!(after.body["error"]["reason"].as_str().unwrap().contains("revoked"), "{:?}", after.body);
        let again = app.send("DELETE", &format!("/v1/api-keys/{id}"), Some(&ada), None).await;
        assert_eq!(again.status, StatusCode::CONFLICT, "{:?}", again.body);
        let made_up = app.get("/v1/me", "lk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA").await;
        assert_eq!(made_up.status, StatusCode::UNAUTHORIZED);
    }
}

lattice_testkit::both_backends! {
    async fn who_makes_which_key_and_for_how_long(backend: Backend) {
        let clock = lattice_core::ManualClock::new();
        let app = App::on_logged_clock(backend, clock.clone()).await;
        let ada = app.token("t1", "ada", TenantRole::Member, false).await;
        let root = app.token("t1", "root", TenantRole::TenantAdmin, false).await;
        let other = app.token("t2", "mal", TenantRole::TenantAdmin, false).await;
        let (ws, _) = app.workspace_with_thread(&ada).await;
        app.post(&format!("/v1/workspaces/{ws}/members"), &ada, json!({"user": "eve", "role": "editor"})).await;
        let eve = app.token("t1", "eve", TenantRole::Member, false).await;

        // A workspace's key: its admins; a tenant's key: the tenant's admins.
        let by_editor = app.post("/v1/api-keys", &eve, json!({"name": "x", "role": "viewer", "workspace": ws})).await;
        assert_eq!(by_editor.status, StatusCode::FORBIDDEN, "{:?}", by_editor.body);
        let by_other_tenant = app.post("/v1/api-keys", &other, json!({"name": "x", "role": "viewer", "workspace": ws})).await;
        assert_eq!(by_other_tenant.status, StatusCode::NOT_FOUND, "another tenant's workspace is not there: {:?}", by_other_tenant.body);
        let tenant_wide = app.post("/v1/api-keys", &ada, json!({"name": "x", "role": "tenant_admin"})).await;
        assert_eq!(tenant_wide.status, StatusCode::FORBIDDEN, "{:?}", tenant_wide.body);
        let operator = app.post("/v1/api-keys", &root, json!({"name": "x", "role": "deployment_admin"})).await;
        assert_eq!(operator.status, StatusCode::UNPROCESSABLE_ENTITY, "{:?}", operator.body);
        for bad in [json!({"name": "", "role": "viewer", "workspace": ws}), json!({"name": "x", "role": "owner", "workspace": ws}),
                    json!({"name": "x", "role": "viewer", "workspace": ws, "expires_in_days": 0}),
                    json!({"name": "x", "role": "viewer", "workspace": ws, "expires_in_days": 3651}),
                    json!({"name": "x".repeat(257), "role": "viewer", "workspace": ws})] {
            let r = app.post("/v1/api-keys", &root, bad.clone()).await;
            assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}: {:?}", r.body);
        }
        let longest = app.post("/v1/api-keys", &root, json!({"name": "x".repeat(256), "role": "viewer", "workspace": ws, "expires_in_days": 3650})).await;
        assert_eq!(longest.status, StatusCode::OK, "at the limits: {:?}", longest.body);

        // A tenant admin's key of the whole tenant reads every workspace.
        let made = app.post("/v1/api-keys", &root, json!({"name": "auditor", "role": "tenant_admin", "expires_in_days": 1})).await;
        let key = made.body["key"].as_str().unwrap().to_owned();
        assert_eq!(app.get(&format!("/v1/workspaces/{ws}/threads"), &key).await.status, StatusCode::OK);
        // The editor sees no key of the workspace; the other tenant none of this one.
        assert_eq!(app.get("/v1/api-keys", &eve).await.body, json!([]));
        assert_eq!(app.get("/v1/api-keys", &other).await.body, json!([]));

        // Past its day: 401.
        clock.advance(std::time::Duration::from_secs(86_400));
        let expired = app.get("/v1/me", &key).await;
        assert_eq!(expired.status, StatusCode::UNAUTHORIZED, "{:?}", expired.body);
        assert!(expired.body["error"]["reason"].as_str().unwrap().contains("expired"), "{:?}", expired.body);
    }
}

lattice_testkit::both_backends! {
    async fn keys_issued_at_once_never_pass_the_tenants_bound(backend: Backend) {
        let url = lattice_testkit::fresh_url(backend).await;
        let db = lattice_log::Db::connect(&url, 8).await.unwrap();
        db.migrate().await.unwrap();
        let app = App::over(lattice_testkit::builder_on(db).start(), lattice_agent::Models::scripted());
        // The tenant holds all but two of the keys it may: written as rows,
        // as a thousand issued keys would have left them.
        let pool = sqlx::AnyPool::connect(&url).await.unwrap();
        let max = lattice_core::directory::MAX_CREDENTIALS as i64;
        for i in 0..max - 2 {
            sqlx::query("INSERT INTO credentials (id, tenant, kind, name, scope, digest, created_by, created_at) \
                 VALUES ($1, 't1', 'api_key', 'old', '{\"kind\":\"tenant\",\"role\":\"member\"}', $2, 'root', 1)")
                .bind(format!("key_old{i}")).bind(format!("digest{i}"))
                .execute(&pool).await.unwrap();
        }
        let root = app.token("t1", "root", TenantRole::TenantAdmin, false).await;
        let issue = (0..8).map(|i| app.post("/v1/api-keys", &root, json!({"name": format!("ci{i}"), "role": "member"})));
        let answers = futures_util::future::join_all(issue).await;
        let issued = answers.iter().filter(|r| r.status == StatusCode::OK).count();
        assert_eq!(issued, 2, "{:?}", answers.iter().map(|r| (r.status, r.body.clone())).collect::<Vec<_>>());
        assert!(answers.iter().all(|r| r.status == StatusCode::OK || r.status == StatusCode::CONFLICT));
        let held: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM credentials WHERE tenant = 't1' AND kind = 'api_key'").fetch_one(&pool).await.unwrap();
        assert_eq!(held, max);
    }
}

//! The authorization matrix: each role against each command. Anything the
//! caller may not see is 404, exactly as for an id that does not exist.

use axum::http::StatusCode;
use lattice_core::TenantRole;
use serde_json::json;

use crate::App;

const ROLES: [&str; 8] = ["none", "viewer", "respondent", "editor", "admin", "tenant_admin", "deployment_admin", "other_tenant_admin"];

lattice_testkit::both_backends! {
    async fn each_role_against_each_command(backend: Backend) {
        let app = App::new(backend).await;
        let owner = app.token("t1", "owner", TenantRole::Member, false).await;
        let (ws, th) = app.workspace_with_thread(&owner).await;
        let mut tokens = Vec::new();
        for role in ROLES {
            let (tenant, tenant_role) = match role {
                "tenant_admin" => ("t1", TenantRole::TenantAdmin),
                "deployment_admin" => ("t1", TenantRole::DeploymentAdmin),
                "other_tenant_admin" => ("t2", TenantRole::TenantAdmin),
                _ => ("t1", TenantRole::Member),
            };
            let user = format!("u-{role}").replace('_', "-");
            if matches!(role, "viewer" | "respondent" | "editor" | "admin") {
                let added = app.post(&format!("/v1/workspaces/{ws}/members"), &owner, json!({"user": user, "role": role})).await;
                assert_eq!(added.status, StatusCode::OK);
            }
            tokens.push(app.token(tenant, &user, tenant_role, false).await);
        }
        let dash = json!({"title": "D", "as_of": "2026-11-29T12:00:00Z", "panels": []});
        let patch = json!({"expected_version": 1, "patch": [{"op": "replace", "path": "/title", "value": "E"}]});
        let switch = json!({"state": "on", "reason": "matrix"});
        use StatusCode as S;
        const OK: S = S::OK;
        const NF: S = S::NOT_FOUND;
        const FB: S = S::FORBIDDEN;
        //                                  none viewer resp. editor admin t-admin d-admin other
        let matrix: Vec<(&str, [StatusCode; 8])> = vec![
            ("read events",               [NF, OK, OK, OK, OK, OK, NF, NF]),
            ("read artifact",             [NF, OK, OK, OK, OK, OK, NF, NF]),
            ("list artifacts",            [NF, OK, OK, OK, OK, OK, NF, NF]),
            ("list threads",              [NF, OK, OK, OK, OK, OK, NF, NF]),
            ("effective switches",        [NF, OK, OK, OK, OK, OK, NF, NF]),
            ("submit to a form",          [NF, FB, OK, OK, OK, OK, NF, NF]),
            ("post message",              [NF, FB, FB, OK, OK, OK, NF, NF]),
            ("start thread",              [NF, FB, FB, OK, OK, OK, NF, NF]),
            ("create artifact",           [NF, FB, FB, OK, OK, OK, NF, NF]),
            ("edit artifact",             [NF, FB, FB, OK, OK, OK, NF, NF]),
            ("start a run",               [NF, FB, FB, OK, OK, OK, NF, NF]),
            ("archive another's artifact",[NF, FB, FB, FB, OK, OK, NF, NF]),
            ("add member",                [NF, FB, FB, FB, OK, OK, NF, NF]),
            ("set workspace switch",      [NF, FB, FB, FB, OK, OK, NF, NF]),
            ("set tenant switch",         [FB, FB, FB, FB, FB, OK, FB, NF]),
            ("set deployment switch",     [FB, FB, FB, FB, FB, FB, OK, FB]),
        ];
        let mut failures = Vec::new();
        for (what, expected) in &matrix {
            for (i, token) in tokens.iter().enumerate() {
                // Each attempt on an artifact gets one of the owner's of its own
                // (only those: the owner's writes are rate-limited too).
                let id = if matches!(*what, "read artifact" | "edit artifact" | "archive another's artifact") {
                    let art = app.post(&format!("/v1/threads/{th}/artifacts"), &owner, json!({"kind": "dashboard", "data": dash})).await;
                    art.body["id"].as_str().unwrap().to_owned()
                } else {
                    String::new()
                };
                let reply = match *what {
                    "read events" => app.get(&format!("/v1/threads/{th}/events?format=json"), token).await,
                    "read artifact" => app.get(&format!("/v1/artifacts/{id}"), token).await,
                    "list artifacts" => app.get(&format!("/v1/threads/{th}/artifacts"), token).await,
                    "list threads" => app.get(&format!("/v1/workspaces/{ws}/threads"), token).await,
                    "effective switches" => app.get(&format!("/v1/integrations/effective?workspace={ws}"), token).await,
                    "submit to a form" => {
                        // The owner's form of its own, for each attempt.
                        let form = json!({"title": "F", "schema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}, "submissions": "once"});
                        let form = app.post(&format!("/v1/threads/{th}/artifacts"), &owner, json!({"kind": "form", "data": form})).await;
                        let data = json!({"form_id": form.body["id"], "form_version": 1, "values": {"ok": true}});
                        app.post(&format!("/v1/threads/{th}/artifacts"), token, json!({"kind": "submission", "data": data})).await
                    }
                    "start a run" => app.post(&format!("/v1/threads/{th}/runs"), token, json!({"prompt": "go", "model": "scripted:dashboard"})).await,
                    "post message" => app.post(&format!("/v1/threads/{th}/messages"), token, json!({"text": "hi"})).await,
                    "start thread" => app.post(&format!("/v1/workspaces/{ws}/threads"), token, json!({"title": "x"})).await,
                    "create artifact" => app.post(&format!("/v1/threads/{th}/artifacts"), token, json!({"kind": "dashboard", "data": dash})).await,
                    "edit artifact" => app.send("PATCH", &format!("/v1/artifacts/{id}"), Some(token), Some(&patch.to_string())).await,
                    "archive another's artifact" => app.post(&format!("/v1/artifacts/{id}/archive"), token, json!({})).await,
                    "add member" => app.post(&format!("/v1/workspaces/{ws}/members"), token, json!({"user": "newbie", "role": "viewer"})).await,
                    "set workspace switch" => app.send("PUT", &format!("/v1/integrations/workspace:{ws}/ui:forms"), Some(token), Some(&switch.to_string())).await,
                    "set tenant switch" => app.send("PUT", "/v1/integrations/tenant:t1/ui:forms", Some(token), Some(&switch.to_string())).await,
                    "set deployment switch" => app.send("PUT", "/v1/integrations/deployment/ui:forms", Some(token), Some(&switch.to_string())).await,
                    other => unreachable!("{other}"),
                };
                if reply.status != expected[i] {
                    failures.push(format!("{what} as {}: expected {}, got {} {}", ROLES[i], expected[i], reply.status, reply.body));
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}

lattice_testkit::both_backends! {
    async fn another_tenant_cannot_tell_whether_an_id_exists(backend: Backend) {
        let app = App::new(backend).await;
        let alice = app.token("t1", "alice", TenantRole::Member, false).await;
        let (ws, th) = app.workspace_with_thread(&alice).await;
        let created = app.post(&format!("/v1/threads/{th}/artifacts"), &alice,
            json!({"id": "secret-plan", "kind": "dashboard", "data": {"title": "D", "as_of": "2026-11-29T12:00:00Z", "panels": []}})).await;
        assert_eq!(created.status, StatusCode::OK);
        let mallory = app.token("t2", "mallory", TenantRole::TenantAdmin, false).await;
        for (existing, missing) in [
            ("/v1/artifacts/secret-plan".to_string(), "/v1/artifacts/no-such-plan".to_owned()),
            (format!("/v1/threads/{th}/events?format=json"), "/v1/threads/th_nothing/events?format=json".to_owned()),
            (format!("/v1/workspaces/{ws}/threads"), "/v1/workspaces/ws_nothing/threads".to_owned()),
            (format!("/v1/integrations/effective?workspace={ws}"), "/v1/integrations/effective?workspace=ws_nothing".to_owned()),
            (format!("/v1/threads/{th}"), "/v1/threads/th_nothing".to_owned()),
        ] {
            let a = app.get(&existing, &mallory).await;
            let b = app.get(&missing, &mallory).await;
            assert_eq!((a.status, &a.body), (b.status, &b.body), "{existing} tells itself apart from {missing}");
            assert_eq!(a.status, StatusCode::NOT_FOUND);
        }
        // Listing someone on another tenant's thread: as if it did not exist.
        let a = app.post(&format!("/v1/threads/{th}/members"), &mallory, json!({"user": "mallory", "role": "viewer"})).await;
        let b = app.post("/v1/threads/th_nothing/members", &mallory, json!({"user": "mallory", "role": "viewer"})).await;
        assert_eq!((a.status, &a.body), (b.status, &b.body));
        assert_eq!(a.status, StatusCode::NOT_FOUND);
        let listed = app.get("/v1/workspaces", &mallory).await;
        assert_eq!(listed.body, json!([]));
        assert_eq!(app.get("/v1/threads", &mallory).await.body, json!([]));
    }
}

lattice_testkit::both_backends! {
    async fn each_listing_against_a_restricted_and_a_shared_thread(backend: Backend) {
        let app = App::new(backend).await;
        let owner = app.token("t1", "owner", TenantRole::Member, false).await;
        let (ws, open) = app.workspace_with_thread(&owner).await;
        let secret = app.post(&format!("/v1/workspaces/{ws}/threads"), &owner, json!({"title": "Salaries", "restricted": true})).await;
        assert_eq!(secret.status, StatusCode::OK, "{}", secret.body);
        let secret = secret.body["id"].as_str().unwrap().to_owned();
        // Columns: who, their workspace role, and how they are listed on
        // the restricted thread (an outsider: on the open thread).
        const WHO: [(&str, Option<&str>, Option<&str>); 9] = [
            ("unlisted-editor", Some("editor"), None),
            ("listed-viewer", Some("editor"), Some("viewer")),
            ("listed-respondent", Some("viewer"), Some("respondent")),
            ("listed-editor", Some("viewer"), Some("editor")),
            ("ws-admin", Some("admin"), None),
            ("tenant-admin", None, None),
            ("outsider-viewer", None, Some("viewer")),
            ("outsider-respondent", None, Some("respondent")),
            ("other-tenant-admin", None, None),
        ];
        let mut tokens = Vec::new();
        for (user, ws_role, listed) in WHO {
            if let Some(role) = ws_role {
                assert_eq!(app.post(&format!("/v1/workspaces/{ws}/members"), &owner, json!({"user": user, "role": role})).await.status, StatusCode::OK);
            }
            if let Some(role) = listed {
                let on = if user.starts_with("outsider") { &open } else { &secret };
                let shared = app.post(&format!("/v1/threads/{on}/members"), &owner, json!({"user": user, "role": role})).await;
                assert_eq!(shared.status, StatusCode::OK, "{user}: {}", shared.body);
            }
            let (tenant, role) = match user {
                "tenant-admin" => ("t1", TenantRole::TenantAdmin),
                "other-tenant-admin" => ("t2", TenantRole::TenantAdmin),
                _ => ("t1", TenantRole::Member),
            };
            tokens.push(app.token(tenant, user, role, false).await);
        }
        // An outsider is never an editor, and nobody is listed as admin.
        let refused = app.post(&format!("/v1/threads/{open}/members"), &owner, json!({"user": "stranger", "role": "editor"})).await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
        let refused = app.post(&format!("/v1/threads/{secret}/members"), &owner, json!({"user": "ws-admin", "role": "admin"})).await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
        let dash = json!({"title": "D", "as_of": "2026-11-29T12:00:00Z", "panels": []});
        let art = app.post(&format!("/v1/threads/{secret}/artifacts"), &owner, json!({"kind": "dashboard", "data": dash})).await;
        let art = art.body["id"].as_str().unwrap().to_owned();
        use StatusCode as S;
        const OK: S = S::OK;
        const NF: S = S::NOT_FOUND;
        const FB: S = S::FORBIDDEN;
        //                          unlisted l-view l-resp l-edit ws-adm t-adm out-v out-r other
        let matrix: Vec<(&str, [StatusCode; 9])> = vec![
            ("read the thread",        [NF, OK, OK, OK, OK, OK, NF, NF, NF]),
            ("read its events",        [NF, OK, OK, OK, OK, OK, NF, NF, NF]),
            ("list its artifacts",     [NF, OK, OK, OK, OK, OK, NF, NF, NF]),
            ("read its artifact",      [NF, OK, OK, OK, OK, OK, NF, NF, NF]),
            ("submit to its form",     [NF, FB, OK, OK, OK, OK, NF, NF, NF]),
            ("post in it",             [NF, FB, FB, OK, OK, OK, NF, NF, NF]),
            ("start a run in it",      [NF, FB, FB, OK, OK, OK, NF, NF, NF]),
            ("list someone on it",     [NF, FB, FB, FB, OK, OK, NF, NF, NF]),
            ("read the open thread",   [OK, OK, OK, OK, OK, OK, OK, OK, NF]),
            ("submit to an open form", [OK, OK, FB, FB, OK, OK, FB, OK, NF]),
            ("post in the open one",   [OK, OK, FB, FB, OK, OK, FB, FB, NF]),
            ("list the workspace",     [OK, OK, OK, OK, OK, OK, NF, NF, NF]),
        ];
        let mut failures = Vec::new();
        for (what, expected) in &matrix {
            for (i, token) in tokens.iter().enumerate() {
                let (app, owner) = (&app, &owner);
                let submit = |th: String| async move {
                    let form = json!({"title": "F", "schema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}, "submissions": "once"});
                    let form = app.post(&format!("/v1/threads/{th}/artifacts"), owner, json!({"kind": "form", "data": form})).await;
                    let data = json!({"form_id": form.body["id"], "form_version": 1, "values": {"ok": true}});
                    app.post(&format!("/v1/threads/{th}/artifacts"), token, json!({"kind": "submission", "data": data})).await
                };
                let reply = match *what {
                    "read the thread" => app.get(&format!("/v1/threads/{secret}"), token).await,
                    "read its events" => app.get(&format!("/v1/threads/{secret}/events?format=json"), token).await,
                    "list its artifacts" => app.get(&format!("/v1/threads/{secret}/artifacts"), token).await,
                    "read its artifact" => app.get(&format!("/v1/artifacts/{art}"), token).await,
                    "submit to its form" => submit(secret.clone()).await,
                    "post in it" => app.post(&format!("/v1/threads/{secret}/messages"), token, json!({"text": "hi"})).await,
                    "start a run in it" => app.post(&format!("/v1/threads/{secret}/runs"), token, json!({"prompt": "go", "model": "scripted:dashboard"})).await,
                    "list someone on it" => app.post(&format!("/v1/threads/{secret}/members"), token, json!({"user": "newbie", "role": "viewer"})).await,
                    "read the open thread" => app.get(&format!("/v1/threads/{open}/events?format=json"), token).await,
                    "submit to an open form" => submit(open.clone()).await,
                    "post in the open one" => app.post(&format!("/v1/threads/{open}/messages"), token, json!({"text": "hi"})).await,
                    "list the workspace" => app.get(&format!("/v1/workspaces/{ws}/threads"), token).await,
                    other => unreachable!("{other}"),
                };
                if reply.status != expected[i] {
                    failures.push(format!("{what} as {}: expected {}, got {} {}", WHO[i].0, expected[i], reply.status, reply.body));
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        // Not listed, a restricted thread is exactly an id that does not exist.
        let unlisted = &tokens[0];
        let a = app.get(&format!("/v1/threads/{secret}/events?format=json"), unlisted).await;
        let b = app.get("/v1/threads/th_nothing/events?format=json", unlisted).await;
        assert_eq!((a.status, a.body), (b.status, b.body));
        // The workspace's list leaves it out for the unlisted, not for the listed.
        let ids = |reply: crate::Reply| reply.body.as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap().to_owned()).collect::<Vec<_>>();
        assert!(!ids(app.get(&format!("/v1/workspaces/{ws}/threads"), unlisted).await).contains(&secret));
        assert!(ids(app.get(&format!("/v1/workspaces/{ws}/threads"), &tokens[1]).await).contains(&secret));
        // An outsider finds what is shared with it, and its role there.
        let listed = app.get("/v1/threads", &tokens[7]).await;
        assert_eq!(listed.body.as_array().unwrap().len(), 1);
        assert_eq!((listed.body[0]["id"].as_str(), listed.body[0]["role"].as_str()), (Some(open.as_str()), Some("respondent")));
        let one = app.get(&format!("/v1/threads/{secret}"), &tokens[1]).await;
        assert_eq!((one.body["restricted"].clone(), one.body["role"].clone()), (json!(true), json!("viewer")));
    }
}

lattice_testkit::both_backends! {
    async fn what_a_caller_may_not_see_answers_as_what_does_not_exist_wherever_it_is_named(backend: Backend) {
        // A server offered to t2 only.
        let config = json!({"url": "http://127.0.0.1:9/mcp", "allow_internal": true, "tenants": ["t2"]});
        let servers = std::collections::BTreeMap::from([("secret".to_owned(), serde_json::from_value(config).unwrap())]);
        let connections = lattice_connect::Connections::configure(&servers).unwrap();
        let app = App::connected(backend, connections, lattice_agent::Models::scripted()).await;
        let ana = app.token("t1", "ana", TenantRole::TenantAdmin, false).await;
        let (ws, th) = app.workspace_with_thread(&ana).await;
        let same = |a: &crate::Reply, b: &crate::Reply, what: &str| {
            assert_eq!((a.status, &a.body), (b.status, &b.body), "{what} tells itself apart from what does not exist");
        };

        // A switch key named in the path: another tenant's server is no key.
        for level in ["tenant:t1".to_owned(), format!("workspace:{ws}")] {
            let off = json!({"state": "off", "reason": "probe"});
            let theirs = app.send_put(&format!("/v1/integrations/{level}/mcp:secret"), &ana, off.clone()).await;
            let none = app.send_put(&format!("/v1/integrations/{level}/mcp:never-configured"), &ana, off).await;
            same(&theirs, &none, "another tenant's server");
            assert_eq!(theirs.status, StatusCode::NOT_FOUND);
        }

        // An artifact named in a body: ana's dashboard, sent to from a
        // workspace bob holds where dashboards are off (its switch would
        // tell its kind).
        let dash = json!({"kind": "dashboard", "data": {"title": "Pay", "as_of": "2026-11-29T12:00:00Z", "panels": []}});
        let hidden = app.post(&format!("/v1/threads/{th}/artifacts"), &ana, dash).await.body["id"].as_str().unwrap().to_owned();
        let bob = app.token("t1", "bob", TenantRole::Member, false).await;
        let (his, his_thread) = app.workspace_with_thread(&bob).await;
        let off = app.send_put(&format!("/v1/integrations/workspace:{his}/ui:dashboards"), &bob, json!({"state": "off", "reason": "quiet"})).await;
        assert_eq!(off.status, StatusCode::OK, "{}", off.body);
        let submit = |form: &str| json!({"kind": "submission", "data": {"form_id": form, "form_version": 1, "values": {}}});
        let to_hidden = app.post(&format!("/v1/threads/{his_thread}/artifacts"), &bob, submit(&hidden)).await;
        let to_none = app.post(&format!("/v1/threads/{his_thread}/artifacts"), &bob, submit("art_nothing")).await;
        same(&to_hidden, &to_none, "a dashboard in another workspace");
        assert_eq!(to_hidden.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", to_hidden.body);

        // An app's calls route: without the app's capability every id is
        // refused blind, the same 403 whether it exists or not (the MCP
        // exporter's app-only tools answer the same way).
        let calls = |id: &str| format!("/v1/artifacts/{id}/calls");
        let call = json!({"tool": "get_state", "arguments": {}});
        let a = app.post(&calls(&hidden), &bob, call.clone()).await;
        let b = app.post(&calls("art_nothing"), &bob, call).await;
        same(&a, &b, "an artifact bob may not see, on the calls route");
        assert_eq!(a.status, StatusCode::FORBIDDEN, "{}", a.body);
    }
}

//! A connected server's app in the chat: its calls, made by the chat host
//! with the app's capability, go back to its server through the server's
//! policy with the `mcp-app:<server>` overlay first, each decision an
//! audit row, a person confirming exactly the arguments when it asks, a
//! reader refused, and nothing at all while the server's key is off.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::http::StatusCode;
use lattice_agent::{Model, ModelError, ModelReply, ModelRequest, Models};
use lattice_core::{RunStatus, TenantRole, ToolCall};
use serde_json::{Value, json};

use crate::App;

/// Calls the clock's tool once, then says it is done.
struct ShowsTheClock;

#[async_trait::async_trait]
impl Model for ShowsTheClock {
    async fn reply(&self, request: ModelRequest) -> Result<ModelReply, ModelError> {
        let called = request.messages.iter().any(|m| matches!(m, lattice_agent::ChatMessage::Tool { .. }));
        Ok(if called {
            ModelReply { text: Some("There is the clock.".into()), tool_calls: vec![], tokens: None }
        } else {
            let call = ToolCall { id: "c1".into(), name: "clock__get_time".into(), arguments: json!({}) };
            ModelReply { text: None, tool_calls: vec![call], tokens: None }
        })
    }
}

fn connections(url: &str) -> lattice_connect::Connections {
    let config: lattice_connect::ServerConfig = serde_json::from_value(json!({
        "url": url,
        "allow_internal": true,
        "timeout_secs": 2,
        "policy": {"default": "allow", "tools": {"write_note": "ask"}},
        "app_policy": {"tools": {"slow": "deny"}},
    }))
    .unwrap();
    lattice_connect::Connections::configure(&BTreeMap::from([("clock".to_owned(), config)])).unwrap()
}

lattice_testkit::both_backends! {
    async fn a_servers_apps_calls_go_back_to_it_decided_and_audited(backend: Backend) {
        let server = lattice_testkit::mcp_server::start().await;
        let models = Models::default().with("clock", Arc::new(ShowsTheClock), true);
        let app = App::connected(backend, connections(&server.url), models).await;
        let ops = app.token("t1", "olga", TenantRole::DeploymentAdmin, false).await;
        let on = app.send_put("/v1/integrations/deployment/ui:mini-apps", &ops, json!({"state": "on", "reason": "opt in"})).await;
        assert_eq!(on.status, StatusCode::OK, "{:?}", on.body);
        let alice = app.token("t1", "alice", TenantRole::Member, false).await;
        let (ws, th) = app.workspace_with_thread(&alice).await;
        let vera = app.token("t1", "vera", TenantRole::Member, false).await;
        let added = app.post(&format!("/v1/workspaces/{ws}/members"), &alice, json!({"user": "vera", "role": "viewer"})).await;
        assert_eq!(added.status, StatusCode::OK, "{:?}", added.body);

        // The agent calls the clock; its app is in the thread.
        let started = app.post(&format!("/v1/threads/{th}/runs"), &alice, json!({"prompt": "What time is it?"})).await;
        assert_eq!(started.status, StatusCode::OK, "{:?}", started.body);
        let run = started.body["run_id"].as_str().unwrap().to_owned();
        for _ in 0..200 {
            if app.get(&format!("/v1/runs/{run}"), &alice).await.body["status"] == json!(RunStatus::Finished.as_str()) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        let apps = app.get(&format!("/v1/threads/{th}/artifacts?kind=app"), &alice).await;
        let listed = apps.body.as_array().or(apps.body["artifacts"].as_array()).cloned().unwrap_or_default();
        assert_eq!(listed.len(), 1, "{:?}", apps.body);
        let id = listed[0]["id"].as_str().unwrap().to_owned();
        assert_eq!(listed[0]["data"]["server"]["name"], "clock");

        let capability = |token: String| {
            let (app, id) = (&app, id.clone());
            async move { app.post(&format!("/v1/artifacts/{id}/capability"), &token, json!({})).await.body["capability"].as_str().map(str::to_owned) }
        };
        let cap = capability(alice.clone()).await.unwrap();
        let call = |token: String, cap: String, tool: &'static str, arguments: Value| {
            let (app, id) = (&app, id.clone());
            async move { app.post(&format!("/v1/artifacts/{id}/calls"), &token, json!({"tool": tool, "arguments": arguments, "capability": cap})).await }
        };
        let before = server.counts.calls.load(Ordering::SeqCst);

        // Allowed: the server's own answer comes back.
        let done = call(alice.clone(), cap.clone(), "get_time", json!({})).await;
        assert_eq!(done.status, StatusCode::OK, "{:?}", done.body);
        assert_eq!(done.body["status"], "done", "{:?}", done.body);
        assert_eq!(done.body["result"]["structuredContent"]["time"], "12:00");
        // A tool for apps only is the app's to call.
        let refreshed = call(alice.clone(), cap.clone(), "refresh", json!({})).await;
        assert_eq!(refreshed.body["status"], "done", "{:?}", refreshed.body);
        // The overlay denies one.
        let denied = call(alice.clone(), cap.clone(), "slow", json!({})).await;
        assert_eq!(denied.body["status"], "refused", "{:?}", denied.body);
        assert!(denied.body["reason"].as_str().unwrap().contains("mcp-app:clock denies slow"), "{:?}", denied.body);
        // A tool for the model alone is refused to the app, with its row.
        let model_only = call(alice.clone(), cap.clone(), "reset", json!({})).await;
        assert_eq!(model_only.status, StatusCode::FORBIDDEN, "{:?}", model_only.body);
        // A tool the server does not list is refused before anything is sent.
        let unknown = call(alice.clone(), cap.clone(), "format_disk", json!({})).await;
        assert_eq!(unknown.status, StatusCode::UNPROCESSABLE_ENTITY, "{:?}", unknown.body);
        assert_eq!(server.counts.calls.load(Ordering::SeqCst), before + 2, "two calls reached the server");

        // Ask: the person confirms exactly the recorded arguments.
        let asked = call(alice.clone(), cap.clone(), "write_note", json!({"note": "hi"})).await;
        assert_eq!(asked.body["status"], "confirm", "{:?}", asked.body);
        assert_eq!(asked.body["arguments"], json!({"note": "hi"}));
        let confirmation = asked.body["confirmation"].as_str().unwrap().to_owned();
        assert_eq!(server.counts.calls.load(Ordering::SeqCst), before + 2, "nothing sent before the person said yes");
        let confirmed = app.post(&format!("/v1/app-calls/{confirmation}"), &alice, json!({"accept": true})).await;
        assert_eq!(confirmed.body["status"], "done", "{:?}", confirmed.body);
        assert_eq!(confirmed.body["result"]["content"][0]["text"], "noted: hi");
        let again = app.post(&format!("/v1/app-calls/{confirmation}"), &alice, json!({"accept": true})).await;
        assert_ne!(again.body["status"], "done", "a confirmation is used once: {:?}", again.body);

        // A viewer's app calls none of the server's tools.
        let vcap = capability(vera.clone()).await.unwrap();
        let read_only = call(vera.clone(), vcap, "get_time", json!({})).await;
        assert_eq!(read_only.status, StatusCode::FORBIDDEN, "{:?}", read_only.body);

        // Every decision is a row the workspace's admins read.
        let rows = app.get(&format!("/v1/artifacts/{id}/calls"), &alice).await;
        let mut decided: Vec<(String, String)> = rows.body.as_array().unwrap().iter()
            .map(|r| (r["tool"].as_str().unwrap().to_owned(), r["decision"].as_str().unwrap().to_owned())).collect();
        decided.reverse();
        let expected: Vec<(String, String)> = [("get_time", "allow"), ("refresh", "allow"), ("slow", "deny"), ("reset", "deny"), ("write_note", "ask"), ("write_note", "confirmed"), ("get_time", "read_only")]
            .iter().map(|(t, d)| (t.to_string(), d.to_string())).collect();
        assert_eq!(decided, expected);

        // The console's list: the server, whether it answers, its calls here.
        let listed = app.get("/v1/integrations/servers", &alice).await;
        assert_eq!(listed.status, StatusCode::OK, "{:?}", listed.body);
        let clock = &listed.body[0];
        assert_eq!((clock["name"].clone(), clock["key"].clone(), clock["transport"].clone(), clock["address"].clone(), clock["tools"].clone()),
            (json!("clock"), json!("mcp:clock"), json!("http"), json!("127.0.0.1"), json!(9)), "{clock}");
        let calls = clock["calls"].as_array().unwrap();
        assert_eq!(calls.len(), 8, "the agent's call and the app's seven decisions: {calls:?}");
        assert_eq!((calls[0]["tool"].clone(), calls[0]["decision"].clone(), calls[0]["caller"].clone()), (json!("get_time"), json!("read_only"), json!("app")));
        assert_eq!((calls[7]["tool"].clone(), calls[7]["caller"].clone()), (json!("get_time"), json!("agent")));
        // vera administers nothing: she sees the server, and no call.
        let hers = app.get("/v1/integrations/servers", &vera).await;
        assert_eq!(hers.body[0]["calls"], json!([]), "{:?}", hers.body);

        // The server's key off in the workspace: the app's calls stop there.
        let off = app.send_put(&format!("/v1/integrations/workspace:{ws}/mcp:clock"), &alice, json!({"state": "off", "reason": "incident"})).await;
        assert_eq!(off.status, StatusCode::OK, "{:?}", off.body);
        let stopped = call(alice.clone(), cap.clone(), "get_time", json!({})).await;
        assert_eq!(stopped.status, StatusCode::LOCKED, "{:?}", stopped.body);
        assert_eq!(stopped.body["error"]["key"], "mcp:clock", "{:?}", stopped.body);
        let effective = app.get(&format!("/v1/integrations/effective?workspace={ws}"), &alice).await;
        assert_eq!(effective.body["mcp:clock"]["enabled"], false, "{:?}", effective.body);
    }
}

//! MCP logging: nothing is told until the client sets a level; then what a
//! call does (a form asked, waited on, answered) at and above that level.
#![allow(deprecated)]

use std::sync::{Arc, Mutex};

use lattice_core::TenantRole;
use rmcp::model::{CallToolRequestParams, LoggingLevel, LoggingMessageNotificationParam, SetLevelRequestParams};
use rmcp::service::{NotificationContext, RoleClient};
use serde_json::{Value, json};

use crate::Stack;

/// A host that keeps the log messages it is told.
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<LoggingMessageNotificationParam>>>);

impl rmcp::ClientHandler for Logs {
    async fn on_logging_message(&self, params: LoggingMessageNotificationParam, _: NotificationContext<RoleClient>) {
        self.0.lock().unwrap().push(params);
    }
}

impl Logs {
    fn said(&self) -> Vec<(LoggingLevel, String)> {
        self.0.lock().unwrap().iter().map(|m| (m.level, m.data["message"].as_str().unwrap_or_default().to_owned())).collect()
    }
}

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else { panic!("an object") };
    CallToolRequestParams::new(name.to_owned()).with_arguments(arguments)
}

lattice_testkit::both_backends! {
    async fn a_client_hears_what_a_call_does_at_the_level_it_set(backend: Backend) {
        let s = Stack::new(backend, "").await;
        let alice = lattice_testkit::authenticator().mint(&lattice_testkit::principal("t1", "alice", TenantRole::Member, false));
        let (_, th) = s.workspace_with_thread(&alice).await;
        let logs = Logs::default();
        let client = s.mcp_with(&alice, logs.clone()).await;
        assert!(client.peer_info().unwrap().capabilities.logging.is_some(), "logging is declared");
        let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}});
        let ask = |title: &str| call(lattice_agent::tools::ASK_FORM, json!({"title": title, "schema": schema, "thread": th}));

        // No level set: nothing told.
        client.call_tool(ask("Quiet?")).await.unwrap();
        assert_eq!(logs.said(), vec![]);

        // At info: the form asked, and that it waits in lattice.
        client.set_level(SetLevelRequestParams::new(LoggingLevel::Info)).await.unwrap();
        let asked = serde_json::to_value(client.call_tool(ask("Heard?")).await.unwrap()).unwrap();
        let form = asked["structuredContent"]["receipt"]["id"].as_str().unwrap().to_owned();
        // (Notifications reach the client's handler in any order.)
        let said = logs.said();
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(said.contains(&(LoggingLevel::Info, format!("asked \"Heard?\" in {th} as {form}"))), "{said:?}");
        assert!(said.iter().any(|(l, m)| *l == LoggingLevel::Notice && m.starts_with(&format!("{form} waits in lattice"))), "{said:?}");

        // A wait: a tick at info while it waits, the answer at notice.
        let waiting = {
            let client = client.peer().clone();
            let form = form.clone();
            tokio::spawn(async move { client.call_tool(call(lattice_mcp::FORM_SUBMISSIONS, json!({"id": form, "wait_seconds": 30}))).await })
        };
        // The first tick (the wait ticks every 2 s on its own clock), then the answer.
        let tick = |(l, m): &(LoggingLevel, String)| *l == LoggingLevel::Info && m.starts_with(&format!("waiting for an answer to {form}: ")) && m.ends_with(" s of 30");
        lattice_testkit::until("a tick while the wait waits", async || logs.said().iter().any(tick)).await;
        let data = json!({"form_id": form, "form_version": 1, "values": {"ok": true}});
        s.ok("POST", &format!("/v1/threads/{th}/artifacts"), &alice, Some(json!({"kind": "submission", "data": data}))).await;
        waiting.await.unwrap().unwrap();
        let said = logs.said();
        assert!(said.contains(&(LoggingLevel::Notice, format!("{form} was answered by alice"))), "{said:?}");

        // At warning: nothing of this is told.
        let before = logs.said().len();
        client.set_level(SetLevelRequestParams::new(LoggingLevel::Warning)).await.unwrap();
        client.call_tool(ask("Quiet again?")).await.unwrap();
        assert_eq!(logs.said().len(), before);
    }
}

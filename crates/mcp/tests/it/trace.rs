//! A tool call joins the caller's trace (MCP SEP-414): the `traceparent`
//! in its request's `_meta` is kept with the envelope it commits, which the
//! bridge carries on to NATS; one that does not parse is not kept.

use lattice_core::TenantRole;
use rmcp::model::{CallToolRequestParams, RequestMetaObject};
use serde_json::{Value, json};

use crate::Stack;

const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

lattice_testkit::both_backends! {
    async fn a_tool_calls_traceparent_is_kept_with_what_it_commits(backend: Backend) {
        let s = Stack::new(backend, "").await;
        let alice = lattice_testkit::authenticator().mint(&lattice_testkit::principal("t1", "alice", TenantRole::Member, false));
        let (_, th) = s.workspace_with_thread(&alice).await;
        let client = s.mcp(&alice).await;
        for (title, traceparent) in [("Traced", TRACEPARENT), ("Not traced", "00-nonsense")] {
            let mut meta = RequestMetaObject::new();
            meta.set_traceparent(traceparent);
            let Value::Object(arguments) = json!({"title": title, "panels": [], "thread": th}) else { unreachable!() };
            let mut call = CallToolRequestParams::new(lattice_agent::tools::SHOW_DASHBOARD).with_arguments(arguments);
            call.meta = Some(meta);
            let result = serde_json::to_value(client.call_tool(call).await.unwrap()).unwrap();
            assert_ne!(result["isError"], true, "{result}");
        }
        // The reader reads up to the horizon, which on PostgreSQL reaches
        // a commit a moment after the call that made it answered.
        let reader = lattice_log::LogReader::of(&s.log);
        let created = lattice_testkit::eventually("both artifacts read", async || {
            let created = reader
                .read(0, 100)
                .await
                .unwrap()
                .into_iter()
                .map(|e| serde_json::to_value(e).unwrap())
                .filter(|e| e["type"] == "artifact_created")
                .map(|e| (e["payload"]["data"]["title"].as_str().unwrap_or_default().to_owned(), e["traceparent"].as_str().map(str::to_owned)))
                .collect::<Vec<_>>();
            (created.len() >= 2).then_some(created)
        })
        .await;
        assert_eq!(created, vec![("Traced".to_owned(), Some(TRACEPARENT.to_owned())), ("Not traced".to_owned(), None)]);
    }
}

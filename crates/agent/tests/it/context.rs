//! What an app tells the agent (MCP Apps' `ui/update-model-context`):
//! kept per app, the last one wins, bounded, governed, and read by the
//! thread's next model call as untrusted data.

use std::sync::Arc;

use lattice_agent::{ChatMessage, ModelReply, Models, Runner};
use lattice_core::{ArtifactId, Command, Error, Level, Role, RunStatus, SwitchKey, SwitchState, TenantRole, ThreadId, UserId, WorkspaceId};
use lattice_testkit::who;
use serde_json::json;

use crate::{Script, wait_for};

lattice_testkit::both_backends! {
    async fn an_apps_last_context_reaches_the_threads_next_model_call(backend: Backend) {
        let log = lattice_testkit::service(backend).await;
        let alice = who("t1", "alice", TenantRole::Member);
        let ws = log.execute(&alice, Command::CreateWorkspace { name: "W".into() }).await.unwrap().id.unwrap();
        let ws = WorkspaceId::parse("ws", &ws).unwrap();
        log.execute(&alice, Command::AddMember { workspace: ws.clone(), user: UserId::parse("u", "vera").unwrap(), role: Role::Viewer }).await.unwrap();
        let th = log.execute(&alice, Command::CreateThread { workspace: ws.clone(), title: "T".into(), restricted: false }).await.unwrap().id.unwrap();
        let th = ThreadId::parse("th", &th).unwrap();
        let apps = |state| Command::SetSwitch { level: Level::Workspace(ws.clone()), key: SwitchKey::MiniApps, state, reason: "test".into() };
        let ops = who("t1", "olga", TenantRole::DeploymentAdmin);
        log.execute(&ops, Command::SetSwitch { level: Level::Deployment, key: SwitchKey::MiniApps, state: SwitchState::On, reason: "opt in".into() }).await.unwrap();
        let data = json!({"title": "Picker", "summary": "Picks a region", "html": "<p>hi</p>", "state": {}});
        let agent = lattice_testkit::trusted(&log).vouch(lattice_core::Principal { agent: true, ..alice.principal().clone() });
        let app = log.execute(&agent, Command::CreateArtifact { thread: th.clone(), id: None, kind: "app".into(), data }).await.unwrap().id.unwrap();
        let app = ArtifactId::parse("id", &app).unwrap();
        let tell = |text: String| Command::SetAppContext { artifact: app.clone(), text, structured: None };

        // Bounded at its edge: 8 KiB passes, one byte more is refused.
        log.execute(&alice, tell("x".repeat(8 * 1024))).await.unwrap();
        let over = log.execute(&alice, tell("x".repeat(8 * 1024 + 1))).await.unwrap_err();
        assert!(matches!(&over, Error::ValidationFailed { .. }), "{over:?}");
        // Only a kind that says so (an app) tells the agent what it shows.
        let dashboard = json!({"title": "D", "as_of": "2026-11-29T12:00:00Z", "panels": []});
        let dashboard = log.execute(&alice, Command::CreateArtifact { thread: th.clone(), id: None, kind: "dashboard".into(), data: dashboard }).await.unwrap().id.unwrap();
        let told = Command::SetAppContext { artifact: ArtifactId::parse("id", &dashboard).unwrap(), text: "hi".into(), structured: None };
        let refused = log.execute(&alice, told).await.unwrap_err().to_string();
        assert!(refused.contains("a dashboard does not tell the agent what it shows"), "{refused}");
        // A viewer's app does not speak for the thread; the switch governs it.
        let vera = who("t1", "vera", TenantRole::Member);
        assert!(matches!(log.execute(&vera, tell("hi".into())).await, Err(Error::Forbidden { .. })));
        log.execute(&alice, apps(SwitchState::Off)).await.unwrap();
        assert_eq!(log.execute(&alice, tell("hi".into())).await.unwrap_err(), Error::NotEnabled { key: "ui:mini-apps".into() });
        log.execute(&alice, apps(SwitchState::Unset)).await.unwrap();

        log.execute(&alice, tell("The person picked eu-west.".into())).await.unwrap();
        log.execute(&alice, Command::SetAppContext { artifact: app.clone(), text: "The person picked us-east.".into(), structured: Some(json!({"region": "us-east"})) }).await.unwrap();
        let script = Script::new(vec![ModelReply { text: Some("ok".into()), tool_calls: vec![], tokens: None }]);
        let runner = Runner::new(lattice_testkit::trusted(&log), Models::default().with("m", Arc::new(script.clone()), true));
        let run = runner.start(&alice, th.clone(), "What did I pick?".into(), None, None).await.unwrap();
        wait_for(&log, &alice, &run, RunStatus::Finished).await;
        let seen = script.seen.lock().unwrap()[0].messages.clone();
        let told: Vec<&String> = seen.iter().filter_map(|m| match m { ChatMessage::User { content } if content.contains("app context") => Some(content), _ => None }).collect();
        assert_eq!(told.len(), 1, "one context per app: {seen:?}");
        assert!(told[0].contains("The person picked us-east.") && told[0].contains(r#"{"region":"us-east"}"#), "{}", told[0]);
        assert!(!told[0].contains("eu-west"), "the last one wins");
        let boundary = told[0].split("boundary=\"").nth(1).and_then(|rest| rest.get(..24)).unwrap_or_default();
        assert!(told[0].contains(&format!("\n<untrusted-data source=\"app context\" author=\"{app}\" boundary=\"{boundary}\">\n")), "{}", told[0]);
        assert!(told[0].ends_with(&format!("\n</untrusted-data boundary=\"{boundary}\">")), "{}", told[0]);

        // An archived app says nothing more.
        log.execute(&alice, Command::ArchiveArtifact { id: app.clone() }).await.unwrap();
        let run = runner.start(&alice, th, "Again?".into(), None, None).await.unwrap();
        wait_for(&log, &alice, &run, RunStatus::Finished).await;
        let seen = script.seen.lock().unwrap()[1].messages.clone();
        assert!(!seen.iter().any(|m| matches!(m, ChatMessage::User { content } if content.contains("app context"))));
    }
}

use lattice_agent::tools::{ASK_FORM, ASK_USER, CREATE_APP, CREATE_FORM, SHOW_DASHBOARD, UPDATE_APP, UPDATE_DASHBOARD};
use lattice_agent::{ModelReply, Models, Runner};
use lattice_core::{Command, Error, Level, Role, RunStatus, SwitchKey, SwitchState, TenantRole, ThreadId, ToolCall, UserId, WorkspaceId};
use lattice_log::LogService;
use lattice_testkit::{service_on, who};
use serde_json::json;

use crate::{Script, wait_for};

fn call(id: &str, name: &str, arguments: serde_json::Value) -> ToolCall {
    ToolCall { id: id.into(), name: name.into(), arguments }
}

fn tools_reply(calls: Vec<ToolCall>) -> ModelReply {
    ModelReply { text: None, tool_calls: calls, tokens: None }
}

fn text_reply(text: &str) -> ModelReply {
    ModelReply { text: Some(text.into()), tool_calls: vec![], tokens: None }
}

fn form_args() -> serde_json::Value {
    json!({"title": "T", "schema": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}})
}

async fn workspace(log: &LogService) -> (WorkspaceId, ThreadId) {
    let alice = who("t1", "alice", TenantRole::Member);
    let ws = log.execute(&alice, Command::CreateWorkspace { name: "W".into() }).await.unwrap().id.unwrap();
    let ws = WorkspaceId::parse("ws", &ws).unwrap();
    let th = log.execute(&alice, Command::CreateThread { workspace: ws.clone(), title: "T".into(), restricted: false }).await.unwrap().id.unwrap();
    log.execute(&alice, Command::AddMember { workspace: ws.clone(), user: UserId::parse("u", "bob").unwrap(), role: Role::Editor }).await.unwrap();
    (ws, ThreadId::parse("th", &th).unwrap())
}

lattice_testkit::both_backends! {
    async fn a_message_answers_ask_user_and_never_an_ask_form(backend: Backend) {
        let log = lattice_testkit::service(backend).await;
        let (_, th) = workspace(&log).await;
        let script = Script::new(vec![
            tools_reply(vec![call("q1", ASK_USER, json!({"question": "Which region?"})), call("f1", ASK_FORM, form_args())]),
            text_reply("done"),
        ]);
        let runner = Runner::new(lattice_testkit::trusted(&log), Models::default().with("script", std::sync::Arc::new(script.clone()), true));
        let alice = who("t1", "alice", TenantRole::Member);
        let run = runner.start(&alice, th.clone(), "go".into(), None, None).await.unwrap();
        wait_for(&log, &alice, &run, RunStatus::Paused).await;

        let bob = who("t1", "bob", TenantRole::Member);
        log.execute(&bob, Command::PostMessage { thread: th.clone(), text: "eu-west".into() }).await.unwrap();
        runner.message_posted(&bob, &th, "eu-west").await.unwrap();
        let view = wait_for(&log, &alice, &run, RunStatus::Paused).await;
        let by_tool = |name: &str| view.requests.iter().find(|r| r.tool_name == name).unwrap().clone();
        assert_eq!(by_tool(ASK_USER).answered_by.as_deref(), Some("bob"));
        assert_eq!(by_tool(ASK_USER).answer, Some(json!("eu-west")));
        assert_eq!(by_tool(ASK_FORM).answered_by, None, "a message answered an ask_form");
        // A resume is recorded before message_posted returns: none was.
        let events = lattice_testkit::trusted(&log).run_log(&alice.principal().tenant, &run).await.unwrap();
        assert!(!events.iter().any(|e| e.event_type() == "run_resumed"), "the run went on without the form");
        assert_eq!(log.run(&alice, &run).await.unwrap().run.status, RunStatus::Paused);

        runner.answer(&alice, &run, "f1".into(), json!({"ok": true})).await.unwrap();
        let done = wait_for(&log, &alice, &run, RunStatus::Finished).await;
        assert_eq!(done.run.acting_for, "alice");
        // The model saw both answers, as untrusted data.
        let last = script.seen.lock().unwrap().last().unwrap().clone();
        let tool_texts: Vec<String> = last.messages.iter().filter_map(|m| match m {
            lattice_agent::ChatMessage::Tool { content, .. } => Some(content.clone()),
            _ => None,
        }).collect();
        assert_eq!(tool_texts.len(), 2);
        assert!(tool_texts.iter().all(|t| t.starts_with("<untrusted-data")), "{tool_texts:?}");
    }
}

lattice_testkit::both_backends! {
    async fn tools_follow_the_switches_at_each_call(backend: Backend) {
        let log = lattice_testkit::service(backend).await;
        let (ws, th) = workspace(&log).await;
        let alice = who("t1", "alice", TenantRole::Member);
        let script = Script::new(vec![
            tools_reply(vec![call("f1", ASK_FORM, form_args())]),
            tools_reply(vec![call("f2", ASK_FORM, form_args())]),
            text_reply("done"),
        ]);
        let runner = Runner::new(lattice_testkit::trusted(&log), Models::default().with("script", std::sync::Arc::new(script.clone()), true));
        // Mini apps are off by default: create_app is not offered.
        let run = runner.start(&alice, th.clone(), "go".into(), None, None).await.unwrap();
        wait_for(&log, &alice, &run, RunStatus::Paused).await;
        let first = script.offered.lock().unwrap()[0].clone();
        assert!(first.contains(&ASK_FORM.to_owned()) && first.contains(&SHOW_DASHBOARD.to_owned()), "{first:?}");
        assert!(!first.contains(&CREATE_APP.to_owned()) && !first.contains(&UPDATE_APP.to_owned()), "{first:?}");

        // Forms off: the open ask_form cannot be answered, and is not offered again.
        log.execute(&alice, Command::SetSwitch { level: Level::Workspace(ws.clone()), key: SwitchKey::Forms, state: SwitchState::Off, reason: "pause".into() })
            .await
            .unwrap();
        let err = runner.answer(&alice, &run, "f1".into(), json!({"ok": true})).await.unwrap_err();
        assert_eq!(err, Error::NotEnabled { key: "ui:forms".into() });
        let second = runner.start(&alice, th.clone(), "again".into(), None, None).await.unwrap();
        wait_for(&log, &alice, &second, RunStatus::Finished).await;
        let offered = script.offered.lock().unwrap()[1].clone();
        assert!(!offered.contains(&ASK_FORM.to_owned()) && !offered.contains(&CREATE_FORM.to_owned()), "{offered:?}");
        // The model called ask_form anyway: it got an error back, not a pause on a form.
        let events = lattice_testkit::trusted(&log).run_log(&alice.principal().tenant, &second).await.unwrap();
        let refused = events.iter().find(|e| e.event_type() == "tool_returned").expect("a tool result");
        assert_eq!(refused.event.payload()["is_error"], true);
        assert!(refused.event.payload()["result"].as_str().unwrap().contains("ui:forms is switched off"));
    }
}

lattice_testkit::both_backends! {
    async fn a_refused_schema_goes_back_to_the_model_before_anything_pauses(backend: Backend) {
        let log = lattice_testkit::service(backend).await;
        let (_, th) = workspace(&log).await;
        let alice = who("t1", "alice", TenantRole::Member);
        let bad = json!({"title": "T", "schema": {"type": "object", "properties": {"zip": {"type": "string", "pattern": "^[0-9]+$"}}}});
        let script = Script::new(vec![
            tools_reply(vec![call("f1", ASK_FORM, bad)]),
            tools_reply(vec![call("f2", ASK_FORM, form_args())]),
            text_reply("done"),
        ]);
        let runner = Runner::new(lattice_testkit::trusted(&log), Models::default().with("script", std::sync::Arc::new(script.clone()), true));
        let run = runner.start(&alice, th, "go".into(), None, None).await.unwrap();
        let view = wait_for(&log, &alice, &run, RunStatus::Paused).await;
        assert_eq!(view.requests.len(), 1);
        assert_eq!(view.requests[0].tool_call_id, "f2");
        let events = lattice_testkit::trusted(&log).run_log(&alice.principal().tenant, &run).await.unwrap();
        let retry = events.iter().find(|e| e.event_type() == "tool_returned").unwrap();
        assert!(retry.event.payload()["result"].as_str().unwrap().contains("properties.zip.pattern"), "{}", retry.event.payload());
    }
}

lattice_testkit::both_backends! {
    async fn a_paused_run_survives_a_restart(backend: Backend) {
        let url = lattice_testkit::fresh_url(backend).await;
        let alice = who("t1", "alice", TenantRole::Member);
        let (run, th) = {
            let db = lattice_log::Db::connect(&url, 4).await.unwrap();
            db.migrate().await.unwrap();
            let log = service_on(db);
            let (_, th) = workspace(&log).await;
            let runner = Runner::new(lattice_testkit::trusted(&log), Models::scripted());
            let run = runner.start(&alice, th.clone(), "Report".into(), Some("scripted:ask_form".into()), None).await.unwrap();
            wait_for(&log, &alice, &run, RunStatus::Paused).await;
            log.close().await;
            (run, th)
        };
        // A new service on the same database: nothing in memory survived.
        let db = lattice_log::Db::connect(&url, 4).await.unwrap();
        db.migrate().await.unwrap();
        let log = service_on(db);
        let runner = Runner::new(lattice_testkit::trusted(&log), Models::scripted());
        assert_eq!(runner.recover().await.unwrap(), 0, "a paused run is not driven until answered");
        let view = log.run(&alice, &run).await.unwrap();
        let call = view.requests[0].tool_call_id.clone();
        let bob = who("t1", "bob", TenantRole::Member);
        runner.answer(&bob, &run, call, json!({"date": "2026-11-29", "severity": "low"})).await.unwrap();
        let done = wait_for(&log, &alice, &run, RunStatus::Finished).await;
        assert_eq!(done.run.acting_for, "bob");
        let events = log.events(&alice, &lattice_log::Follow::Thread(th), 0, 100).await.unwrap();
        assert!(events.iter().any(|e| e.event_type() == "message_posted" && e.actor.name() == "bob" && e.actor.is_agent()));
    }
}

lattice_testkit::both_backends! {
    async fn a_resumed_run_acts_in_its_thread_within_its_starters_rights(backend: Backend) {
        let log = lattice_testkit::service(backend).await;
        let (ws, th) = workspace(&log).await;
        let alice = who("t1", "alice", TenantRole::Member);
        // A dashboard in another thread of the same workspace, and a
        // workspace bob is not in.
        let other = log.execute(&alice, Command::CreateThread { workspace: ws.clone(), title: "Other".into(), restricted: false }).await.unwrap().id.unwrap();
        let other = ThreadId::parse("th", &other).unwrap();
        let dashboard = json!({"title": "D", "as_of": "2026-11-29T12:00:00Z", "panels": []});
        let elsewhere = log.execute(&alice, Command::CreateArtifact { thread: other, id: None, kind: "dashboard".into(), data: dashboard })
            .await.unwrap().id.unwrap();
        let private = log.execute(&alice, Command::CreateWorkspace { name: "Private".into() }).await.unwrap().id.unwrap();
        let private = WorkspaceId::parse("ws", &private).unwrap();

        // bob (an editor) starts the run; a tenant admin answers its form;
        // then the model reaches for the other thread's dashboard.
        let script = Script::new(vec![
            tools_reply(vec![call("f1", ASK_FORM, form_args())]),
            tools_reply(vec![call("u1", UPDATE_DASHBOARD, json!({"id": elsewhere, "panels": []}))]),
            text_reply("done"),
        ]);
        let runner = Runner::new(lattice_testkit::trusted(&log), Models::default().with("script", std::sync::Arc::new(script.clone()), true));
        let bob = who("t1", "bob", TenantRole::Member);
        let run = runner.start(&bob, th.clone(), "go".into(), None, None).await.unwrap();
        wait_for(&log, &bob, &run, RunStatus::Paused).await;
        let boss = who("t1", "boss", TenantRole::TenantAdmin);
        runner.answer(&boss, &run, "f1".into(), json!({"ok": true})).await.unwrap();
        wait_for(&log, &bob, &run, RunStatus::Finished).await;
        let events = log.events(&bob, &lattice_log::Follow::Thread(th.clone()), 0, 500).await.unwrap();
        let refused = events.iter().find(|e| e.event_type() == "tool_returned" && e.event.payload()["tool_call_id"] == "u1").expect("the call returned");
        assert_eq!(refused.event.payload()["is_error"], true);
        assert!(refused.event.payload()["result"].as_str().unwrap().contains("is not an artifact of this thread"), "{}", refused.event.payload());
        let head = log.artifact(&alice, &lattice_core::ArtifactId::parse("id", &elsewhere).unwrap(), None).await.unwrap();
        assert_eq!(head.version, 1, "the other thread's dashboard is untouched");

        // The run acts for boss now, within what bob may do: an editor's
        // rights in this workspace, none in a workspace bob is not in.
        let row = lattice_testkit::trusted(&log).run_state(&bob.principal().tenant, &run).await.unwrap().unwrap();
        assert_eq!(row.acting_for, "boss");
        let acting = lattice_testkit::trusted(&log).vouch(lattice_testkit::trusted(&log).principal_for(&bob.principal().tenant, &row));
        let admin_only = Command::SetSwitch {
            level: Level::Workspace(ws.clone()), key: SwitchKey::Forms, state: SwitchState::Off, reason: "no".into() };
        assert!(matches!(log.execute(&acting, admin_only.clone()).await, Err(Error::Forbidden { .. })), "the run took the answerer's admin rights");
        let outside = Command::CreateThread { workspace: private, title: "x".into(), restricted: false };
        assert!(matches!(log.execute(&acting, outside).await, Err(Error::NotFound)), "the run reached a workspace its starter cannot");
        log.execute(&acting, Command::PostMessage { thread: th.clone(), text: "still mine".into() }).await.expect("an editor's write");
        // boss himself keeps his rights.
        log.execute(&boss, admin_only).await.expect("the admin's own switch");
    }
}

lattice_testkit::both_backends! {
    async fn a_respondent_answers_forms_and_does_nothing_else(backend: Backend) {
        let log = lattice_testkit::service(backend).await;
        let (ws, th) = workspace(&log).await;
        let alice = who("t1", "alice", TenantRole::Member);
        log.execute(&alice, Command::AddMember { workspace: ws.clone(), user: UserId::parse("u", "rita").unwrap(), role: Role::Respondent })
            .await
            .unwrap();
        let rita = who("t1", "rita", TenantRole::Member);
        let script = Script::new(vec![
            tools_reply(vec![call("q1", ASK_USER, json!({"question": "Which region?"})), call("f1", ASK_FORM, form_args())]),
            text_reply("done"),
        ]);
        let runner = Runner::new(lattice_testkit::trusted(&log), Models::default().with("script", std::sync::Arc::new(script), true));
        let run = runner.start(&alice, th.clone(), "go".into(), None, None).await.unwrap();
        wait_for(&log, &alice, &run, RunStatus::Paused).await;

        // The chat's question is not hers to answer; nor a message, a run, a cancel.
        assert!(matches!(runner.answer(&rita, &run, "q1".into(), json!("eu")).await, Err(Error::Forbidden { .. })));
        assert!(matches!(log.execute(&rita, Command::PostMessage { thread: th.clone(), text: "hi".into() }).await, Err(Error::Forbidden { .. })));
        assert!(matches!(runner.start(&rita, th.clone(), "go".into(), None, None).await, Err(Error::Forbidden { .. })));
        assert!(matches!(runner.cancel(&rita, &run).await, Err(Error::Forbidden { .. })));
        // The form is.
        runner.answer(&rita, &run, "f1".into(), json!({"ok": true})).await.unwrap();
        let view = log.run(&alice, &run).await.unwrap();
        assert_eq!(view.requests.iter().find(|r| r.tool_call_id == "f1").unwrap().answered_by.as_deref(), Some("rita"));
    }
}

lattice_testkit::both_backends! {
    async fn a_resume_lost_after_the_last_answer_is_recovered(backend: Backend) {
        let log = lattice_testkit::service(backend).await;
        let (_, th) = workspace(&log).await;
        let alice = who("t1", "alice", TenantRole::Member);
        let runner = Runner::new(lattice_testkit::trusted(&log), Models::scripted());
        let run = runner.start(&alice, th, "Report".into(), Some("scripted:ask_form".into()), None).await.unwrap();
        let view = wait_for(&log, &alice, &run, RunStatus::Paused).await;
        // The answer is committed, and the process stops before it resumes
        // the run: only the log's write happened.
        let bob = who("t1", "bob", TenantRole::Member);
        let answer = Command::AnswerDeferred {
            run: run.clone(),
            tool_call_id: view.requests[0].tool_call_id.clone(),
            answer: json!({"date": "2026-11-29", "severity": "low"}),
            approved: true,
        };
        log.execute(&bob, answer).await.unwrap();
        // Still paused: recover resumes only a paused run, so its 1 says
        // nothing else resumed it meanwhile.
        assert_eq!(log.run(&alice, &run).await.unwrap().run.status, RunStatus::Paused);
        assert_eq!(runner.recover().await.unwrap(), 1, "the answered run is taken up again, by this look only");
        let done = wait_for(&log, &alice, &run, RunStatus::Finished).await;
        assert_eq!(done.run.acting_for, "bob", "it goes on for whoever answered last");
        assert_eq!(runner.recover().await.unwrap(), 0, "once");
    }
}

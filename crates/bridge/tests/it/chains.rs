//! Answers join their rule's chain: a run a rule started for an event
//! carries that event's chain; a person's answer to it (its ask_form, or a
//! form it made) goes out with `chain` and no causation; a chat's own run's
//! answer carries none. A deadline's answer says it expired; an answer in
//! a restricted thread says the thread is restricted.

use std::time::Duration;

use async_nats::jetstream;
use lattice_agent::{Models, Runner};
use lattice_core::{ArtifactId, Command, RunId, RunStatus, TenantRole, ThreadId, UserId, WorkspaceId};
use lattice_log::LogService;
use lattice_testkit::nats::NatsServer;
use lattice_testkit::who;
use lattice_ui::form::Submissions;
use lattice_ui::submission::submission_id;
use serde_json::{Value, json};

use crate::stream_messages;

async fn paused_call(log: &LogService, run: &RunId) -> String {
    let alice = who("t1", "alice", TenantRole::Member);
    for _ in 0..250 {
        let view = log.run(&alice, run).await.unwrap();
        if view.run.status == RunStatus::Paused {
            return view.requests[0].tool_call_id.clone();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the run did not pause");
}

lattice_testkit::both_backends! {
    async fn an_answer_to_a_rules_run_joins_its_chain(backend: Backend) {
        let nats = NatsServer::start();
        let log = lattice_testkit::service(backend).await;
        let (stop_tx, stop) = tokio::sync::watch::channel(false);
        let bridge = crate::spawn_bridge(&log, &nats.url, stop);
        let alice = who("t1", "alice", TenantRole::Member);
        let ws = log.execute(&alice, Command::CreateWorkspace { name: "W".into() }).await.unwrap().id.unwrap();
        let workspace = WorkspaceId::parse("w", &ws).unwrap();
        let th = log.execute(&alice, Command::CreateThread { workspace: workspace.clone(), title: "T".into(), restricted: false })
            .await.unwrap().id.unwrap();
        let th = ThreadId::parse("t", &th).unwrap();
        let runner = Runner::new(lattice_testkit::trusted(&log), Models::scripted());
        runner.watch_orphans();
        let values = json!({"date": "2026-11-29", "severity": "high"});

        // A rule's run, answered by a person.
        let ruled = runner.start(&alice, th.clone(), "report".into(), Some("scripted:ask_form".into()), Some("evt-01J9-rule".into())).await.unwrap();
        runner.answer(&alice, &ruled, paused_call(&log, &ruled).await, values.clone()).await.unwrap();
        // A chat's run, answered by a person.
        let chat = runner.start(&alice, th.clone(), "report".into(), Some("scripted:ask_form".into()), None).await.unwrap();
        runner.answer(&alice, &chat, paused_call(&log, &chat).await, values.clone()).await.unwrap();
        // A form the rule's run made (its agent acting in it), and a person's submission to it.
        log.execute(&alice, Command::AddMember { workspace: workspace.clone(), user: UserId::parse("u", "bot").unwrap(), role: lattice_core::Role::Editor })
            .await.unwrap();
        let mut bot = lattice_testkit::principal("t1", "bot", TenantRole::Member, true);
        bot.run = Some(ruled.clone());
        let bot = lattice_testkit::authenticator().vouch(bot);
        let form = json!({"title": "Poll", "submissions": "many", "schema": {"type": "object", "properties": {"choice": {"enum": ["a", "b"]}}}});
        let form_id = log.execute(&bot, Command::CreateArtifact { thread: th.clone(), id: None, kind: "form".into(), data: form }).await.unwrap().id.unwrap();
        let sub = submission_id(&form_id, Submissions::Many, "alice", Some("nonce-0001"));
        log.execute(&alice, Command::CreateArtifact {
            thread: th.clone(),
            id: Some(ArtifactId::parse("id", &sub).unwrap()),
            kind: "submission".into(),
            data: json!({"form_id": form_id, "form_version": 1, "values": {"choice": "b"}, "nonce": "nonce-0001"}),
        }).await.unwrap();
        // A rule's run whose ask_form nobody answers in time.
        let late = runner.start(&alice, th.clone(), "report expires_in_secs=1".into(), Some("scripted:ask_form".into()), Some("evt-01J9-late".into()))
            .await.unwrap();

        // A submission in a restricted thread says so.
        let secret = log.execute(&alice, Command::CreateThread { workspace: workspace.clone(), title: "S".into(), restricted: true })
            .await.unwrap().id.unwrap();
        let secret = ThreadId::parse("t", &secret).unwrap();
        let form = json!({"title": "Pay", "submissions": "many", "schema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}});
        let secret_form = log.execute(&alice, Command::CreateArtifact { thread: secret.clone(), id: None, kind: "form".into(), data: form })
            .await.unwrap().id.unwrap();
        let sub = submission_id(&secret_form, Submissions::Many, "alice", Some("nonce-0002"));
        log.execute(&alice, Command::CreateArtifact {
            thread: secret.clone(),
            id: Some(ArtifactId::parse("id", &sub).unwrap()),
            kind: "submission".into(),
            data: json!({"form_id": secret_form, "form_version": 1, "values": {"ok": true}, "nonce": "nonce-0002"}),
        }).await.unwrap();

        let js = jetstream::new(async_nats::connect(&nats.url).await.unwrap());
        let mut answers: Vec<Value> = Vec::new();
        for _ in 0..300 {
            answers = stream_messages(&js).await.into_iter().filter(|(s, _, _)| s.ends_with(".ui.form_submitted")).map(|(_, _, p)| p).collect();
            if answers.len() >= 5 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        assert_eq!(answers.len(), 5, "{answers:#?}");
        let in_secret = answers.iter().find(|p| p["thread"] == secret.as_str()).unwrap();
        assert_eq!(in_secret["restricted"], true, "{in_secret}");
        let run_of = |p: &Value| p["form"]["run_id"].as_str().map(str::to_owned);
        let ruled_answer = answers.iter().find(|p| run_of(p).as_deref() == Some(ruled.as_str())).unwrap();
        assert_eq!(ruled_answer["chain"], "evt-01J9-rule");
        assert!(ruled_answer.get("restricted").is_none(), "an open thread's answer is not marked restricted");
        assert!(ruled_answer.get("causation").is_none(), "an answer is not caused by the rule's event");
        let chat_answer = answers.iter().find(|p| run_of(p).as_deref() == Some(chat.as_str())).unwrap();
        assert!(chat_answer.get("chain").is_none(), "a chat's answer started a chain: {chat_answer}");
        let submitted = answers.iter().find(|p| p["form"]["source"] == "form" && p["thread"] == th.as_str()).unwrap();
        assert_eq!(submitted["chain"], "evt-01J9-rule", "a submission to the rule's run's form joins its chain");
        let expired = answers.iter().find(|p| run_of(p).as_deref() == Some(late.as_str())).unwrap();
        assert_eq!((expired["expired"].clone(), expired["values"].clone()), (json!(true), Value::Null));
        assert_eq!((expired["author"].as_str(), expired["author_kind"].as_str()), (Some("deadline"), Some("system")));
        assert_eq!(expired["chain"], "evt-01J9-late");
        let _ = stop_tx.send(true);
        bridge.await.unwrap().unwrap();
    }
}

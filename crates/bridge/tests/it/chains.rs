//! Chains hold: lattice mints them (every message carries a `new_chain`),
//! and a run is started only with one it minted for the run's tenant. A
//! run a rule started for an event keeps the chain in a form nobody can
//! start a run with; a person's answer to it (its ask_form, or a form it
//! made) goes out with the chain the rule passed and no causation; a chat's
//! own run's answer carries none. A deadline's answer says it expired; an
//! answer in a restricted thread says the thread is restricted.

use async_nats::jetstream;
use lattice_agent::{Models, Runner};
use lattice_core::{ArtifactId, Command, Error, RunId, RunStatus, TenantRole, ThreadId, UserId, WorkspaceId};
use lattice_log::{Follow, LogService};
use lattice_testkit::nats::NatsServer;
use lattice_testkit::who;
use lattice_ui::form::Submissions;
use lattice_ui::submission::submission_id;
use serde_json::{Value, json};

use crate::stream_messages;

async fn paused_call(log: &LogService, run: &RunId) -> String {
    let alice = who("t1", "alice", TenantRole::Member);
    lattice_testkit::eventually("the run to pause", async || {
        let view = log.run(&alice, run).await.unwrap();
        (view.run.status == RunStatus::Paused).then(|| view.requests[0].tool_call_id.clone())
    })
    .await
}

/// The stream's messages once `enough` of them are there: (subject, payload).
async fn published(js: &jetstream::Context, enough: impl Fn(&[(String, Value)]) -> bool) -> Vec<(String, Value)> {
    lattice_testkit::eventually("all to be published", async || {
        Some(stream_messages(js).await.into_iter().map(|(s, _, p)| (s, p)).collect::<Vec<_>>()).filter(|m| enough(m))
    })
    .await
}

/// The `new_chain` of the message on `subject`: what a rule reacting to it passes on.
fn new_chain_of(messages: &[(String, Value)], subject: &str) -> String {
    let (_, payload) = messages.iter().find(|(s, _)| s == subject).unwrap_or_else(|| panic!("no {subject}"));
    payload["new_chain"].as_str().unwrap_or_else(|| panic!("{subject} carries no new_chain: {payload}")).to_owned()
}

lattice_testkit::both_backends! {
    async fn an_answer_to_a_rules_run_joins_its_chain(backend: Backend) {
        let nats = NatsServer::start();
        let log = lattice_testkit::service(backend).await;
        let (stop_tx, stop) = tokio::sync::watch::channel(false);
        let bridge = crate::spawn_bridge(&log, &nats.url, stop);
        let js = jetstream::new(async_nats::connect(&nats.url).await.unwrap());
        let alice = who("t1", "alice", TenantRole::Member);
        let ws = log.execute(&alice, Command::CreateWorkspace { name: "W".into() }).await.unwrap().id.unwrap();
        let workspace = WorkspaceId::parse("w", &ws).unwrap();
        let th = log.execute(&alice, Command::CreateThread { workspace: workspace.clone(), title: "T".into(), restricted: false })
            .await.unwrap().id.unwrap();
        let th = ThreadId::parse("t", &th).unwrap();
        // Another tenant's event, which a rule of t1 must not chain to.
        let olga = who("t2", "olga", TenantRole::Member);
        let elsewhere = log.execute(&olga, Command::CreateWorkspace { name: "W2".into() }).await.unwrap().id.unwrap();
        // The events rules react to: the thread's creation, and an app's event.
        let event = log.execute(&alice, Command::AppEvent { workspace: workspace.clone(), namespace: "billing".into(), name: "invoice_overdue".into(), data: json!({"id": "inv-7"}) })
            .await.unwrap();
        let late_event = format!("lattice.t1.{ws}.log.thread_created");
        let subjects = [format!("lattice.t1.{ws}.billing.invoice_overdue"), late_event.clone(), format!("lattice.t2.{elsewhere}.log.workspace_created")];
        let messages = published(&js, |m| subjects.iter().all(|s| m.iter().any(|(subject, _)| subject == s))).await;
        let chain = new_chain_of(&messages, &subjects[0]);
        assert!(chain.starts_with(&format!("{}.", event.envelope_id)), "a chain begins at its event: {chain}");
        assert!(messages.iter().all(|(_, p)| p["new_chain"].is_string()), "every message carries a new_chain");
        let foreign = new_chain_of(&messages, &subjects[2]);

        let runner = Runner::new(lattice_testkit::trusted(&log), Models::scripted());
        runner.watch_orphans();
        let values = json!({"date": "2026-11-29", "severity": "high"});

        // A rule's run, answered by a person.
        let ruled = runner.start(&alice, th.clone(), "report".into(), Some("scripted:ask_form".into()), Some(chain.clone())).await.unwrap();
        runner.answer(&alice, &ruled, paused_call(&log, &ruled).await, values.clone()).await.unwrap();
        // What the log keeps, anyone reading the thread reads: it starts no run.
        let events = log.events(&alice, &Follow::Thread(th.clone()), 0, 100).await.unwrap();
        let recorded = events.iter().find_map(|e| match &e.event {
            lattice_core::event::Event::RunStarted(started) if started.run_id == ruled.as_str() => started.chain.clone(),
            _ => None,
        }).expect("the run records its chain");
        assert_ne!(recorded, chain);
        // Nothing but a chain lattice minted for this tenant starts a run.
        for forged in [
            "evt-01J9-rule".to_owned(),                                         // whatever a caller likes
            event.envelope_id.clone(),                                          // the event's id, as rules passed it before
            recorded.clone(),                                                   // the form the log keeps
            foreign,                                                            // another tenant's
            format!("{}.{}", event.envelope_id, "0".repeat(32)),                // a MAC guessed
        ] {
            let refused = runner.start(&alice, th.clone(), "report".into(), Some("scripted:ask_form".into()), Some(forged.clone())).await.unwrap_err();
            assert!(matches!(&refused, Error::ValidationFailed { errors, .. } if errors[0].path == "chain" && errors[0].keyword == "minted"), "{forged}: {refused:?}");
        }
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
        let late_chain = new_chain_of(&messages, &late_event);
        let late = runner.start(&alice, th.clone(), "report expires_in_secs=1".into(), Some("scripted:ask_form".into()), Some(late_chain.clone()))
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

        let messages = published(&js, |m| m.iter().filter(|(s, _)| s.ends_with(".ui.form_submitted")).count() >= 5).await;
        let answers: Vec<&Value> = messages.iter().filter(|(s, _)| s.ends_with(".ui.form_submitted")).map(|(_, p)| p).collect();
        assert_eq!(answers.len(), 5, "{answers:#?}");
        let in_secret = answers.iter().find(|p| p["thread"] == secret.as_str()).unwrap();
        assert_eq!(in_secret["restricted"], true, "{in_secret}");
        let run_of = |p: &Value| p["form"]["run_id"].as_str().map(str::to_owned);
        let ruled_answer = answers.iter().find(|p| run_of(p).as_deref() == Some(ruled.as_str())).unwrap();
        assert_eq!(ruled_answer["chain"], chain.as_str(), "the answer carries the chain the rule passed");
        assert!(ruled_answer.get("restricted").is_none(), "an open thread's answer is not marked restricted");
        assert!(ruled_answer.get("causation").is_none(), "an answer is not caused by the rule's event");
        let chat_answer = answers.iter().find(|p| run_of(p).as_deref() == Some(chat.as_str())).unwrap();
        assert!(chat_answer.get("chain").is_none(), "a chat's answer joined a chain: {chat_answer}");
        assert!(chat_answer["new_chain"].as_str().is_some_and(|c| c.starts_with(chat_answer["envelope_id"].as_str().unwrap())), "{chat_answer}");
        let submitted = answers.iter().find(|p| p["form"]["source"] == "form" && p["thread"] == th.as_str()).unwrap();
        assert_eq!(submitted["chain"], chain.as_str(), "a submission to the rule's run's form joins its chain");
        let expired = answers.iter().find(|p| run_of(p).as_deref() == Some(late.as_str())).unwrap();
        assert_eq!((expired["expired"].clone(), expired["values"].clone()), (json!(true), Value::Null));
        assert_eq!((expired["author"].as_str(), expired["author_kind"].as_str()), (Some("deadline"), Some("system")));
        assert_eq!(expired["chain"], late_chain.as_str());
        // The run's own envelope says who started it, with the chain a rule passes on beside the one the log keeps.
        let started = messages.iter().find(|(s, p)| s.ends_with(".log.run_started") && p["payload"]["run_id"] == ruled.as_str()).map(|(_, p)| p).unwrap();
        assert_eq!((started["chain"].as_str(), started["payload"]["chain"].as_str()), (Some(chain.as_str()), Some(recorded.as_str())));
        assert_eq!(started["payload"]["started_by"], "alice");

        // The next hop: a rule passing an answer's chain on keeps the conversation one chain.
        let next = runner.start(&alice, th.clone(), "follow up".into(), Some("scripted:ask_form".into()), Some(ruled_answer["chain"].as_str().unwrap().to_owned()))
            .await.unwrap();
        assert_eq!(log.run(&alice, &next).await.unwrap().run.chain.as_deref(), Some(recorded.as_str()));
        let _ = stop_tx.send(true);
        bridge.await.unwrap().unwrap();
    }
}

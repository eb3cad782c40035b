//! A rule written once sees both ways of asking; what is not bridged stays
//! out; ids are the envelopes'.

use async_nats::jetstream;
use lattice_agent::{Models, Runner};
use lattice_core::{Command, RunStatus, TenantRole, ThreadId, WorkspaceId};
use lattice_testkit::nats::NatsServer;
use lattice_testkit::who;
use lattice_ui::asks::ASK_FORM;
use lattice_ui::form::Submissions;
use lattice_ui::submission::submission_id;
use serde_json::json;

use crate::stream_messages;

lattice_testkit::both_backends! {
    async fn a_rule_written_once_sees_an_ask_form_answer_and_a_form_submission(backend: Backend) {
        let nats = NatsServer::start();
        let log = lattice_testkit::service(backend).await;
        let (stop_tx, stop) = tokio::sync::watch::channel(false);
        let bridge = crate::spawn_bridge(&log, &nats.url, stop);

        let alice = who("t1", "alice", TenantRole::Member);
        let (ws, th) = crate::a_thread(&log, &alice, false).await;
        // A form artifact and a submission to it.
        let form = json!({"title": "Poll", "submissions": "many",
            "schema": {"type": "object", "properties": {"choice": {"enum": ["a", "b"]}}, "required": ["choice"]}});
        let form_id = log.execute(&alice, Command::CreateArtifact { thread: th.clone(), id: None, kind: "form".into(), data: form })
            .await.unwrap().id.unwrap();
        let sub = submission_id(&form_id, Submissions::Many, "alice", Some("nonce-0001"));
        log.execute(&alice, Command::CreateArtifact {
            thread: th.clone(),
            id: Some(lattice_core::ArtifactId::parse("id", &sub).unwrap()),
            kind: "submission".into(),
            data: json!({"form_id": form_id, "form_version": 1, "values": {"choice": "b"}, "nonce": "nonce-0001"}),
        }).await.unwrap();
        // An ask_form, answered.
        let runner = Runner::new(lattice_testkit::trusted(&log), Models::scripted());
        let run = runner.start(&alice, th.clone(), "report".into(), Some("scripted:ask_form".into()), None).await.unwrap();
        let call = lattice_testkit::eventually("the run to pause", async || {
            let view = log.run(&alice, &run).await.unwrap();
            (view.run.status == RunStatus::Paused).then(|| view.requests[0].tool_call_id.clone())
        })
        .await;
        runner.answer(&alice, &run, call, json!({"date": "2026-11-29", "severity": "high"})).await.unwrap();
        lattice_testkit::until("the run to finish", async || log.run(&alice, &run).await.unwrap().run.status == RunStatus::Finished).await;
        // An agent answering a form inside a run says so.
        log.execute(&alice, Command::AddMember { workspace: WorkspaceId::parse("w", &ws).unwrap(),
            user: lattice_core::UserId::parse("u", "bot").unwrap(), role: lattice_core::Role::Editor }).await.unwrap();
        let mut bot = lattice_testkit::principal("t1", "bot", TenantRole::Member, true);
        bot.run = Some(run.clone());
        let bot = lattice_testkit::authenticator().vouch(bot);
        let sub = submission_id(&form_id, Submissions::Many, "bot", Some("nonce-0002"));
        log.execute(&bot, Command::CreateArtifact {
            thread: th.clone(),
            id: Some(lattice_core::ArtifactId::parse("id", &sub).unwrap()),
            kind: "submission".into(),
            data: json!({"form_id": form_id, "form_version": 1, "values": {"choice": "a"}, "nonce": "nonce-0002"}),
        }).await.unwrap();

        let client = async_nats::connect(&nats.url).await.unwrap();
        let js = jetstream::new(client);
        // The bot's submission is the last thing committed.
        let messages = lattice_testkit::eventually("three form_submitted on NATS", async || {
            Some(stream_messages(&js).await).filter(|m| m.iter().filter(|(s, _, _)| s.ends_with(".ui.form_submitted")).count() >= 3)
        })
        .await;
        let rule: Vec<&(String, String, serde_json::Value)> =
            messages.iter().filter(|(s, _, _)| s.starts_with("lattice.t1.") && s.ends_with(".ui.form_submitted")).collect();
        assert_eq!(rule.len(), 3, "{:#?}", messages.iter().map(|m| &m.0).collect::<Vec<_>>());
        let sources: Vec<&str> = rule.iter().map(|(_, _, p)| p["form"]["source"].as_str().unwrap()).collect();
        assert_eq!(sources, ["form", ASK_FORM, "form"]);
        // Who acted: people by hand, the agent in its run.
        let who: Vec<(&str, &str, Option<&str>)> = rule
            .iter()
            .map(|(_, _, p)| (p["author"].as_str().unwrap(), p["author_kind"].as_str().unwrap(), p["run_id"].as_str()))
            .collect();
        assert_eq!(who, [("alice", "person", None), ("alice", "person", None), ("bot", "agent", Some(run.as_str()))]);
        assert_eq!(rule[0].2["values"], json!({"choice": "b"}));
        assert_eq!(rule[0].2["form"]["title"], "Poll");
        assert_eq!(rule[1].2["form"]["title"], "Report an incident");
        assert_eq!(rule[1].2["author"], "alice");
        assert_eq!(rule[0].0, format!("lattice.t1.{ws}.ui.form_submitted"));
        // The mapped events replace the generic ones; run_paused is not bridged.
        let subjects: Vec<&str> = messages.iter().map(|(s, _, _)| s.rsplit('.').next().unwrap()).collect();
        for absent in ["deferred_answered", "run_paused", "run_resumed", "model_replied", "tool_returned"] {
            assert!(!subjects.contains(&absent), "{absent} was bridged");
        }
        assert!(!messages.iter().any(|(s, _, p)| s.ends_with("log.artifact_created") && p["payload"]["kind"] == "submission"));
        for expected in ["workspace_created", "thread_created", "artifact_created", "run_started", "run_finished"] {
            assert!(subjects.contains(&expected), "{expected} missing");
        }
        // Each message carries its envelope's id, once.
        let events = log.events(&alice, &lattice_log::Follow::Workspace(ws.clone()), 0, 1000).await.unwrap();
        for (_, id, _) in &messages {
            assert!(events.iter().any(|e| &e.id == id), "{id} is no envelope of this workspace");
        }
        let mut ids: Vec<&String> = messages.iter().map(|(_, id, _)| id).collect();
        ids.dedup();
        assert_eq!(ids.len(), messages.len());
        let _ = stop_tx.send(true);
        bridge.await.unwrap().unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_application_event_goes_out_under_its_own_namespace() {
    let nats = NatsServer::start();
    let log = lattice_testkit::service(lattice_log::Backend::Sqlite).await;
    let alice = who("t1", "alice", TenantRole::Member);
    let ws = log.execute(&alice, Command::CreateWorkspace { name: "W".into() }).await.unwrap().id.unwrap();
    let workspace = WorkspaceId::parse("w", &ws).unwrap();
    let refused = log
        .execute(&alice, Command::AppEvent { workspace: workspace.clone(), namespace: "ui".into(), name: "form_submitted".into(), data: json!({}) })
        .await
        .unwrap_err();
    assert!(matches!(refused, lattice_core::Error::Forbidden { .. }), "{refused:?}");
    let event = log
        .execute(&alice, Command::AppEvent { workspace, namespace: "billing".into(), name: "invoice_paid".into(), data: json!({"amount": 12}) })
        .await
        .unwrap();
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    let bridge = crate::spawn_bridge(&log, &nats.url, stop);
    let js = jetstream::new(async_nats::connect(&nats.url).await.unwrap());
    let subject = format!("lattice.t1.{ws}.billing.invoice_paid");
    let (_, id, payload) = lattice_testkit::eventually("the application event on its subject", async || {
        stream_messages(&js).await.into_iter().find(|(s, _, _)| *s == subject)
    })
    .await;
    assert_eq!(id, event.envelope_id);
    assert_eq!(payload["payload"]["data"]["amount"], 12);
    let _ = stop_tx.send(true);
    bridge.await.unwrap().unwrap();
}

lattice_testkit::both_backends! {
    async fn every_payload_from_a_restricted_thread_says_so(backend: Backend) {
        let nats = NatsServer::start();
        let log = lattice_testkit::service(backend).await;
        let (stop_tx, stop) = tokio::sync::watch::channel(false);
        let bridge = crate::spawn_bridge(&log, &nats.url, stop);
        let alice = who("t1", "alice", TenantRole::Member);
        let ws = log.execute(&alice, Command::CreateWorkspace { name: "W".into() }).await.unwrap().id.unwrap();
        let workspace = WorkspaceId::parse("w", &ws).unwrap();
        let mut threads = Vec::new();
        for restricted in [false, true] {
            let th = log.execute(&alice, Command::CreateThread { workspace: workspace.clone(), title: "T".into(), restricted }).await.unwrap().id.unwrap();
            let th = ThreadId::parse("t", &th).unwrap();
            // Published as stored (a message), and decoded on the way (an artifact).
            log.execute(&alice, Command::PostMessage { thread: th.clone(), text: "the figures".into() }).await.unwrap();
            let form = json!({"title": "Poll", "submissions": "many", "schema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}});
            let form_id = log.execute(&alice, Command::CreateArtifact { thread: th.clone(), id: None, kind: "form".into(), data: form })
                .await.unwrap().id.unwrap();
            let sub = submission_id(&form_id, Submissions::Many, "alice", Some("nonce-0001"));
            log.execute(&alice, Command::CreateArtifact {
                thread: th.clone(),
                id: Some(lattice_core::ArtifactId::parse("id", &sub).unwrap()),
                kind: "submission".into(),
                data: json!({"form_id": form_id, "form_version": 1, "values": {"ok": true}, "nonce": "nonce-0001"}),
            }).await.unwrap();
            threads.push(th.to_string());
        }
        let [open, secret] = [threads[0].clone(), threads[1].clone()];

        let js = jetstream::new(async_nats::connect(&nats.url).await.unwrap());
        let messages = lattice_testkit::eventually("two form_submitted on NATS", async || {
            Some(stream_messages(&js).await).filter(|m| m.iter().filter(|(s, _, _)| s.ends_with(".ui.form_submitted")).count() == 2)
        })
        .await;
        let name = |s: &str| s.split('.').skip(3).collect::<Vec<_>>().join(".");
        let of = |thread: &str| -> Vec<(String, serde_json::Value)> {
            messages.iter().filter(|(_, _, p)| p["thread"] == thread).map(|(s, _, p)| (name(s), p.clone())).collect()
        };
        let expected = ["log.thread_created", "log.message_posted", "log.artifact_created", "ui.form_submitted"];
        for (thread, restricted) in [(&secret, Some(true)), (&open, None)] {
            let published = of(thread);
            assert_eq!(published.iter().map(|(s, _)| s.as_str()).collect::<Vec<_>>(), expected, "{published:#?}");
            for (subject, payload) in &published {
                assert_eq!(payload.get("restricted").and_then(serde_json::Value::as_bool), restricted, "{subject}: {payload}");
            }
        }
        // Besides the bridge's marks, a log payload is the envelope as the log keeps it.
        let events = log.events(&alice, &lattice_log::Follow::Thread(ThreadId::parse("t", &secret).unwrap()), 0, 100).await.unwrap();
        for (subject, mut payload) in of(&secret).into_iter().filter(|(s, _)| s.starts_with("log.")) {
            for mark in ["restricted", "chain", "new_chain"] {
                payload.as_object_mut().unwrap().remove(mark);
            }
            let stored = events.iter().find(|e| e.id == payload["id"]).unwrap();
            assert_eq!(payload, serde_json::to_value(stored).unwrap(), "{subject}");
        }
        let _ = stop_tx.send(true);
        bridge.await.unwrap().unwrap();
    }
}

/// An envelope larger than NATS takes (a connected server's app of 1.5 MiB)
/// goes out with its document summarized, and those after it follow.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_envelope_larger_than_nats_takes_goes_out_summarized_and_the_log_goes_on() {
    let nats = NatsServer::start();
    let key = lattice_core::ServerKey::configure("big").unwrap();
    let mut connected = lattice_core::Connected::default();
    connected.add(key, None);
    let db = lattice_testkit::fresh_db(lattice_log::Backend::Sqlite).await;
    let log = lattice_testkit::builder_on(db).connected(connected).start();
    let alice = who("t1", "alice", TenantRole::Member);
    let (_, th) = crate::a_thread(&log, &alice, false).await;
    let ops = who("t1", "olga", TenantRole::DeploymentAdmin);
    let on = Command::SetSwitch {
        level: lattice_core::Level::Deployment,
        key: lattice_core::SwitchKey::MiniApps,
        state: lattice_core::SwitchState::On,
        reason: "apps".into(),
    };
    log.execute(&ops, on).await.unwrap();
    // Made as lattice's runner makes one: an agent inside a run.
    let runner = lattice_testkit::trusted(&log).vouch(lattice_core::Principal {
        agent: true,
        run: Some(lattice_core::RunId::generate()),
        ..alice.principal().clone()
    });
    let html = format!("<!doctype html><p>{}</p>", "x".repeat(1536 * 1024));
    let data = lattice_ui::app::server_app("big", "show", None, "ui://big/app.html", html.clone(), json!(null), &json!({}), &json!({"content": []}));
    let thread = th.clone();
    let app = log.execute(&runner, Command::CreateArtifact { thread: thread.clone(), id: None, kind: "app".into(), data }).await.unwrap();
    let after = log.execute(&alice, Command::PostMessage { thread, text: "after".into() }).await.unwrap();
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    let bridge = crate::spawn_bridge(&log, &nats.url, stop);
    let js = jetstream::new(async_nats::connect(&nats.url).await.unwrap());
    let messages = lattice_testkit::eventually("the envelope after the app on NATS", async || {
        Some(stream_messages(&js).await).filter(|m| m.iter().any(|(_, id, _)| *id == after.envelope_id))
    })
    .await;
    let (_, _, created) = messages.iter().find(|(_, id, _)| *id == app.envelope_id).expect("the app's envelope went out");
    assert_eq!(created["payload"]["data"]["server"]["name"], "big");
    assert_eq!(created["payload"]["data"]["html"]["omitted"]["bytes"], html.len());
    assert!(messages.iter().any(|(_, id, _)| *id == after.envelope_id), "the envelope after it followed");
    let _ = stop_tx.send(true);
    bridge.await.unwrap().unwrap();
}

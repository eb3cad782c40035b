//! Agent runs over HTTP (REQUIREMENTS.md A1, L6): ask_form pauses a run, the answer
//! resumes it as the answerer.

use axum::http::StatusCode;
use lattice_agent::tools::ASK_FORM;
use lattice_core::TenantRole;
use serde_json::{Value, json};

use crate::{App, error_type};

/// Polls the run until it reaches `status`.
async fn wait_for(app: &App, token: &str, run: &str, status: &str) -> Value {
    lattice_testkit::eventually(&format!("run {run} to reach {status}"), async || {
        let r = app.get(&format!("/v1/runs/{run}"), token).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        (r.body["status"] == status).then_some(r.body)
    })
    .await
}

lattice_testkit::both_backends! {
    async fn ask_form_round_trip(backend: Backend) {
        let app = App::new(backend).await;
        let alice = app.token("t1", "alice", TenantRole::Member, false).await;
        let (ws, th) = app.workspace_with_thread(&alice).await;
        for (user, role) in [("bob", "editor"), ("vera", "viewer")] {
            app.post(&format!("/v1/workspaces/{ws}/members"), &alice, json!({"user": user, "role": role})).await;
        }
        let bob = app.token("t1", "bob", TenantRole::Member, false).await;
        let vera = app.token("t1", "vera", TenantRole::Member, false).await;

        let started = app.post(&format!("/v1/threads/{th}/runs"), &alice, json!({"prompt": "Report an incident", "model": "scripted:ask_form"})).await;
        assert_eq!(started.status, StatusCode::OK, "{}", started.body);
        let run = started.body["run_id"].as_str().unwrap().to_owned();
        let paused = wait_for(&app, &alice, &run, "paused").await;
        let requests = paused["requests"].as_array().unwrap();
        assert_eq!(requests.len(), 1);
        assert_eq!(requests[0]["tool_name"], ASK_FORM);
        assert_eq!(requests[0]["args"]["schema"]["properties"]["severity"]["enum"][0], "low");
        let call = requests[0]["tool_call_id"].as_str().unwrap().to_owned();
        let answers = format!("/v1/runs/{run}/answers");

        let invalid = app.post(&answers, &bob, json!({"tool_call_id": call, "answer": {"date": "2026-02-30", "severity": "high"}})).await;
        assert_eq!((invalid.status, error_type(&invalid)), (StatusCode::UNPROCESSABLE_ENTITY, "ValidationFailed"));
        assert_eq!(invalid.body["error"]["errors"][0]["path"], "answer.date");
        assert_eq!(wait_for(&app, &alice, &run, "paused").await["requests"][0].get("answered_by"), None);

        let viewer = app.post(&answers, &vera, json!({"tool_call_id": call, "answer": {"date": "2026-11-29", "severity": "high"}})).await;
        assert_eq!(viewer.status, StatusCode::FORBIDDEN);

        let values = json!({"date": "2026-11-29", "severity": "high", "affected": ["API"], "note": "5xx on search"});
        let ok = app.post(&answers, &bob, json!({"tool_call_id": call, "answer": values})).await;
        assert_eq!(ok.status, StatusCode::OK, "{}", ok.body);
        let finished = wait_for(&app, &alice, &run, "finished").await;
        assert_eq!(finished["requests"][0]["answered_by"], "bob");
        assert_eq!(finished["acting_for"], "bob");

        let second = app.post(&answers, &alice, json!({"tool_call_id": call, "answer": values})).await;
        assert_eq!((second.status, second.body["error"]["answered_by"].clone()), (StatusCode::CONFLICT, json!("bob")));

        let events = app.get(&format!("/v1/threads/{th}/events?format=json"), &alice).await.body["events"].as_array().unwrap().clone();
        let answered = events.iter().find(|e| e["type"] == "deferred_answered").expect("deferred_answered in the log");
        assert_eq!(answered["payload"]["tool_name"], ASK_FORM);
        assert_eq!(answered["payload"]["author"], "bob");
        assert_eq!(answered["payload"]["answer"], values);
        assert_eq!(answered["actor"]["user"], "bob");
        let after: Vec<&Value> = events.iter().skip_while(|e| e["type"] != "run_resumed").collect();
        assert!(!after.is_empty(), "no run_resumed");
        for e in &after {
            assert_eq!(e["actor"]["user"], "bob", "the resumed segment acts for the answerer: {e}");
            assert_eq!(e["actor"]["kind"], "agent");
            assert_eq!(e["actor"]["run"], run.as_str());
        }
        let reply = after.iter().find(|e| e["type"] == "message_posted").expect("the agent's message");
        let text = reply["payload"]["text"].as_str().unwrap();
        assert!(text.contains("5xx on search") && text.contains("untrusted-data"), "{text}");
        assert_eq!(after.last().unwrap()["type"], "run_finished");
    }
}

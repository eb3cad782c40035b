//! A respondent's answer to an ask_form resumes the run like any answer:
//! 200, the run goes on to its end, and what it does next it does for its
//! starter (the respondent only answered; it may not act in a run), never
//! with more than the starter may. Also when the resume was lost and the
//! runner's recovery takes the run up.

use axum::http::StatusCode;
use lattice_core::{Command, RunId, TenantRole};
use serde_json::{Value, json};

use crate::{App, error_type};

async fn wait_for(app: &App, token: &str, run: &str, status: &str) -> Value {
    lattice_testkit::eventually(&format!("run {run} to reach {status}"), async || {
        let r = app.get(&format!("/v1/runs/{run}"), token).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        (r.body["status"] == status).then_some(r.body)
    })
    .await
}

struct Scene {
    app: App,
    alice: String,
    rita: String,
    th: String,
}

/// alice's thread; rita a respondent of the workspace.
async fn scene(backend: lattice_log::Backend) -> Scene {
    let app = App::new(backend).await;
    let alice = app.token("t1", "alice", TenantRole::Member, false).await;
    let (ws, th) = app.workspace_with_thread(&alice).await;
    let added = app.post(&format!("/v1/workspaces/{ws}/members"), &alice, json!({"user": "rita", "role": "respondent"})).await;
    assert_eq!(added.status, StatusCode::OK, "{:?}", added.body);
    let rita = app.token("t1", "rita", TenantRole::Member, false).await;
    Scene { app, alice, rita, th }
}

impl Scene {
    /// A run of the scripted ask_form model, paused on its form: (run, tool call).
    async fn paused(&self) -> (String, String) {
        let started = self
            .app
            .post(&format!("/v1/threads/{}/runs", self.th), &self.alice, json!({"prompt": "Report an incident", "model": "scripted:ask_form"}))
            .await;
        assert_eq!(started.status, StatusCode::OK, "{}", started.body);
        let run = started.body["run_id"].as_str().unwrap().to_owned();
        let paused = wait_for(&self.app, &self.alice, &run, "paused").await;
        (run, paused["requests"][0]["tool_call_id"].as_str().unwrap().to_owned())
    }

    /// What the run recorded after its resume, with the message it posted.
    async fn after_resume(&self) -> Vec<Value> {
        let events =
            self.app.get(&format!("/v1/threads/{}/events?format=json", self.th), &self.alice).await.body["events"].as_array().unwrap().clone();
        assert!(events.iter().filter(|e| e["type"] == "run_started").count() == 1, "one run in the thread");
        events.into_iter().skip_while(|e| e["type"] != "run_resumed").collect()
    }

    /// The run finished for its starter, and its last message quotes the answer.
    async fn finished_for_the_starter(&self, run: &str, note: &str) {
        let done = wait_for(&self.app, &self.alice, run, "finished").await;
        assert_eq!(done["requests"][0]["answered_by"], "rita");
        assert_eq!(done["acting_for"], "alice", "the answerer only answered");
        let after = self.after_resume().await;
        assert!(!after.is_empty(), "no run_resumed");
        for e in &after {
            assert_eq!((e["actor"]["kind"].as_str(), e["actor"]["user"].as_str()), (Some("agent"), Some("alice")), "{e}");
        }
        let reply = after.iter().find(|e| e["type"] == "message_posted").expect("the agent's message");
        let text = reply["payload"]["text"].as_str().unwrap();
        assert!(text.contains(note) && text.contains("untrusted-data"), "{text}");
        assert_eq!(after.last().unwrap()["type"], "run_finished");
    }
}

lattice_testkit::both_backends! {
    async fn a_respondents_answer_resumes_the_run_for_its_starter(backend: Backend) {
        let s = scene(backend).await;
        let (run, call) = s.paused().await;
        let values = json!({"date": "2026-11-29", "severity": "high", "affected": ["API"], "note": "5xx on search"});
        let answered = s.app.post(&format!("/v1/runs/{run}/answers"), &s.rita, json!({"tool_call_id": call, "answer": values})).await;
        assert_eq!(answered.status, StatusCode::OK, "{}", answered.body);
        s.finished_for_the_starter(&run, "5xx on search").await;
        // The respondent gained nothing by answering: still no message of her own.
        let posted = s.app.post(&format!("/v1/threads/{}/messages", s.th), &s.rita, json!({"text": "hi"})).await;
        assert_eq!(error_type(&posted), "Forbidden");
    }
}

lattice_testkit::both_backends! {
    async fn a_respondents_answer_whose_resume_was_lost_is_recovered_for_the_starter(backend: Backend) {
        let s = scene(backend).await;
        let (run, call) = s.paused().await;
        // The answer is committed and the process stops before it resumes
        // the run: only the log's write happened.
        let rita = s.app.log.authenticator().verify(&s.rita).unwrap();
        let answer = Command::AnswerDeferred {
            run: RunId::parse("run", &run).unwrap(),
            tool_call_id: call,
            answer: json!({"date": "2026-11-29", "severity": "low", "note": "slow pages"}),
            approved: true,
        };
        s.app.log.execute(&rita, answer).await.unwrap();
        let runner = lattice_agent::Runner::new(lattice_testkit::trusted(&s.app.log), lattice_agent::Models::scripted());
        assert_eq!(runner.recover().await.unwrap(), 1, "the answered run is taken up again");
        s.finished_for_the_starter(&run, "slow pages").await;
        assert_eq!(runner.recover().await.unwrap(), 0, "once");
    }
}

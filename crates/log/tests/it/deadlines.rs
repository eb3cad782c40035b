//! A deferred request's deadline, by the log's clock: nobody may answer
//! it once it passed, and the scheduler's look answers it `expired` as
//! the deadline actor. The test moves the clock and looks; it never waits
//! for the deadline.

use std::time::Duration;

use lattice_core::clock::{Clock, ManualClock};
use lattice_core::{Command, DeferredRequest, Error, RunId, RunStep, TenantRole};
use lattice_log::{Authenticated, DEADLINE_ACTOR, EXPIRED, Expired};
use lattice_testkit::{authenticator, both_backends, principal, service_with_clock, trusted, who};
use lattice_ui::asks::ASK_USER;
use serde_json::json;

use crate::workspace_with_thread;

fn runner(run: &RunId) -> Authenticated {
    let mut p = principal("t1", "alice", TenantRole::Member, true);
    p.run = Some(run.clone());
    authenticator().vouch(p)
}

both_backends! {
    async fn a_request_past_its_deadline_is_answered_expired_when_the_clock_passes_it(backend: Backend) {
        let clock = ManualClock::new();
        let log = service_with_clock(backend, clock.clone()).await;
        let mut expirations = trusted(&log).expirations();
        let alice = who("t1", "alice", TenantRole::Member);
        let (_, thread) = workspace_with_thread(&log, &alice).await;
        let started = log.execute(&alice, Command::StartRun { thread, prompt: "Report".into(), model: "scripted".into(), chain: None, context: Vec::new() }).await.unwrap();
        let run = RunId::parse("run", started.id.as_deref().unwrap()).unwrap();
        let request = |id: &str| DeferredRequest {
            tool_call_id: id.into(),
            tool_name: ASK_USER.into(),
            args: json!({"question": "Ship it?"}),
            expires_in_secs: Some(60),
            expires_at: None,
            sign_in: None,
        };
        let paused = RunStep::Paused { requests: vec![request("q1"), request("q2")] };
        log.execute(&runner(&run), Command::RecordRun { run: run.clone(), step: paused }).await.unwrap();
        let deadline = log.run(&alice, &run).await.unwrap().requests[0].expires_at.unwrap();
        assert_eq!(deadline, clock.now_ms() + 60_000, "a deadline counts from the pause, by the log's clock");

        // Not yet due: the look answers nothing.
        clock.advance(Duration::from_secs(59));
        assert_eq!(log.expire_due().await.unwrap(), 0);
        let answer = |id: &str| Command::AnswerDeferred { run: run.clone(), tool_call_id: id.into(), answer: json!("yes"), approved: true };
        log.execute(&alice, answer("q1")).await.unwrap();

        // Past it: nobody may answer, and the look answers for nobody.
        clock.advance(Duration::from_secs(1));
        let late = log.execute(&alice, answer("q2")).await.unwrap_err();
        assert!(matches!(late, Error::InvalidState { ref reason, .. } if reason.contains("expired at")), "{late:?}");
        // The scheduler may have looked first: either way, once a look
        // returns, what was due is answered.
        assert!(log.expire_due().await.unwrap() <= 1);
        let view = log.run(&alice, &run).await.unwrap();
        assert_eq!(view.requests[0].answered_by.as_deref(), Some("alice"));
        assert_eq!(view.requests[1].answered_by.as_deref(), Some(DEADLINE_ACTOR));
        assert_eq!(view.requests[1].answer, Some(json!(EXPIRED)));
        let told = tokio::time::timeout(Duration::from_secs(5), expirations.recv()).await.expect("the runner is told").unwrap();
        assert_eq!(told, Expired { tenant: alice.principal().tenant.clone(), run: run.clone() });
        assert_eq!(log.expire_due().await.unwrap(), 0, "an answered request is not answered twice");
    }
}

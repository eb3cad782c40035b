//! ask_form deadlines: kept in the database by the log's scheduler, never
//! by a timer in memory. Past one, lattice answers `expired` as the system
//! actor `deadline`, the run goes on with that answer, and a late answer
//! is refused; a restart of every service in between changes nothing.
//! What is past is the log's clock's to say: the tests move a
//! `ManualClock` and have the scheduler look, never wait for a deadline.

use std::time::Duration;

use lattice_agent::{Models, Runner};
use lattice_core::clock::{Clock, ManualClock, SharedClock};
use lattice_core::event::Event;
use lattice_core::{Actor, Command, Error, Role, RunStatus, TenantRole, ThreadId, UserId, WorkspaceId};
use lattice_log::{Db, Follow, LogService};
use lattice_testkit::{builder_on, fresh_url, who};
use serde_json::json;

use crate::wait_for;

async fn thread(log: &LogService) -> ThreadId {
    let alice = who("t1", "alice", TenantRole::Member);
    let ws = log.execute(&alice, Command::CreateWorkspace { name: "W".into() }).await.unwrap().id.unwrap();
    let ws = WorkspaceId::parse("ws", &ws).unwrap();
    log.execute(&alice, Command::AddMember { workspace: ws.clone(), user: UserId::parse("u", "bob").unwrap(), role: Role::Respondent })
        .await
        .unwrap();
    let th = log.execute(&alice, Command::CreateThread { workspace: ws, title: "T".into(), restricted: false }).await.unwrap().id.unwrap();
    ThreadId::parse("th", &th).unwrap()
}

/// A log service on the database at `url`, reading time from `clock`: a
/// replica, or the same service after a restart.
async fn open_db(url: &str, clock: SharedClock) -> LogService {
    let db = Db::connect(url, 4).await.unwrap();
    db.migrate().await.unwrap();
    builder_on(db).clock(clock).start()
}

lattice_testkit::both_backends! {
    async fn an_ask_form_past_its_deadline_is_answered_expired_across_a_restart(backend: Backend) {
        let url = fresh_url(backend).await;
        let clock = ManualClock::new();
        let alice = who("t1", "alice", TenantRole::Member);
        let (run, th, deadline) = {
            let log = open_db(&url, clock.clone()).await;
            let th = thread(&log).await;
            let runner = Runner::new(lattice_testkit::trusted(&log), Models::scripted());
            let run = runner
                .start(&alice, th.clone(), "Report within expires_in_secs=2".into(), Some("scripted:ask_form".into()), None)
                .await
                .unwrap();
            let view = wait_for(&log, &alice, &run, RunStatus::Paused).await;
            let deadline = view.requests[0].expires_at.expect("the request has a deadline");
            assert_eq!(deadline, clock.now_ms() + 2_000, "the deadline is two seconds after the pause, by the log's clock");
            // The pause says when the deadline passes.
            let events = log.events(&alice, &Follow::Thread(th.clone()), 0, 100).await.unwrap();
            let expires = events.iter().find_map(|e| match &e.event {
                Event::RunPaused(p) => p.requests[0].expires_at.clone(),
                _ => None,
            });
            assert_eq!(lattice_log::parse_rfc3339(&expires.expect("the pause carries expires_at")).unwrap(), deadline);
            assert_eq!(view.requests[0].answered_by, None);
            // Every service stops before the deadline.
            log.close().await;
            (run, th, deadline)
        };
        // Nothing runs while the deadline all but passes.
        clock.advance(Duration::from_millis(2_000 - 1));
        let log = open_db(&url, clock.clone()).await;
        let runner = Runner::new(lattice_testkit::trusted(&log), Models::scripted());
        runner.watch_orphans();
        log.expire_due().await.unwrap();
        let view = log.run(&alice, &run).await.unwrap();
        assert_eq!((view.run.status, view.requests[0].answered_by.as_deref()), (RunStatus::Paused, None), "answered before its deadline");
        // The deadline passes; once a look returns (this one, or the
        // scheduler's own), the request is answered and the run goes on.
        clock.advance(Duration::from_millis(1));
        log.expire_due().await.unwrap();
        let done = wait_for(&log, &alice, &run, RunStatus::Finished).await;
        let request = &done.requests[0];
        assert_eq!(request.answered_by.as_deref(), Some(lattice_log::DEADLINE_ACTOR));
        assert_eq!(request.answer, Some(json!("expired")));
        let events = log.events(&alice, &Follow::Thread(th.clone()), 0, 100).await.unwrap();
        let answered = events.iter().find(|e| e.event_type() == "deferred_answered").unwrap();
        assert_eq!(answered.actor, Actor::System { name: "deadline".into() });
        assert_eq!(lattice_log::parse_rfc3339(&answered.at).unwrap(), deadline, "answered at its deadline, by the log's clock");
        assert!(matches!(&answered.event, Event::DeferredAnswered(a) if a.expired && !a.approved));
        let finished = events.iter().find_map(|e| match &e.event {
            Event::RunFinished(f) => f.text.clone(),
            _ => None,
        });
        assert!(finished.unwrap().contains("in time"), "the model was told the form expired");
        // A late answer: refused, the state unchanged.
        let bob = who("t1", "bob", TenantRole::Member);
        let late = runner.answer(&bob, &run, request.tool_call_id.clone(), json!({"date": "2026-11-29", "severity": "low"})).await;
        assert!(matches!(late, Err(Error::InvalidState { .. })), "{late:?}");
    }
}

lattice_testkit::both_backends! {
    async fn an_answer_after_the_deadline_is_refused_before_the_scheduler_looks(backend: Backend) {
        let url = fresh_url(backend).await;
        let clock = ManualClock::new();
        let log = open_db(&url, clock.clone()).await;
        let alice = who("t1", "alice", TenantRole::Member);
        let th = thread(&log).await;
        let runner = Runner::new(lattice_testkit::trusted(&log), Models::scripted());
        let run = runner.start(&alice, th, "expires_in_secs=1".into(), Some("scripted:ask_form".into()), None).await.unwrap();
        let view = wait_for(&log, &alice, &run, RunStatus::Paused).await;
        let call = view.requests[0].tool_call_id.clone();
        // The scheduler stops with its service; the deadline still holds.
        log.close().await;
        drop(log);
        clock.advance(Duration::from_secs(1));
        // The new service's scheduler first looks a while after it starts:
        // the answer comes before.
        let log = open_db(&url, clock.clone()).await;
        let runner = Runner::new(lattice_testkit::trusted(&log), Models::scripted());
        let bob = who("t1", "bob", TenantRole::Member);
        let late = runner.answer(&bob, &run, call, json!({"date": "2026-11-29", "severity": "low"})).await;
        match late {
            Err(Error::InvalidState { reason, .. }) => assert!(reason.contains("expired") || reason.contains("deadline"), "{reason}"),
            other => panic!("a late answer was not refused: {other:?}"),
        }
    }
}

lattice_testkit::both_backends! {
    async fn a_deadline_out_of_bounds_goes_back_to_the_model(backend: Backend) {
        let log = lattice_testkit::service(backend).await;
        let alice = who("t1", "alice", TenantRole::Member);
        let th = thread(&log).await;
        let runner = Runner::new(lattice_testkit::trusted(&log), Models::scripted());
        // A week passes; a week and a second does not.
        let at_limit = format!("expires_in_secs={}", lattice_core::run::MAX_EXPIRES_IN_SECS);
        let run = runner.start(&alice, th.clone(), at_limit, Some("scripted:ask_form".into()), None).await.unwrap();
        let view = wait_for(&log, &alice, &run, RunStatus::Paused).await;
        assert_eq!(view.requests.len(), 1);
        let over = format!("expires_in_secs={}", lattice_core::run::MAX_EXPIRES_IN_SECS + 1);
        let run = runner.start(&alice, th, over, Some("scripted:ask_form".into()), None).await.unwrap();
        let view = wait_for(&log, &alice, &run, RunStatus::Finished).await;
        assert!(view.requests.is_empty(), "a deadline over a week paused the run");
    }
}

lattice_testkit::both_backends! {
    async fn two_replicas_answer_a_deadline_once(backend: Backend) {
        let url = fresh_url(backend).await;
        let clock = ManualClock::new();
        let (a, b) = (open_db(&url, clock.clone()).await, open_db(&url, clock.clone()).await);
        let alice = who("t1", "alice", TenantRole::Member);
        let th = thread(&a).await;
        let runner_a = Runner::new(lattice_testkit::trusted(&a), Models::scripted());
        let runner_b = Runner::new(lattice_testkit::trusted(&b), Models::scripted());
        runner_a.watch_orphans();
        runner_b.watch_orphans();
        let run = runner_a.start(&alice, th.clone(), "expires_in_secs=1".into(), Some("scripted:ask_form".into()), None).await.unwrap();
        wait_for(&a, &alice, &run, RunStatus::Paused).await;
        // Both replicas look at once, the moment the deadline passes (their
        // schedulers may look too): one answer between them.
        clock.advance(Duration::from_secs(1));
        let (by_a, by_b) = tokio::join!(a.expire_due(), b.expire_due());
        assert!(by_a.unwrap() + by_b.unwrap() <= 1, "two looks answered one request twice");
        wait_for(&a, &alice, &run, RunStatus::Finished).await;
        // The run's row says finished at once; the events of whichever
        // replica finished it reach `a`'s reads when `a`'s horizon passes
        // them (told by a notification, or on its idle poll).
        let events = lattice_testkit::eventually("run_finished in a's reads", async || {
            Some(a.events(&alice, &Follow::Thread(th.clone()), 0, 100).await.unwrap()).filter(|events| events.iter().any(|e| e.event_type() == "run_finished"))
        })
        .await;
        let count = |name: &str| events.iter().filter(|e| e.event_type() == name).count();
        assert_eq!((count("deferred_answered"), count("run_resumed"), count("run_finished")), (1, 1, 1));
    }
}

//! A pause's requests are kept in the order the model made its calls in,
//! which says nothing of their ids.

use lattice_core::{Command, DeferredRequest, RunId, RunStep, TenantRole};
use lattice_testkit::{authenticator, principal, who};
use serde_json::json;

use crate::workspace_with_thread;

lattice_testkit::both_backends! {
    async fn a_pauses_requests_are_listed_in_the_order_they_were_made(backend: Backend) {
        let log = lattice_testkit::service(backend).await;
        let alice = who("t1", "alice", TenantRole::Member);
        let (_, thread) = workspace_with_thread(&log, &alice).await;
        let started = log.execute(&alice, Command::StartRun { thread, prompt: "Ask".into(), model: "scripted".into(), chain: None, context: Vec::new() }).await.unwrap();
        let run = RunId::parse("run", started.id.as_deref().unwrap()).unwrap();
        let mut p = principal("t1", "alice", TenantRole::Member, true);
        p.run = Some(run.clone());
        let runner = authenticator().vouch(p);
        let ask = |id: &str| DeferredRequest {
            tool_call_id: id.into(),
            tool_name: "ask_user".into(),
            args: json!({"question": id}),
            expires_in_secs: None,
            expires_at: None,
            sign_in: None,
        };
        let made = ["call_b", "call_c", "call_a"];
        let requests = made.iter().map(|id| ask(id)).collect();
        log.execute(&runner, Command::RecordRun { run: run.clone(), step: RunStep::Paused { requests } }).await.unwrap();
        let view = log.run(&alice, &run).await.unwrap();
        let listed: Vec<&str> = view.requests.iter().map(|r| r.tool_call_id.as_str()).collect();
        assert_eq!(listed, made);
    }
}

//! How many statements a command costs: counted from sqlx's own record of
//! each statement it runs, inside the command's `log.execute` span. On
//! PostgreSQL the statement is recorded in the task that runs it, so a
//! single-threaded runtime sees every one.

use std::cell::RefCell;
use std::future::Future;
use std::sync::{Arc, Mutex, Once};

use lattice_core::{Command, DeferredRequest, RunId, RunStep, TenantRole};
use lattice_log::{Authenticated, Backend};
use lattice_testkit::{authenticator, principal, who};
use lattice_ui::asks::ASK_FORM;
use serde_json::json;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::{Layer, Registry, filter::Targets};

use crate::workspace_with_thread;

thread_local! {
    /// Where the statements of the command being counted on this thread go.
    static COUNTING: RefCell<Option<Arc<Mutex<Vec<String>>>>> = const { RefCell::new(None) };
}

/// The summary line of each statement run inside a command, for the thread
/// that counts. One subscriber for the whole binary, installed once: a
/// subscriber set per test races other tests' threads for tracing's cached
/// interest in the `log.execute` and `sqlx::query` callsites, and then
/// counts nothing.
struct CountStatements;

struct Message(String);

impl tracing::field::Visit for Message {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        if field.name() == "summary" {
            self.0 = value.to_owned();
        }
    }

    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "summary" {
            self.0 = format!("{value:?}");
        }
    }
}

impl<S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>> Layer<S> for CountStatements {
    fn on_event(&self, event: &tracing::Event<'_>, ctx: Context<'_, S>) {
        if event.metadata().target() != "sqlx::query" {
            return;
        }
        let Some(counter) = COUNTING.with(|c| c.borrow().clone()) else { return };
        let in_command = ctx.event_scope(event).is_some_and(|mut scope| scope.any(|span| span.name() == "log.execute"));
        if in_command {
            let mut message = Message(String::new());
            event.record(&mut message);
            counter.lock().unwrap().push(message.0);
        }
    }
}

/// Runs `work` on this thread (the test's runtime is single-threaded) and
/// counts the statements it runs inside commands.
async fn statements<F: Future>(work: F) -> (F::Output, usize) {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let subscriber = Registry::default()
            .with(Targets::new().with_target("sqlx::query", tracing::Level::TRACE).with_target("lattice_log", tracing::Level::TRACE))
            .with(CountStatements);
        tracing::subscriber::set_global_default(subscriber).expect("no other subscriber in this binary");
    });
    let count = Arc::new(Mutex::new(Vec::new()));
    COUNTING.with(|c| *c.borrow_mut() = Some(count.clone()));
    let out = work.await;
    COUNTING.with(|c| *c.borrow_mut() = None);
    let statements = count.lock().unwrap().clone();
    println!("{} statements:\n  {}", statements.len(), statements.join("\n  "));
    (out, statements.len())
}

fn runner(run: &RunId) -> Authenticated {
    let mut p = principal("t1", "alice", TenantRole::Member, true);
    p.run = Some(run.clone());
    authenticator().vouch(p)
}

/// An ask_form answer reads its run and the run's requests once, however
/// many rules look at them (the gate, the answer's check, the step rules).
#[tokio::test]
async fn an_ask_form_answer_costs_a_bounded_number_of_statements() {
    let log = lattice_testkit::service(Backend::Postgres).await;
    let alice = who("t1", "alice", TenantRole::Member);
    let (_, thread) = workspace_with_thread(&log, &alice).await;
    let started = log
        .execute(&alice, Command::StartRun { thread, prompt: "Report".into(), model: "scripted".into(), chain: None, context: Vec::new() })
        .await
        .unwrap();
    let run = RunId::parse("run", started.id.as_deref().unwrap()).unwrap();
    let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]});
    let request = DeferredRequest {
        tool_call_id: "f1".into(),
        tool_name: ASK_FORM.into(),
        args: json!({"title": "T", "schema": schema}),
        expires_in_secs: None,
        expires_at: None,
        sign_in: None,
    };
    log.execute(&runner(&run), Command::RecordRun { run: run.clone(), step: RunStep::Paused { requests: vec![request] } }).await.unwrap();

    let answer = Command::AnswerDeferred { run: run.clone(), tool_call_id: "f1".into(), answer: json!({"ok": true}), approved: true };
    let (answered, answer_statements) = statements(log.execute(&alice, answer)).await;
    answered.unwrap();
    let resume = Command::RecordRun { run: run.clone(), step: RunStep::Resumed { actor: "alice".into(), role: TenantRole::Member } };
    let (resumed, resume_statements) = statements(log.execute(&runner(&run), resume)).await;
    resumed.unwrap();
    println!("statements: answer {answer_statements}, resume {resume_statements}");
    assert!(answer_statements > 0, "nothing was counted: the count would prove nothing");
    assert!(answer_statements <= ANSWER_STATEMENTS, "an answer ran {answer_statements} statements");
    assert!(resume_statements <= RESUME_STATEMENTS, "a resume ran {resume_statements} statements");
}

/// The run, the caller's access, the requests, the forms switch; the
/// answer, the envelope, the commit. (Nine, before the run was read once.)
const ANSWER_STATEMENTS: usize = 7;
/// The run, the access, the requests; the status, the envelope, the commit.
const RESUME_STATEMENTS: usize = 6;

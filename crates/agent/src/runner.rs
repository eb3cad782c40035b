//! The runner: drives runs through the log, one recorded step at a time.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lattice_core::{Command, DeferredRequest, Error, Principal, RunFailure, RunId, RunStatus, RunStep, SwitchKey, TenantId, ThreadId, ToolCall};
use lattice_log::{Authenticated, LogService, Passing, RunRow, Trusted};
use lattice_wire::{TextDelta, ToolInputDelta};
use serde_json::Value;
use tokio::sync::Notify;

use crate::act::{Acted, act, check_form};
use crate::model::{ChatMessage, Delta, ModelError, ModelRequest, Models};
use crate::servers;
use crate::tools::{self, ToolDefinition, is_deferred, switch_of, toolset};
use crate::transcript::{Transcript, rebuild};

/// What ends the text of a reply cut at the model's token limit, as the
/// thread shows it.
const CUT_MARK: &str = " …\n\n[cut: the reply reached the model's token limit]";

/// How often a run's driver looks whether the run was cancelled on
/// another replica while a model call is under way.
const CANCEL_POLL: Duration = Duration::from_secs(1);

/// What one run may spend before it fails with the budget it exceeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub model_calls: usize,
    /// Tokens, as the model service counts them.
    pub tokens: u64,
    /// Time spent running; waiting for people does not count.
    pub wall_time: Duration,
}

impl Default for Budget {
    fn default() -> Self {
        Self { model_calls: 24, tokens: 200_000, wall_time: Duration::from_secs(600) }
    }
}
/// How long a runner's hold on a run lasts without renewal: a crashed
/// replica's runs are taken over this long after it stopped renewing.
const LEASE: Duration = Duration::from_secs(30);

#[derive(Clone)]
pub struct Runner {
    inner: Arc<Inner>,
}

struct Inner {
    log: LogService,
    /// Acting as a run's agent, reading runs to drive them.
    trusted: Trusted,
    models: Models,
    /// This runner's name on the leases it holds.
    holder: String,
    lease: Duration,
    budget: Budget,
    /// The MCP servers the deployment connected.
    connections: lattice_connect::Connections,
    /// The runs this runner drives now (tenant, run), each with the bell
    /// that a cancel rings.
    driving: Mutex<HashMap<(String, String), Arc<Notify>>>,
}

/// What people and the run said so far that a tool call depends on.
struct Said<'a> {
    /// A person's word on a server's call put to them.
    approval: Option<bool>,
    /// Whether what was put to the person was a sign-in to the server.
    asked_sign_in: bool,
    /// The calls of each server's tools so far, counted on as they are made.
    server_calls: &'a mut std::collections::HashMap<String, usize>,
    apps_on: bool,
}

/// What a tool call came to.
enum Outcome {
    Done(Value),
    Refused(String),
    Deferred(DeferredRequest),
}

impl Runner {
    pub fn new(trusted: Trusted, models: Models) -> Self {
        Self::with_lease(trusted, models, LEASE)
    }

    /// A runner whose leases last `lease` (tests take a short one).
    pub fn with_lease(trusted: Trusted, models: Models, lease: Duration) -> Self {
        let holder = format!("runner-{}", ulid::Ulid::generate().to_string().to_lowercase());
        let inner = Inner {
            log: trusted.log().clone(),
            trusted,
            models,
            holder,
            lease,
            budget: Budget::default(),
            connections: lattice_connect::Connections::default(),
            driving: Mutex::default(),
        };
        Self { inner: Arc::new(inner) }
    }

    /// A runner whose runs spend at most `budget`. Call before the runner
    /// is shared.
    pub fn with_budget(mut self, budget: Budget) -> Self {
        Arc::get_mut(&mut self.inner).expect("set before the runner is shared").budget = budget;
        self
    }

    /// A runner whose agent calls the tools of `connections`' servers.
    /// Call before the runner is shared.
    pub fn with_connections(mut self, connections: lattice_connect::Connections) -> Self {
        Arc::get_mut(&mut self.inner).expect("set before the runner is shared").connections = connections;
        self
    }

    pub fn connections(&self) -> &lattice_connect::Connections {
        &self.inner.connections
    }

    pub fn models(&self) -> &Models {
        &self.inner.models
    }

    /// Starts a run in a thread for `who` and drives it in the background.
    /// `chain` is the chain of the event a rule starts the run for: answers
    /// to the run join it.
    pub async fn start(
        &self,
        who: &Authenticated,
        thread: ThreadId,
        prompt: String,
        model: Option<String>,
        chain: Option<String>,
    ) -> Result<RunId, Error> {
        self.start_with(who, thread, prompt, model, chain, Vec::new()).await
    }

    /// [`Runner::start`], with what the person brought from connected
    /// servers (`crate::servers::context` reads it).
    pub async fn start_with(
        &self,
        who: &Authenticated,
        thread: ThreadId,
        prompt: String,
        model: Option<String>,
        chain: Option<String>,
        context: Vec<lattice_core::RunContext>,
    ) -> Result<RunId, Error> {
        let model = match model {
            Some(m) => m,
            None => self.inner.models.default_name().unwrap_or("scripted:ask_form").to_owned(),
        };
        self.inner.models.get(&model).map_err(|e| Error::field("model", "enum", format!("{e}; known: {}", self.inner.models.names().join(", "))))?;
        let done = self.inner.log.execute(who, Command::StartRun { thread, prompt, model, chain, context }).await?;
        let run = RunId::from_trusted(done.id.expect("a started run has an id"));
        self.spawn(who.principal().tenant.clone(), run.clone());
        Ok(run)
    }

    /// Answers a request; once every request of the run is answered, the
    /// run resumes: acting for the one who answered last if they may act in
    /// a run, else (a respondent's answer) for whom it acted for.
    /// Answers the envelope's `seq` (its receipt: `GET /v1/receipts/{seq}`).
    pub async fn answer(&self, who: &Authenticated, run: &RunId, tool_call_id: String, answer: Value) -> Result<i64, Error> {
        // A call of a connected server's tool put to a person is answered
        // `{"approved": true}` or `{"approved": false}` (the write path's
        // `ServerCallAnswer` holds the two to agree); any other answer
        // approves nothing it is not asked about.
        let approved = answer.get("approved").and_then(Value::as_bool).unwrap_or(true);
        let done = self.inner.log.execute(who, Command::AnswerDeferred { run: run.clone(), tool_call_id, answer, approved }).await?;
        self.resume_if_answered(who, run).await?;
        Ok(done.seq)
    }

    /// A person's word on a call of a connected server's tool that the
    /// server's policy put to them: the run makes the call, or tells the
    /// model it was declined, when it resumes.
    pub async fn approve(&self, who: &Authenticated, run: &RunId, tool_call_id: String, approved: bool) -> Result<i64, Error> {
        self.answer(who, run, tool_call_id, serde_json::json!({"approved": approved})).await
    }

    /// Cancels a run that is running or waiting: recorded as the person's
    /// command, then the model call under way here (if any) is dropped; a
    /// replica driving it notices within a second.
    pub async fn cancel(&self, who: &Authenticated, run: &RunId) -> Result<(), Error> {
        self.inner.log.execute(who, Command::CancelRun { run: run.clone() }).await?;
        let key = (who.principal().tenant.to_string(), run.to_string());
        if let Some(bell) = self.inner.driving.lock().expect("not poisoned").get(&key) {
            bell.notify_one();
        }
        Ok(())
    }

    /// A chat message while runs wait: it answers their open ask_user
    /// requests only, never an ask_form (A5).
    pub async fn message_posted(&self, who: &Authenticated, thread: &ThreadId, text: &str) -> Result<(), Error> {
        for waiting in self.inner.log.paused_runs(who, thread).await? {
            let run = RunId::from_trusted(waiting.run.id.clone());
            let mut answered = false;
            let mut open: Vec<_> = waiting.requests.iter().filter(|r| r.tool_name == tools::ASK_USER && r.answered_by.is_none()).collect();
            // Answered in the order the model asked them.
            if open.len() > 1 {
                let asked = self.asked_order(&who.principal().tenant, &run).await?;
                open.sort_by_key(|r| asked.iter().position(|id| *id == r.tool_call_id).unwrap_or(usize::MAX));
            }
            for request in open {
                let command = Command::AnswerDeferred {
                    run: run.clone(),
                    tool_call_id: request.tool_call_id.clone(),
                    answer: Value::String(text.to_owned()),
                    approved: true,
                };
                match self.inner.log.execute(who, command).await {
                    Ok(_) => answered = true,
                    // Someone answered it first, or this person may not: not this message's business.
                    Err(Error::InvalidState { .. } | Error::Forbidden { .. } | Error::NotEnabled { .. }) => {}
                    Err(e) => return Err(e),
                }
            }
            if answered {
                self.resume_if_answered(who, &run).await?;
            }
        }
        Ok(())
    }

    /// The tool call ids of a run's last pause, in the order the model
    /// made the calls.
    async fn asked_order(&self, tenant: &TenantId, run: &RunId) -> Result<Vec<String>, Error> {
        let log = self.inner.trusted.run_log(tenant, run).await?;
        Ok(log
            .iter()
            .rev()
            .find_map(|e| match &e.event {
                lattice_core::event::Event::RunPaused(paused) => Some(paused.requests.iter().map(|r| r.tool_call_id.clone()).collect()),
                _ => None,
            })
            .unwrap_or_default())
    }

    /// Drives the running runs nobody drives (a stop interrupted them, or
    /// the replica that drove them stopped renewing its lease), and resumes
    /// the paused runs whose every request is answered (the resume that
    /// should have followed was lost); runs waiting on an answer wait.
    /// Answers how many it took.
    pub async fn recover(&self) -> Result<usize, Error> {
        let mut taken = 0;
        for (tenant, run) in self.inner.trusted.orphaned_runs().await? {
            let run = RunId::from_trusted(run.id);
            if self.inner.trusted.lease_run(&tenant, &run, &self.inner.holder, self.inner.lease).await? {
                taken += 1;
                self.spawn(tenant, run);
            }
        }
        // After the running ones: a run resumed here is driven by this resume.
        for (tenant, run, answerer) in self.inner.trusted.answered_paused_runs().await? {
            if self.resume_answered(&tenant, &RunId::from_trusted(run.id), answerer).await? {
                taken += 1;
            }
        }
        Ok(taken)
    }

    /// Looks for orphaned runs every half lease, until the runner is gone:
    /// how a replica takes over the runs of one that crashed.
    /// Ends a connected server's sessions in a tenant (and its processes)
    /// whenever its key turns off there, or for the deployment: followed
    /// from the log's switch changes, on every replica.
    pub fn end_sessions_when_switched_off(&self) {
        let weak = Arc::downgrade(&self.inner);
        let mut changes = self.inner.trusted.log().switch_changes();
        tokio::spawn(async move {
            while changes.changed().await.is_ok() {
                let Some(inner) = weak.upgrade() else { return };
                for server in inner.connections.all() {
                    let key = lattice_core::SwitchKey::Server(server.key());
                    for tenant in server.session_tenants().await {
                        let Ok(tenant) = lattice_core::TenantId::parse("tenant", &tenant) else { continue };
                        match inner.trusted.on_for_tenant(&tenant, key).await {
                            Ok(true) => {}
                            Ok(false) => {
                                tracing::info!(server = server.name(), %tenant, "its key turned off: the tenant's sessions end");
                                server.end_sessions_of(tenant.as_str()).await;
                            }
                            Err(e) => tracing::warn!(error = %e, "cannot read a connected server's switch"),
                        }
                    }
                }
            }
        });
    }

    pub fn watch_orphans(&self) {
        self.watch_deadlines();
        let weak = Arc::downgrade(&self.inner);
        let every = self.inner.lease / 2;
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                let Some(inner) = weak.upgrade() else { return };
                if let Err(e) = (Runner { inner }).recover().await {
                    tracing::warn!(error = %e, "cannot look for runs to take over");
                }
            }
        });
    }

    /// Resumes the runs whose requests the log's deadline scheduler
    /// answered `expired`, as soon as it says so.
    fn watch_deadlines(&self) {
        let weak = Arc::downgrade(&self.inner);
        let mut expired = self.inner.trusted.expirations();
        tokio::spawn(async move {
            loop {
                let next = expired.recv().await;
                let Some(inner) = weak.upgrade() else { return };
                let runner = Runner { inner };
                match next {
                    Ok(e) => {
                        if let Err(err) = runner.resume_answered(&e.tenant, &e.run, None).await {
                            tracing::warn!(run = %e.run, error = %err, "cannot resume a run after its deadline; recovery will");
                        }
                    }
                    // Missed some: recovery finds them.
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                }
            }
        });
    }

    /// Resumes a paused run whose requests are all answered; answers
    /// whether it did. `answerer` is who answered last, with a member's
    /// tenant role (the token's role is not kept; a lower role only narrows
    /// what the run may do); `None` when the deadline did.
    async fn resume_answered(&self, tenant: &TenantId, run: &RunId, answerer: Option<String>) -> Result<bool, Error> {
        let Some(row) = self.inner.trusted.run_state(tenant, run).await? else { return Ok(false) };
        if row.status != RunStatus::Paused {
            return Ok(false);
        }
        let answerer = answerer.map(|user| Principal {
            tenant: tenant.clone(),
            user: lattice_core::UserId::from_trusted(user),
            role: lattice_core::TenantRole::Member,
            agent: false,
            run: None,
            within: None,
            scope: None,
        });
        self.resume(tenant, run, &row, answerer.as_ref()).await
    }

    async fn resume_if_answered(&self, who: &Authenticated, run: &RunId) -> Result<(), Error> {
        let view = self.inner.log.run(who, run).await?;
        if view.run.status != RunStatus::Paused || view.requests.iter().any(|r| r.answered_by.is_none()) {
            return Ok(());
        }
        let p = who.principal();
        self.resume(&p.tenant, run, &view.run, Some(p)).await.map(drop)
    }

    /// Resumes `row`, paused with every request answered, and drives it;
    /// answers whether this call resumed it.
    ///
    /// An answer from someone who may act in an agent turn (an editor) is
    /// an instruction: the run goes on acting for them, within what its
    /// starter may do (docs/ACCESS.md). An answer from someone who may not
    /// (a respondent's to an ask_form) is data the run asked for, like a
    /// deadline's: the run goes on acting for whom it acted for, and the
    /// answerer gains nothing by it. Which of the two, the write path
    /// decides, by its one rule of who acts in a run: the resume is
    /// recorded as the answerer's agent and, refused, as the run's.
    async fn resume(&self, tenant: &TenantId, run: &RunId, row: &RunRow, answerer: Option<&Principal>) -> Result<bool, Error> {
        if let Some(p) = answerer.filter(|p| p.user.as_str() != row.acting_for) {
            let acting = Principal { agent: true, run: Some(run.clone()), within: None, ..p.clone() };
            match self.record_as(&acting, run, RunStep::Resumed { actor: p.user.to_string(), role: p.role }).await {
                // The answerer may not act in a run: it goes on as it was.
                Err(Error::Forbidden { .. }) => {}
                recorded => return self.resumed(tenant, run, recorded),
            }
        }
        let acting = self.inner.trusted.principal_for(tenant, row);
        let step = RunStep::Resumed { actor: row.acting_for.clone(), role: row.acting_role };
        let recorded = self.record_as(&acting, run, step).await;
        self.resumed(tenant, run, recorded)
    }

    /// Drives a run whose resume was recorded; answers whether it was.
    fn resumed(&self, tenant: &TenantId, run: &RunId, recorded: Result<(), Error>) -> Result<bool, Error> {
        match recorded {
            Ok(()) => {
                self.spawn(tenant.clone(), run.clone());
                Ok(true)
            }
            // Still waiting on another request, or resumed a moment ago.
            Err(Error::InvalidState { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Drives a run in the background while this runner holds its lease:
    /// never two runners at once, and never this one twice.
    fn spawn(&self, tenant: TenantId, run: RunId) {
        let key = (tenant.to_string(), run.to_string());
        let bell = Arc::new(Notify::new());
        {
            let mut driving = self.inner.driving.lock().expect("not poisoned");
            if driving.contains_key(&key) {
                return;
            }
            driving.insert(key.clone(), bell.clone());
        }
        let runner = self.clone();
        tokio::spawn(async move {
            runner.drive_leased(&tenant, &run, &bell).await;
            runner.inner.driving.lock().expect("not poisoned").remove(&key);
            if let Err(e) = runner.inner.trusted.release_run(&tenant, &run, &runner.inner.holder).await {
                tracing::warn!(run = %run, error = %e, "cannot give the run's lease back; it expires on its own");
            }
        });
    }

    async fn drive_leased(&self, tenant: &TenantId, run: &RunId, bell: &Notify) {
        let (trusted, holder, lease) = (&self.inner.trusted, self.inner.holder.as_str(), self.inner.lease);
        match trusted.lease_run(tenant, run, holder, lease).await {
            Ok(true) => {}
            // Another replica drives it, or it is no longer running.
            Ok(false) => return,
            Err(e) => {
                tracing::warn!(run = %run, error = %e, "cannot take the run's lease; another look will");
                return;
            }
        }
        // Renewed at a third of its length; lost, the drive stops where it is.
        let renew = async {
            loop {
                tokio::time::sleep(lease / 3).await;
                match trusted.lease_run(tenant, run, holder, lease).await {
                    Ok(true) => {}
                    Ok(false) => return,
                    Err(e) => tracing::warn!(run = %run, error = %e, "cannot renew the run's lease"),
                }
            }
        };
        let driven = tokio::select! {
            driven = self.drive(tenant, run, bell) => driven,
            () = renew => {
                tracing::warn!(run = %run, "the run's lease was lost: another replica drives it now");
                return;
            }
        };
        let Err(e) = driven else { return };
        tracing::warn!(run = %run, error = %e, "the run failed");
        // Only the holder of a running run's lease marks it failed: a
        // runner that lost it, or a run that paused meanwhile, is left be.
        if !matches!(trusted.lease_run(tenant, run, holder, lease).await, Ok(true)) {
            return;
        }
        if let Ok(Some(row)) = self.row(tenant, run).await {
            let acting = trusted.principal_for(tenant, &row);
            let _ = self.record_as(&acting, run, RunStep::Failed { reason: e.to_string(), failure: None }).await;
        }
    }

    async fn row(&self, tenant: &TenantId, run: &RunId) -> Result<Option<RunRow>, Error> {
        self.inner.trusted.run_state(tenant, run).await
    }

    async fn record_as(&self, acting: &Principal, run: &RunId, step: RunStep) -> Result<(), Error> {
        let who = self.inner.trusted.vouch(acting.clone());
        self.inner.log.execute(&who, Command::RecordRun { run: run.clone(), step }).await.map(|_| ())
    }

    /// Fails a run with a typed reason.
    async fn fail(&self, acting: &Principal, run: &RunId, failure: RunFailure, reason: String) -> Result<(), Error> {
        self.record_as(acting, run, RunStep::Failed { reason, failure: Some(failure) }).await
    }

    /// Ends once the run is no longer running (cancelled, here or on
    /// another replica): at once when the bell rings, else within a poll.
    async fn halted(&self, tenant: &TenantId, run: &RunId, bell: &Notify) {
        loop {
            tokio::select! {
                () = bell.notified() => {}
                () = tokio::time::sleep(CANCEL_POLL) => {}
            }
            if !matches!(self.row(tenant, run).await, Ok(Some(r)) if r.status == RunStatus::Running) {
                return;
            }
        }
    }

    /// Where a model's deltas go: the live streams of the run's thread.
    fn deltas(&self, thread: &str, run: &RunId, model_call: usize) -> impl Fn(Delta) + Send + Sync + use<> {
        let trusted = self.inner.trusted.clone();
        let thread = ThreadId::from_trusted(thread.to_owned());
        let run_id = run.to_string();
        move |delta| {
            let run_id = run_id.clone();
            let (name, json) = match delta {
                Delta::Text(text) => ("delta", serde_json::to_string(&TextDelta { run_id, model_call, text })),
                Delta::ToolInput { id, name, arguments } => {
                    ("tool_input", serde_json::to_string(&ToolInputDelta { run_id, model_call, tool_call_id: id, name, arguments }))
                }
            };
            trusted.pass(&thread, Passing { name, json: json.expect("a delta serializes") });
        }
    }

    /// Runs the model and the tools until the run finishes, fails or pauses.
    async fn drive(&self, tenant: &TenantId, run: &RunId, bell: &Notify) -> Result<(), Error> {
        let budget = self.inner.budget;
        loop {
            let Some(row) = self.row(tenant, run).await?.filter(|r| r.status == RunStatus::Running) else { return Ok(()) };
            let acting = self.inner.trusted.principal_for(tenant, &row);
            let who = self.inner.trusted.vouch(acting.clone());
            let Transcript { mut messages, unanswered, unposted, model_calls, tokens, running_ms, approvals, sign_ins, server_calls, attachments } =
                rebuild(&self.inner.trusted.run_log(tenant, run).await?, self.inner.log.clock().now_ms());
            crate::files::describe(&self.inner.trusted, tenant, &row.workspace, &mut messages, &attachments).await?;
            let left = budget.wall_time.saturating_sub(Duration::from_millis(running_ms.max(0) as u64));
            if left.is_zero() {
                let reason = format!("ran for more than its {} s", budget.wall_time.as_secs());
                return self.fail(&acting, run, RunFailure::WallTime, reason).await;
            }
            let (offered, instructions, switches) = self.offered(&who, &row).await?;
            let apps_on = switches.get(&SwitchKey::MiniApps).copied().unwrap_or(false);
            let thread = ThreadId::from_trusted(row.thread.clone());
            let calls = if unanswered.is_empty() {
                if model_calls >= budget.model_calls {
                    let reason = format!("stopped after {} model calls", budget.model_calls);
                    return self.fail(&acting, run, RunFailure::ModelCalls, reason).await;
                }
                if tokens >= budget.tokens {
                    let reason = format!("used {tokens} tokens, the run's budget is {}", budget.tokens);
                    return self.fail(&acting, run, RunFailure::Tokens, reason).await;
                }
                let model = self.inner.models.get(&row.model).map_err(|e| Error::invalid_state(lattice_core::Code::ModelUnknown, e.to_string()))?;
                let mut messages = messages;
                messages.extend(self.inner.trusted.app_contexts(tenant, &row.thread).await?.iter().map(crate::transcript::app_context));
                // What the connected servers said of themselves, as data,
                // after lattice's own word.
                let at = messages.len().min(1);
                messages.splice(at..at, instructions.into_iter().map(|content| ChatMessage::System { content }));
                let deltas = self.deltas(&row.thread, run, model_calls);
                let asked = model.stream(ModelRequest { messages, tools: offered.clone() }, &deltas);
                let reply = tokio::select! {
                    reply = asked => reply,
                    () = self.halted(tenant, run, bell) => return Ok(()),
                    () = tokio::time::sleep(left) => {
                        let reason = format!("ran for more than its {} s", budget.wall_time.as_secs());
                        return self.fail(&acting, run, RunFailure::WallTime, reason).await;
                    }
                };
                let reply = match reply {
                    Ok(reply) => reply,
                    // Cut at the token limit: what it wrote is shown, marked
                    // as cut, its tokens are counted, and nothing of it is
                    // acted on.
                    Err(ModelError::Cut { reason, text, tokens }) => {
                        let text = text.filter(|t| !t.trim().is_empty());
                        self.record_as(&acting, run, RunStep::ModelReplied { text: text.clone(), tool_calls: vec![], tokens }).await?;
                        if let Some(text) = text {
                            let text = format!("{}{CUT_MARK}", text.trim_end());
                            self.inner.log.execute(&who, Command::PostMessage { thread: thread.clone(), text }).await?;
                        }
                        return self.fail(&acting, run, RunFailure::Model, reason).await;
                    }
                    Err(e) => return self.fail(&acting, run, RunFailure::Model, format!("the model failed: {e}")).await,
                };
                let step = RunStep::ModelReplied { text: reply.text.clone(), tool_calls: reply.tool_calls.clone(), tokens: reply.tokens };
                self.record_as(&acting, run, step).await?;
                // What it said is in the thread before anything its calls do.
                if let Some(text) = reply.text.clone().filter(|t| !t.trim().is_empty()) {
                    self.inner.log.execute(&who, Command::PostMessage { thread: thread.clone(), text }).await?;
                }
                if reply.tool_calls.is_empty() {
                    return self.record_as(&acting, run, RunStep::Finished { text: reply.text }).await;
                }
                reply.tool_calls
            } else {
                // A crash after the reply was recorded: its text first.
                if let Some(text) = unposted {
                    self.inner.log.execute(&who, Command::PostMessage { thread: thread.clone(), text }).await?;
                }
                unanswered
            };
            let mut deferred = Vec::new();
            let mut server_calls = server_calls;
            for call in calls {
                let said = Said {
                    approval: approvals.get(&call.id).copied(),
                    asked_sign_in: sign_ins.contains(&call.id),
                    server_calls: &mut server_calls,
                    apps_on,
                };
                match self.call_tool(&who, &row, (&offered, &switches), &call, said).await? {
                    Outcome::Deferred(request) => deferred.push(request),
                    Outcome::Done(result) => {
                        let step = RunStep::ToolReturned { tool_call_id: call.id, tool_name: call.name, result, is_error: false };
                        self.record_as(&acting, run, step).await?;
                    }
                    Outcome::Refused(reason) => {
                        let step =
                            RunStep::ToolReturned { tool_call_id: call.id, tool_name: call.name, result: Value::String(reason), is_error: true };
                        self.record_as(&acting, run, step).await?;
                    }
                }
            }
            if !deferred.is_empty() {
                return self.record_as(&acting, run, RunStep::Paused { requests: deferred }).await;
            }
        }
    }

    /// The tools whose switch is on in the run's workspace, decided now:
    /// lattice's own and the connected servers', the servers' instructions
    /// (fenced), and the switches they were decided by (a server's result
    /// shows its app only where mini apps are on).
    async fn offered(&self, who: &Authenticated, row: &RunRow) -> Result<(Vec<ToolDefinition>, Vec<String>, BTreeMap<SwitchKey, bool>), Error> {
        let effective = self.inner.log.effective(who, &row.workspace).await?;
        let enabled: BTreeMap<SwitchKey, bool> = effective.into_iter().map(|(k, e)| (k, e.enabled)).collect();
        let mut tools = toolset(&enabled);
        let servers = servers::offered(&self.inner.connections, who, &enabled).await;
        tools.extend(servers.tools);
        Ok((tools, servers.instructions, enabled))
    }

    async fn call_tool(
        &self,
        who: &Authenticated,
        row: &RunRow,
        (offered, switches): (&[ToolDefinition], &BTreeMap<SwitchKey, bool>),
        call: &ToolCall,
        said: Said<'_>,
    ) -> Result<Outcome, Error> {
        // A server not offered to the run's tenant is nothing here.
        let tenant = &who.principal().tenant;
        let server = lattice_connect::naming::split(&call.name)
            .and_then(|(server, tool)| Some((self.inner.connections.get(server)?, tool)))
            .filter(|(server, _)| self.inner.connections.offered_to(tenant).any(|s| s.name() == server.name()));
        let thread = ThreadId::from_trusted(row.thread.clone());
        let offered_now = offered.iter().any(|t| t.name == call.name) || servers::is_sign_in_call(&self.inner.connections, &call.name, offered);
        if let Some((server, tool)) = server {
            let made = said.server_calls.get(server.name()).copied().unwrap_or(0);
            let calling = servers::Call {
                log: &self.inner.log,
                who,
                thread: &thread,
                server,
                tool,
                call,
                approval: said.approval,
                asked_sign_in: said.asked_sign_in,
                made,
                apps_on: said.apps_on,
            };
            if !offered_now {
                // Refused before the server's policy is asked: recorded as
                // every decision on a server's call is.
                let key = server.key();
                let on = switches.get(&SwitchKey::Server(key)).copied().unwrap_or(false);
                let (decision, why) = match on {
                    true => ("not_offered", format!("{} is not available: the {} server does not offer it here now", call.name, server.name())),
                    false => ("switched_off", format!("{} is not available: {} is switched off here", call.name, key.as_str())),
                };
                calling.refuse(decision).await?;
                return Ok(Outcome::Refused(why));
            }
            let called = calling.run().await?;
            if !matches!(called, servers::Called::Asked(_)) {
                *said.server_calls.entry(server.name().to_owned()).or_default() += 1;
            }
            return Ok(match called {
                servers::Called::Returned { result, is_error: false } => Outcome::Done(result),
                servers::Called::Returned { result, is_error: true } => Outcome::Refused(result.to_string()),
                servers::Called::Refused(why) => Outcome::Refused(why),
                servers::Called::Asked(request) => Outcome::Deferred(request),
            });
        }
        if !offered_now {
            let why = match switch_of(&call.name) {
                Some(key) => format!("{} is not available: {key} is switched off here", call.name),
                None => format!("there is no tool named {}", call.name),
            };
            return Ok(Outcome::Refused(why));
        }
        let args = &call.arguments;
        let text = |k: &str| args.get(k).and_then(Value::as_str).map(str::to_owned);
        if is_deferred(&call.name) {
            let mut expires_in_secs = None;
            if call.name == tools::ASK_FORM {
                // A schema the subset refuses goes back to the model before anything pauses.
                if let Err(e) = check_form(args) {
                    return Ok(Outcome::Refused(format!("the form was refused: {e}. Fix it and ask again.")));
                }
                match args.get("expires_in_secs") {
                    None | Some(Value::Null) => {}
                    Some(v) => match v.as_u64().filter(|s| (1..=lattice_core::run::MAX_EXPIRES_IN_SECS).contains(s)) {
                        Some(secs) => expires_in_secs = Some(secs),
                        None => {
                            return Ok(Outcome::Refused(format!(
                                "expires_in_secs must be a whole number of seconds from 1 to {}",
                                lattice_core::run::MAX_EXPIRES_IN_SECS
                            )));
                        }
                    },
                }
            } else if text("question").is_none_or(|q| q.trim().is_empty()) {
                return Ok(Outcome::Refused("ask_user needs a question".into()));
            }
            return Ok(Outcome::Deferred(DeferredRequest {
                tool_call_id: call.id.clone(),
                tool_name: call.name.clone(),
                args: args.clone(),
                expires_in_secs,
                expires_at: None,
                sign_in: None,
            }));
        }
        match act(&self.inner.log, who, &thread, &call.name, args).await? {
            Acted::Done(receipt) => Ok(Outcome::Done(receipt)),
            Acted::Refused(why) => Ok(Outcome::Refused(why)),
        }
    }
}

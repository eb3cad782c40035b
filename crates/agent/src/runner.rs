//! The runner: drives runs through the log, one recorded step at a time.

use std::collections::BTreeMap;
use std::sync::Arc;

use lattice_core::{
    Command, DeferredRequest, Error, Principal, RunId, RunStatus, RunStep, SwitchKey, TenantId, ThreadId,
    ToolCall,
};
use lattice_log::{Authenticated, LogService, RunRow, Trusted};
use serde_json::Value;

use crate::act::{Acted, act, check_form};
use crate::model::{ModelReply, ModelRequest, Models};
use crate::tools::{self, ToolDefinition, is_deferred, switch_of, toolset};
use crate::transcript::{Transcript, rebuild};

/// Model calls one run may make before it is failed: a loop guard.
const MAX_MODEL_CALLS: usize = 24;

#[derive(Clone)]
pub struct Runner {
    inner: Arc<Inner>,
}

struct Inner {
    log: LogService,
    /// Acting as a run's agent, reading runs to drive them.
    trusted: Trusted,
    models: Models,
}

/// What a tool call came to.
enum Outcome {
    Done(Value),
    Refused(String),
    Deferred(DeferredRequest),
}

impl Runner {
    pub fn new(trusted: Trusted, models: Models) -> Self {
        Self { inner: Arc::new(Inner { log: trusted.log().clone(), trusted, models }) }
    }

    pub fn models(&self) -> &Models {
        &self.inner.models
    }

    /// Starts a run in a thread for `who` and drives it in the background.
    pub async fn start(&self, who: &Authenticated, thread: ThreadId, prompt: String, model: Option<String>) -> Result<RunId, Error> {
        let model = match model {
            Some(m) => m,
            None => self.inner.models.default_name().unwrap_or("scripted:ask_form").to_owned(),
        };
        self.inner.models.get(&model).map_err(|e| Error::field("model", "enum", format!("{e}; known: {}", self.inner.models.names().join(", "))))?;
        let done = self.inner.log.execute(who, Command::StartRun { thread, prompt, model }).await?;
        let run = RunId::from_trusted(done.id.expect("a started run has an id"));
        self.spawn(who.principal().tenant.clone(), run.clone());
        Ok(run)
    }

    /// Answers a request; once every request of the run is answered, the
    /// run resumes, acting for the one who answered last.
    pub async fn answer(&self, who: &Authenticated, run: &RunId, tool_call_id: String, answer: Value) -> Result<(), Error> {
        self.inner
            .log
            .execute(who, Command::AnswerDeferred { run: run.clone(), tool_call_id, answer, approved: true })
            .await?;
        self.resume_if_answered(who, run).await
    }

    /// A chat message while runs wait: it answers their open ask_user
    /// requests only, never an ask_form (A5).
    pub async fn message_posted(&self, who: &Authenticated, thread: &ThreadId, text: &str) -> Result<(), Error> {
        for waiting in self.inner.log.paused_runs(who, thread).await? {
            let run = RunId::from_trusted(waiting.run.id.clone());
            let mut answered = false;
            for request in waiting.requests.iter().filter(|r| r.tool_name == tools::ASK_USER && r.answered_by.is_none()) {
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

    /// Drives the runs a stop interrupted (status running); paused runs wait.
    pub async fn recover(&self) -> Result<usize, Error> {
        let runs = self.inner.trusted.interrupted_runs().await?;
        let count = runs.len();
        for (tenant, run) in runs {
            self.spawn(tenant, RunId::from_trusted(run.id));
        }
        Ok(count)
    }

    async fn resume_if_answered(&self, who: &Authenticated, run: &RunId) -> Result<(), Error> {
        let view = self.inner.log.run(who, run).await?;
        if view.run.status != RunStatus::Paused || view.requests.iter().any(|r| r.answered_by.is_none()) {
            return Ok(());
        }
        let p = who.principal();
        let acting = Principal { agent: true, run: Some(run.clone()), ..p.clone() };
        let step = RunStep::Resumed { actor: p.user.to_string(), role: p.role };
        match self.record_as(&acting, run, step).await {
            Ok(()) => {
                self.spawn(p.tenant.clone(), run.clone());
                Ok(())
            }
            // Another answer resumed it a moment ago.
            Err(Error::InvalidState { .. }) => Ok(()),
            Err(e) => Err(e),
        }
    }

    fn spawn(&self, tenant: TenantId, run: RunId) {
        let runner = self.clone();
        tokio::spawn(async move {
            if let Err(e) = runner.drive(&tenant, &run).await {
                tracing::warn!(run = %run, error = %e, "the run failed");
                if let Ok(Some(row)) = runner.row(&tenant, &run).await {
                    let acting = runner.inner.trusted.principal_for(&tenant, &row);
                    let _ = runner.record_as(&acting, &run, RunStep::Failed { reason: e.to_string() }).await;
                }
            }
        });
    }

    async fn row(&self, tenant: &TenantId, run: &RunId) -> Result<Option<RunRow>, Error> {
        self.inner.trusted.run_state(tenant, run).await
    }

    async fn record_as(&self, acting: &Principal, run: &RunId, step: RunStep) -> Result<(), Error> {
        let who = self.inner.trusted.vouch(acting.clone());
        self.inner.log.execute(&who, Command::RecordRun { run: run.clone(), step }).await.map(|_| ())
    }

    /// Runs the model and the tools until the run finishes, fails or pauses.
    async fn drive(&self, tenant: &TenantId, run: &RunId) -> Result<(), Error> {
        loop {
            let Some(row) = self.row(tenant, run).await?.filter(|r| r.status == RunStatus::Running) else { return Ok(()) };
            let acting = self.inner.trusted.principal_for(tenant, &row);
            let who = self.inner.trusted.vouch(acting.clone());
            let Transcript { messages, unanswered, model_calls } = rebuild(&self.inner.trusted.run_log(tenant, run).await?);
            let offered = self.offered(&who, &row).await?;
            let calls = if unanswered.is_empty() {
                if model_calls >= MAX_MODEL_CALLS {
                    let reason = format!("stopped after {MAX_MODEL_CALLS} model calls");
                    return self.record_as(&acting, run, RunStep::Failed { reason }).await;
                }
                let model = self.inner.models.get(&row.model).map_err(|e| Error::invalid_state(e.to_string()))?;
                let reply: ModelReply = model
                    .reply(ModelRequest { messages, tools: offered.clone() })
                    .await
                    .map_err(|e| Error::Unavailable { reason: e.to_string() })?;
                let step = RunStep::ModelReplied { text: reply.text.clone(), tool_calls: reply.tool_calls.clone() };
                self.record_as(&acting, run, step).await?;
                if reply.tool_calls.is_empty() {
                    if let Some(text) = reply.text.clone().filter(|t| !t.trim().is_empty()) {
                        let thread = ThreadId::from_trusted(row.thread.clone());
                        self.inner.log.execute(&who, Command::PostMessage { thread, text }).await?;
                    }
                    return self.record_as(&acting, run, RunStep::Finished { text: reply.text }).await;
                }
                reply.tool_calls
            } else {
                unanswered
            };
            let mut deferred = Vec::new();
            for call in calls {
                match self.call_tool(&who, &row, &offered, &call).await? {
                    Outcome::Deferred(request) => deferred.push(request),
                    Outcome::Done(result) => {
                        let step = RunStep::ToolReturned { tool_call_id: call.id, tool_name: call.name, result, is_error: false };
                        self.record_as(&acting, run, step).await?;
                    }
                    Outcome::Refused(reason) => {
                        let step = RunStep::ToolReturned {
                            tool_call_id: call.id,
                            tool_name: call.name,
                            result: Value::String(reason),
                            is_error: true,
                        };
                        self.record_as(&acting, run, step).await?;
                    }
                }
            }
            if !deferred.is_empty() {
                return self.record_as(&acting, run, RunStep::Paused { requests: deferred }).await;
            }
        }
    }

    /// The tools whose switch is on in the run's workspace, decided now.
    async fn offered(&self, who: &Authenticated, row: &RunRow) -> Result<Vec<ToolDefinition>, Error> {
        let effective = self.inner.log.effective(who, &row.workspace).await?;
        let enabled: BTreeMap<SwitchKey, bool> = effective.into_iter().map(|(k, e)| (k, e.enabled)).collect();
        Ok(toolset(&enabled))
    }

    async fn call_tool(&self, who: &Authenticated, row: &RunRow, offered: &[ToolDefinition], call: &ToolCall) -> Result<Outcome, Error> {
        if !offered.iter().any(|t| t.name == call.name) {
            let why = match switch_of(&call.name) {
                Some(key) => format!("{} is not available: {key} is switched off here", call.name),
                None => format!("there is no tool named {}", call.name),
            };
            return Ok(Outcome::Refused(why));
        }
        let args = &call.arguments;
        let text = |k: &str| args.get(k).and_then(Value::as_str).map(str::to_owned);
        let thread = ThreadId::from_trusted(row.thread.clone());
        if is_deferred(&call.name) {
            if call.name == tools::ASK_FORM {
                // A schema the subset refuses goes back to the model before anything pauses.
                if let Err(e) = check_form(args) {
                    return Ok(Outcome::Refused(format!("the form was refused: {e}. Fix it and ask again.")));
                }
            } else if text("question").is_none_or(|q| q.trim().is_empty()) {
                return Ok(Outcome::Refused("ask_user needs a question".into()));
            }
            return Ok(Outcome::Deferred(DeferredRequest {
                tool_call_id: call.id.clone(),
                tool_name: call.name.clone(),
                args: args.clone(),
            }));
        }
        match act(&self.inner.log, who, &thread, &call.name, args).await? {
            Acted::Done(receipt) => Ok(Outcome::Done(receipt)),
            Acted::Refused(why) => Ok(Outcome::Refused(why)),
        }
    }
}

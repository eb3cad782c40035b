//! AG-UI (`@ag-ui/core` 1.0.0): a run as an event stream, for front ends
//! that speak it. `POST /v1/agui/threads/{th}` takes a `RunAgentInput`:
//! without `resume` it starts a run on the last user message (the model
//! from `forwardedProps.model`, else the deployment's); with `resume` it
//! answers the interrupts of a paused run, as the caller, through the same
//! write path as the chat's answers, and goes on with that run. The answer
//! is `text/event-stream` of AG-UI events translated from the thread's live
//! stream (docs/AGUI.md): text as `TEXT_MESSAGE_*` (streamed when the model
//! streams), tool calls as `TOOL_CALL_*`, artifacts as
//! `ACTIVITY_SNAPSHOT`, and `RUN_FINISHED` with an `interrupt` outcome when
//! the run waits on an ask_form or ask_user.

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream::{self, Stream};
use lattice_core::{Error, RunId, ThreadId};
use lattice_log::{Follow, LiveEvents};
use serde::Deserialize;
use serde_json::{Value, json};

use super::path_id;
use crate::error::ApiResult;
use crate::extract::{Body, Caller};
use crate::guard::StreamPermit;
use crate::state::AppState;

mod bounds;
mod interrupts;
mod snapshot;
mod translate;

pub use bounds::{ID_MAX, MESSAGES_MAX, PARTS_MAX, RESUME_MAX};
use interrupts::parse_interrupt;
use snapshot::Standing;
use translate::Translator;

/// The parts of a `RunAgentInput` lattice reads; the rest (tools, context,
/// state) is the client's and is not acted on.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunAgentInput {
    thread_id: String,
    run_id: String,
    #[serde(default)]
    messages: Vec<Value>,
    #[serde(default)]
    forwarded_props: Option<Value>,
    #[serde(default)]
    resume: Vec<ResumeEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResumeEntry {
    interrupt_id: String,
    status: String,
    #[serde(default)]
    payload: Value,
}

impl RunAgentInput {
    /// Whether this is a reconnect to the thread (`forwardedProps.reconnect`:
    /// lattice's extension, docs/AGUI.md) rather than a run or a resume.
    fn reconnect(&self) -> bool {
        self.forwarded_props.as_ref().and_then(|p| p.get("reconnect")).and_then(Value::as_bool) == Some(true)
    }

    /// Refuses an input past its bounds, naming the field; the prompt's own
    /// bound is the write path's (a run's prompt, like a message).
    fn check(&self) -> Result<(), Error> {
        let many = |field: &str, len: usize, max: usize| Error::field(field, "maxItems", format!("{len} items exceeds the limit {max}"));
        let long = |field: &str, len: usize| Error::field(field, "maxLength", format!("{len} bytes exceeds the limit {ID_MAX}"));
        if self.messages.len() > MESSAGES_MAX {
            return Err(many("messages", self.messages.len(), MESSAGES_MAX));
        }
        for (i, message) in self.messages.iter().enumerate() {
            if let Some(parts) = message.get("content").and_then(Value::as_array)
                && parts.len() > PARTS_MAX
            {
                return Err(many(&format!("messages/{i}/content"), parts.len(), PARTS_MAX));
            }
        }
        if self.resume.len() > RESUME_MAX {
            return Err(many("resume", self.resume.len(), RESUME_MAX));
        }
        for (field, id) in [("threadId", &self.thread_id), ("runId", &self.run_id)] {
            if id.len() > ID_MAX {
                return Err(long(field, id.len()));
            }
        }
        match self.resume.iter().position(|r| r.interrupt_id.len() > ID_MAX) {
            Some(i) => Err(long(&format!("resume/{i}/interruptId"), self.resume[i].interrupt_id.len())),
            None => Ok(()),
        }
    }
}

/// The text of the last user message: a string, or its text parts.
fn prompt(messages: &[Value]) -> Option<String> {
    let last = messages.iter().rev().find(|m| m.get("role").and_then(Value::as_str) == Some("user"))?;
    let text = match last.get("content")? {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n"),
        _ => return None,
    };
    Some(text).filter(|t| !t.trim().is_empty())
}

/// Runs an agent turn in a thread, resumes one, or reconnects to the
/// thread, as AG-UI events.
#[utoipa::path(post, path = "/v1/agui/threads/{th}", request_body(content = Object, description = "an AG-UI RunAgentInput"),
    responses((status = 200, description = "text/event-stream of AG-UI events"), (status = 403, body = lattice_wire::ErrorBody),
        (status = 404, body = lattice_wire::ErrorBody), (status = 422, body = lattice_wire::ErrorBody)),
    params(("th" = String, Path)), security(("bearer" = [])))]
pub async fn run(
    State(state): State<AppState>,
    Caller(who): Caller,
    Path(th): Path<String>,
    Body(input): Body<RunAgentInput>,
) -> ApiResult<Response> {
    let thread = path_id(ThreadId::parse, &th)?;
    input.check()?;
    // Followed from here: everything the run does comes after, and what a
    // reconnect's snapshot holds (the caller's own commits among it) before.
    let after = state.log.horizon().caught_up().await;
    let mut live = state.log.follow(&who, Follow::Thread(thread.clone()), after).await?;
    // A resume with answers follows again from its first answer (below):
    // what it missed is read there, not twice.
    if input.resume.is_empty() {
        live.catch_up().await?;
    }
    let permit = state.guard.open_stream(who.principal())?;
    let mut translator = Translator::new(input.thread_id.clone(), input.run_id.clone());
    let mut first = vec![translator.started()];
    let following = if input.reconnect() {
        if !input.resume.is_empty() {
            return Err(Error::field("forwardedProps.reconnect", "const", "a reconnect answers nothing: send resume without it").into());
        }
        // What the thread holds up to where the live stream starts: nothing
        // between the two is lost, nothing is in both.
        let (messages, standing) = snapshot::read(&state.log, &who, &thread, after).await?;
        first.push(json!({"type": "MESSAGES_SNAPSHOT", "messages": messages}));
        match standing {
            Standing::Running(run) => {
                translator.join(run);
                true
            }
            Standing::Paused(run) => {
                translator.join(run);
                match still_waiting(&state, &who, &translator).await? {
                    Some(interrupted) => {
                        first.push(interrupted);
                        false
                    }
                    // Answered in between: its events follow.
                    None => true,
                }
            }
            Standing::Idle => {
                first.push(translator.idle());
                false
            }
        }
    } else if input.resume.is_empty() {
        let prompt = prompt(&input.messages).ok_or_else(|| Error::field("messages", "required", "a user message with text starts a run"))?;
        let model = input.forwarded_props.as_ref().and_then(|p| p.get("model")).and_then(Value::as_str).map(str::to_owned);
        // A rule driving lattice over AG-UI names its event's chain the same way.
        let chain = input.forwarded_props.as_ref().and_then(|p| p.get("chain")).and_then(Value::as_str).map(str::to_owned);
        translator.run = state.runner.start(&who, thread, prompt, model, chain).await?.to_string();
        true
    } else {
        match resume(&state, &who, &input.resume).await {
            Ok((run, answered)) => {
                translator.run = run.to_string();
                // Followed from the first answer on: behind more than one
                // replica, this one may not have seen the pause it answers
                // when `after` was read, and replayed, the pause would end
                // this run at once with the interrupt just answered. All
                // the run does next comes after its answers.
                if let Some(first) = answered.iter().map(|(_, seq)| *seq).min() {
                    live = state.log.follow(&who, Follow::Thread(thread.clone()), first - 1).await?;
                    live.catch_up().await?;
                }
                // Each answer's receipt, before what the run does next.
                for (interrupt, seq) in answered {
                    let proof = state.log.proof(&who, seq).await?;
                    first.push(receipt_event(&interrupt, seq, proof));
                }
                // Some of its requests still unanswered: the run waits on
                // them, and this request's run ends with them as interrupts.
                match still_waiting(&state, &who, &translator).await? {
                    Some(interrupted) => {
                        first.push(interrupted);
                        false
                    }
                    None => true,
                }
            }
            Err(e) => {
                // A refused answer ends this run with the refusal, fields named.
                first.push(translator.error(&e));
                false
            }
        }
    };
    let live = following.then_some(live);
    Ok(Sse::new(events(first, live, translator, permit, state.shutdown.clone()))
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response())
}

/// What the translator's run still waits on, when it is paused with a
/// request nobody answered, or running with a connected server's question
/// nobody answered: `RUN_FINISHED` with those as interrupts.
async fn still_waiting(state: &AppState, who: &lattice_log::Authenticated, translator: &Translator) -> Result<Option<Value>, Error> {
    let run = RunId::parse("run", &translator.run)?;
    let view = state.log.run(who, &run).await?;
    let waits = |r: &&lattice_log::RequestRow| match view.run.status {
        lattice_core::RunStatus::Paused => true,
        lattice_core::RunStatus::Running => r.tool_name == lattice_core::run::ELICITATION,
        _ => false,
    };
    let open: Vec<_> = view.requests.iter().filter(|r| r.answered_by.is_none()).filter(waits).collect();
    if open.is_empty() {
        return Ok(None);
    }
    let waiting = open.iter().map(|r| translate::Waiting {
        tool_call_id: &r.tool_call_id,
        tool_name: &r.tool_name,
        args: &r.args,
        expires_at: r.expires(),
        sign_in: r.sign_in.as_ref(),
    });
    Ok(Some(translator.interrupted(waiting)))
}

/// An answer's receipt (docs/SEAL.md), as the `CUSTOM` event
/// `lattice.receipt`: the interrupt it answered, the answer's `seq`, and
/// its sealed receipt once sealed (else null: `GET /v1/receipts/{seq}`).
fn receipt_event(interrupt: &str, seq: i64, proof: Option<lattice_log::seal::Receipt>) -> Value {
    json!({"type": "CUSTOM", "name": "lattice.receipt", "value": {"interruptId": interrupt, "seq": seq, "proof": proof}})
}

/// Answers each interrupt as the caller (or cancels the run); answers the
/// run they belong to, and each answered interrupt with its answer's seq.
async fn resume(state: &AppState, who: &lattice_log::Authenticated, entries: &[ResumeEntry]) -> Result<(RunId, Vec<(String, i64)>), Error> {
    let mut run_of = None;
    let mut answered = Vec::new();
    for entry in entries {
        let (run, tool_call_id) = parse_interrupt(&entry.interrupt_id)?;
        if run_of.as_ref().is_some_and(|r: &RunId| *r != run) {
            return Err(Error::field("resume", "const", "the interrupts of one run at a time"));
        }
        match entry.status.as_str() {
            "resolved" => answered.push((entry.interrupt_id.clone(), state.runner.answer(who, &run, tool_call_id, entry.payload.clone()).await?)),
            "cancelled" => state.runner.cancel(who, &run).await?,
            other => return Err(Error::field("resume.status", "enum", format!("{other:?} is not resolved or cancelled"))),
        }
        run_of = Some(run);
    }
    let run = run_of.ok_or_else(|| Error::field("resume", "minItems", "nothing to resume"))?;
    Ok((run, answered))
}

fn events(
    first: Vec<Value>,
    live: Option<LiveEvents>,
    translator: Translator,
    permit: StreamPermit,
    shutdown: tokio::sync::watch::Receiver<bool>,
) -> impl Stream<Item = Result<SseEvent, Infallible>> {
    let pending: std::collections::VecDeque<Value> = first.into();
    stream::unfold((pending, live, translator, permit, shutdown), |(mut pending, mut live, mut translator, permit, mut shutdown)| async move {
        loop {
            if let Some(event) = pending.pop_front() {
                // Named as every live stream names it, so that a client
                // of either kind knows why the stream ends.
                let lost = event.get("code").and_then(Value::as_str) == Some("AccessLost");
                let sse = SseEvent::default().data(event.to_string());
                let sse = if lost { sse.event(super::events::ACCESS_LOST) } else { sse };
                return Some((Ok(sse), (pending, live, translator, permit, shutdown)));
            }
            let stream = live.as_mut()?;
            let next = tokio::select! {
                next = stream.next() => next,
                _ = shutdown.changed() => None,
            };
            let Some(next) = next else {
                // The stream ended under the run (access lost, shutdown).
                live = None;
                pending.push_back(translator.error(&Error::Unavailable { reason: "the live stream ended".into() }));
                continue;
            };
            let (events, done) = translator.take(&next);
            pending.extend(events);
            if done {
                live = None;
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_is_the_last_user_messages_text() {
        let messages = vec![
            json!({"id": "1", "role": "user", "content": "first"}),
            json!({"id": "2", "role": "assistant", "content": "ok"}),
            json!({"id": "3", "role": "user", "content": [{"type": "text", "text": "second"}, {"type": "text", "text": "part"}]}),
        ];
        assert_eq!(prompt(&messages).as_deref(), Some("second\npart"));
        assert_eq!(prompt(&[json!({"role": "assistant", "content": "x"})]), None);
        assert_eq!(prompt(&[json!({"role": "user", "content": "  "})]), None);
    }
}

//! A reconnect (lattice's extension to AG-UI, docs/AGUI.md): the thread's
//! conversation as a `MESSAGES_SNAPSHOT`, read from the log up to one
//! position, and where its latest run stands there. The live stream then
//! goes on from that same position, so a reconnecting client loses nothing
//! and is told nothing twice, on whichever replica it reaches.

use lattice_core::event::Event;
use lattice_core::{Actor, Envelope, Error, ThreadId};
use lattice_log::{Authenticated, LogService};
use serde_json::{Value, json};

use super::bounds::MESSAGES_MAX;

/// Envelopes read at once, backwards from the snapshot's position.
const PAGE: i64 = 500;
/// Envelopes read at most: a reconnect costs the thread's end, not the
/// whole thread.
const SCANNED_MAX: usize = 20 * PAGE as usize;

/// Where the thread's latest run stands at the snapshot.
pub(super) enum Standing {
    /// Going: its events follow, live.
    Running(String),
    /// Waiting on people: the stream ends with what it still waits on, as
    /// interrupts.
    Paused(String),
    /// No run is going.
    Idle,
}

/// The thread's messages (the last [`MESSAGES_MAX`]) as AG-UI messages, and
/// its latest run, as they stand at `upto`: read from the thread's end
/// backwards, until both are known (at most [`SCANNED_MAX`] envelopes; a run
/// whose last start or resume lies further back reads as none going).
pub(super) async fn read(log: &LogService, who: &Authenticated, thread: &ThreadId, upto: i64) -> Result<(Vec<Value>, Standing), Error> {
    let mut messages = Vec::new();
    let mut standing = None;
    let (mut before, mut scanned) = (i64::MAX, 0);
    while (messages.len() < MESSAGES_MAX || standing.is_none()) && scanned < SCANNED_MAX {
        let page = log.thread_events_backwards(who, thread, upto, before, PAGE).await?;
        let Some(oldest) = page.last() else { break };
        before = oldest.seq;
        scanned += page.len();
        for e in &page {
            // The newest of a run's starts, resumes, pauses and ends says
            // where the latest run stands.
            if standing.is_none() {
                standing = match &e.event {
                    Event::RunStarted(s) => Some(Standing::Running(s.run_id.clone())),
                    Event::RunResumed(r) => Some(Standing::Running(r.run_id.clone())),
                    Event::RunPaused(p) => Some(Standing::Paused(p.run_id.clone())),
                    // It waits on a person too, while it runs.
                    Event::RunAsked(p) => Some(Standing::Paused(p.run_id.clone())),
                    Event::RunFinished(_) | Event::RunFailed(_) => Some(Standing::Idle),
                    _ => None,
                };
            }
            if messages.len() < MESSAGES_MAX
                && let Some(message) = message(e)
            {
                messages.push(message);
            }
        }
        if page.len() < PAGE as usize {
            break;
        }
    }
    messages.reverse();
    Ok((messages, standing.unwrap_or(Standing::Idle)))
}

/// The AG-UI message an envelope is, if it is one; ids as the live events
/// name the same things (`translate`).
fn message(e: &Envelope) -> Option<Value> {
    Some(match &e.event {
        // A run's own reply is also posted: it is already its model's reply.
        Event::MessagePosted(_) if matches!(&e.actor, Actor::Agent { run: Some(_), .. }) => return None,
        Event::MessagePosted(posted) => {
            let role = if matches!(e.actor, Actor::Agent { .. }) { "assistant" } else { "user" };
            json!({"id": e.id, "role": role, "content": posted.text})
        }
        Event::RunStarted(started) => json!({"id": format!("prompt_{}", started.run_id), "role": "user", "content": started.prompt}),
        Event::ModelReplied(replied) => {
            let mut m = json!({"id": format!("msg_{}_{}", replied.run_id, e.seq), "role": "assistant"});
            if let Some(text) = replied.text.as_ref().filter(|t| !t.is_empty()) {
                m["content"] = json!(text);
            }
            if !replied.tool_calls.is_empty() {
                let calls: Vec<Value> = replied
                    .tool_calls
                    .iter()
                    .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments.to_string()}}))
                    .collect();
                m["toolCalls"] = json!(calls);
            }
            m
        }
        Event::ToolReturned(returned) => {
            json!({"id": format!("result_{}", returned.tool_call_id), "role": "tool", "toolCallId": returned.tool_call_id,
                "content": super::translate::result_text(&returned.result, returned.is_error)})
        }
        // A person's answer to a request the run waited on: that call's result.
        Event::DeferredAnswered(answered) => {
            let content = if answered.expired { "expired".to_owned() } else { answered.answer.to_string() };
            json!({"id": format!("result_{}", answered.tool_call_id), "role": "tool", "toolCallId": answered.tool_call_id, "content": content})
        }
        _ => return None,
    })
}

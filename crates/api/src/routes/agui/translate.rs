//! One lattice run's live stream as AG-UI events (docs/AGUI.md's table).

use std::collections::HashSet;

use lattice_core::event::{Event, RunAsked, RunPaused};
use lattice_core::{Actor, Envelope, Error, RunFailure};
use lattice_log::Live;
use serde_json::{Value, json};

use super::interrupts::interrupt_id;

/// A tool's result as AG-UI carries it: text, an error's beginning `error: `.
pub(super) fn result_text(result: &Value, is_error: bool) -> String {
    let content = match result {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if is_error { format!("error: {content}") } else { content }
}

/// A request a run waits on, as an interrupt tells it.
pub(super) struct Waiting<'a> {
    pub tool_call_id: &'a str,
    pub tool_name: &'a str,
    pub args: &'a Value,
    pub expires_at: Option<String>,
    pub sign_in: Option<&'a lattice_core::SignInNeeded>,
}

/// Turns one lattice run's live stream into AG-UI events.
pub(super) struct Translator {
    thread_id: String,
    run_id: String,
    /// The lattice run followed.
    pub(super) run: String,
    /// The assistant message being streamed, if one is open.
    open_message: Option<String>,
    /// Text was streamed since the last reply: the reply is not sent again.
    streamed: bool,
    /// Tool calls already started.
    started_tools: HashSet<String>,
    /// The model the run asked for, once its start is seen.
    model: Option<String>,
    /// Tokens the model calls seen used, as they reported them.
    tokens: Option<u64>,
    /// Joined mid-run (a reconnect): the reply being written when the
    /// snapshot was taken is sent whole when it is committed, not from
    /// the middle of its text.
    joined: bool,
}

impl Translator {
    pub(super) fn new(thread_id: String, run_id: String) -> Self {
        Self {
            thread_id,
            run_id,
            run: String::new(),
            open_message: None,
            streamed: false,
            started_tools: HashSet::new(),
            model: None,
            tokens: None,
            joined: false,
        }
    }

    /// Follows `run` from the middle (a reconnect).
    pub(super) fn join(&mut self, run: String) {
        self.run = run;
        self.joined = true;
    }

    pub(super) fn started(&self) -> Value {
        json!({"type": "RUN_STARTED", "threadId": self.thread_id, "runId": self.run_id})
    }

    /// A refusal as the run's end: its words (a validation failure names
    /// each field) and its type as the code.
    pub(super) fn error(&mut self, e: &Error) -> Value {
        let e = e.clone().bounded();
        let code = serde_json::to_value(&e).ok().and_then(|v| v.get("type").and_then(Value::as_str).map(str::to_owned)).unwrap_or_default();
        json!({"type": "RUN_ERROR", "message": e.to_string(), "code": code})
    }

    fn close_message(&mut self, out: &mut Vec<Value>) {
        if let Some(id) = self.open_message.take() {
            out.push(json!({"type": "TEXT_MESSAGE_END", "messageId": id}));
        }
    }

    /// The events one item of the live stream makes, and whether the run
    /// is over for this request (finished, failed, or waiting).
    pub(super) fn take(&mut self, item: &Live) -> (Vec<Value>, bool) {
        let mut out = Vec::new();
        match item {
            Live::Passing(p) => {
                let Ok(body) = serde_json::from_str::<Value>(&p.json) else { return (out, false) };
                if body.get("run_id").and_then(Value::as_str) != Some(self.run.as_str()) {
                    return (out, false);
                }
                let call = body.get("model_call").and_then(Value::as_u64).unwrap_or(0) as usize;
                match p.name {
                    // Joined mid-reply: the reply comes whole, when committed.
                    "delta" if self.joined => {}
                    "delta" => {
                        let text = body.get("text").and_then(Value::as_str).unwrap_or_default();
                        if text.is_empty() {
                            return (out, false);
                        }
                        if self.open_message.is_none() {
                            let id = format!("msg_{}_c{call}", self.run);
                            out.push(json!({"type": "TEXT_MESSAGE_START", "messageId": id, "role": "assistant"}));
                            self.open_message = Some(id);
                        }
                        self.streamed = true;
                        let id = self.open_message.clone().expect("opened above");
                        out.push(json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": id, "delta": text}));
                    }
                    "tool_input" => {
                        let id = body.get("tool_call_id").and_then(Value::as_str).unwrap_or_default().to_owned();
                        let name = body.get("name").and_then(Value::as_str).unwrap_or_default();
                        if !id.is_empty() && self.started_tools.insert(id.clone()) {
                            self.close_message(&mut out);
                            out.push(json!({"type": "TOOL_CALL_START", "toolCallId": id, "toolCallName": name}));
                        }
                    }
                    _ => {}
                }
                (out, false)
            }
            Live::Committed(d) => {
                let Ok(envelope) = serde_json::from_str::<Envelope>(&d.json) else { return (out, false) };
                self.envelope(&envelope, &mut out)
            }
            // The run's end for this reader: what follows is not theirs.
            Live::AccessLost => {
                self.close_message(&mut out);
                out.push(json!({"type": "RUN_ERROR", "message": "You no longer have access to this thread", "code": "AccessLost"}));
                (out, true)
            }
        }
    }

    /// `RUN_FINISHED` with the `interrupt` outcome: one interrupt for each
    /// request the run waits on (its tool call's id and name, arguments,
    /// deadline, and the server to sign in to first).
    pub(super) fn interrupted<'a>(&self, waiting: impl Iterator<Item = Waiting<'a>>) -> Value {
        let interrupts: Vec<Value> = waiting
            .map(|Waiting { tool_call_id, tool_name, args, expires_at, sign_in }| {
                let (message, schema) = match tool_name {
                    // The person signs in first (lattice's chat, or `POST
                    // /v1/me/connections/{server}`), then answers to go on.
                    _ if let Some(needed) = sign_in => (
                        json!(format!("The agent needs the person's account on the {} server: connect it, then answer to go on", needed.server)),
                        json!({"type": "object", "properties": {"approved": {"type": "boolean"}}, "required": ["approved"],
                            "additionalProperties": false}),
                    ),
                    lattice_agent::tools::ASK_FORM => {
                        (args.get("title").cloned().unwrap_or(Value::Null), args.get("schema").cloned().unwrap_or(json!({})))
                    }
                    // A connected server's question, resumed as MCP answers
                    // one: accept with the form's values, decline or cancel.
                    lattice_core::run::ELICITATION => (
                        json!(format!(
                            "The {} server asks: {}",
                            args.get("server").and_then(Value::as_str).unwrap_or_default(),
                            args.get("message").and_then(Value::as_str).unwrap_or_default()
                        )),
                        json!({"type": "object", "properties": {"action": {"enum": ["accept", "decline", "cancel"]},
                            "content": args.get("schema").cloned().unwrap_or(json!({}))}, "required": ["action"], "additionalProperties": false}),
                    ),
                    // A connected server's call its policy put to a person:
                    // resumed with `{"approved": true|false}`.
                    _ if let Some((server, tool)) = lattice_core::ServerKey::split_tool(tool_name) => (
                        json!(format!("The agent wants to call {tool} on the {server} server with {args}")),
                        json!({"type": "object", "properties": {"approved": {"type": "boolean"}}, "required": ["approved"],
                            "additionalProperties": false}),
                    ),
                    _ => (args.get("question").cloned().unwrap_or(Value::Null), json!({"type": "string"})),
                };
                let mut interrupt = json!({"id": interrupt_id(&self.run, tool_call_id), "reason": format!("lattice.{tool_name}"),
                    "toolCallId": tool_call_id, "responseSchema": schema});
                if let Some(message) = message.as_str() {
                    interrupt["message"] = json!(message);
                }
                if let Some(at) = expires_at {
                    interrupt["expiresAt"] = json!(at);
                }
                if let Some(needed) = sign_in {
                    interrupt["signIn"] = json!({"server": needed.server, "scope": needed.scope});
                }
                interrupt
            })
            .collect();
        self.finished(json!({"type": "interrupt", "interrupts": interrupts}))
    }

    /// The end of a reconnect that found no run going.
    pub(super) fn idle(&self) -> Value {
        self.finished(json!({"type": "success"}))
    }

    /// `RUN_FINISHED` with `outcome`, and the tokens the run's model calls
    /// reported in this stream, if any did (`usage`, one entry: one model).
    fn finished(&self, outcome: Value) -> Value {
        let mut event = json!({"type": "RUN_FINISHED", "threadId": self.thread_id, "runId": self.run_id, "outcome": outcome});
        if let Some(tokens) = self.tokens {
            let mut usage = json!({"totalTokens": tokens});
            if let Some(model) = &self.model {
                usage["model"] = json!(model);
            }
            event["usage"] = json!([usage]);
        }
        event
    }

    pub(super) fn envelope(&mut self, e: &Envelope, out: &mut Vec<Value>) -> (Vec<Value>, bool) {
        let ours = e.event.run_id() == Some(self.run.as_str());
        let by_our_run = matches!(&e.actor, Actor::Agent { run: Some(r), .. } if r.as_str() == self.run);
        let done = match &e.event {
            Event::RunStarted(started) if ours => {
                self.model = Some(started.model.clone());
                false
            }
            Event::ModelReplied(replied) if ours => {
                if let Some(tokens) = replied.tokens {
                    self.tokens = Some(self.tokens.unwrap_or(0).saturating_add(tokens));
                }
                self.joined = false;
                if !std::mem::take(&mut self.streamed)
                    && let Some(text) = replied.text.as_ref().filter(|t| !t.is_empty())
                {
                    // Not streamed: the whole text at once, named by its envelope.
                    let id = format!("msg_{}_{}", self.run, e.seq);
                    out.push(json!({"type": "TEXT_MESSAGE_START", "messageId": id, "role": "assistant"}));
                    out.push(json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": id, "delta": text}));
                    out.push(json!({"type": "TEXT_MESSAGE_END", "messageId": id}));
                }
                self.close_message(out);
                for call in &replied.tool_calls {
                    if self.started_tools.insert(call.id.clone()) {
                        out.push(json!({"type": "TOOL_CALL_START", "toolCallId": call.id, "toolCallName": call.name}));
                    }
                    out.push(json!({"type": "TOOL_CALL_ARGS", "toolCallId": call.id, "delta": call.arguments.to_string()}));
                    out.push(json!({"type": "TOOL_CALL_END", "toolCallId": call.id}));
                }
                false
            }
            Event::ToolReturned(returned) if ours => {
                let content = result_text(&returned.result, returned.is_error);
                out.push(json!({"type": "TOOL_CALL_RESULT", "messageId": format!("result_{}", returned.tool_call_id),
                    "toolCallId": returned.tool_call_id, "content": content, "role": "tool"}));
                false
            }
            Event::ArtifactCreated(created) if by_our_run => {
                out.push(json!({"type": "ACTIVITY_SNAPSHOT", "messageId": format!("artifact_{}", created.id), "activityType": "lattice.artifact",
                    "content": {"id": created.id, "kind": created.kind, "version": created.version, "title": created.data.get("title")}}));
                false
            }
            Event::ArtifactChanged(changed) if by_our_run => {
                out.push(json!({"type": "ACTIVITY_SNAPSHOT", "messageId": format!("artifact_{}", changed.id), "activityType": "lattice.artifact",
                    "content": {"id": changed.id, "version": changed.version}}));
                false
            }
            // A connected server's question while the run goes on: this
            // request's run ends with it as an interrupt too, and a resume
            // that answers it follows the run on.
            Event::RunPaused(RunPaused { requests, .. }) | Event::RunAsked(RunAsked { requests, .. }) if ours => {
                self.close_message(out);
                let waiting = requests.iter().map(|r| Waiting {
                    tool_call_id: &r.tool_call_id,
                    tool_name: &r.tool_name,
                    args: &r.args,
                    expires_at: r.expires_at.clone(),
                    sign_in: r.sign_in.as_ref(),
                });
                out.push(self.interrupted(waiting));
                true
            }
            Event::RunFinished(_) if ours => {
                self.close_message(out);
                out.push(self.finished(json!({"type": "success"})));
                true
            }
            Event::RunFailed(failed) if ours => {
                self.close_message(out);
                if failed.failure == Some(RunFailure::Cancelled) {
                    out.push(self.finished(json!({"type": "cancelled"})));
                } else {
                    let code = failed.failure.map_or("failed", RunFailure::as_str);
                    out.push(json!({"type": "RUN_ERROR", "message": failed.reason, "code": code}));
                }
                true
            }
            _ => false,
        };
        (std::mem::take(out), done)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Translator, Waiting};

    #[test]
    fn a_servers_call_put_to_a_person_is_an_interrupt_answered_yes_or_no() {
        let t = Translator::new("th_1".into(), "run_1".into());
        let args = json!({"note": "hi"});
        let finished =
            t.interrupted([Waiting { tool_call_id: "c1", tool_name: "clock__write_note", args: &args, expires_at: None, sign_in: None }].into_iter());
        let interrupt = &finished["outcome"]["interrupts"][0];
        assert_eq!(interrupt["reason"], "lattice.clock__write_note");
        assert_eq!(interrupt["message"], "The agent wants to call write_note on the clock server with {\"note\":\"hi\"}");
        assert_eq!(interrupt["responseSchema"]["required"], json!(["approved"]));
        assert!(interrupt.get("signIn").is_none());
    }

    #[test]
    fn a_call_that_waits_for_a_sign_in_says_which_server_and_scope() {
        let t = Translator::new("th_1".into(), "run_1".into());
        let args = json!({});
        let needed = lattice_core::SignInNeeded { server: "notes".into(), scope: Some("notes:write".into()) };
        let waiting = Waiting { tool_call_id: "c1", tool_name: "notes__write_note", args: &args, expires_at: None, sign_in: Some(&needed) };
        let finished = t.interrupted([waiting].into_iter());
        let interrupt = &finished["outcome"]["interrupts"][0];
        assert_eq!(interrupt["signIn"], json!({"server": "notes", "scope": "notes:write"}));
        assert!(interrupt["message"].as_str().unwrap().contains("account on the notes server"), "{interrupt}");
        assert_eq!(interrupt["responseSchema"]["required"], json!(["approved"]));
    }
}

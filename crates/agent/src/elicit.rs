//! A connected server's question, in the middle of the agent's call of
//! one of its tools, put to the person the run acts for (docs/MCP.md,
//! "Servers that ask"): the server's form becomes a lattice form (the
//! same validator and flat subset the exporter uses the other way), a
//! request of the running run; the person's answer, checked on the write
//! path, goes back to the server. The run stays running, its call
//! waiting; the question's own deadline, the run's end and the server's
//! withdrawal each close it.

use std::time::Duration;

use lattice_connect::{Answer, Asker, Question, Withdrawn};
use lattice_core::run::ELICITATION;
use lattice_core::{Audit, Command, DeferredRequest, Error, RunId, RunStatus, RunStep, ThreadId};
use lattice_log::{Authenticated, LogService};
use serde_json::{Value, json};

/// The audit row of each question and how it ended.
pub const AUDIT_NAME: &str = "mcp_elicitation";
/// How long a person has to answer a server's question (the exporter's
/// own wait, and the official example server's).
pub const WAIT_SECS: u64 = 600;
/// The longest message shown with a question, in characters.
const MESSAGE_CHARS: usize = 2000;
/// How often the question's row is read again if no commit is heard of
/// (another replica's answer, a notification lost).
const LOOK_EVERY: Duration = Duration::from_secs(1);

/// Who a call's questions go to: the run's person, through the log.
pub struct RunAsker {
    pub log: LogService,
    /// The run's agent, acting for its person.
    pub who: Authenticated,
    pub run: RunId,
    pub thread: ThreadId,
    pub server: String,
    pub tool: String,
    /// The model's call the question belongs to.
    pub call: String,
}

#[async_trait::async_trait]
impl Asker for RunAsker {
    async fn ask(&self, question: Question, withdrawn: Withdrawn) -> Answer {
        match self.asking(question, withdrawn).await {
            Ok(answer) => answer,
            Err(e) => {
                tracing::warn!(server = %self.server, run = %self.run, error = %e, "a server's question could not be asked: cancelled");
                Answer::Cancel
            }
        }
    }
}

impl RunAsker {
    async fn asking(&self, question: Question, withdrawn: Withdrawn) -> Result<Answer, Error> {
        let Question::Form { message, requested } = question;
        let (schema, ui) = match form(&requested) {
            Ok(form) => form,
            Err(why) => {
                self.audit("not_asked", None, Some(&why)).await?;
                return Ok(Answer::Cancel);
            }
        };
        let id = format!("{}:elicit:{}", self.call, ulid::Ulid::generate());
        let message: String = lattice_core::name::clean(&message).chars().take(MESSAGE_CHARS).collect();
        let request = DeferredRequest {
            tool_call_id: id.clone(),
            tool_name: ELICITATION.into(),
            args: json!({
                "server": self.server, "tool": self.tool, "call": self.call,
                "mode": lattice_ui::asks::FORM_MODE, "message": message, "schema": schema, "ui": ui,
            }),
            expires_in_secs: Some(WAIT_SECS),
            expires_at: None,
            sign_in: None,
        };
        let asked = self.log.execute(&self.who, Command::RecordRun { run: self.run.clone(), step: RunStep::Asked { requests: vec![request] } }).await;
        if let Err(e) = asked {
            self.audit("not_asked", Some(&id), Some(&e.to_string())).await?;
            return Ok(Answer::Cancel);
        }
        self.audit("asked", Some(&id), None).await?;
        let (answer, ended) = self.wait(&id, withdrawn).await?;
        let decision = match &answer {
            Answer::Accept(_) => "accepted",
            Answer::Decline => "declined",
            Answer::Cancel => ended.unwrap_or("cancelled"),
        };
        self.audit(decision, Some(&id), None).await?;
        Ok(answer)
    }

    /// Waits for the question's row to be answered (by the person, or
    /// `expired` by the log's deadline), the run to end, or the server to
    /// withdraw it; answers what the server is told, and how it ended
    /// when nobody answered.
    async fn wait(&self, id: &str, withdrawn: Withdrawn) -> Result<(Answer, Option<&'static str>), Error> {
        let mut horizon = self.log.horizon().subscribe();
        let mut withdrawn = withdrawn;
        loop {
            let view = self.log.run(&self.who, &self.run).await?;
            if let Some(answer) = view.requests.iter().find(|r| r.tool_call_id == id).and_then(|r| r.answer.as_ref()) {
                let expired = answer.as_str() == Some(lattice_log::EXPIRED);
                return Ok((told(answer), expired.then_some("expired")));
            }
            if view.run.status != RunStatus::Running {
                self.log.close_question(&self.who, id, "the run ended").await?;
                return Ok((Answer::Cancel, Some("run_ended")));
            }
            tokio::select! {
                _ = horizon.changed() => {}
                () = tokio::time::sleep(LOOK_EVERY) => {}
                () = &mut withdrawn => {
                    self.log.close_question(&self.who, id, "the server withdrew its question").await?;
                    return Ok((Answer::Cancel, Some("withdrawn")));
                }
            }
        }
    }

    /// The question's audit row, in the thread the run acts in: never its
    /// content (that is in the request's answer).
    async fn audit(&self, decision: &str, request: Option<&str>, why: Option<&str>) -> Result<(), Error> {
        let mut data = json!({
            "server": self.server,
            "tool": self.tool,
            "run": self.run.to_string(),
            "tool_call_id": self.call,
            "mode": lattice_ui::asks::FORM_MODE,
            "decision": decision,
        });
        if let Some(request) = request {
            data["request"] = json!(request);
        }
        if let Some(why) = why {
            data["why"] = json!(why);
        }
        let audit = Audit { name: AUDIT_NAME.into(), data, once: None };
        self.log.execute(&self.who, Command::RecordAudit { thread: self.thread.clone(), audit }).await.map(drop)
    }
}

/// The server's form as a lattice form that compiles, with hints that
/// hold for it; else why it cannot be asked.
fn form(requested: &Value) -> Result<(Value, lattice_ui::hints::UiHints), String> {
    let (schema, ui) = lattice_ui::elicitation::form_of(requested)?;
    let compiled = lattice_ui::schema::compile(&schema).map_err(|e| e.to_string())?;
    ui.check(&compiled).map_err(|e| e.to_string())?;
    Ok((schema, ui))
}

/// What the server is told of a request's answer: a person's accept with
/// its values, or decline; anything else (cancel, lattice's `expired` or
/// its close) is a cancel.
fn told(answer: &Value) -> Answer {
    match answer.get("action").and_then(Value::as_str) {
        Some("accept") => Answer::Accept(answer.get("content").cloned().unwrap_or_else(|| json!({}))),
        Some("decline") => Answer::Decline,
        _ => Answer::Cancel,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_is_told_what_the_person_said_and_cancel_for_anything_else() {
        assert_eq!(told(&json!({"action": "accept", "content": {"name": "ana"}})), Answer::Accept(json!({"name": "ana"})));
        assert_eq!(told(&json!({"action": "decline"})), Answer::Decline);
        assert_eq!(told(&json!({"action": "cancel"})), Answer::Cancel);
        assert_eq!(told(&json!(lattice_log::EXPIRED)), Answer::Cancel);
        assert_eq!(told(&json!({"action": "cancel", "reason": "the run ended"})), Answer::Cancel);
    }
}

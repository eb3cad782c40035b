//! The questions a run asks a person and waits on: an `ask_form` is
//! answered with values valid for the schema it carries, and only while
//! forms are on (answering one is using a form); an `ask_user` with text.

use lattice_core::policy::{self, Action};
use lattice_core::{Actor, Check, Command, Error, SwitchKey, WorkspaceView};
use serde_json::Value;

use crate::kinds::prefixed;
use crate::schema;

/// The tool that asks for a form's values.
pub const ASK_FORM: &str = "ask_form";
/// The tool that asks a question in chat.
pub const ASK_USER: &str = "ask_user";

/// The answer to an ask_form: governed by the forms switch, valid values
/// for the schema its request carries (the check a form's submission gets).
pub struct AskFormAnswer;

#[async_trait::async_trait]
impl Check for AskFormAnswer {
    async fn switches(&self, view: &dyn WorkspaceView, command: &Command) -> Result<Vec<SwitchKey>, Error> {
        let Command::AnswerDeferred { run, tool_call_id, .. } = command else { return Ok(Vec::new()) };
        let request = view.deferred_request(run, tool_call_id).await?;
        Ok(request.filter(|r| r.tool_name == ASK_FORM).map(|_| SwitchKey::Forms).into_iter().collect())
    }

    async fn check(&self, view: &dyn WorkspaceView, _actor: &Actor, command: &Command) -> Result<(), Error> {
        let Command::AnswerDeferred { run, tool_call_id, answer, .. } = command else { return Ok(()) };
        let Some(request) = view.deferred_request(run, tool_call_id).await? else { return Ok(()) };
        if request.tool_name != ASK_FORM {
            return Ok(());
        }
        let schema = request.args.get("schema").cloned().unwrap_or(Value::Null);
        let compiled = schema::compile(&schema).map_err(|e| prefixed("args.schema", e))?;
        compiled.validate(answer).map_err(|e| prefixed("answer", e))?;
        crate::attached::attached(view, &compiled, answer).await.map(drop).map_err(|e| prefixed("answer", e))
    }
}

/// The answer to a call of a connected server's tool put to a person:
/// `{"approved": bool}`, given by someone who may act in the run (an
/// editor: whoever may start the agent's turn) while the server's key is
/// on, so a server cut off mid-run cannot be approved into a call.
pub struct ServerCallAnswer;

#[async_trait::async_trait]
impl Check for ServerCallAnswer {
    async fn switches(&self, view: &dyn WorkspaceView, command: &Command) -> Result<Vec<SwitchKey>, Error> {
        let Command::AnswerDeferred { run, tool_call_id, .. } = command else { return Ok(Vec::new()) };
        let Some(request) = view.deferred_request(run, tool_call_id).await? else { return Ok(Vec::new()) };
        let Some((server, _)) = lattice_core::ServerKey::split_tool(&request.tool_name) else { return Ok(Vec::new()) };
        let key = format!("{}{server}", lattice_core::ServerKey::PREFIX);
        SwitchKey::parse(&key).map(|key| vec![key]).ok_or(Error::NotEnabled { key })
    }

    async fn check(&self, view: &dyn WorkspaceView, _actor: &Actor, command: &Command) -> Result<(), Error> {
        let Command::AnswerDeferred { run, tool_call_id, answer, approved, .. } = command else { return Ok(()) };
        let Some(request) = view.deferred_request(run, tool_call_id).await? else { return Ok(()) };
        if lattice_core::ServerKey::split_tool(&request.tool_name).is_none() {
            return Ok(());
        }
        if answer.get("approved").and_then(Value::as_bool) != Some(*approved) {
            return Err(Error::field("answer", "shape", "a call put to a person is answered {\"approved\": true} or {\"approved\": false}"));
        }
        Ok(())
    }
}

/// The answer to a connected server's question (`elicitation`, asked
/// in the middle of a call, docs/MCP.md "Servers that ask"):
/// `{"action": "accept", "content": {…}}`, `{"action": "decline"}` or
/// `{"action": "cancel"}`, while the server's key is on and, for a form,
/// forms are on. A form's content must be valid for the form its request
/// carries (the check a form's submission gets), so an answer that fails
/// never leaves lattice; a link's accept carries nothing.
pub struct ElicitationAnswer;

#[async_trait::async_trait]
impl Check for ElicitationAnswer {
    async fn switches(&self, view: &dyn WorkspaceView, command: &Command) -> Result<Vec<SwitchKey>, Error> {
        let Command::AnswerDeferred { run, tool_call_id, .. } = command else { return Ok(Vec::new()) };
        let Some(request) = view.deferred_request(run, tool_call_id).await? else { return Ok(Vec::new()) };
        if request.tool_name != lattice_core::run::ELICITATION {
            return Ok(Vec::new());
        }
        let server = request.args.get("server").and_then(Value::as_str).unwrap_or_default();
        let key = format!("{}{server}", lattice_core::ServerKey::PREFIX);
        let server = SwitchKey::parse(&key).ok_or(Error::NotEnabled { key })?;
        let form = request.args.get("mode").and_then(Value::as_str) == Some(FORM_MODE);
        Ok(if form { vec![server, SwitchKey::Forms] } else { vec![server] })
    }

    async fn check(&self, view: &dyn WorkspaceView, _actor: &Actor, command: &Command) -> Result<(), Error> {
        let Command::AnswerDeferred { run, tool_call_id, answer, .. } = command else { return Ok(()) };
        let Some(request) = view.deferred_request(run, tool_call_id).await? else { return Ok(()) };
        if request.tool_name != lattice_core::run::ELICITATION {
            return Ok(());
        }
        let form = request.args.get("mode").and_then(Value::as_str) == Some(FORM_MODE);
        let shape = || {
            Error::field(
                "answer",
                "shape",
                "a server's question is answered {\"action\": \"accept\", \"content\": {…}}, {\"action\": \"decline\"} or {\"action\": \"cancel\"}",
            )
        };
        let Some(object) = answer.as_object() else { return Err(shape()) };
        if object.keys().any(|k| k != "action" && k != "content") {
            return Err(shape());
        }
        let content = object.get("content");
        match object.get("action").and_then(Value::as_str) {
            Some("accept") if form => {
                let content = content.ok_or_else(|| Error::field("answer.content", "required", "a form's answer carries its values"))?;
                let schema = request.args.get("schema").cloned().unwrap_or(Value::Null);
                let compiled = schema::compile(&schema).map_err(|e| prefixed("args.schema", e))?;
                compiled.validate(content).map_err(|e| prefixed("answer.content", e))
            }
            Some("accept" | "decline" | "cancel") if content.is_none() => Ok(()),
            Some("decline" | "cancel") => Err(Error::field("answer.content", "absent", "only an accepted form carries values")),
            Some("accept") => Err(Error::field("answer.content", "absent", "a link's answer carries no values")),
            _ => Err(shape()),
        }
    }
}

/// The mode of a server's question asked as a form.
pub const FORM_MODE: &str = "form";

/// The answer to an ask_user: text.
pub struct AskUserAnswer;

#[async_trait::async_trait]
impl Check for AskUserAnswer {
    async fn check(&self, view: &dyn WorkspaceView, _actor: &Actor, command: &Command) -> Result<(), Error> {
        let Command::AnswerDeferred { run, tool_call_id, answer, .. } = command else { return Ok(()) };
        let Some(request) = view.deferred_request(run, tool_call_id).await? else { return Ok(()) };
        // A respondent answers forms, never the chat's questions.
        if request.tool_name != ASK_FORM && !policy::allows(view.role(), Action::Run) {
            return Err(Error::forbidden(lattice_core::Code::RoleTooLow, "a respondent answers forms only"));
        }
        if request.tool_name == ASK_USER && !answer.is_string() {
            return Err(Error::field("answer", "type", "an ask_user request is answered with text"));
        }
        Ok(())
    }
}

//! What a tool that does not wait for a person does: one command through
//! the log as whoever calls it. The runner calls it for a model's tool call
//! and the MCP exporter for an outside agent's, so a dashboard shown either
//! way is the same command with the same checks.

use lattice_core::{ArtifactId, Command, Error, ThreadId};
use lattice_log::{Authenticated, LogService};
use serde_json::{Value, json};

use crate::tools;

/// What a tool call came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Acted {
    /// Committed: the receipt `{id, version, digest}` of the artifact.
    Done(Value),
    /// Refused by the log or the arguments: a reason the caller can act on.
    Refused(String),
}

/// Runs `create_form`, `show_dashboard`, `update_dashboard`, `create_app` or
/// `update_app` in `thread`. Only an unavailable store is an `Err`; every
/// refusal is [`Acted::Refused`].
pub async fn act(log: &LogService, who: &Authenticated, thread: &ThreadId, name: &str, args: &Value) -> Result<Acted, Error> {
    let command = match command_for(log, who, thread, name, args).await {
        Ok(command) => command,
        Err(why) => return Ok(Acted::Refused(why)),
    };
    match log.execute(who, command).await {
        Ok(done) => Ok(Acted::Done(done.receipt())),
        Err(Error::Unavailable { reason }) => Err(Error::Unavailable { reason }),
        Err(refusal) => Ok(Acted::Refused(refusal.to_string())),
    }
}

async fn command_for(log: &LogService, who: &Authenticated, thread: &ThreadId, name: &str, args: &Value) -> Result<Command, String> {
    let thread = thread.clone();
    let now = log.clock().now_ms();
    Ok(match name {
        tools::CREATE_FORM => {
            let mut data = json!({"title": args.get("title"), "schema": args.get("schema"),
                "submissions": args.get("submissions").cloned().unwrap_or(json!("once"))});
            if let Some(ui) = args.get("ui").filter(|v| !v.is_null()) {
                data["ui"] = ui.clone();
            }
            // A deadline (an MCP client's ask_form): the form closes then.
            if let Some(secs) = args.get("expires_in_secs").and_then(Value::as_u64) {
                let secs = secs.min(lattice_core::run::MAX_EXPIRES_IN_SECS) as i64;
                data["closes_at"] = json!(lattice_log::rfc3339(now + secs * 1000));
            }
            Command::CreateArtifact { thread, id: None, kind: "form".into(), data }
        }
        tools::SHOW_DASHBOARD => Command::CreateArtifact {
            thread,
            id: None,
            kind: "dashboard".into(),
            data: json!({"title": args.get("title"), "as_of": lattice_log::rfc3339(now),
                "panels": args.get("panels")}),
        },
        tools::CREATE_APP => Command::CreateArtifact {
            thread,
            id: None,
            kind: "app".into(),
            data: json!({"title": args.get("title"), "summary": args.get("summary"), "html": args.get("html"),
                "state": {}}),
        },
        tools::UPDATE_DASHBOARD | tools::UPDATE_APP => {
            let id = args
                .get("id")
                .and_then(Value::as_str)
                .and_then(|id| ArtifactId::parse("id", id).ok())
                .ok_or("an id of an artifact in this thread is needed")?;
            let head = log.artifact(who, &id, None).await.map_err(|e| e.to_string())?;
            // A tool acts in its thread only: another thread's artifact is
            // not there, whatever the caller may reach elsewhere.
            let wanted = if name == tools::UPDATE_DASHBOARD { "dashboard" } else { "app" };
            if head.thread != thread.as_str() {
                return Err(format!("{id} is not an artifact of this thread"));
            }
            if head.kind != wanted {
                return Err(format!("{id} is a {}, not a {wanted}", head.kind));
            }
            let mut ops = Vec::new();
            if name == tools::UPDATE_DASHBOARD {
                ops.push(json!({"op": "replace", "path": "/panels", "value": args.get("panels")}));
                ops.push(json!({"op": "replace", "path": "/as_of", "value": lattice_log::rfc3339(now)}));
            } else {
                ops.push(json!({"op": "replace", "path": "/html", "value": args.get("html")}));
                if let Some(summary) = args.get("summary").filter(|v| !v.is_null()) {
                    ops.push(json!({"op": "replace", "path": "/summary", "value": summary}));
                }
            }
            let patch = serde_json::from_value(Value::Array(ops)).map_err(|e| e.to_string())?;
            Command::EditArtifact { id, expected_version: head.version, patch }
        }
        other => return Err(format!("there is no tool named {other}")),
    })
}

/// Checks an ask_form's form against the schema subset and its hints, so a
/// refusal goes back to the model before anything waits.
pub fn check_form(args: &Value) -> Result<(), Error> {
    let schema = args.get("schema").cloned().unwrap_or(Value::Null);
    let compiled = lattice_ui::compile(&schema)?;
    if let Some(ui) = args.get("ui").filter(|v| !v.is_null()) {
        let hints: lattice_ui::hints::UiHints = serde_json::from_value(ui.clone()).map_err(|e| Error::field("ui", "shape", e.to_string()))?;
        hints.check(&compiled)?;
    }
    Ok(())
}

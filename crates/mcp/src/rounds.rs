//! `ask_form` for clients of MCP 2026-07-28, whom a server cannot ask
//! anything in the middle of a call (multi round-trip requests, SEP-2322).
//! The first call puts the form in the thread and answers
//! `InputRequiredResult`: the form as an elicitation request and a
//! `requestState`. The client asks its person and calls again, the same
//! tool with the same arguments, adding the answer (`inputResponses`) and the
//! state; the answer goes through the write path as the caller's, exactly
//! as one given in lattice's chat or through a 2025-11-25 client's
//! `elicitation/create`.
//!
//! The state names the form and nothing secret. It is sealed (rmcp's
//! `RequestStateCodec`: HMAC-SHA256 under the deployment's own key for it,
//! so any replica opens it) with the caller, the run and the tool call as
//! associated data, which it does not carry: it opens only for the caller
//! who was given it, retrying the call it was given for, within the form's
//! life. It is spent once the caller has answered the form: a replay finds
//! that answer in the log, on any replica, and is refused.

use std::time::Duration;

use lattice_core::ArtifactId;
use lattice_log::{ArtifactRow, Authenticated};
use rmcp::ErrorData as McpError;
use rmcp::model::{
    ClientCapabilities, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, InputRequest, InputRequests, InputRequiredResult,
    RequestStateCodec, SealOptions,
};
use rmcp::service::{RequestContext, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::elicited::{BEYOND, Elicited};
use crate::{Exporter, form_answers};

/// The key of the one input request: the person's answer.
pub(crate) const ANSWER: &str = "answer";

/// How long a state opens at most; a form that closes sooner bounds it.
const STATE_TTL: Duration = Duration::from_secs(3600);

/// What a state names: the form, and how the person was asked.
#[derive(Serialize, Deserialize)]
struct State {
    form: String,
    /// The version the person was shown, which the answer is filled against.
    version: u64,
    /// Pointed to the form in lattice (URL mode), not asked in the client.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pointed: bool,
}

/// Whether the request was made by a client of 2026-07-28 or later, which
/// has no session to be asked anything through.
pub(crate) fn stateless(context: &RequestContext<RoleServer>) -> bool {
    context.protocol_version().is_some_and(|v| !v.has_initialize())
}

/// The elicitation modes the client declares, in either era (its request's
/// `_meta` in 2026-07-28, its `initialize` before): with neither named,
/// form, as the spec's first version had it.
pub(crate) fn modes(capabilities: Option<&ClientCapabilities>) -> (bool, bool) {
    match capabilities.and_then(|c| c.elicitation.as_ref()) {
        None => (false, false),
        Some(e) if e.form.is_none() && e.url.is_none() => (true, false),
        Some(e) => (e.form.is_some(), e.url.is_some()),
    }
}

/// The codec under the deployment's key (32 bytes, as the codec asks).
fn codec(ex: &Exporter) -> Result<RequestStateCodec, rmcp::model::RequestStateError> {
    RequestStateCodec::try_new(ex.log.authenticator().request_state_key().to_vec())
}

/// The associated data a state is sealed with: the caller (tenant, user,
/// person or agent, run), the tool and the digest of its arguments.
fn binding(who: &Authenticated, tool: &str, args: &Value) -> Vec<u8> {
    let p = who.principal();
    let run = p.run.as_ref().map(ToString::to_string).unwrap_or_default();
    format!("lattice.ask_form.v1\0{}\0{}\0{}\0{run}\0{tool}\0{}", p.tenant, p.user, p.agent, lattice_log::digest(args)).into_bytes()
}

/// How long the state for `form` opens: the form's life, at most
/// [`STATE_TTL`].
fn ttl(form: &ArtifactRow, now_ms: i64) -> Duration {
    let left = form
        .data
        .get("closes_at")
        .and_then(Value::as_str)
        .and_then(lattice_core::rfc3339::date_time_ms)
        .map(|at| Duration::from_millis(u64::try_from(at - now_ms).unwrap_or(0)));
    left.map_or(STATE_TTL, |left| left.min(STATE_TTL))
}

/// Asks `form` through the client, as an input request, when the client
/// declares a mode that can: `NotAsked` with why when it cannot.
pub(crate) fn ask(
    ex: &Exporter,
    who: &Authenticated,
    form: &ArtifactRow,
    tool: &str,
    args: &Value,
    context: &RequestContext<RoleServer>,
) -> Elicited {
    let (form_mode, url_mode) = modes(context.client_capabilities().as_ref());
    let title = form.data["title"].as_str().unwrap_or("A form").to_owned();
    let requested = lattice_ui::elicitation::requested_schema(&form.data["schema"], form.data.get("ui")).and_then(|r| serde_json::from_value(r).ok());
    let (params, pointed) = match requested.filter(|_| form_mode) {
        Some(requested_schema) => (ElicitRequestParams::FormElicitationParams { meta: None, message: title, requested_schema }, false),
        None => match crate::http::request_origin(&context.extensions).filter(|_| url_mode) {
            Some(origin) => {
                let url = format!("{origin}/t/{}", form.thread);
                let message = format!("{title} — answer it in lattice");
                (ElicitRequestParams::UrlElicitationParams { meta: None, message, url, elicitation_id: form.id.clone() }, true)
            }
            None => return Elicited::NotAsked(form_mode.then(|| BEYOND.to_owned())),
        },
    };
    let state = State { form: form.id.clone(), version: form.version, pointed };
    let bound = binding(who, tool, args);
    let sealed =
        match codec(ex).and_then(|c| c.seal_json_with(&state, &SealOptions::new().associated_data(&bound).ttl(ttl(form, ex.log.clock().now_ms())))) {
            Ok(sealed) => sealed,
            Err(e) => return Elicited::NotAsked(Some(format!("The form could not be asked in the client: {e}"))),
        };
    let mut requests = InputRequests::new();
    requests.insert(ANSWER.to_owned(), InputRequest::Elicitation(ElicitRequest::new(params)));
    Elicited::Required(InputRequiredResult::new(Some(requests), Some(sealed)))
}

/// Why a state is refused, said the same way whatever was wrong with it:
/// a caller learns nothing from which check failed.
fn refused_state() -> McpError {
    McpError::invalid_params(
        "requestState: it does not open here (altered, given for another caller or another call, or expired); call ask_form again without it",
        None,
    )
}

/// The retry of an `ask_form` that answered `InputRequiredResult`: the
/// person's answer, sent as the caller's, or why not. The form and what to
/// show of it, for the result, come with it.
pub(crate) async fn retry(
    ex: &Exporter,
    who: &Authenticated,
    tool: &str,
    args: &Value,
    sealed: &str,
    responses: Option<&rmcp::model::InputResponses>,
    context: &RequestContext<RoleServer>,
) -> Result<(ArtifactRow, Elicited), McpError> {
    let bound = binding(who, tool, args);
    let state: State = codec(ex).and_then(|c| c.open_json_with(sealed, &bound)).map_err(|_| refused_state())?;
    let id = ArtifactId::parse("requestState", &state.form).map_err(|_| refused_state())?;
    // Not readable any more (the caller removed, the thread gone): as forged.
    let form = ex.log.artifact(who, &id, None).await.map_err(|_| refused_state())?;
    let thread = lattice_core::ThreadId::from_trusted(form.thread.clone());
    let answers = ex.log.artifacts(who, &thread, Some("submission"), Some(form.id.as_str())).await.map_err(crate::scope::refused)?;
    if state.pointed {
        // Answered in lattice, if at all: read, not sent, so a replay only reads again.
        return Ok(match answers.last() {
            Some(last) => {
                let submission = json!({"id": last.id, "by": last.author, "at": lattice_log::rfc3339(last.created_at)});
                let answered = Elicited::Answered { values: last.data["values"].clone(), submission };
                (form, answered)
            }
            None => (form, Elicited::NotAsked(Some("The person was pointed to the form in lattice and has not answered it yet.".into()))),
        });
    }
    let user = who.principal().user.as_str();
    if let Some(given) = answers.iter().find(|s| s.author == user) {
        return Err(McpError::invalid_params(
            format!("requestState: already used; the answer was sent as {}. Read it with form_submissions", given.id),
            None,
        ));
    }
    let Some(answer) = responses.and_then(|r| r.get(ANSWER)) else {
        // Nothing answered: asked again, as the spec has a server do.
        let asked = ask(ex, who, &form, tool, args, context);
        return Ok((form, asked));
    };
    let answer: ElicitResult = serde_json::from_value(answer.clone())
        .map_err(|e| McpError::invalid_params(format!("inputResponses.{ANSWER}: not an elicitation result: {e}"), None))?;
    if answer.action != ElicitationAction::Accept {
        let why = format!("The person did not answer in the client ({:?}).", answer.action).to_lowercase();
        return Ok((form, Elicited::NotAsked(Some(why))));
    }
    let values = answer.content.unwrap_or_else(|| json!({}));
    let answered = form_answers::answered(ex, who, &form.id, state.version, values).await?;
    Ok((form, answered))
}

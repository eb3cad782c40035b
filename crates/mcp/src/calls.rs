//! The agent toolset over MCP (REQUIREMENTS.md M2): the runner's own tool code, as the
//! caller, in the thread the call names or the caller's most recent.
//! `ask_form` does not hold the call open: it puts the form in the thread
//! and returns its id at once, and `form_submissions` reads the answers or
//! waits for them (with progress notifications), so a host's view of the
//! form can be sent while the agent waits.

use std::time::{Duration, Instant};

use lattice_agent::act::{Acted, act, check_form};
use lattice_agent::tools;
use lattice_core::ArtifactId;
use lattice_log::Authenticated;
use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, ProgressNotificationParam};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

use crate::elicited::{BEYOND, Elicited};
use crate::listing::{self, FORM_SUBMISSIONS, MAX_WAIT_SECONDS};
use crate::logging::Severity;
use crate::scope::Scope;
use crate::tool_errors::{not_offered, tool_error};
use crate::views::{APP_VIEWS, DASHBOARD_VIEW, FORM_VIEW};
use crate::{Exporter, fallback, form_answers, meta, rounds};

/// How often a waiting `form_submissions` reports progress.
const PROGRESS_EVERY: Duration = Duration::from_secs(2);

/// Where a call acts (the thread it names, or the caller's most recent),
/// when `name` is offered there; else the tool error that says why not.
async fn offered_in(ex: &Exporter, who: &Authenticated, name: &str, args: &Value) -> Result<Result<Scope, CallToolResult>, McpError> {
    let scope = match Scope::find(&ex.log, who, args.get("thread").and_then(Value::as_str)).await {
        Ok(scope) => scope,
        Err(e) => return Ok(Err(tool_error(format!("thread: {e}")))),
    };
    if !listing::offered(name, &scope.switches(&ex.log, who).await?) {
        return Ok(Err(tool_error(not_offered(name))));
    }
    Ok(Ok(scope))
}

pub(crate) async fn call(
    ex: &Exporter,
    who: &Authenticated,
    name: &str,
    args: &Value,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResponse, McpError> {
    let scope = match offered_in(ex, who, name, args).await? {
        Ok(scope) => scope,
        Err(refused) => return Ok(refused.into()),
    };
    if name == FORM_SUBMISSIONS {
        return Ok(submissions(ex, who, args, context).await?.into());
    }
    let original = args;
    let mut args = args.clone();
    if let Some(map) = args.as_object_mut() {
        map.remove("thread");
    }
    let (thread, _) = scope.thread(&ex.log, who).await.map_err(crate::scope::refused)?;
    let asked = name == tools::ASK_FORM;
    let acted = if asked {
        if let Err(e) = check_form(&args) {
            return Ok(tool_error(format!("the form was refused: {e}. Fix it and ask again.")).into());
        }
        if args
            .get("expires_in_secs")
            .is_some_and(|v| !v.is_null() && v.as_u64().is_none_or(|s| s == 0 || s > lattice_core::run::MAX_EXPIRES_IN_SECS))
        {
            return Ok(tool_error(format!("expires_in_secs: a whole number of seconds from 1 to {}", lattice_core::run::MAX_EXPIRES_IN_SECS)).into());
        }
        args["submissions"] = json!("once");
        act(&ex.log, who, &thread, tools::CREATE_FORM, &args).await
    } else {
        act(&ex.log, who, &thread, name, &args).await
    };
    let receipt = match acted.map_err(crate::scope::refused)? {
        Acted::Done(receipt) => receipt,
        Acted::Refused(why) => return Ok(tool_error(why).into()),
    };
    let id = ArtifactId::from_trusted(receipt["id"].as_str().unwrap_or_default());
    let artifact = ex.log.artifact(who, &id, None).await.map_err(crate::scope::refused)?;
    if !asked {
        return Ok(present(ex, who, &artifact, &receipt, None).into());
    }
    let title = artifact.data["title"].as_str().unwrap_or_default();
    let said = format!("asked \"{title}\" in {} as {}", artifact.thread, artifact.id);
    ex.level.tell(context, Severity::Info, json!({"message": said, "form": artifact.id})).await;
    let elicited = if rounds::stateless(context) {
        rounds::ask(ex, who, &artifact, name, original, context)
    } else {
        elicit(ex, who, &artifact, context).await?
    };
    told(ex, who, &artifact, &elicited, context).await;
    if let Elicited::Required(required) = elicited {
        return Ok(required.into());
    }
    Ok(present(ex, who, &artifact, &receipt, Some(elicited)).into())
}

/// The retry of an `ask_form` that was answered `InputRequiredResult`
/// (`rounds`), with the state it was given: the same checks of the thread
/// and the switches as its first call, then the answer.
pub(crate) async fn retry(
    ex: &Exporter,
    who: &Authenticated,
    request: &rmcp::model::CallToolRequestParams,
    sealed: &str,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResponse, McpError> {
    if request.name != tools::ASK_FORM {
        return Err(McpError::invalid_params(format!("requestState: {} asks nothing, so it takes none", request.name), None));
    }
    let args = request.arguments.clone().map(Value::Object).unwrap_or_else(|| json!({}));
    if let Err(refused) = offered_in(ex, who, &request.name, &args).await? {
        return Ok(refused.into());
    }
    let (form, elicited) = rounds::retry(ex, who, &request.name, &args, sealed, request.input_responses.as_ref(), context).await?;
    if let Elicited::Required(required) = elicited {
        return Ok(required.into());
    }
    told(ex, who, &form, &elicited, context).await;
    let receipt = json!({"id": form.id, "version": form.version, "digest": form.digest});
    Ok(present(ex, who, &form, &receipt, Some(elicited)).into())
}

/// What asking the person came to, as a log message.
async fn told(ex: &Exporter, who: &Authenticated, form: &lattice_log::ArtifactRow, elicited: &Elicited, context: &RequestContext<RoleServer>) {
    let said = match elicited {
        Elicited::Answered { .. } => format!("{} was answered in the client by {}", form.id, who.principal().user),
        Elicited::NotAsked(why) => format!("{} waits in lattice{}", form.id, why.as_deref().map(|w| format!(": {w}")).unwrap_or_default()),
        Elicited::Required(_) => format!("{} is put to the person by the client", form.id),
    };
    ex.level.tell(context, Severity::Notice, json!({"message": said, "form": form.id})).await;
}

/// The result of a tool that put `artifact` in the thread: the fallback
/// text, the structured content its view draws, and in `_meta` the view,
/// the receipt and the view's capability; for `ask_form`, what asking the
/// person came to.
fn present(ex: &Exporter, who: &Authenticated, artifact: &lattice_log::ArtifactRow, receipt: &Value, elicited: Option<Elicited>) -> CallToolResult {
    let (key, view, shown) = match artifact.kind.as_str() {
        lattice_ui::FORM => ("form", FORM_VIEW.to_owned(), with_widgets(&artifact.data)),
        "dashboard" => ("dashboard", DASHBOARD_VIEW.to_owned(), artifact.data.clone()),
        _ => ("app", format!("{APP_VIEWS}{}", artifact.id), json!({"title": artifact.data["title"], "summary": artifact.data["summary"]})),
    };
    let mut text = fallback::markdown(&artifact.kind, &artifact.data, receipt);
    let mut structured = json!({key: shown, "receipt": receipt, "thread": artifact.thread});
    match elicited {
        None | Some(Elicited::Required(_)) => {}
        Some(Elicited::Answered { values, submission }) => {
            structured["status"] = json!("answered");
            structured["answer"] = values.clone();
            structured["submission"] = submission;
            text.push_str(&format!(
                "\nAnswered by the person through the client:\n{}\n",
                lattice_agent::untrusted("form answer", who.principal().user.as_str(), &values)
            ));
        }
        Some(Elicited::NotAsked(why)) => {
            structured["status"] = json!("pending");
            if let Some(at) = artifact.data.get("closes_at").and_then(Value::as_str) {
                structured["expires_at"] = json!(at);
                text.push_str(&format!("\nNobody can answer after {at}."));
            }
            if let Some(why) = why {
                text.push_str(&format!("\n{why}"));
            }
            text.push_str(&format!(
                "\nAsked in lattice; not answered yet. Call form_submissions with {{\"id\": \"{}\", \"wait_seconds\": 300}} to wait for the answer.\n",
                artifact.id
            ));
        }
    }
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(structured);
    // The view's capability for its artifact's app-only tools: in `_meta`,
    // which hosts give the view and not the model.
    let capability = ex.log.authenticator().capability(who.principal(), &artifact.id);
    let mut lattice = json!({"receipt": receipt, "capability": capability});
    if artifact.kind == "app" {
        // For the view a host shows from the tool's declaration: the app's
        // whole document, which it becomes. Not the model's to read.
        let html = artifact.data["html"].as_str().unwrap_or_default();
        lattice["document"] = json!(lattice_ui::app::document(html, ex.sdk.as_deref()));
    }
    result.meta = Some(meta(json!({"ui": {"resourceUri": view}, "ui/resourceUri": view, "lattice": lattice})));
    result
}

/// How long the person has to answer a form the client asks itself.
const ELICIT_WAIT: Duration = Duration::from_secs(600);

/// Why a form with a file field is answered in the chat, before its address.
pub(crate) const FILE_IN_CHAT: &str = "This form asks for a file, which is uploaded in lattice's chat: answer it at";

/// Asks an ask_form through the client's form elicitation when the client
/// declares it and the form fits its flat subset (`lattice_ui::elicitation`);
/// the answer goes through the write path as the caller, like any answer.
async fn elicit(
    ex: &Exporter,
    who: &Authenticated,
    form: &lattice_log::ArtifactRow,
    context: &RequestContext<RoleServer>,
) -> Result<Elicited, McpError> {
    use rmcp::model::{ElicitRequestParams, ElicitationAction};
    // Waiting for the person is one of the caller's open streams, for as
    // long as it lasts.
    let _held = crate::http::held_stream(&context.extensions);
    let (form_mode, url_mode) = rounds::modes(context.client_capabilities().as_ref());
    let requested = lattice_ui::elicitation::requested_schema(&form.data["schema"], form.data.get("ui"));
    let Some(requested) = requested.filter(|_| form_mode) else {
        // A client that opens links is pointed to the form in the chat.
        if url_mode && let Some(origin) = crate::http::request_origin(&context.extensions) {
            let url = format!("{origin}/t/{}", form.thread);
            let message = format!("{} — answer it in lattice", form.data["title"].as_str().unwrap_or("A form"));
            let params = ElicitRequestParams::UrlElicitationParams { meta: None, message, url: url.clone(), elicitation_id: form.id.clone() };
            if let Err(e) = context.peer.create_elicitation_with_timeout(params, Some(Duration::from_secs(30))).await {
                tracing::debug!(error = %e, "the client did not take the form's address");
            }
            return Ok(Elicited::NotAsked(Some(format!("The person was pointed to the form in lattice: {url}"))));
        }
        // A file is uploaded only in the chat: the person is sent there.
        let asks_file = lattice_ui::schema::compile(&form.data["schema"]).is_ok_and(|f| f.properties.iter().any(|p| p.file.is_some()));
        if asks_file && let Some(origin) = crate::http::request_origin(&context.extensions) {
            return Ok(Elicited::NotAsked(Some(format!("{FILE_IN_CHAT} {origin}/t/{}", form.thread))));
        }
        let shown = form_mode.then(|| BEYOND.to_owned());
        return Ok(Elicited::NotAsked(shown));
    };
    let Ok(requested_schema) = serde_json::from_value(requested) else { return Ok(Elicited::NotAsked(None)) };
    let message = form.data["title"].as_str().unwrap_or("A form").to_owned();
    let params = ElicitRequestParams::FormElicitationParams { meta: None, message, requested_schema };
    let answer = match context.peer.create_elicitation_with_timeout(params, Some(ELICIT_WAIT)).await {
        Ok(answer) => answer,
        Err(e) => {
            tracing::debug!(error = %e, "the client did not answer the form; it waits in lattice");
            return Ok(Elicited::NotAsked(None));
        }
    };
    if answer.action != ElicitationAction::Accept {
        return Ok(Elicited::NotAsked(Some(format!("The person did not answer in the client ({:?}).", answer.action).to_lowercase())));
    }
    let values = answer.content.unwrap_or_else(|| json!({}));
    form_answers::answered(ex, who, &form.id, form.version, values).await
}

/// A form as its view is sent it: with every property's widget as the UI
/// model resolves it, which the view draws as told.
fn with_widgets(form: &Value) -> Value {
    let mut shown = form.clone();
    if let Ok(parsed) = serde_json::from_value::<lattice_ui::form::Form>(form.clone())
        && let Ok(compiled) = lattice_ui::schema::compile(&parsed.schema)
    {
        shown["widgets"] = json!(lattice_ui::hints::widgets(&compiled, parsed.ui.as_ref()));
    }
    shown
}

/// `form_submissions`: the form's submissions once there are more than
/// `after`, or when `wait_seconds` have passed.
async fn submissions(ex: &Exporter, who: &Authenticated, args: &Value, context: &RequestContext<RoleServer>) -> Result<CallToolResult, McpError> {
    let Some(id) = args.get("id").and_then(Value::as_str).and_then(|id| ArtifactId::parse("id", id).ok()) else {
        return Ok(tool_error("id: the form's artifact id is needed"));
    };
    let after = args.get("after").and_then(Value::as_u64).unwrap_or(0) as usize;
    let wait = args.get("wait_seconds").and_then(Value::as_u64).unwrap_or(0);
    if wait > MAX_WAIT_SECONDS {
        return Ok(tool_error(format!("wait_seconds: at most {MAX_WAIT_SECONDS}")));
    }
    let form = match ex.log.artifact(who, &id, None).await {
        Ok(form) if form.kind == "form" => form,
        Ok(other) => return Ok(tool_error(format!("id: {} is a {}, not a form", other.id, other.kind))),
        Err(e) => return Ok(tool_error(format!("id: {e}"))),
    };
    let thread = lattice_core::ThreadId::from_trusted(form.thread.clone());
    // The wait is one of the caller's open streams until it ends, even if
    // the client stops reading its answer.
    let _held = crate::http::held_stream(&context.extensions);
    let token = context.meta.get_progress_token();
    let started = Instant::now();
    let deadline = started + Duration::from_secs(wait);
    let mut horizon = ex.log.horizon().subscribe();
    let mut next_progress = started + PROGRESS_EVERY;
    let found = loop {
        let found = ex.log.artifacts(who, &thread, Some("submission"), Some(form.id.as_str())).await.map_err(crate::scope::refused)?;
        let now = Instant::now();
        if found.len() > after || now >= deadline || context.ct.is_cancelled() {
            break found;
        }
        // Every tick moves on, told or not: the wait sleeps until the next.
        if now >= next_progress {
            next_progress = now + PROGRESS_EVERY;
            let waited = started.elapsed().as_secs_f64().floor();
            if let Some(token) = token.clone() {
                let note = ProgressNotificationParam::new(token, waited)
                    .with_total(wait as f64)
                    .with_message(format!("waiting for an answer to {}", form.id));
                let _ = context.peer.notify_progress(note).await;
            }
            let said = format!("waiting for an answer to {}: {waited} s of {wait}", form.id);
            ex.level.tell(context, Severity::Info, json!({"message": said, "form": form.id})).await;
        }
        let until = deadline.min(next_progress);
        let _ = tokio::time::timeout(until.saturating_duration_since(now), horizon.changed()).await;
    };
    let answered = found.len() > after;
    let closes_at = form.data.get("closes_at").and_then(Value::as_str).map(str::to_owned);
    let expired = !answered && closes_at.as_deref().and_then(lattice_core::rfc3339::date_time_ms).is_some_and(|at| at <= ex.log.clock().now_ms());
    let said = match found.last() {
        Some(last) if answered => format!("{} was answered by {}", form.id, last.author),
        _ if expired => format!("{} expired unanswered", form.id),
        _ => format!("{} is still unanswered after {wait} s", form.id),
    };
    ex.level.tell(context, Severity::Notice, json!({"message": said, "form": form.id})).await;
    let listed: Vec<Value> =
        found.iter().map(|s| json!({"id": s.id, "by": s.author, "at": lattice_log::rfc3339(s.created_at), "values": s.data["values"]})).collect();
    let mut text = format!("## Submissions to {} ({})\n\n", form.data["title"].as_str().unwrap_or_default(), listed.len());
    for s in &listed {
        text.push_str(&format!("- {} at {}: `{}`\n", s["by"].as_str().unwrap_or_default(), s["at"].as_str().unwrap_or_default(), s["values"]));
    }
    if expired {
        text.push_str(&format!("\nExpired: nobody answered before {}, and nobody can now.\n", closes_at.as_deref().unwrap_or_default()));
    } else if !answered {
        text.push_str(&format!("\nNothing new after {wait} s: still pending. Call again to keep waiting.\n"));
    }
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    let status = if answered {
        "answered"
    } else if expired {
        "expired"
    } else {
        "pending"
    };
    let mut structured = json!({
        "form": {"id": form.id, "version": form.version, "digest": form.digest},
        "status": status,
        "submissions": listed,
    });
    if let Some(at) = closes_at {
        structured["expires_at"] = json!(at);
    }
    result.structured_content = Some(structured);
    Ok(result)
}

//! A connected server's question, asked in the middle of one of its calls
//! (MCP `elicitation/create`, form mode) while the run goes on: the
//! server's message as it wrote it, and, for the person the run acts for,
//! its form with "Send to <server>", "Decline" and "Cancel"; for everyone
//! else, whom it waits for. Only that person answers (the server refuses
//! anyone else, `not_acting_for`): what they give goes to the server under
//! their name. A chunk of its own, like the card of a call put to a
//! person: only a thread where a server asks shows one.

use std::rc::Rc;

use lattice_core::{Error, SwitchKey};
use lattice_ui::hints::UiHints;
use lattice_wire::Answer;
use leptos::prelude::*;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Value, json};

use super::ctx::Ctx;
use super::focus::focus_once;
use crate::components::chunks::{lazy_form, when_loaded};
use crate::components::schema_form::{FormProps, Sender};
use crate::components::time::time;
use crate::data::api_client;
use crate::data::request::Failure;
use crate::data::session::Session;
use crate::data::thread_fold::request_key;

pub(super) fn elicitation_card(
    ctx: Ctx,
    run: String,
    tool_call_id: String,
    args: Value,
    expires_at: Option<String>,
    acting_for: String,
) -> impl IntoView {
    when_loaded("the question", elicitation_view(ctx, run, tool_call_id, args, expires_at, acting_for))
}

/// How a question was closed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Closed {
    Accepted { by: String },
    Declined,
    Cancelled,
    Expired,
}

impl Closed {
    /// From its answer's action and author. Lattice closes a question for
    /// nobody, as `deadline` (its deadline passed: the answer `"expired"`)
    /// or as `lattice` (the call or the run ended: a cancel with a reason),
    /// and marks the answer expired; neither is the person's cancel.
    fn of(action: &str, author: &str, expired: bool) -> Self {
        if expired || matches!(author, "deadline" | "lattice") {
            return Self::Expired;
        }
        match action {
            "accept" => Self::Accepted { by: author.to_owned() },
            "decline" => Self::Declined,
            "cancel" => Self::Cancelled,
            _ => Self::Expired,
        }
    }
}

/// The form a question carries, as lattice made it of the server's
/// `requestedSchema` (the labels of titled choices in `ui`).
#[derive(Deserialize)]
struct Asked {
    schema: Value,
    #[serde(default)]
    ui: Option<UiHints>,
}

#[lazy]
fn elicitation_view(ctx: Ctx, run: String, tool_call_id: String, args: Value, expires_at: Option<String>, acting_for: String) -> AnyView {
    let text = |name: &str| args.get(name).and_then(Value::as_str).unwrap_or_default().to_owned();
    let (server, message) = (text("server"), text("message"));
    let asked = lattice_core::json::from_value::<Asked>(args).ok();
    let session = expect_context::<Session>();
    let person = acting_for.clone();
    let mine = Memo::new(move |_| session.me.with(|me| me.as_ref().map(|m| m.user == person)));
    // The call id holds `:`; an element's id is kept to letters, digits and `-`.
    let dom_id = format!("question-{}", tool_call_id.replace(|c: char| !c.is_ascii_alphanumeric(), "-"));
    let key = request_key(&run, &tool_call_id);
    let this_run = run.clone();
    // A run that ended closes its questions (lattice answers them so); the
    // card does not wait to hear it to stop offering the form.
    let closed = Memo::new(move |_| {
        ctx.state.with(|t| match (t.questions.get(&key), t.answered.get(&key)) {
            (Some(action), Some(author)) => Some(Closed::of(action, author, t.expired.contains_key(&key))),
            _ if t.runs.get(&this_run).is_some_and(|s| s != "running" && s != "paused") => Some(Closed::Expired),
            _ => None,
        })
    });
    // The server's key and forms must both be on for the answer to be
    // taken; off only once the switch says so (the server refuses either way).
    let forms_off = ctx.off_because(SwitchKey::Forms);
    let server_key = format!("{}{server}", lattice_core::ServerKey::PREFIX);
    let off = Memo::new(move |_| {
        let server_off = ctx.switches.with(|s| s.as_ref().and_then(|m| m.get(&server_key)).filter(|e| !e.enabled).map(|e| e.because.clone()));
        match (server_off, forms_off.get()) {
            (Some(why), _) => Some(format!("This server is turned off here: {why}")),
            (None, Some(why)) => Some(format!("Forms are turned off here: {why}")),
            (None, None) => None,
        }
    });
    let refused = RwSignal::new(None::<String>);
    let going = RwSignal::new(false);

    let answer = move |answer: Value| {
        let path = format!("/v1/runs/{run}/answers");
        let body = Answer { tool_call_id: tool_call_id.clone(), answer };
        async move { api_client::post::<IgnoredAny>(&path, &body).await.map(|_| ()) }
    };
    let accept = answer.clone();
    let refuse = move |action: &'static str| {
        let answer = answer.clone();
        move |_| {
            if going.get_untracked() {
                return;
            }
            going.set(true);
            refused.set(None);
            let sent = answer(json!({ "action": action }));
            leptos::task::spawn_local(async move {
                if let Err(e) = sent.await {
                    refused.set(Some(e.message()));
                }
                going.set(false);
            });
        }
    };
    let (decline, cancel) = (refuse("decline"), refuse("cancel"));

    let label = format!("The {server} server asks");
    let heading_id = format!("{dom_id}-title");
    let hints = UiHints { submit_label: Some(format!("Send to {server}")), ..asked.as_ref().and_then(|a| a.ui.clone()).unwrap_or_default() };
    let schema = asked.map(|a| a.schema);
    let goes_to = format!("Your answer goes to the {server} server.");
    let waiting = format!("Waiting for {} to answer.", if acting_for.is_empty() { "the person the agent acts for" } else { &acting_for });
    let labelled_by = heading_id.clone();
    let body = move || match (closed.get(), off.get(), mine.get()) {
        (Some(Closed::Accepted { by }), _, _) => view! { <p class="answered">"Answered by " {by}</p> }.into_any(),
        (Some(Closed::Declined), _, _) => view! { <p class="answered declined">"Declined"</p> }.into_any(),
        (Some(Closed::Cancelled), _, _) => view! { <p class="answered cancelled">"Cancelled"</p> }.into_any(),
        (Some(Closed::Expired), _, _) => view! { <p class="answered expired">"Expired"</p> }.into_any(),
        (None, Some(why), _) => view! { <p class="refusal">{why}</p> }.into_any(),
        (None, None, Some(true)) => {
            let due = expires_at.clone().map(|at| view! { <p class="muted deadline">"Answer by " {time(at)}"."</p> });
            // Made as the form is drawn: the view must be `Send`, and a
            // `Sender` (an `Rc`) is not.
            let accept = accept.clone();
            let on_send: Sender = Rc::new(move |values: Value| {
                let sent = accept(json!({"action": "accept", "content": values}));
                Box::pin(async move { sent.await.map_err(under_fields) })
            });
            let form = match schema.clone() {
                Some(schema) => lazy_form(FormProps {
                    id: dom_id.clone(),
                    labelled_by: labelled_by.clone(),
                    schema,
                    hints: hints.clone(),
                    on_send,
                    take_focus: Some(focus_once(&dom_id)),
                    reset_after_send: false,
                    thread: ctx.thread.get_value(),
                })
                .into_any(),
                None => view! { <p class="refusal">"This question can't be shown here: decline or cancel it."</p> }.into_any(),
            };
            view! {
                {due}
                {form}
                <p class="actions">
                    <button type="button" class="quiet" aria-disabled=move || going.get().to_string() on:click=decline.clone()>"Decline"</button>
                    <button type="button" class="quiet" aria-disabled=move || going.get().to_string() on:click=cancel.clone()>"Cancel"</button>
                </p>
                <p class="muted">{goes_to.clone()}</p>
            }
            .into_any()
        }
        (None, None, Some(false)) => view! { <p class="muted">{waiting.clone()}</p> }.into_any(),
        // Until `/v1/me` answers, nobody is told it waits for someone else.
        (None, None, None) => ().into_any(),
    };
    view! {
        <section class="request elicitation" aria-label=label.clone()>
            <h2 id=heading_id>{label.clone()}</h2>
            // The server's words, as text: never Markdown, never a link.
            <p class="elicitation-message">{message}</p>
            {body}
            {move || refused.get().map(|r| view! { <p class="refusal" role="alert">{r}</p> })}
        </section>
    }
    .into_any()
}

/// The server refuses a form's values at `answer.content.<field>`; the
/// form puts a refusal under the field `answer.<field>` names.
fn under_fields(failure: Failure) -> Failure {
    match failure {
        Failure::Refused { status, error: Error::ValidationFailed { errors, more } } => {
            let errors = errors
                .into_iter()
                .map(|mut e| {
                    if let Some(rest) = e.path.strip_prefix("answer.content.") {
                        e.path = format!("answer.{rest}");
                    }
                    e
                })
                .collect();
            Failure::Refused { status, error: Error::ValidationFailed { errors, more } }
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::Closed;

    #[test]
    fn a_question_closes_as_its_person_answered_or_else_expired() {
        let cases = [
            (("accept", "alice", false), Closed::Accepted { by: "alice".into() }),
            (("decline", "alice", false), Closed::Declined),
            (("cancel", "alice", false), Closed::Cancelled),
            // Lattice's closes: a deadline passed, the call or the run ended.
            (("", "deadline", true), Closed::Expired),
            (("cancel", "lattice", true), Closed::Expired),
            (("cancel", "lattice", false), Closed::Expired),
        ];
        for ((action, author, expired), closed) in cases {
            assert_eq!(Closed::of(action, author, expired), closed, "{action} by {author}");
        }
    }
}

//! The timeline's items: messages, runs (with their cancel button), the
//! questions, forms, calls and sign-ins (`connect.rs`) an agent waits on,
//! a connected server's questions (`elicitation.rs`), and artifacts with
//! their pin.

use std::rc::Rc;

use lattice_core::policy::Action;
use lattice_core::run::ELICITATION;
use lattice_ui::hints::UiHints;
use lattice_ui::tool_names::ASK_FORM;
use lattice_wire::Answer;
// What a cancel or an answer answers (`Run`, `Answered`) is not read: the
// stream tells it.
use leptos::prelude::*;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Value, json};

use super::artifacts::{app_view, artifact_view};
use super::connect::connect_card;
use super::ctx::{Ctx, may};
use super::elicitation::elicitation_card;
use super::focus::focus_once;
use super::forms::unsendable;
use super::pins::pin_button;
use crate::components::chunks::{lazy_form, when_loaded};
use crate::components::schema_form::{FormProps, Sender};
use crate::components::time::time;
use crate::data::api_client;
use crate::data::thread_fold::{Item, request_key};

pub(super) fn item_view(ctx: Ctx, item: Item) -> AnyView {
    match item {
        Item::Message { author, agent, text, at, .. } => view! {
            <article class=if agent { "message agent" } else { "message person" }>
                <p class="meta"><strong>{author}</strong>{agent.then_some(" (agent)")}" " {time(at)}</p>
                <p class="text">{text}</p>
            </article>
        }
        .into_any(),
        Item::RunStarted { run, prompt, started_by, .. } => {
            let run_id = run.clone();
            let status = Memo::new(move |_| ctx.state.with(|t| t.runs.get(&run_id).cloned().unwrap_or_default()));
            let refused = RwSignal::new(None::<String>);
            let cancel = move |_| {
                let run = run.clone();
                leptos::task::spawn_local(async move {
                    if let Err(e) = api_client::post::<IgnoredAny>(&format!("/v1/runs/{run}/cancel"), &json!({})).await {
                        refused.set(Some(e.message()));
                    }
                });
            };
            let open =
                move || matches!(status.get().as_str(), "running" | "paused") && ctx.role.with(|r| r.as_deref().is_some_and(|r| may(r, Action::Run)));
            view! {
                <p class="run">
                    <strong>{started_by}</strong>" asked the agent: “" {prompt} "” "
                    <span class="badge">{move || status.get()}</span>
                    {move || open().then(|| view! { <button type="button" class="quiet" on:click=cancel.clone()>"Cancel"</button> })}
                    {move || refused.get().map(|r| view! { <span class="refusal" role="alert">{r}</span> })}
                </p>
            }
            .into_any()
        }
        Item::Request { run, tool_call_id, sign_in: Some(needed), acting_for, .. } => {
            connect_card(ctx, run, tool_call_id, needed, acting_for).into_any()
        }
        // A server asks it, though its name has no `__`: neither a server's
        // call below nor an ask_user.
        Item::Request { run, tool_call_id, tool_name, args, expires_at, acting_for, .. } if tool_name == ELICITATION => {
            elicitation_card(ctx, run, tool_call_id, args, expires_at, acting_for).into_any()
        }
        Item::Request { run, tool_call_id, tool_name, args, expires_at, .. } if tool_name == ASK_FORM => {
            ask_form_view(ctx, run, tool_call_id, args, expires_at)
        }
        Item::Request { run, tool_call_id, tool_name, args, .. } if lattice_core::ServerKey::split_tool(&tool_name).is_some() => {
            when_loaded("the call", server_call_view(ctx, run, tool_call_id, tool_name, args)).into_any()
        }
        Item::Request { run, tool_call_id, args, .. } => {
            let key = request_key(&run, &tool_call_id);
            let answered = Memo::new(move |_| ctx.state.with(|t| t.answered.get(&key).cloned()));
            let question = args.get("question").and_then(Value::as_str).unwrap_or_default().to_owned();
            view! {
                <section class="request question">
                    <p><strong>"The agent asks: "</strong>{question}</p>
                    <p class="muted">{move || match answered.get() {
                        Some(who) => format!("Answered by {who}."),
                        None => "Answer with a message below.".to_owned(),
                    }}</p>
                </section>
            }
            .into_any()
        }
        Item::Artifact { id, .. } => {
            let artifact_id = id.clone();
            let artifact = Memo::new(move |_| ctx.state.with(|t| t.artifacts.get(&id).cloned()));
            let is_app = Memo::new(move |_| artifact.with(|a| a.as_ref().is_some_and(|a| a.kind == "app")));
            let pinnable = artifact.with_untracked(|a| a.as_ref().is_some_and(|a| a.kind == "app" || a.kind == "dashboard"));
            let pin = pinnable.then(|| pin_button(ctx, artifact_id));
            if is_app.get_untracked() {
                return view! { {pin}{app_view(ctx, artifact)} }.into_any();
            }
            // The version first shown: a form that changes under a person says so.
            let first_seen = StoredValue::new(None::<u64>);
            let shown = move || {
                artifact.get().map(|a| {
                    let first = first_seen.get_value().unwrap_or(a.version);
                    first_seen.set_value(Some(first));
                    artifact_view(ctx, a, first)
                })
            };
            view! { {pin}{shown} }.into_any()
        }
    }
}

/// A call of a connected server's tool that its policy put to a person:
/// the exact arguments, and Allow / Decline for whoever may act in the run.
/// The answer is bound to this request; the run makes the call (or tells
/// the model it was declined) on the server when it resumes. A chunk of
/// its own: only a thread with a connected server's call shows one.
#[lazy]
fn server_call_view(ctx: Ctx, run: String, tool_call_id: String, tool_name: String, args: Value) -> AnyView {
    let (server, tool) = lattice_core::ServerKey::split_tool(&tool_name).map(|(s, t)| (s.to_owned(), t.to_owned())).unwrap_or_default();
    let key = request_key(&run, &tool_call_id);
    let answered = Memo::new(move |_| ctx.state.with(|t| t.answered.get(&key).cloned()));
    let refused = RwSignal::new(None::<String>);
    let key = format!("{}{server}", lattice_core::ServerKey::PREFIX);
    let off = Memo::new(move |_| {
        ctx.switches.with(|s| match s.as_ref().and_then(|m| m.get(&key)) {
            Some(e) if e.enabled => None,
            Some(e) => Some(e.because.clone()),
            None => Some(format!("{key} is not connected here")),
        })
    });
    let shown = serde_json::to_string_pretty(&args).unwrap_or_default();
    let decide = move |approved: bool| {
        let (run, tool_call_id) = (run.clone(), tool_call_id.clone());
        move |_| {
            let (run, tool_call_id) = (run.clone(), tool_call_id.clone());
            leptos::task::spawn_local(async move {
                let body = Answer { tool_call_id, answer: json!({"approved": approved}) };
                if let Err(e) = api_client::post::<IgnoredAny>(&format!("/v1/runs/{run}/answers"), &body).await {
                    refused.set(Some(e.message()));
                }
            });
        }
    };
    let (allow, decline) = (decide(true), decide(false));
    let may_answer = move || ctx.role.with(|r| r.as_deref().is_some_and(|r| may(r, Action::Run)));
    let label = format!("The agent wants to call {tool} on the {server} server");
    view! {
        <section class="request server-call" aria-label=label.clone()>
            <p><strong>{label.clone()}</strong>", with these arguments:"</p>
            <pre class="arguments">{shown}</pre>
            {move || match (answered.get(), off.get()) {
                (Some(who), _) => view! { <p class="answered">"Answered by " {who} "."</p> }.into_any(),
                (None, Some(why)) => view! { <p class="refusal">"This server is turned off here: " {why}</p> }.into_any(),
                (None, None) if may_answer() => view! {
                    <p class="actions">
                        <button type="button" on:click=allow.clone()>"Allow"</button>
                        <button type="button" class="quiet" on:click=decline.clone()>"Decline"</button>
                    </p>
                }.into_any(),
                (None, None) => view! { <p class="muted">"Someone who may act in the agent's turn decides."</p> }.into_any(),
            }}
            {move || refused.get().map(|r| view! { <p class="refusal" role="alert">{r}</p> })}
        </section>
    }
    .into_any()
}

#[derive(Deserialize)]
struct AskFormArgs {
    title: String,
    schema: Value,
    #[serde(default)]
    ui: Option<UiHints>,
}

fn ask_form_view(ctx: Ctx, run: String, tool_call_id: String, args: Value, expires_at: Option<String>) -> AnyView {
    let Ok(args) = lattice_core::json::from_value::<AskFormArgs>(args) else {
        return view! { <p class="refusal">"The agent asked for a form that can't be shown."</p> }.into_any();
    };
    let key = request_key(&run, &tool_call_id);
    let answered = Memo::new(move |_| ctx.state.with(|t| t.answered.get(&key).cloned()));
    let key = request_key(&run, &tool_call_id);
    let expired = Memo::new(move |_| ctx.state.with(|t| t.expired.contains_key(&key)));
    let forms_off = ctx.off_because(lattice_core::SwitchKey::Forms);
    let heading = format!("req-{tool_call_id}-title");
    let deadline = expires_at.clone();
    let title = args.title.clone();
    let heading_id = heading.clone();
    let body = move || {
        if expired.get() {
            return view! { <p class="answered expired">"Expired: nobody answered before the deadline."</p> }.into_any();
        }
        if let Some(who) = answered.get() {
            return view! { <p class="answered">"Already answered by " {who} "."</p> }.into_any();
        }
        if let Some(why) = forms_off.get() {
            return view! { <p class="refusal">"Forms are turned off here: " {why}</p> }.into_any();
        }
        if let Some(note) = unsendable(ctx) {
            return note;
        }
        let due = deadline.clone().map(|at| view! { <p class="muted deadline">"Answer by " {time(at)}"."</p> });
        let take_focus = focus_once(&tool_call_id);
        let run = run.clone();
        let tool_call_id = tool_call_id.clone();
        let on_send: Sender = Rc::new(move |values: Value| {
            let path = format!("/v1/runs/{run}/answers");
            let body = Answer { tool_call_id: tool_call_id.clone(), answer: values };
            Box::pin(async move { api_client::post::<IgnoredAny>(&path, &body).await.map(|_| ()) })
        });
        let form = lazy_form(FormProps {
            id: format!("req-{}", heading_id.trim_end_matches("-title").trim_start_matches("req-")),
            labelled_by: heading_id.clone(),
            schema: args.schema.clone(),
            hints: args.ui.clone().unwrap_or_default(),
            on_send,
            take_focus: Some(take_focus),
            reset_after_send: false,
            thread: ctx.thread.get_value(),
        });
        view! { {due} {form} }.into_any()
    };
    let labelled = heading.clone();
    view! {
        <section class="request form-request" aria-labelledby=labelled>
            <h2 id=heading>{title}</h2>
            <p class="muted">"The agent is waiting for this form."</p>
            {body}
        </section>
    }
    .into_any()
}

//! A thread's page (REQUIREMENTS.md W1): its timeline live from the event
//! stream, the run's status, what the agent is writing, the composer for
//! those who write, and sharing for admins.

use lattice_core::Envelope;
use lattice_core::policy::Action;
use lattice_wire::{Artifact, TextDelta, ToolInputDelta};
use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::use_params_map;
use serde_json::Value;

use super::composer::Composer;
use super::ctx::{Ctx, Switches, may};
use super::pins::saved_pin;
use super::share::Share;
use super::switches;
use super::timeline::item_view;
use super::writing::Writing;
use crate::components::{chunks, frame_host};
use crate::data::paths::{events_path, record_path};
use crate::data::thread_fold::{self, Item, Thread};
use crate::data::{api_client, stream};

#[component]
pub fn ThreadPage() -> impl IntoView {
    let params = use_params_map();
    let id = Memo::new(move |_| params.read().get("thread").unwrap_or_default());
    move || {
        let id = id.get();
        view! { <ThreadView id/> }
    }
}

#[component]
fn ThreadView(id: String) -> impl IntoView {
    let state = RwSignal::new(Thread::default());
    let switches = RwSignal::new(None::<Switches>);
    let deaf = RwSignal::new(false);
    let refused = RwSignal::new(None::<String>);
    let pinned = RwSignal::new(saved_pin(&id));
    let role = RwSignal::new(None::<String>);
    let answering = Memo::new(move |_| role.with(|r| r.as_deref().map(|r| may(r, Action::Submit))));
    let ctx = Ctx { thread: StoredValue::new(id.clone()), state, switches, deaf, pinned, role, answering };

    let th = id.clone();
    let events = stream::follow(
        move |last| events_path(&th, last),
        move |event| match event.name.as_str() {
            "delta" => {
                if let Ok(d) = lattice_core::json::from_str::<TextDelta>(&event.data) {
                    state.update(|t| t.text_delta(d));
                }
            }
            "tool_input" => {
                if let Ok(d) = lattice_core::json::from_str::<ToolInputDelta>(&event.data) {
                    if d.name == "update_app"
                        && let Some(app) = d.arguments.get("id").and_then(Value::as_str)
                    {
                        frame_host::tool_input_partial(app, &d.arguments);
                    }
                    state.update(|t| t.tool_input(d));
                }
            }
            _ => {
                if let Ok(Some(e)) = Envelope::from_json_in::<{ thread_fold::SHOWN }>(&event.data) {
                    if let lattice_core::event::Event::RunFailed(failed) = &e.event
                        && failed.failure == Some(lattice_core::RunFailure::Cancelled)
                    {
                        frame_host::run_cancelled(&failed.run_id);
                    }
                    // The forms' chunk is asked for before the update
                    // draws anything: it arrives while the thread is drawn.
                    if thread_fold::brings_a_form(&e) {
                        chunks::fetch_forms();
                    }
                    state.update(|t| t.apply(&e));
                }
            }
        },
        move |failure| refused.set(Some(failure.message())),
    );
    on_cleanup(move || events.close());

    // An artifact changed by a patch the fold could not apply: read it again.
    Effect::new(move |_| {
        let stale = state.with(|t| t.stale.clone());
        if stale.is_empty() {
            return;
        }
        state.update_untracked(|t| t.stale.clear());
        for id in stale {
            leptos::task::spawn_local(async move {
                if let Ok(a) = api_client::get::<Artifact>(&format!("/v1/artifacts/{id}")).await {
                    state.update(|t| {
                        if let Some(view) = t.artifacts.get_mut(&id) {
                            view.version = a.version;
                            view.data = a.data;
                            view.archived = a.archived;
                        }
                    });
                }
            });
        }
    });

    // The switches, pushed: a flip shows here without a reload. The stream
    // beats while it lives; three beats unheard and what it governs is off
    // (a stream that broke unseen fails closed), on again once it speaks.
    let workspace = Memo::new(move |_| state.with(|t| t.workspace.clone()));
    switches::follow(workspace, switches, deaf);

    // The reader's role in this thread, as the server decides it: until it
    // is known no form and no composer is offered.
    let restricted = RwSignal::new(false);
    let th = id.clone();
    leptos::task::spawn_local(async move {
        if let Ok(thread) = api_client::get::<lattice_wire::Thread>(&record_path(&th)).await {
            restricted.try_set(thread.restricted);
            role.try_set(thread.role);
        }
    });
    let admin = Memo::new(move |_| role.with(|r| r.as_deref().is_some_and(|r| may(r, Action::ManageListings))));
    let writes = Memo::new(move |_| role.with(|r| r.as_deref().is_some_and(|r| may(r, Action::Post))));
    let title = Memo::new(move |_| state.with(|t| t.title.clone()));
    let ws_link = move || workspace.get().map(|ws| view! { <A href=format!("/w/{ws}")>"Threads"</A> });
    let items = move || state.with(|t| t.items.clone());
    view! {
        <p class="crumbs"><A href="/">"Workspaces"</A>" / "{ws_link}</p>
        <h1>{move || title.get()}{move || restricted.get().then(|| view! { " " <span class="badge">"restricted"</span> })}</h1>
        {move || admin.get().then(|| view! { <Share thread=ctx.thread.get_value()/> })}
        {move || refused.get().map(|r| view! { <p class="refusal" role="alert">{r}</p> })}
        <RunStatus state/>
        <ol class="timeline" aria-label="Thread">
            <For each=items key=item_key let:item>
                {
                    let artifact = match &item { Item::Artifact { id, .. } => Some(id.clone()), _ => None };
                    let class = move || if artifact.is_some() && ctx.pinned.get() == artifact { "item pinned" } else { "item" };
                    view! { <li class=class>{item_view(ctx, item)}</li> }
                }
            </For>
        </ol>
        <Writing state/>
        {move || writes.get().then(|| view! { <Composer ctx/> })}
    }
}

fn item_key(item: &Item) -> String {
    match item {
        Item::Request { seq, tool_call_id, .. } => format!("{seq}:{tool_call_id}"),
        other => other.seq().to_string(),
    }
}

/// The latest run's status, in words, announced as it changes.
#[component]
fn RunStatus(state: RwSignal<Thread>) -> impl IntoView {
    let words = Memo::new(move |_| {
        state.with(|t| {
            let last = t.items.iter().rev().find_map(|i| match i {
                Item::RunStarted { run, .. } => Some(run.clone()),
                _ => None,
            })?;
            Some(match t.runs.get(&last).map(String::as_str) {
                Some("running") if t.writing.contains_key(&last) => "The agent is writing…".to_owned(),
                Some("running") => "The agent is working…".to_owned(),
                Some("cancelled") => "The agent's run was cancelled.".to_owned(),
                Some("paused") => "The agent is waiting for an answer.".to_owned(),
                Some("finished") => "The agent has finished.".to_owned(),
                Some(other) => format!("The agent's run {other}"),
                None => String::new(),
            })
        })
    });
    view! { <p class="run-status" role="status">{move || words.get()}</p> }
}

//! A thread's page (REQUIREMENTS.md W1): its timeline live from the event
//! stream, the run's status, what the agent is writing, the composer for
//! those who write, and sharing for admins.

use lattice_core::Envelope;
use lattice_core::policy::Action;
use lattice_wire::{Artifact, TextDelta, ToolInputDelta};
use leptos::prelude::*;
use leptos_router::hooks::use_params_map;
use serde_json::Value;

use super::composer::Composer;
use super::ctx::{Ctx, Switches, may};
use super::newest;
use super::pins::saved_pin;
use super::share::lazy_share;
use super::switches;
use super::timeline::item_view;
use super::writing::Writing;
use crate::components::{chunks, frame_host};
use crate::data::paths::{events_path, record_path};
use crate::data::thread_fold::{self, Item, Thread};
use crate::data::{api_client, stream};

/// The part of a thread's record this page reads (`lattice_wire::Thread`).
#[derive(serde::Deserialize)]
struct Placed {
    #[serde(default)]
    restricted: bool,
    role: Option<String>,
}

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
    let connected = RwSignal::new(true);
    let events = stream::follow_told(
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
        move |up| connected.set(up),
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
        if let Ok(thread) = api_client::get::<Placed>(&record_path(&th)).await {
            restricted.try_set(thread.restricted);
            role.try_set(thread.role);
        }
    });
    let admin = Memo::new(move |_| role.with(|r| r.as_deref().is_some_and(|r| may(r, Action::ManageListings))));
    let writes = Memo::new(move |_| role.with(|r| r.as_deref().is_some_and(|r| may(r, Action::Post))));
    let title = Memo::new(move |_| state.with(|t| t.title.clone()));
    let items = move || state.with(|t| t.items.clone());
    let count = Memo::new(move |_| state.with(|t| t.items.len()));
    // What the reader has seen is read, as far as the newest envelope
    // (`lattice_wire::ReadMark`; what it answers is not read).
    let path: std::rc::Rc<str> = format!("{}/read", record_path(&id)).into();
    let marked = std::rc::Rc::new(std::cell::Cell::new(0_i64));
    let unseen = newest::follow(count, move || {
        let seq = state.with_untracked(|t| t.last_seq);
        if seq > marked.replace(seq.max(marked.get())) {
            let path = path.clone();
            leptos::task::spawn_local(async move {
                let _ = api_client::put::<serde::de::IgnoredAny>(&path, &serde_json::json!({ "seq": seq })).await;
            });
        }
    });
    // Until the stream has said what is there, nothing is said of it being empty.
    let empty = move || role.with(Option::is_some) && count.get() == 0 && title.with(|t| !t.is_empty());
    // The heading holds its place while the thread loads: nothing below it moves.
    let heading = move || match (title.get(), refused.with(Option::is_some)) {
        (t, _) if !t.is_empty() => t,
        (_, true) => "This thread can't be shown".to_owned(),
        _ => "Loading the thread…".to_owned(),
    };
    view! {
        <h1>{heading}{move || restricted.get().then(|| view! { " " <span class="badge">"restricted"</span> })}</h1>
        {move || admin.get().then(|| lazy_share(ctx.thread.get_value()))}
        {move || refused.get().map(|r| view! {
            <p class="refusal" role="alert">{r}". Reload the page to try again, or ask the thread's admin for access."</p>
        })}
        {move || (empty() && refused.with(Option::is_none)).then(|| view! {
            <p class="empty">{if writes.get() {
                "Nothing here yet. Write the first message below, or ask the agent to start."
            } else {
                "Nothing here yet. What the people and the agent write here will show as it arrives."
            }}</p>
        })}
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
        <div class="dock">
            {move || unseen.get().then(|| view! {
                <button type="button" class="new-pill" on:click=|_| newest::to_the_end()>"New messages ↓"</button>
            })}
            <RunStatus state/>
            {move || (!connected.get()).then(|| view! {
                <p class="reconnecting">"Reconnecting to the thread… What arrives meanwhile will show when it is back."</p>
            })}
            {move || writes.get().then(|| view! { <Composer ctx/> })}
        </div>
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
            let status = t.runs.get(&last).map(String::as_str);
            // Running, yet waiting on a person: a server's question.
            if status == Some("running")
                && let Some(server) = t.asking_server(&last)
            {
                return Some(format!("The {server} server is waiting for an answer."));
            }
            Some(match status {
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

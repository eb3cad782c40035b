//! A thread (REQUIREMENTS.md W1): its timeline live from the event stream, forms the
//! agent asked for, artifacts, runs and their status, and the composer.
//! The effective switches arrive pushed (I4): what is off stops being
//! offered and shows why.

use lattice_core::policy::{self, Action};
use std::cell::RefCell;
use std::collections::HashSet;
use std::rc::Rc;

use lattice_core::Envelope;
use lattice_ui::form::{Form, Submissions};
use lattice_ui::hints::UiHints;
use lattice_wire::{
    Answer, Answered, Artifact, CreateArtifact, PostMessage, Posted, Run, RunStarted, StartRun, TextDelta, ToolInputDelta, Versioned,
};
use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::use_params_map;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::components::chunks::{LazyAppFrame, LazyDashboard, lazy_form};
use crate::components::frame_host::AppInfo;
use crate::components::schema_form::{FormProps, Sender};
use crate::data::api_client;
use crate::data::paths::{events_path, record_path};
use crate::data::request::Failure;
use crate::data::session::Session;
use crate::data::stream;
use crate::data::thread_fold::{ArtifactView, Item, Thread};

/// Each key's effective value: enabled, and why.
pub type Switches = lattice_wire::Effective;

thread_local! {
    /// Requests that already took the focus once in this page's life.
    static FOCUSED: RefCell<HashSet<String>> = RefCell::new(HashSet::new());
}

#[derive(Clone, Copy)]
struct Ctx {
    thread: StoredValue<String>,
    state: RwSignal<Thread>,
    switches: RwSignal<Option<Switches>>,
    /// Set while the switch stream has gone quiet for longer than three of
    /// its heartbeats: what the switches govern is off until it speaks.
    deaf: RwSignal<bool>,
    /// The dashboard or app pinned beside the thread, if any.
    pinned: RwSignal<Option<String>>,
    /// The viewer's role in the thread's workspace, once known: what the
    /// page offers follows it (the server decides either way).
    role: RwSignal<Option<String>>,
    /// Whether the viewer may answer forms, once the role is known; a
    /// memo, so the role read again leaves a drawn form standing.
    answering: Memo<Option<bool>>,
}

/// Where a thread's pinned view is remembered, in this browser.
fn pin_key(thread: &str) -> String {
    format!("lattice.pinned.{thread}")
}

fn saved_pin(thread: &str) -> Option<String> {
    web_sys::window()?.local_storage().ok()??.get_item(&pin_key(thread)).ok()?
}

fn save_pin(thread: &str, pinned: Option<&str>) {
    if let Some(storage) = web_sys::window().and_then(|w| w.local_storage().ok().flatten()) {
        let _ = match pinned {
            Some(id) => storage.set_item(&pin_key(thread), id),
            None => storage.remove_item(&pin_key(thread)),
        };
    }
}

/// Why governed UI is off while the switch cannot be heard.
const DEAF: &str = "lattice cannot hear the kill switch right now: this is paused until it can";

impl Ctx {
    /// Whether a key is on; unknown until the first answer, taken as on
    /// (the server refuses what is off either way). Off while the switch
    /// cannot be heard.
    fn off_because(self, key: &'static str) -> Memo<Option<String>> {
        Memo::new(move |_| {
            if self.deaf.get() {
                return Some(DEAF.to_owned());
            }
            self.switches.with(|s| s.as_ref().and_then(|m| m.get(key)).filter(|e| !e.enabled).map(|e| e.because.clone()))
        })
    }

    /// Mini apps fail closed (REQUIREMENTS.md I4): nothing runs until the switch has
    /// said they are on, and nothing while it can't be heard.
    fn apps_off_because(self) -> Memo<Option<String>> {
        Memo::new(move |_| {
            if self.deaf.get() {
                return Some(DEAF.to_owned());
            }
            self.switches.with(|s| match s.as_ref().and_then(|m| m.get("ui:mini-apps")) {
                None => Some("the switch has not answered yet".to_owned()),
                Some(e) if !e.enabled => Some(e.because.clone()),
                Some(_) => None,
            })
        })
    }
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
                        crate::components::frame_host::tool_input_partial(app, &d.arguments);
                    }
                    state.update(|t| t.tool_input(d));
                }
            }
            _ => {
                if let Ok(Some(e)) = Envelope::from_json_in::<{ crate::data::thread_fold::SHOWN }>(&event.data) {
                    if let lattice_core::event::Event::RunFailed(failed) = &e.event
                        && failed.failure == Some(lattice_core::RunFailure::Cancelled)
                    {
                        crate::components::frame_host::run_cancelled(&failed.run_id);
                    }
                    // The forms' chunk is asked for before the update
                    // draws anything: it arrives while the thread is drawn.
                    if crate::data::thread_fold::brings_a_form(&e) {
                        crate::components::chunks::fetch_forms();
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
    let switch_stream = StoredValue::new(None::<stream::Handle>);
    let heard = StoredValue::new((js_sys::Date::now(), 5000.0_f64));
    Effect::new(move |_| {
        if let Some(h) = switch_stream.get_value() {
            h.close();
        }
        let Some(ws) = workspace.get() else { return };
        let url = format!("/v1/integrations/effective/stream?workspace={}", api_client::query(&ws));
        let handle = stream::follow(
            move |_| url.clone(),
            move |event| {
                let every = match event.name.as_str() {
                    "heartbeat" => lattice_core::json::from_str::<Value>(&event.data).ok().and_then(|v| v.get("every_ms").and_then(Value::as_f64)),
                    _ => {
                        if let Ok(map) = lattice_core::json::from_str::<Switches>(&event.data) {
                            switches.set(Some(map));
                        }
                        None
                    }
                };
                heard.update_value(|(at, beat)| {
                    *at = js_sys::Date::now();
                    *beat = every.unwrap_or(*beat);
                });
                if deaf.get_untracked() {
                    deaf.set(false);
                }
            },
            move |_| switches.set(None),
        );
        switch_stream.set_value(Some(handle));
    });
    let watching = StoredValue::new(true);
    leptos::task::spawn_local(async move {
        while watching.try_get_value().unwrap_or(false) {
            stream::sleep(250).await;
            let Some((at, beat)) = heard.try_get_value() else { break };
            let quiet = js_sys::Date::now() - at > 3.0 * beat;
            if deaf.try_get_untracked() != Some(quiet) {
                deaf.try_set(quiet);
            }
        }
    });
    on_cleanup(move || {
        watching.try_set_value(false);
        if let Some(h) = switch_stream.try_get_value().flatten() {
            h.close();
        }
    });

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

fn item_view(ctx: Ctx, item: Item) -> AnyView {
    match item {
        Item::Message { author, agent, text, at, .. } => view! {
            <article class=if agent { "message agent" } else { "message" }>
                <p class="meta"><strong>{author}</strong>{agent.then_some(" (agent)")}" " <time datetime=at.clone()>{short_time(&at)}</time></p>
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
                    if let Err(e) = api_client::post::<Run>(&format!("/v1/runs/{run}/cancel"), &json!({})).await {
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
        Item::Request { run, tool_call_id, tool_name, args, expires_at, .. } if tool_name == "ask_form" => {
            ask_form_view(ctx, run, tool_call_id, args, expires_at)
        }
        Item::Request { tool_call_id, args, .. } => {
            let answered = Memo::new(move |_| ctx.state.with(|t| t.answered.get(&tool_call_id).cloned()));
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

/// What the agent is writing now: its text as it comes, and the form or
/// dashboard it is putting together. The text is one live region kept busy
/// while it grows, so a screen reader reads the reply once, whole, rather
/// than every few characters.
#[component]
fn Writing(state: RwSignal<Thread>) -> impl IntoView {
    let runs = Memo::new(move |_| state.with(|t| t.writing.iter().map(|(run, w)| (run.clone(), w.clone())).collect::<Vec<_>>()));
    move || {
        runs.get()
            .into_iter()
            .map(|(run, w)| {
                let tools = w.tools.iter().map(|(id, name, args)| being_written(id, name, args)).collect_view();
                let text = (!w.text.is_empty()).then(|| {
                    view! {
                        <article class="message agent writing" data-run=run.clone() aria-live="polite" aria-busy=if w.done { "false" } else { "true" }>
                            <p class="meta"><strong>"agent"</strong>" is writing…"</p>
                            <p class="text">{w.text.clone()}</p>
                        </article>
                    }
                });
                view! { <div class="writing-run">{text}{tools}</div> }
            })
            .collect_view()
    }
}

/// A tool call while its arguments arrive: the form's title and fields, or
/// the dashboard's panels that are whole so far. Nothing is validated yet.
fn being_written(id: &str, name: &str, args: &Value) -> AnyView {
    let title = args.get("title").and_then(Value::as_str).unwrap_or_default().to_owned();
    match name {
        "ask_form" | "create_form" => {
            let fields: Vec<String> = args
                .pointer("/schema/properties")
                .and_then(Value::as_object)
                .map(|p| p.iter().map(|(k, v)| v.get("title").and_then(Value::as_str).unwrap_or(k).to_owned()).collect())
                .unwrap_or_default();
            view! {
                <section class="request form-request writing" aria-busy="true" data-tool-call=id.to_owned()>
                    <h2>{title}</h2>
                    <p class="muted">"The agent is writing this form…"</p>
                    <ul class="fields-so-far">{fields.into_iter().map(|f| view! { <li>{f}</li> }).collect_view()}</ul>
                </section>
            }
            .into_any()
        }
        "show_dashboard" | "update_dashboard" => {
            let panels = args.get("panels").cloned().unwrap_or_else(|| json!([]));
            let data = json!({"title": title, "as_of": "", "panels": panels});
            view! {
                <div class="writing" aria-busy="true" data-tool-call=id.to_owned()>
                    <LazyDashboard id=format!("writing-{id}") data writing=true on_action=move |_: String| {}/>
                </div>
            }
            .into_any()
        }
        _ => view! {
            <p class="run writing" aria-busy="true" data-tool-call=id.to_owned()>{format!("The agent is preparing {name}: {title}")}</p>
        }
        .into_any(),
    }
}

/// Pins a dashboard or an app beside the thread, where it stays in view
/// while the conversation scrolls (one at a time), or unpins it.
fn pin_button(ctx: Ctx, id: String) -> impl IntoView {
    let this = id.clone();
    let pinned = Memo::new(move |_| ctx.pinned.get().as_deref() == Some(this.as_str()));
    let toggle = move |_| {
        let next = (!pinned.get_untracked()).then(|| id.clone());
        save_pin(&ctx.thread.get_value(), next.as_deref());
        ctx.pinned.set(next);
    };
    view! {
        <div class="view-tools">
            <button type="button" class="quiet pin" aria-pressed=move || if pinned.get() { "true" } else { "false" } on:click=toggle>
                {move || if pinned.get() { "Unpin" } else { "Pin beside the thread" }}
            </button>
        </div>
    }
}

fn short_time(at: &str) -> String {
    at.get(11..16).unwrap_or(at).to_owned()
}

#[derive(Deserialize)]
struct AskFormArgs {
    title: String,
    schema: Value,
    #[serde(default)]
    ui: Option<UiHints>,
}

/// What a form offers its reader before anything else: nothing until the
/// reader's role is known, a note for a viewer (who can send no form).
fn unsendable(ctx: Ctx) -> Option<AnyView> {
    match ctx.answering.get() {
        None => Some(view! { <p class="muted" aria-busy="true">"…"</p> }.into_any()),
        Some(false) => Some(view! { <p class="muted">"You can read this thread; answering its forms needs the respondent role."</p> }.into_any()),
        Some(true) => None,
    }
}

fn ask_form_view(ctx: Ctx, run: String, tool_call_id: String, args: Value, expires_at: Option<String>) -> AnyView {
    let Ok(args) = lattice_core::json::from_value::<AskFormArgs>(args) else {
        return view! { <p class="refusal">"The agent asked for a form that can't be shown."</p> }.into_any();
    };
    let tcid = tool_call_id.clone();
    let answered = Memo::new(move |_| ctx.state.with(|t| t.answered.get(&tcid).cloned()));
    let tcid = tool_call_id.clone();
    let expired = Memo::new(move |_| ctx.state.with(|t| t.expired.contains_key(&tcid)));
    let forms_off = ctx.off_because("ui:forms");
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
        let due =
            deadline.clone().map(|at| view! { <p class="muted deadline">"Answer by " <time datetime=at.clone()>{short_time(&at)}</time>"."</p> });
        let focus_once = tool_call_id.clone();
        let take_focus: Rc<dyn Fn() -> bool> = Rc::new(move || FOCUSED.with(|f| f.borrow_mut().insert(focus_once.clone())));
        let run = run.clone();
        let tool_call_id = tool_call_id.clone();
        let on_send: Sender = Rc::new(move |values: Value| {
            let path = format!("/v1/runs/{run}/answers");
            let body = Answer { tool_call_id: tool_call_id.clone(), answer: values };
            Box::pin(async move { api_client::post::<Answered>(&path, &body).await.map(|_| ()) })
        });
        let form = lazy_form(FormProps {
            id: format!("req-{}", heading_id.trim_end_matches("-title").trim_start_matches("req-")),
            labelled_by: heading_id.clone(),
            schema: args.schema.clone(),
            hints: args.ui.clone().unwrap_or_default(),
            on_send,
            take_focus: Some(take_focus),
            reset_after_send: false,
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

fn artifact_view(ctx: Ctx, a: ArtifactView, first_version: u64) -> AnyView {
    match a.kind.as_str() {
        "form" => form_artifact(ctx, a, first_version),
        "dashboard" => {
            let off = ctx.off_because("ui:dashboards");
            let id = format!("dash-{}", a.id);
            move || match off.get() {
                Some(why) => view! {
                    <section class="dashboard off"><p class="refusal">"Dashboards are turned off here: " {why}</p></section>
                }
                .into_any(),
                None => view! { <LazyDashboard id=id.clone() data=a.data.clone() writing=false on_action=move |form_id: String| press_action(ctx, form_id)/> }.into_any(),
            }
        }
        .into_any(),
        _ => ().into_any(),
    }
}

/// A mini app: its frame lives as long as its HTML does; new versions of
/// its state reach the running app without a reload.
fn app_view(ctx: Ctx, artifact: Memo<Option<ArtifactView>>) -> AnyView {
    let off = ctx.apps_off_because();
    let field = move |key: &'static str| Memo::new(move |_| artifact.with(|a| a.as_ref().map(|a| text_of(&a.data, key)).unwrap_or_default()));
    let (title, summary, html) = (field("title"), field("summary"), field("html"));
    let version = Memo::new(move |_| artifact.with(|a| a.as_ref().map_or(0, |a| a.version)));
    let archived = Memo::new(move |_| artifact.with(|a| a.as_ref().is_some_and(|a| a.archived)));
    let run = artifact.with_untracked(|a| a.as_ref().and_then(|a| a.run.clone()));
    let stopped = Signal::derive(move || match off.get() {
        Some(why) => Some(format!("Mini apps are turned off here: {why}")),
        None if archived.get() => Some("This app is archived: it no longer runs.".into()),
        None => None,
    });
    let app = Signal::derive(move || {
        let a = artifact.get()?;
        let _ = html.get();
        Some(AppInfo {
            id: a.id.clone(),
            version: a.version,
            title: text_of(&a.data, "title"),
            summary: text_of(&a.data, "summary"),
            html: text_of(&a.data, "html"),
            state: a.data.get("state").cloned().unwrap_or(Value::Null),
            run: a.run.clone(),
            thread: ctx.thread.get_value(),
            updated_by_agent: a.changed_by_agent,
        })
    });
    view! {
        <LazyAppFrame title=title.into() summary=summary.into() run version=version.into() stopped app/>
    }
    .into_any()
}

fn text_of(data: &Value, key: &str) -> String {
    data.get(key).and_then(Value::as_str).unwrap_or_default().to_owned()
}

fn form_artifact(ctx: Ctx, a: ArtifactView, first_version: u64) -> AnyView {
    let Ok(form) = lattice_core::json::from_value::<Form>(a.data.clone()) else {
        return view! { <p class="refusal">"This form can't be shown."</p> }.into_any();
    };
    let forms_off = ctx.off_because("ui:forms");
    let session = expect_context::<Session>();
    let heading = format!("form-{}-title", a.id);
    let form_id = a.id.clone();
    let subs_of = a.id.clone();
    let submissions = Memo::new(move |_| {
        ctx.state.with(|t| {
            t.submissions_to(&subs_of)
                .into_iter()
                .map(|s| (s.author.clone(), s.data.get("values").cloned().unwrap_or(Value::Null)))
                .collect::<Vec<_>>()
        })
    });
    // Reactive on the viewer: the page shows before `/v1/me` answers.
    let mine = Memo::new(move |_| {
        let me = session.me.with(|m| m.as_ref().map(|m| m.user.clone()));
        submissions.with(|s| me.is_some_and(|me| s.iter().any(|(who, _)| *who == me)))
    });
    let policy = form.submissions;
    let version = a.version;
    let archived = a.archived;
    let closed = form.closed;
    let closes = form.closes_at.is_some().then(|| form.clone());
    let schema = form.schema.clone();
    let hints = form.ui.clone().unwrap_or_default();
    let heading_id = heading.clone();
    let body = move || {
        if archived {
            return view! { <p class="muted">"This form is archived."</p> }.into_any();
        }
        if closed {
            return view! { <p class="muted">"This form is closed."</p> }.into_any();
        }
        if closes.as_ref().is_some_and(|f| f.closed_at(js_sys::Date::now() as i64)) {
            return view! { <p class="muted">"This form closed at its deadline."</p> }.into_any();
        }
        if let Some(why) = forms_off.get() {
            return view! { <p class="refusal">"Forms are turned off here: " {why}</p> }.into_any();
        }
        if let Some(note) = unsendable(ctx) {
            return note;
        }
        let done = match policy {
            Submissions::Once => !submissions.with(Vec::is_empty),
            Submissions::PerPerson => mine.get(),
            Submissions::Many => false,
        };
        if done {
            return view! { <p class="answered">"Already answered."</p> }.into_any();
        }
        let thread = ctx.thread.get_value();
        let form_id = form_id.clone();
        let dom_id = format!("form-{form_id}");
        let on_send: Sender = Rc::new(move |values: Value| Box::pin(submit(thread.clone(), form_id.clone(), version, policy, values)));
        lazy_form(FormProps {
            id: dom_id,
            labelled_by: heading_id.clone(),
            schema: schema.clone(),
            hints: hints.clone(),
            on_send,
            take_focus: None,
            reset_after_send: policy == Submissions::Many,
        })
        .into_any()
    };
    let list = move || {
        let subs = submissions.get();
        (!subs.is_empty()).then(|| {
            let count = subs.len();
            view! {
                <details class="submissions" open=true>
                    <summary>{format!("Submissions ({count})")}</summary>
                    <ul>
                        {subs.into_iter().map(|(who, values)| view! {
                            <li><strong>{who}</strong>": " {describe(&values)}</li>
                        }).collect_view()}
                    </ul>
                </details>
            }
        })
    };
    let labelled = heading.clone();
    view! {
        <section class="form-artifact" aria-labelledby=labelled data-version=version>
            <h2 id=heading>{form.title.clone()}</h2>
            {(version > first_version).then(|| view! {
                <p class="changed" role="status">{format!("This form changed: this is its new version ({version}). Check your answers before you send.")}</p>
            })}
            {body}
            {list}
        </section>
    }
    .into_any()
}

/// Values as words: `severity: high; affected: API, Database`.
fn describe(values: &Value) -> String {
    let Some(map) = values.as_object() else { return String::new() };
    map.iter()
        .map(|(k, v)| {
            let v = match v {
                Value::String(s) => s.clone(),
                Value::Array(a) => a.iter().map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_owned)).collect::<Vec<_>>().join(", "),
                other => other.to_string(),
            };
            format!("{k}: {v}")
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// A submission, sent without its id: the write path derives it from the
/// form's policy, so a retry is the same artifact.
async fn submit(thread: String, form_id: String, version: u64, policy: Submissions, values: Value) -> Result<(), Failure> {
    let submission = lattice_ui::submission::Submission::new(&form_id, version, policy, values, nonce);
    let body = CreateArtifact { id: None, kind: lattice_ui::SUBMISSION.into(), data: submission.data() };
    api_client::post::<Versioned>(&format!("/v1/threads/{thread}/artifacts"), &body).await.map(|_| ())
}

pub fn nonce() -> String {
    let mut bytes = [0u8; 12];
    if let Some(crypto) = web_sys::window().and_then(|w| w.crypto().ok()) {
        let _ = crypto.get_random_values_with_u8_array(&mut bytes);
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A dashboard's action button: a submission with no values to its form.
fn press_action(ctx: Ctx, form_id: String) {
    let thread = ctx.thread.get_value();
    leptos::task::spawn_local(async move {
        let Ok(form) = api_client::get::<Artifact>(&format!("/v1/artifacts/{form_id}")).await else { return };
        let policy = lattice_core::json::from_value::<Form>(form.data).map(|f| f.submissions).unwrap_or_default();
        let version = form.version;
        let _ = submit(thread, form_id, version, policy, json!({})).await;
    });
}

/// What the agent can be asked to do, as the switches allow.
const AGENTS: [(&str, &str, Option<&str>); 4] = [
    ("", "The configured agent", None),
    ("scripted:ask_form", "Scripted: ask a form", Some("ui:forms")),
    ("scripted:dashboard", "Scripted: show a dashboard", Some("ui:dashboards")),
    ("scripted:app", "Scripted: make an app", Some("ui:mini-apps")),
];

#[component]
fn Composer(ctx: Ctx) -> impl IntoView {
    let text = RwSignal::new(String::new());
    let model = RwSignal::new(String::new());
    let message = RwSignal::new(String::new());
    let offered = move |key: Option<&str>| key.is_none_or(|k| ctx.switches.with(|s| s.as_ref().and_then(|m| m.get(k)).is_none_or(|e| e.enabled)));
    let post = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let body = PostMessage { text: text.get_untracked() };
        let thread = ctx.thread.get_value();
        leptos::task::spawn_local(async move {
            match api_client::post::<Posted>(&format!("/v1/threads/{thread}/messages"), &body).await {
                Ok(_) => {
                    text.set(String::new());
                    message.set(String::new());
                }
                Err(e) => message.set(e.message()),
            }
        });
    };
    let ask = move |_| {
        let prompt = text.get_untracked();
        let prompt = if prompt.trim().is_empty() { "Go ahead.".to_owned() } else { prompt };
        let chosen = model.get_untracked();
        let body = StartRun { prompt, model: (!chosen.is_empty()).then_some(chosen), chain: None };
        let thread = ctx.thread.get_value();
        leptos::task::spawn_local(async move {
            match api_client::post::<RunStarted>(&format!("/v1/threads/{thread}/runs"), &body).await {
                Ok(_) => {
                    text.set(String::new());
                    message.set(String::new());
                }
                Err(e) => message.set(e.message()),
            }
        });
    };
    // A choice that was switched off falls back to the configured agent.
    Effect::new(move |_| {
        let chosen = model.get();
        if let Some((_, _, key)) = AGENTS.iter().find(|(m, _, _)| *m == chosen)
            && !offered(*key)
        {
            model.set(String::new());
        }
    });
    view! {
        <form class="composer" on:submit=post aria-label="Write to the thread">
            <label for="composer-text">"Message"</label>
            <textarea id="composer-text" rows="3" prop:value=move || text.get() on:input=move |ev| text.set(event_target_value(&ev))></textarea>
            <div class="composer-actions">
                <button type="submit" class="primary">"Post"</button>
                <label for="composer-agent">"Agent"</label>
                <select id="composer-agent" on:change=move |ev| model.set(event_target_value(&ev))>
                    {move || AGENTS.iter().filter(|(_, _, key)| offered(*key)).map(|(value, label, _)| {
                        let value = *value;
                        view! { <option value=value selected=move || model.get() == value>{*label}</option> }
                    }).collect_view()}
                </select>
                <button type="button" on:click=ask>"Ask the agent"</button>
            </div>
            <p class="form-errors" role="alert">{move || message.get()}</p>
        </form>
    }
}

/// An admin lists a person on the thread: who sees a restricted thread,
/// or someone outside the workspace it is shared with.
#[component]
fn Share(thread: String) -> impl IntoView {
    let user = RwSignal::new(String::new());
    let role = RwSignal::new("viewer".to_owned());
    let said = RwSignal::new(None::<Result<String, String>>);
    let share = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let body = lattice_wire::ShareThread { user: user.get_untracked(), role: role.get_untracked() };
        let path = format!("/v1/threads/{thread}/members");
        leptos::task::spawn_local(async move {
            let done = api_client::post::<Posted>(&path, &body).await;
            said.set(Some(done.map(|_| format!("{} is listed as {}.", body.user, body.role)).map_err(|e| e.message())));
        });
    };
    view! {
        <details class="people">
            <summary>"People"</summary>
            <form class="inline" on:submit=share>
                <label for="share-user">"Share with"</label>
                <input id="share-user" autocomplete="off" prop:value=move || user.get() on:input=move |ev| user.set(event_target_value(&ev))/>
                <label for="share-role">"as"</label>
                <select id="share-role" on:change=move |ev| role.set(event_target_value(&ev))>
                    <option value="viewer" selected=true>"viewer (reads)"</option>
                    <option value="respondent">"respondent (reads, answers forms)"</option>
                    <option value="editor">"editor (a workspace member only)"</option>
                </select>
                <button type="submit">"Share"</button>
            </form>
            {move || said.get().map(|r| match r {
                Ok(done) => view! { <p class="muted" role="status">{done}</p> }.into_any(),
                Err(e) => view! { <p class="refusal" role="alert">{e}</p> }.into_any(),
            })}
        </details>
    }
}

/// Whether the reader's role here (as the server said it) lets them do
/// `action`: the server's own policy, so the chat offers exactly what the
/// server allows.
fn may(role: &str, action: Action) -> bool {
    lattice_core::Role::parse(role).is_some_and(|r| policy::allows(r, action))
}

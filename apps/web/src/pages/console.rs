//! The admin console (REQUIREMENTS.md W7), for an incident: every level the viewer
//! administers, live (a flip by anyone, from anywhere, shows at once),
//! each key's state and effective value with why; a flip that needs a
//! reason, a confirmation naming what a deployment or tenant flip turns
//! off and how many workspaces it reaches, one action to turn everything
//! off at a level; the audit trail filtered, paged and exported as CSV;
//! and each app's calls.

use lattice_wire::{Artifact, AuditEntry, CallRecord, KeyView, LevelView, Posted, SetSwitch, Thread, Via};
use leptos::prelude::*;
use serde_json::Value;

use crate::components::chunks::when_loaded;
use crate::components::confirm;
use crate::data::api_client;
use crate::data::stream;

/// Audit rows a page shows.
const PAGE: usize = 20;

/// What a person typed and was told, by element id: kept by the console,
/// so a level redrawn by a live update keeps a half-written reason and the
/// answer to the last action.
#[derive(Clone, Copy)]
struct Kept(RwSignal<std::collections::HashMap<String, String>>);

impl Kept {
    fn get(self, id: &str) -> String {
        self.0.with(|m| m.get(id).cloned().unwrap_or_default())
    }

    fn get_untracked(self, id: &str) -> String {
        self.0.with_untracked(|m| m.get(id).cloned().unwrap_or_default())
    }

    fn set(self, id: &str, value: impl Into<String>) {
        self.0.update(|m| {
            m.insert(id.to_owned(), value.into());
        });
    }
}

/// An app and its calls, newest first.
#[derive(Debug, Clone, PartialEq)]
struct AppCalls {
    id: String,
    title: String,
    workspace: String,
    calls: Vec<CallRecord>,
}

/// The apps of the workspaces the viewer administers, with their calls.
async fn app_calls(levels: &[LevelView]) -> Vec<AppCalls> {
    let mut out = Vec::new();
    for level in levels {
        let Some(ws) = level.level.strip_prefix("workspace:") else { continue };
        let threads: Vec<Thread> = api_client::get(&format!("/v1/workspaces/{ws}/threads")).await.unwrap_or_default();
        for th in &threads {
            let apps: Vec<Artifact> = api_client::get(&format!("/v1/threads/{}/artifacts?kind={}", th.id, lattice_ui::APP)).await.unwrap_or_default();
            for app in apps {
                let calls: Vec<CallRecord> = api_client::get(&format!("/v1/artifacts/{}/calls", app.id)).await.unwrap_or_default();
                let title = app.data.get("title").and_then(Value::as_str).unwrap_or("An app").to_owned();
                out.push(AppCalls { id: app.id, title, workspace: level.name.clone(), calls });
            }
        }
    }
    out
}

/// What turning a key off stops, in a person's words.
fn stops(key: &str) -> &'static str {
    match key {
        "ui:forms" => "no form can be shown, submitted or answered, and waiting agents cannot be answered through one",
        "ui:dashboards" => "dashboards show their title only, and no new one can be made",
        "ui:mini-apps" => "every running app stops at once, and no app can be made or called",
        _ => "it is governed no more",
    }
}

fn level_title(level: &LevelView) -> String {
    match level.level.split_once(':') {
        None => "the deployment".to_owned(),
        Some(("tenant", id)) => format!("tenant {id}"),
        Some(_) => format!("workspace {}", level.name),
    }
}

fn reach(level: &LevelView) -> String {
    match level.workspaces {
        1 => "1 workspace".to_owned(),
        n => format!("{n} workspaces"),
    }
}

/// Asks before a flip that reaches past one workspace; true to go on.
async fn confirmed(level: &LevelView, keys: &[String], state: &str, reason: &str) -> bool {
    if level.level.starts_with("workspace:") && keys.len() == 1 {
        return true;
    }
    let whom = level_title(level);
    let (title, lead) = if state == "off" {
        let what: Vec<String> = keys.iter().map(|k| format!("{k}: {}", stops(k))).collect();
        (format!("Turn {} off for {whom}?", keys.join(", ")), format!("This reaches {}. {}.", reach(level), what.join("; ")))
    } else {
        (format!("Set {} to {state} for {whom}?", keys.join(", ")), format!("This reaches {}.", reach(level)))
    };
    let label = if state == "off" { "Turn off" } else { "Apply" };
    confirm::ask(&title, &lead, &format!("Reason: {reason}"), label).await
}

async fn flip(level: &str, key: &str, state: &str, reason: &str) -> Result<(), String> {
    let body = SetSwitch { state: state.to_owned(), reason: reason.to_owned() };
    api_client::put::<Posted>(&format!("/v1/integrations/{level}/{key}"), &body).await.map(drop).map_err(|e| e.message())
}

/// Sets `keys` at `level` to `state` with the reason typed at `reason_id`,
/// asking first where that reaches past one workspace; says at
/// `message_id` how it went (`done` when every key was set).
fn apply(kept: Kept, reason_id: &str, message_id: String, level: LevelView, keys: Vec<String>, state: String, done: &'static str) {
    let why = kept.get_untracked(reason_id);
    if why.trim().is_empty() {
        kept.set(&message_id, "Give a reason: it goes into the audit trail.");
        return;
    }
    leptos::task::spawn_local(async move {
        if !confirmed(&level, &keys, &state, &why).await {
            kept.set(&message_id, "Nothing changed.");
            return;
        }
        for key in &keys {
            if let Err(e) = flip(&level.level, key, &state, &why).await {
                kept.set(&message_id, if keys.len() > 1 { format!("{key}: {e}") } else { e });
                return;
            }
        }
        kept.set(&message_id, done);
    });
}

/// The admin console's route: the console is a chunk of its own, fetched
/// when the route is first shown.
#[component]
pub fn LazyConsole() -> impl IntoView {
    when_loaded("the console", console_view())
}

#[lazy]
fn console_view() -> AnyView {
    view! { <Console/> }.into_any()
}

#[component]
fn Console() -> impl IntoView {
    let levels = RwSignal::new(None::<Result<Vec<LevelView>, String>>);
    let audit = RwSignal::new(Vec::<AuditEntry>::new());
    let apps = RwSignal::new(None::<Vec<AppCalls>>);
    provide_context(Kept(RwSignal::new(Default::default())));
    let load_audit = move || {
        leptos::task::spawn_local(async move {
            if let Ok(mut rows) = api_client::get::<Vec<AuditEntry>>("/v1/integrations/audit").await {
                rows.reverse();
                audit.set(rows);
            }
        });
    };
    // The levels as they are now, and again whenever any switch changes.
    let live = stream::follow(
        |_| "/v1/integrations/levels/stream".to_owned(),
        move |event| {
            if event.name != "levels" {
                return;
            }
            let Ok(list) = lattice_core::json::from_str::<Vec<LevelView>>(&event.data) else { return };
            if apps.get_untracked().is_none() {
                let for_apps = list.clone();
                leptos::task::spawn_local(async move { apps.set(Some(app_calls(&for_apps).await)) });
            }
            levels.set(Some(Ok(list)));
            load_audit();
        },
        move |refused| levels.set(Some(Err(refused.message()))),
    );
    on_cleanup(move || live.close());
    view! {
        <h1>"Admin console"</h1>
        <p>"Forms, dashboards and mini apps, per level you administer. A level that is off turns the key off below it; unset follows the level above. This page follows every change as it is made."</p>
        {move || match levels.get() {
            None => view! { <p class="loading">"Loading…"</p> }.into_any(),
            Some(Err(e)) => view! { <p class="refusal" role="alert">{e}</p> }.into_any(),
            Some(Ok(list)) if list.is_empty() => view! { <p>"You administer no level: there is nothing to switch here."</p> }.into_any(),
            Some(Ok(list)) => list.into_iter().map(|l| view! { <LevelCard level=l/> }).collect_view().into_any(),
        }}
        {move || match levels.get() {
            Some(Ok(list)) => Some(view! { <super::people::People levels=list/> }),
            _ => None,
        }}
        <AuditTrail rows=audit/>
        <section aria-labelledby="app-calls-title">
            <h2 id="app-calls-title">"Mini apps' calls"</h2>
            <p>"Every call an app made of its tools, and what was decided: by the deployment's policy (allow, deny) or by the person asked (confirmed, declined)."</p>
            {move || {
                let list = apps.get().unwrap_or_default();
                if list.is_empty() {
                    return view! { <p>"No app in the workspaces you administer."</p> }.into_any();
                }
                list.into_iter().map(|a| {
                    let summary = format!("{} ({}, {}): {} calls", a.title, a.workspace, a.id, a.calls.len());
                    view! {
                        <details class="app-calls">
                            <summary>{summary}</summary>
                            <table class="audit">
                                <thead><tr><th scope="col">"When"</th><th scope="col">"Who"</th><th scope="col">"Tool"</th><th scope="col">"Decision"</th><th scope="col">"Through"</th></tr></thead>
                                <tbody>
                                    {a.calls.into_iter().map(|c| view! {
                                        <tr><td>{c.at}</td><td>{c.actor}</td><td>{c.tool}</td><td>{c.decision}</td><td>{match c.via { Via::Chat => "chat", Via::Mcp => "mcp" }}</td></tr>
                                    }).collect_view()}
                                </tbody>
                            </table>
                        </details>
                    }
                }).collect_view().into_any()
            }}
        </section>
    }
}

#[component]
fn LevelCard(level: LevelView) -> impl IntoView {
    let id = level.level.replace(':', "-");
    let heading = format!("level-{id}");
    let title = match level.level.split_once(':') {
        None => "Deployment".to_owned(),
        Some(("tenant", id)) => format!("Tenant {id}"),
        Some(_) => format!("Workspace {}", level.name),
    };
    let rows = level.keys.iter().cloned().map(|k| view! { <KeyRow level=level.clone() key_view=k/> }).collect_view();
    let labelled = heading.clone();
    let kept = expect_context::<Kept>();
    let (reason_id, message_id) = (format!("{id}-all-reason"), format!("{id}-all-message"));
    let keys: Vec<String> = level.keys.iter().map(|k| k.key.clone()).collect();
    let for_all = level.clone();
    let (reason_key, message_key) = (reason_id.clone(), message_id.clone());
    let all_off = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        apply(kept, &reason_key, message_key.clone(), for_all.clone(), keys.clone(), "off".into(), "Everything is off here.");
    };
    let (reason_shown, reason_typed, message_shown) = (reason_id.clone(), reason_id.clone(), message_id.clone());
    view! {
        <section class="level" aria-labelledby=labelled>
            <h2 id=heading>{title.clone()}</h2>
            <p class="reach">{format!("A change here reaches {}.", reach(&level))}</p>
            <table class="switches">
                <thead><tr><th scope="col">"Key"</th><th scope="col">"Here"</th><th scope="col">"Effective"</th><th scope="col">"Change"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
            <form class="flip all-off" on:submit=all_off aria-label=format!("Turn everything off for {title}")>
                <label for=reason_id.clone()>"Reason"</label>
                <input id=reason_id aria-describedby=message_id.clone() prop:value=move || kept.get(&reason_shown) on:input=move |ev| kept.set(&reason_typed, event_target_value(&ev))/>
                <button type="submit" class="danger">"Turn everything off here"</button>
                <span id=message_id role="status">{move || kept.get(&message_shown)}</span>
            </form>
        </section>
    }
}

#[component]
fn KeyRow(level: LevelView, key_view: KeyView) -> impl IntoView {
    let base = format!("{}-{}", level.level.replace(':', "-"), key_view.key.replace(':', "-"));
    let state = RwSignal::new(key_view.state.clone());
    let kept = expect_context::<Kept>();
    let state_id = format!("{base}-state");
    let reason_id = format!("{base}-reason");
    let message_id = format!("{base}-message");
    let key = key_view.key.clone();
    let label = format!("Change {} for {}", key_view.key, level_title(&level));
    let (reason_key, message_key) = (reason_id.clone(), message_id.clone());
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        apply(kept, &reason_key, message_key.clone(), level.clone(), vec![key.clone()], state.get_untracked(), "Changed.");
    };
    let (reason_shown, reason_typed, message_shown) = (reason_id.clone(), reason_id.clone(), message_id.clone());
    view! {
        <tr>
            <th scope="row">{key_view.key.clone()}</th>
            <td>{key_view.state.clone()}</td>
            <td>{if key_view.effective.enabled { "on" } else { "off" }}" — " {key_view.effective.because.clone()}</td>
            <td>
                <form class="flip" on:submit=submit aria-label=label>
                    <label for=state_id.clone()>"State"</label>
                    <select id=state_id on:change=move |ev| state.set(event_target_value(&ev))>
                        {["on", "off", "unset"].into_iter().map(|s| view! { <option value=s selected=move || state.get() == s>{s}</option> }).collect_view()}
                    </select>
                    <label for=reason_id.clone()>"Reason"</label>
                    <input id=reason_id.clone() aria-describedby=message_id.clone() prop:value=move || kept.get(&reason_shown) on:input=move |ev| kept.set(&reason_typed, event_target_value(&ev))/>
                    <button type="submit">"Apply"</button>
                    <span id=message_id role="status">{move || kept.get(&message_shown)}</span>
                </form>
            </td>
        </tr>
    }
}

/// The trail, newest first: filtered by level, key, actor and time, a page
/// at a time, and exported (what the filters keep) as CSV.
#[component]
fn AuditTrail(rows: RwSignal<Vec<AuditEntry>>) -> impl IntoView {
    let level = RwSignal::new(String::new());
    let key = RwSignal::new(String::new());
    let actor = RwSignal::new(String::new());
    let since = RwSignal::new(String::new());
    let until = RwSignal::new(String::new());
    let page = RwSignal::new(0usize);
    let kept = Memo::new(move |_| {
        let (level, key, actor, since, until) = (level.get(), key.get(), actor.get().to_lowercase(), since.get(), until.get());
        rows.get()
            .into_iter()
            .filter(|r| level.is_empty() || r.level == level)
            .filter(|r| key.is_empty() || r.key == key)
            .filter(|r| actor.is_empty() || r.actor.to_lowercase().contains(&actor))
            // Times are RFC 3339 in UTC: a date compares as their prefix.
            .filter(|r| since.is_empty() || r.at.as_str() >= since.as_str())
            .filter(|r| until.is_empty() || r.at.get(..until.len()).is_some_and(|d| d <= until.as_str()))
            .collect::<Vec<_>>()
    });
    // A filter that changes starts again at the first page.
    Effect::new(move |_| {
        let _ = (level.get(), key.get(), actor.get(), since.get(), until.get());
        page.set(0);
    });
    let levels = Memo::new(move |_| {
        let mut seen: Vec<String> = rows.get().into_iter().map(|r| r.level).collect();
        seen.sort();
        seen.dedup();
        seen
    });
    let csv = move || {
        let text = lattice_wire::audit_csv(&kept.get());
        format!("data:text/csv;charset=utf-8,{}", String::from(js_sys::encode_uri_component(&text)))
    };
    let text_filter = |id: &'static str, label: &'static str, hint: &'static str, value: RwSignal<String>| {
        view! {
            <label for=id>{label}</label>
            <input id=id placeholder=hint prop:value=move || value.get() on:input=move |ev| value.set(event_target_value(&ev))/>
        }
    };
    view! {
        <section aria-labelledby="audit-title">
            <h2 id="audit-title">"Audit trail"</h2>
            <form class="audit-filters" aria-label="Filter the audit trail" on:submit=|ev: leptos::ev::SubmitEvent| ev.prevent_default()>
                <label for="audit-level">"Level"</label>
                <select id="audit-level" on:change=move |ev| level.set(event_target_value(&ev))>
                    <option value="">"any"</option>
                    {move || levels.get().into_iter().map(|l| view! { <option value=l.clone()>{l.clone()}</option> }).collect_view()}
                </select>
                <label for="audit-key">"Key"</label>
                <select id="audit-key" on:change=move |ev| key.set(event_target_value(&ev))>
                    <option value="">"any"</option>
                    {["ui:forms", "ui:dashboards", "ui:mini-apps"].into_iter().map(|k| view! { <option value=k>{k}</option> }).collect_view()}
                </select>
                {text_filter("audit-actor", "Who", "a name, or part of one", actor)}
                {text_filter("audit-since", "From", "2026-11-30", since)}
                {text_filter("audit-until", "To", "2026-11-30", until)}
                <a id="audit-csv" href=csv download="lattice-switch-audit.csv">"Download as CSV"</a>
            </form>
            {move || {
                let all = kept.get();
                if all.is_empty() {
                    let said = if rows.get().is_empty() { "No switch has been changed yet." } else { "No change matches these filters." };
                    return view! { <p id="audit-empty">{said}</p> }.into_any();
                }
                let first = page.get() * PAGE;
                let shown: Vec<AuditEntry> = all.iter().skip(first).take(PAGE).cloned().collect();
                let status = format!("Changes {} to {} of {}", first + 1, first + shown.len(), all.len());
                let (at_first, at_last) = (first == 0, first + PAGE >= all.len());
                view! {
                    <table class="audit">
                        <thead><tr><th scope="col">"When"</th><th scope="col">"Who"</th><th scope="col">"Level"</th><th scope="col">"Key"</th><th scope="col">"Change"</th><th scope="col">"Reason"</th></tr></thead>
                        <tbody>
                            {shown.into_iter().map(|r| view! {
                                <tr><td>{r.at}</td><td>{r.actor}</td><td>{r.level}</td><td>{r.key}</td><td>{format!("{} → {}", r.old, r.new)}</td><td>{r.reason}</td></tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                    <nav class="pager" aria-label="Audit pages">
                        <button type="button" id="audit-previous" disabled=at_first on:click=move |_| page.update(|p| *p = p.saturating_sub(1))>"Previous"</button>
                        <span id="audit-status" role="status">{status}</span>
                        <button type="button" id="audit-next" disabled=at_last on:click=move |_| page.update(|p| *p += 1)>"Next"</button>
                    </nav>
                }.into_any()
            }}
        </section>
    }
}

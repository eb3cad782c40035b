//! The admin console (REQUIREMENTS.md W7): every level the viewer administers, each
//! key's state there and its effective value with why, a flip that needs a
//! reason, and the audit trail.

use leptos::prelude::*;
use lattice_wire::{Artifact, AuditEntry, CallRecord, KeyView, LevelView, Posted, SetSwitch, Thread, Via};
use serde_json::Value;

use crate::api;

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
        let threads: Vec<Thread> = api::get(&format!("/v1/workspaces/{ws}/threads")).await.unwrap_or_default();
        for th in &threads {
            let apps: Vec<Artifact> = api::get(&format!("/v1/threads/{}/artifacts?kind={}", th.id, lattice_ui::APP)).await.unwrap_or_default();
            for app in apps {
                let calls: Vec<CallRecord> = api::get(&format!("/v1/artifacts/{}/calls", app.id)).await.unwrap_or_default();
                let title = app.data.get("title").and_then(Value::as_str).unwrap_or("An app").to_owned();
                out.push(AppCalls { id: app.id, title, workspace: level.name.clone(), calls });
            }
        }
    }
    out
}

#[component]
pub fn Console() -> impl IntoView {
    let levels = RwSignal::new(None::<Result<Vec<LevelView>, String>>);
    let audit = RwSignal::new(Vec::<AuditEntry>::new());
    let apps = RwSignal::new(Vec::<AppCalls>::new());
    let reload = move || {
        leptos::task::spawn_local(async move {
            let got: Result<Vec<LevelView>, String> = api::get("/v1/integrations/levels").await.map_err(|e| e.message());
            if let Ok(list) = &got {
                apps.set(app_calls(list).await);
            }
            levels.set(Some(got));
            if let Ok(mut rows) = api::get::<Vec<AuditEntry>>("/v1/integrations/audit").await {
                rows.reverse();
                audit.set(rows);
            }
        });
    };
    reload();
    view! {
        <h1>"Admin console"</h1>
        <p>"Forms, dashboards and mini apps, per level you administer. A level that is off turns the key off below it; unset follows the level above."</p>
        {move || match levels.get() {
            None => view! { <p class="loading">"Loading…"</p> }.into_any(),
            Some(Err(e)) => view! { <p class="refusal" role="alert">{e}</p> }.into_any(),
            Some(Ok(list)) if list.is_empty() => view! { <p>"You administer no level: there is nothing to switch here."</p> }.into_any(),
            Some(Ok(list)) => list.into_iter().map(|l| view! { <LevelCard level=l on_change=reload/> }).collect_view().into_any(),
        }}
        <section aria-labelledby="audit-title">
            <h2 id="audit-title">"Audit trail"</h2>
            {move || {
                let rows = audit.get();
                if rows.is_empty() {
                    return view! { <p>"No switch has been changed yet."</p> }.into_any();
                }
                view! {
                    <table class="audit">
                        <thead><tr><th scope="col">"When"</th><th scope="col">"Who"</th><th scope="col">"Level"</th><th scope="col">"Key"</th><th scope="col">"Change"</th><th scope="col">"Reason"</th></tr></thead>
                        <tbody>
                            {rows.into_iter().map(|r| view! {
                                <tr><td>{r.at}</td><td>{r.actor}</td><td>{r.level}</td><td>{r.key}</td><td>{format!("{} → {}", r.old, r.new)}</td><td>{r.reason}</td></tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                }.into_any()
            }}
        </section>
        <section aria-labelledby="app-calls-title">
            <h2 id="app-calls-title">"Mini apps' calls"</h2>
            <p>"Every call an app made of its tools, and what was decided: by the deployment's policy (allow, deny) or by the person asked (confirmed, declined)."</p>
            {move || {
                let list = apps.get();
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
fn LevelCard<F: Fn() + Clone + Send + Sync + 'static>(level: LevelView, on_change: F) -> impl IntoView {
    let heading = format!("level-{}", level.level.replace(':', "-"));
    let title = match level.level.split_once(':') {
        None => "Deployment".to_owned(),
        Some(("tenant", id)) => format!("Tenant {id}"),
        Some(_) => format!("Workspace {}", level.name),
    };
    let rows = level
        .keys
        .into_iter()
        .map(|k| view! { <KeyRow level=level.level.clone() level_title=title.clone() key_view=k on_change=on_change.clone()/> })
        .collect_view();
    let labelled = heading.clone();
    view! {
        <section class="level" aria-labelledby=labelled>
            <h2 id=heading>{title}</h2>
            <table class="switches">
                <thead><tr><th scope="col">"Key"</th><th scope="col">"Here"</th><th scope="col">"Effective"</th><th scope="col">"Change"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </section>
    }
}

#[component]
fn KeyRow<F: Fn() + Send + Sync + 'static>(level: String, level_title: String, key_view: KeyView, on_change: F) -> impl IntoView {
    let base = format!("{}-{}", level.replace(':', "-"), key_view.key.replace(':', "-"));
    let state = RwSignal::new(key_view.state.clone());
    let reason = RwSignal::new(String::new());
    let message = RwSignal::new(String::new());
    let on_change = std::sync::Arc::new(on_change);
    let key = key_view.key.clone();
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        if reason.get_untracked().trim().is_empty() {
            message.set("Give a reason: it goes into the audit trail.".into());
            return;
        }
        let path = format!("/v1/integrations/{}/{}", level, key);
        let body = SetSwitch { state: state.get_untracked(), reason: reason.get_untracked() };
        let on_change = on_change.clone();
        leptos::task::spawn_local(async move {
            match api::put::<Posted>(&path, &body).await {
                Ok(_) => {
                    message.set("Changed.".into());
                    on_change();
                }
                Err(e) => message.set(e.message()),
            }
        });
    };
    let state_id = format!("{base}-state");
    let reason_id = format!("{base}-reason");
    let message_id = format!("{base}-message");
    view! {
        <tr>
            <th scope="row">{key_view.key.clone()}</th>
            <td>{key_view.state.clone()}</td>
            <td>{if key_view.effective.enabled { "on" } else { "off" }}" — " {key_view.effective.because.clone()}</td>
            <td>
                <form class="flip" on:submit=submit aria-label=format!("Change {} for {level_title}", key_view.key)>
                    <label for=state_id.clone()>"State"</label>
                    <select id=state_id on:change=move |ev| state.set(event_target_value(&ev))>
                        {["on", "off", "unset"].into_iter().map(|s| view! { <option value=s selected=move || state.get() == s>{s}</option> }).collect_view()}
                    </select>
                    <label for=reason_id.clone()>"Reason"</label>
                    <input id=reason_id.clone() aria-describedby=message_id.clone() prop:value=move || reason.get() on:input=move |ev| reason.set(event_target_value(&ev))/>
                    <button type="submit">"Apply"</button>
                    <span id=message_id role="status">{move || message.get()}</span>
                </form>
            </td>
        </tr>
    }
}

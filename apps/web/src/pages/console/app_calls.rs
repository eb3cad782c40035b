//! The mini apps of the workspaces the viewer administers, each with the
//! calls it made and what was decided.

use lattice_wire::{Artifact, CallRecord, LevelView, Thread, Via};
use leptos::prelude::*;
use serde_json::Value;

use crate::components::time::time;
use crate::data::api_client;

/// An app and its calls, newest first.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct AppCalls {
    id: String,
    title: String,
    workspace: String,
    calls: Vec<CallRecord>,
}

/// The apps of the workspaces the viewer administers, with their calls.
pub(super) async fn app_calls(levels: &[LevelView]) -> Vec<AppCalls> {
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

/// Each app's calls, under a line saying what they are; `apps` is `None`
/// until they are read.
#[component]
pub(super) fn AppCallsSection(apps: RwSignal<Option<Vec<AppCalls>>>) -> impl IntoView {
    view! {
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
                    let region = format!("Calls of {}", a.title);
                    view! {
                        <details class="app-calls">
                            <summary>{summary}</summary>
                            <div class="table-scroll" role="region" aria-label=region tabindex="0">
                            <table class="audit">
                                <thead><tr><th scope="col">"When"</th><th scope="col">"Who"</th><th scope="col">"Tool"</th><th scope="col">"Decision"</th><th scope="col">"Through"</th></tr></thead>
                                <tbody>
                                    {a.calls.into_iter().map(|c| view! {
                                        <tr><td>{time(c.at)}</td><td>{c.actor}</td><td>{c.tool}</td><td>{c.decision}</td><td>{match c.via { Via::Chat => "chat", Via::Mcp => "mcp" }}</td></tr>
                                    }).collect_view()}
                                </tbody>
                            </table>
                            </div>
                        </details>
                    }
                }).collect_view().into_any()
            }}
        </section>
    }
}

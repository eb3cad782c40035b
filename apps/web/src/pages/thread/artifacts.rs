//! The artifacts a thread shows: forms, dashboards and mini apps.

use leptos::prelude::*;
use serde_json::Value;

use super::ctx::Ctx;
use super::forms::form_artifact;
use super::submit::press_action;
use crate::components::chunks::{LazyAppFrame, LazyDashboard};
use crate::components::frame_host::{AppInfo, ServerOrigin};
use crate::data::thread_fold::ArtifactView;

pub(super) fn artifact_view(ctx: Ctx, a: ArtifactView, first_version: u64) -> AnyView {
    match a.kind.as_str() {
        "form" => form_artifact(ctx, a, first_version),
        "dashboard" => {
            let off = ctx.off_because(lattice_core::SwitchKey::Dashboards);
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
pub(super) fn app_view(ctx: Ctx, artifact: Memo<Option<ArtifactView>>) -> AnyView {
    let server = artifact.with_untracked(|a| a.as_ref().and_then(|a| ServerOrigin::of(&a.data)));
    let off = ctx.apps_off_because(server.as_ref().map(|s| s.name.clone()));
    let field = move |key: &'static str| Memo::new(move |_| artifact.with(|a| a.as_ref().map(|a| text_of(&a.data, key)).unwrap_or_default()));
    let (title, summary, html) = (field("title"), field("summary"), field("html"));
    let version = Memo::new(move |_| artifact.with(|a| a.as_ref().map_or(0, |a| a.version)));
    let archived = Memo::new(move |_| artifact.with(|a| a.as_ref().is_some_and(|a| a.archived)));
    let run = artifact.with_untracked(|a| a.as_ref().and_then(|a| a.run.clone()));
    let stopped = Signal::derive(move || match off.get() {
        Some(why) if why.starts_with(lattice_core::ServerKey::PREFIX) => Some(format!("This app's server is turned off here: {why}")),
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
            server: ServerOrigin::of(&a.data),
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

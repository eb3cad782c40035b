//! The console's page: the levels the viewer administers, live, then
//! People, the keys for agents, the directory (SCIM), the audit trail, the
//! apps' calls and the servers; the route loads it as a chunk of its own.

use lattice_wire::{AuditEntry, LevelView};
use leptos::prelude::*;

use super::app_calls::{AppCalls, AppCallsSection, app_calls};
use super::audit::AuditTrail;
use super::keys::ApiKeys;
use super::levels::{Kept, LevelCard};
use super::people::{People, administered};
use super::scim::ScimTokens;
use super::servers::{self, ServersSection};
use crate::components::chunks::when_loaded;
use crate::data::session::Session;
use crate::data::{api_client, stream};

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
    let connected = RwSignal::new(None::<Vec<lattice_wire::ConnectedServer>>);
    provide_context(Kept(RwSignal::new(Default::default())));
    let session = expect_context::<Session>();
    let tenant_admin = Signal::derive(move || session.me.with(|me| me.as_ref().is_some_and(|m| m.role == "tenant_admin")));
    // Changes only when the workspaces do, not at every switch's flip: a
    // key just made stays on screen.
    let workspaces = Memo::new(move |_| levels.with(|l| l.as_ref().and_then(|l| l.as_ref().ok()).map(|l| administered(l)).unwrap_or_default()));
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
            servers::load(connected);
        },
        move |refused| levels.set(Some(Err(refused.message()))),
    );
    on_cleanup(move || live.close());
    view! {
        <h1>"Admin console"</h1>
        <p>"Forms, dashboards, mini apps and connected MCP servers, per level you administer. A level that is off turns the key off below it; unset follows the level above. This page follows every change as it is made."</p>
        {move || match levels.get() {
            None => view! { <p class="loading">"Loading…"</p> }.into_any(),
            Some(Err(e)) => view! { <p class="refusal" role="alert">{e}</p> }.into_any(),
            Some(Ok(list)) if list.is_empty() => view! { <p>"You administer no level: there is nothing to switch here."</p> }.into_any(),
            Some(Ok(list)) => list.into_iter().map(|l| view! { <LevelCard level=l/> }).collect_view().into_any(),
        }}
        {move || match levels.get() {
            Some(Ok(list)) => Some(view! { <People levels=list/> }),
            _ => None,
        }}
        <ApiKeys workspaces tenant_admin/>
        <ScimTokens/>
        <AuditTrail rows=audit/>
        <AppCallsSection apps/>
        <ServersSection servers=connected/>
    }
}

//! The MCP servers connected for the viewer's tenant: how each is reached,
//! whether it answers now, whose sessions it keeps and whether each person
//! signs in to it (and how many have), what its apps may reach, and its
//! recent calls (the agent's and its apps') in the workspaces the viewer
//! administers. Its switch key is a line of each level above.

use lattice_wire::ConnectedServer;
use leptos::prelude::*;

use crate::components::time::time;
use crate::data::api_client;

/// Reads the servers again.
pub(super) fn load(servers: RwSignal<Option<Vec<ConnectedServer>>>) {
    leptos::task::spawn_local(async move {
        if let Ok(list) = api_client::get::<Vec<ConnectedServer>>("/v1/integrations/servers").await {
            servers.set(Some(list));
        }
    });
}

/// Whose sessions the server keeps, and for one each person signs in to,
/// how many have: words after the summary's, each a sentence.
fn access(s: &ConnectedServer) -> String {
    let mut said = String::new();
    match s.isolation.as_str() {
        "tenant" => said.push_str(" One session per tenant."),
        "person" => said.push_str(" One session per person."),
        _ => {}
    }
    if s.sign_in {
        said.push_str(" Each person signs in");
        match s.connected_people {
            Some(1) => said.push_str(", 1 person connected"),
            Some(n) => said.push_str(&format!(", {n} people connected")),
            None => {}
        }
        said.push('.');
    }
    if s.app_domains.is_empty() {
        said.push_str(" Its apps reach no network.");
    } else {
        let kinds: Vec<String> = s.app_domains.iter().map(|(kind, origins)| format!("{kind} {}", origins.join(", "))).collect();
        said.push_str(&format!(" Its apps may reach what they declare of: {}.", kinds.join("; ")));
    }
    said
}

#[component]
pub(super) fn ServersSection(servers: RwSignal<Option<Vec<ConnectedServer>>>) -> impl IntoView {
    view! {
        <section aria-labelledby="servers-title">
            <h2 id="servers-title">"Connected MCP servers"</h2>
            <p>"The servers whose tools the agent may call and whose apps the chat shows, each governed by its key (mcp:<name>) at every level above. Each call and what was decided: by the server's policy (allow, deny) or by the person asked (confirmed, declined)."</p>
            {move || match servers.get() {
                None => view! { <p class="loading">"Loading…"</p> }.into_any(),
                Some(list) if list.is_empty() => view! { <p>"No MCP server is connected for you."</p> }.into_any(),
                Some(list) => list.into_iter().map(|s| {
                    let state = match (&s.tools, &s.unreachable) {
                        (Some(n), _) => format!("answers, {n} tools"),
                        (None, Some(why)) => format!("does not answer: {why}"),
                        (None, None) => "not asked".to_owned(),
                    };
                    let summary = format!("{} ({} {}, {}): {} recent calls.{}", s.name, s.transport, s.address, state, s.calls.len(), access(&s));
                    let region = format!("Calls of the {} server", s.name);
                    view! {
                        <details class="server-calls">
                            <summary>{summary}</summary>
                            <div class="table-scroll" role="region" aria-label=region tabindex="0">
                            <table class="audit">
                                <thead><tr><th scope="col">"When"</th><th scope="col">"Who"</th><th scope="col">"Workspace"</th><th scope="col">"Tool"</th><th scope="col">"By"</th><th scope="col">"Decision"</th></tr></thead>
                                <tbody>
                                    {s.calls.into_iter().map(|c| {
                                        let decision = match c.failed { Some(why) => format!("{} (failed: {why})", c.decision), None => c.decision };
                                        view! { <tr><td>{time(c.at)}</td><td>{c.actor}</td><td>{c.workspace}</td><td>{c.tool}</td><td>{c.caller}</td><td>{decision}</td></tr> }
                                    }).collect_view()}
                                </tbody>
                            </table>
                            </div>
                        </details>
                    }
                }).collect_view().into_any(),
            }}
        </section>
    }
}

//! A mini app's place in the chat: its label and summary, drawn by the
//! host. The running frame is the edge's (the apps origin); where it is not
//! running, the label and summary stand for it (SPEC I3).

use leptos::prelude::*;

#[component]
pub fn AppCard(title: String, summary: String, run: Option<String>, version: u64, #[prop(into)] note: Signal<Option<String>>) -> impl IntoView {
    let name = title.clone();
    view! {
        <section class="app-card" aria-label=name>
            <h3>{title}</h3>
            <p class="app-label">
                "Made by the agent. Runs sandboxed and can't reach the network. "
                <span class="app-provenance">{run.map(|r| format!("Run {r}, ")).unwrap_or_default()} "version " {version}</span>
            </p>
            <p class="app-summary">{summary}</p>
            <p class="app-note">{move || note.get()}</p>
        </section>
    }
}

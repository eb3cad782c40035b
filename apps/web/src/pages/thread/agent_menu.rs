//! The composer's agent menu: the configured agent, or a scripted one, as
//! the switches allow.

use lattice_core::SwitchKey;
use leptos::prelude::*;

use super::ctx::Ctx;

/// What the agent can be asked to do, as the switches allow.
const AGENTS: [(&str, &str, Option<SwitchKey>); 4] = [
    ("", "The configured agent", None),
    ("scripted:ask_form", "Scripted: ask a form", Some(SwitchKey::Forms)),
    ("scripted:dashboard", "Scripted: show a dashboard", Some(SwitchKey::Dashboards)),
    ("scripted:app", "Scripted: make an app", Some(SwitchKey::MiniApps)),
];

/// The agent to ask: `model` holds the chosen one's value (empty for the
/// configured agent). Only what the switches allow is offered.
pub(super) fn agent_menu(ctx: Ctx, model: RwSignal<String>) -> impl IntoView {
    let offered =
        move |key: Option<SwitchKey>| key.is_none_or(|k| ctx.switches.with(|s| s.as_ref().and_then(|m| m.get(k.as_str())).is_none_or(|e| e.enabled)));
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
        <label for="composer-agent">"Agent"</label>
        <select id="composer-agent" on:change=move |ev| model.set(event_target_value(&ev))>
            {move || AGENTS.iter().filter(|(_, _, key)| offered(*key)).map(|(value, label, _)| {
                let value = *value;
                view! { <option value=value selected=move || model.get() == value>{*label}</option> }
            }).collect_view()}
        </select>
    }
}

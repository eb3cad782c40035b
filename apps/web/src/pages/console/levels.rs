//! A level's switches: each key's state and effective value, a flip with
//! its reason (confirmed where it reaches past one workspace), and turning
//! everything off at the level.

use lattice_core::SwitchKey;
use lattice_wire::{KeyView, LevelView, Posted, SetSwitch};
use leptos::prelude::*;

use crate::components::confirm;
use crate::data::api_client;

/// What a person typed and was told, by element id: kept by the console,
/// so a level redrawn by a live update keeps a half-written reason and the
/// answer to the last action.
#[derive(Clone, Copy)]
pub(super) struct Kept(pub(super) RwSignal<std::collections::HashMap<String, String>>);

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

/// What turning a key off stops, in a person's words: a match on the
/// keys themselves, so a new key is not drawn without its words.
fn stops(key: &str) -> &'static str {
    const SERVER: &str = "the server's tools leave the agent's next model call, its apps stop at once, and no call of it is made or approved";
    match SwitchKey::parse(key) {
        Some(SwitchKey::Forms) => "no form can be shown, submitted or answered, and waiting agents cannot be answered through one",
        Some(SwitchKey::Dashboards) => "dashboards show their title only, and no new one can be made",
        Some(SwitchKey::MiniApps) => "every running app stops at once, and no app can be made or called",
        Some(SwitchKey::Server(_)) => SERVER,
        // The browser configures no server, so their keys parse to none here.
        None if key.starts_with(lattice_core::ServerKey::PREFIX) => SERVER,
        None => "it is governed no more",
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

#[component]
pub(super) fn LevelCard(level: LevelView) -> impl IntoView {
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
            <div class="table-scroll" role="region" aria-label=format!("Switches of {title}") tabindex="0">
            <table class="switches">
                <thead><tr><th scope="col">"Key"</th><th scope="col">"Here"</th><th scope="col">"Effective"</th><th scope="col">"Change"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
            </div>
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

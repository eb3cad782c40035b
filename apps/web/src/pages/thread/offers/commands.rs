//! Commands: the servers' prompts, listed under the textarea as its text
//! starts with "/" (the textarea keeps the focus and names the active
//! one), the chosen one's chip, and the form of its arguments.

use lattice_wire::OfferedPrompt;
use leptos::ev::KeyboardEvent;
use leptos::prelude::*;
use send_wrapper::SendWrapper;
use serde_json::{Map, Value};
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;

use super::listbox::{focus_soon, lower, stepped};
use super::offered::{Offered, notes};
use super::picks::{ASK, MOST, Picks, TEXT, argument_id};
use crate::data::drafts::Draft;

const LIST: &str = "composer-commands";

/// The most commands listed at once. The list does not scroll: the
/// textarea that holds the focus can't be a combobox, and a region that
/// scrolls must be reached by keys of its own. More are found by typing.
const LISTED: usize = 8;

fn option_id(i: usize) -> String {
    format!("composer-command-{i}")
}

/// The list of the commands the text names so far. The textarea is the
/// composer's: this sets its combobox state and takes its keys while the
/// list shows, so the first load carries none of it.
pub(super) fn list(offered: Offered, picks: Picks, text: RwSignal<String>, thread: StoredValue<String>, message: RwSignal<String>) -> impl IntoView {
    // What follows "/" until a space: past it, the text is a message.
    let query = Memo::new(move |_| text.with(|t| t.strip_prefix('/').filter(|q| !q.contains(char::is_whitespace)).map(lower)));
    let matches = Memo::new(move |_| {
        let Some(q) = query.get() else { return Vec::new() };
        offered.offers.with(|o| {
            o.iter()
                .flat_map(|o| &o.prompts)
                .filter(|p| lower(&p.command).contains(&q) || p.title.as_deref().is_some_and(|t| lower(t).contains(&q)))
                .cloned()
                .collect::<Vec<_>>()
        })
    });
    let dismissed = RwSignal::new(false);
    let active = RwSignal::new(0_usize);
    // Each new query opens the list again, at its first command.
    Effect::new(move |_| {
        query.track();
        dismissed.set(false);
        active.set(0);
    });
    // A "/" typed at the start reads the offers again.
    let typing = Memo::new(move |_| text.with(|t| t.starts_with('/')));
    Effect::new(move |before: Option<bool>| {
        let now = typing.get();
        if now && before == Some(false) {
            offered.read();
        }
        now
    });
    let shown = Memo::new(move |_| !dismissed.get() && matches.with(|m| !m.is_empty()));
    let textarea = document().get_element_by_id(TEXT);
    if let Some(textarea) = &textarea {
        let _ = textarea.set_attribute("aria-autocomplete", "list");
    }
    let held = SendWrapper::new(textarea.clone());
    Effect::new(move |_| {
        let Some(textarea) = held.as_ref() else { return };
        let _ = match shown.get().then(|| option_id(active.get())) {
            Some(id) => textarea.set_attribute("aria-controls", LIST).and_then(|()| textarea.set_attribute("aria-activedescendant", &id)),
            None => textarea.remove_attribute("aria-controls").and_then(|()| textarea.remove_attribute("aria-activedescendant")),
        };
    });

    let pick = move |prompt: OfferedPrompt| {
        if picks.0.with_untracked(|c| c.attachments.len()) >= MOST {
            message.set(format!("A run takes at most {MOST} things from the servers, the command counted: remove an attachment first."));
            return;
        }
        // The "/…" typed to find it has done its work.
        text.set(String::new());
        Draft::of(&thread.get_value()).keep("");
        let next = if prompt.arguments.is_empty() { TEXT.to_owned() } else { argument_id(0) };
        picks.0.update(|c| {
            c.command = Some(prompt);
            c.values = Map::new();
        });
        focus_soon(next);
    };
    // Whether the list took the key: it moved, picked or closed.
    let took = move |ev: &KeyboardEvent| {
        if query.with_untracked(Option::is_none) || dismissed.get_untracked() {
            return false;
        }
        let key = ev.key();
        let n = matches.with_untracked(Vec::len).min(LISTED);
        if let Some(next) = stepped(&key, active.get_untracked(), n) {
            active.set(next);
        } else if key == "Escape" {
            dismissed.set(true);
        } else if (key == "Enter" || key == "Tab") && n > 0 && !ev.shift_key() && !ev.is_composing() {
            if let Some(prompt) = matches.with_untracked(|m| m.get(active.get_untracked()).cloned()) {
                pick(prompt);
            }
        } else {
            return false;
        }
        true
    };
    // Heard on the way down to the textarea, so a key the list takes never
    // reaches the composer's own handler (Enter would send).
    if let Some(form) = textarea.and_then(|t| t.closest("form").ok().flatten()) {
        let keys = Closure::<dyn Fn(KeyboardEvent)>::new(move |ev: KeyboardEvent| {
            let on_text = ev.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()).is_some_and(|t| t.id() == TEXT);
            if on_text && took(&ev) {
                ev.prevent_default();
                ev.stop_propagation();
            }
        });
        let _ = form.add_event_listener_with_callback_and_bool("keydown", keys.as_ref().unchecked_ref(), true);
        let held = SendWrapper::new((form, keys));
        on_cleanup(move || {
            let (form, keys) = held.take();
            let _ = form.remove_event_listener_with_callback_and_bool("keydown", keys.as_ref().unchecked_ref(), true);
        });
    }

    let options = move || {
        matches
            .get()
            .into_iter()
            .take(LISTED)
            .enumerate()
            .map(|(i, prompt)| {
                let about = match (prompt.title.clone().filter(|t| !t.is_empty()), prompt.description.is_empty()) {
                    (Some(title), true) => title,
                    (Some(title), false) => format!("{title}: {}", prompt.description),
                    (None, _) => prompt.description.clone(),
                };
                let name = prompt.command.clone();
                view! {
                    // The textarea keeps the focus through a click.
                    <li role="option" id=option_id(i) aria-selected=move || (active.get() == i).to_string()
                        on:mousedown=|ev| ev.prevent_default() on:click=move |_| pick(prompt.clone())>
                        <span class="offer-name">{name}</span>
                        " "
                        <span class="offer-about">{about}</span>
                    </li>
                }
            })
            .collect_view()
    };
    let unmatched = move || {
        query.get().filter(|_| !dismissed.get() && matches.with(Vec::is_empty)).and_then(|q| {
            offered
                .offers
                .with(|o| o.as_ref().is_some_and(|o| !o.prompts.is_empty()))
                .then(|| view! { <p class="offers-note">{format!("No command matches “/{q}”.")}</p> })
        })
    };
    let more = move || {
        let more = matches.with(Vec::len).saturating_sub(LISTED);
        (shown.get() && more > 0).then(|| view! { <p class="offers-note">{format!("{more} more: type more of a name to find them.")}</p> })
    };
    view! {
        {move || shown.get().then(|| view! { <ul role="listbox" id=LIST aria-label="Commands" class="offers-list">{options}</ul> })}
        {more}
        {unmatched}
        {move || (query.with(Option::is_some) && !dismissed.get()).then(|| notes(offered))}
    }
}

/// The command chosen, as its chip and its arguments' form draw it: apart
/// from the attachments, so attaching one leaves the form as typed.
pub(super) fn chosen(picks: Picks) -> Memo<Option<OfferedPrompt>> {
    Memo::new(move |_| picks.0.with(|c| c.command.clone()))
}

/// The chosen command, with the button that takes it off.
pub(super) fn chip(picks: Picks, command: Memo<Option<OfferedPrompt>>) -> impl IntoView {
    move || {
        command.with(|c| c.as_ref().map(|p| p.command.clone())).map(|name| {
            let remove = move |_| {
                picks.0.update(|c| {
                    c.command = None;
                    c.values = Map::new();
                });
                focus_soon(TEXT.to_owned());
            };
            view! {
                <span class="chip command">{name.clone()}" "<button type="button" aria-label=format!("Remove {name}") on:click=remove>"×"</button></span>
            }
        })
    }
}

/// The command's arguments, a field each. Enter in one presses "Ask the
/// agent", as Enter in the textarea asks it with a command chosen.
pub(super) fn arguments(picks: Picks, command: Memo<Option<OfferedPrompt>>) -> impl IntoView {
    let keys = |ev: KeyboardEvent| {
        if ev.key() == "Enter" && !ev.is_composing() {
            ev.prevent_default();
            if let Some(ask) = document().get_element_by_id(ASK).and_then(|b| b.dyn_into::<web_sys::HtmlElement>().ok()) {
                ask.click();
            }
        }
    };
    move || {
        command.get().filter(|p| !p.arguments.is_empty()).map(|p| {
            let fields = p
                .arguments
                .into_iter()
                .enumerate()
                .map(|(i, a)| {
                    let id = argument_id(i);
                    let help = (!a.description.is_empty()).then(|| format!("{id}-help"));
                    let name = a.name.clone();
                    // Untracked: what is typed is read when the run starts.
                    let typed = move |ev| picks.0.update_untracked(|c| drop(c.values.insert(name.clone(), Value::String(event_target_value(&ev)))));
                    view! {
                        <div class="field">
                            <label for=id.clone()>{a.name.clone()}</label>
                            {a.required.then(|| view! { <span class="required" aria-hidden="true">"required"</span> })}
                            <input type="text" id=id name=a.name required=a.required aria-describedby=help.clone() on:input=typed/>
                            {help.map(|help| view! { <p class="help" id=help>{a.description}</p> })}
                        </div>
                    }
                })
                .collect_view();
            view! {
                <fieldset class="command-args" on:keydown=keys>
                    <legend>{format!("Arguments of {}", p.command)}</legend>
                    {fields}
                </fieldset>
            }
        })
    }
}

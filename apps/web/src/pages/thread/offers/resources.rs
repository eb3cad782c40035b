//! Attachments: the "Attach" button, the panel of the servers' resources
//! it opens (searched as the person types: the search field is a combobox
//! that keeps the focus and names the active one, so its list may scroll),
//! and a chip for each resource attached.

use lattice_wire::OfferedResource;
use leptos::ev::KeyboardEvent;
use leptos::prelude::*;

use super::listbox::{focus_soon, keep_in_view, lower, stepped};
use super::offered::{Offered, notes};
use super::picks::{MOST, Picks, TEXT};

const PANEL: &str = "composer-attach";
const SEARCH: &str = "composer-resource-search";
const LIST: &str = "composer-resources";

fn option_id(i: usize) -> String {
    format!("composer-resource-{i}")
}

/// A chip for each resource attached, with the button that takes it off.
pub(super) fn chips(picks: Picks) -> impl IntoView {
    move || {
        picks
            .0
            .with(|c| c.attachments.clone())
            .into_iter()
            .map(|r| {
                let OfferedResource { server, uri, name, .. } = r;
                let label = format!("Remove {name}");
                let remove = move |_| {
                    picks.0.update(|c| c.attachments.retain(|x| !(x.server == server && x.uri == uri)));
                    focus_soon(TEXT.to_owned());
                };
                view! { <span class="chip attachment">{name}" "<button type="button" aria-label=label on:click=remove>"×"</button></span> }
            })
            .collect_view()
    }
}

/// The "Attach" button and, open, its panel: the resources not attached
/// yet that the search matches (by name, URI or server).
pub(super) fn attach(offered: Offered, picks: Picks) -> impl IntoView {
    let open = RwSignal::new(false);
    let search = RwSignal::new(String::new());
    let active = RwSignal::new(0_usize);
    let button = NodeRef::<leptos::html::Button>::new();
    let matches = Memo::new(move |_| {
        let q = lower(search.get().trim());
        let attached = |r: &OfferedResource| picks.0.with(|c| c.attachments.iter().any(|x| x.server == r.server && x.uri == r.uri));
        offered.offers.with(|o| {
            o.iter()
                .flat_map(|o| &o.resources)
                .filter(|r| !attached(r) && [&r.name, &r.uri, &r.server].iter().any(|t| lower(t).contains(&q)))
                .cloned()
                .collect::<Vec<_>>()
        })
    });
    let room = Memo::new(move |_| MOST.saturating_sub(picks.0.with(|c| c.attachments.len() + usize::from(c.command.is_some()))));
    Effect::new(move |_| {
        matches.track();
        active.set(0);
    });
    Effect::new(move |_| {
        if open.get() {
            keep_in_view(LIST, &option_id(active.get()));
        }
    });
    // Closed, the focus goes back to the button that opened it.
    let close = move || {
        open.set(false);
        search.set(String::new());
        if let Some(button) = button.get_untracked() {
            let _ = button.focus();
        }
    };
    let toggle = move |_| {
        if open.get_untracked() {
            close();
        } else {
            open.set(true);
            offered.read();
            focus_soon(SEARCH.to_owned());
        }
    };
    let pick = move |r: OfferedResource| {
        if room.get_untracked() > 0 {
            picks.0.update(|c| c.attachments.push(r));
            close();
        }
    };
    let keys = move |ev: KeyboardEvent| {
        let key = ev.key();
        let n = matches.with_untracked(Vec::len);
        if let Some(next) = stepped(&key, active.get_untracked(), n) {
            active.set(next);
        } else if key == "Escape" {
            close();
        } else if key == "Enter" && !ev.is_composing() {
            if let Some(r) = matches.with_untracked(|m| m.get(active.get_untracked()).cloned()) {
                pick(r);
            }
        } else {
            return;
        }
        ev.prevent_default();
        // Escape closes the panel, not whatever holds the composer.
        ev.stop_propagation();
    };
    let listed = Memo::new(move |_| room.get() > 0 && matches.with(|m| !m.is_empty()));
    let options = move || {
        matches
            .get()
            .into_iter()
            .enumerate()
            .map(|(i, r)| {
                let (name, server, uri) = (r.name.clone(), r.server.clone(), r.uri.clone());
                view! {
                    <li role="option" id=option_id(i) aria-selected=move || (active.get() == i).to_string()
                        on:mousedown=|ev| ev.prevent_default() on:click=move |_| pick(r.clone())>
                        <span class="offer-name">{name}</span>
                        " "
                        <span class="offer-server">{server}</span>
                        " "
                        <small class="offer-uri">{uri}</small>
                    </li>
                }
            })
            .collect_view()
    };
    let why_none = move || {
        if room.get() == 0 {
            Some(format!("A run takes at most {MOST} things from the servers, the command counted: remove one to attach another."))
        } else if listed.get() {
            None
        } else if offered.offers.with(|o| o.as_ref().is_some_and(|o| o.resources.is_empty())) {
            Some("No server on here offers a resource to attach.".to_owned())
        } else if offered.offers.with(Option::is_none) {
            Some("Asking the servers…".to_owned())
        } else if search.with(|s| s.trim().is_empty()) {
            Some("Everything offered is attached.".to_owned())
        } else {
            Some(format!("No resource matches “{}”.", search.get().trim()))
        }
        .map(|why| view! { <p class="offers-note">{why}</p> })
    };
    let panel = move || {
        open.get().then(|| {
            view! {
                <div class="attach-panel" id=PANEL>
                    <input type="search" id=SEARCH role="combobox" aria-label="Search resources" placeholder="Search by name, address or server" autocomplete="off" aria-autocomplete="list"
                        aria-expanded=move || listed.get().to_string()
                        aria-controls=move || listed.get().then_some(LIST)
                        aria-activedescendant=move || listed.get().then(|| option_id(active.get()))
                        prop:value=move || search.get() on:input=move |ev| search.set(event_target_value(&ev)) on:keydown=keys/>
                    {move || listed.get().then(|| view! { <ul role="listbox" id=LIST aria-label="Resources" class="offers-list scrolls">{options}</ul> })}
                    {why_none}
                    {notes(offered)}
                </div>
            }
        })
    };
    view! {
        <button type="button" class="attach" node_ref=button aria-haspopup="listbox" aria-expanded=move || open.get().to_string()
            aria-controls=move || open.get().then_some(PANEL) on:click=toggle>"Attach"</button>
        {panel}
    }
}

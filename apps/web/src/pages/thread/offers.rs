//! What the connected servers turned on in a thread's workspace offer the
//! person in the composer: their prompts as commands (`/server:name`,
//! [`commands`]) and their resources to attach ([`resources`]), as
//! [`offered`] reads them. A chunk of its own, fetched once the thread
//! has painted: the first load keeps only what a run is sent with
//! ([`picks`]).

mod commands;
mod listbox;
mod offered;
pub(super) mod picks;
mod resources;

use leptos::prelude::*;

use self::offered::Offered;
use self::picks::Picks;
use crate::components::chunks::when_loaded;

/// The commands' list, the chips of what is chosen, "Attach" and the
/// command's arguments, drawn under the composer's textarea: `text` is
/// the textarea's, `message` the composer's error line.
pub(super) fn lazy_offers(thread: String, picks: Picks, text: RwSignal<String>, message: RwSignal<String>) -> impl IntoView {
    when_loaded("commands and attachments", offers_view(thread, picks, text, message))
}

#[lazy]
fn offers_view(thread: String, picks: Picks, text: RwSignal<String>, message: RwSignal<String>) -> AnyView {
    let offered = Offered::new(thread.clone());
    offered.read();
    let thread = StoredValue::new(thread);
    let command = commands::chosen(picks);
    view! {
        <div class="composer-offers">
            {commands::list(offered, picks, text, thread, message)}
            <div class="composer-picks">
                {commands::chip(picks, command)}
                {resources::chips(picks)}
                {resources::attach(offered, picks)}
            </div>
            {commands::arguments(picks, command)}
            {move || picks.any().then(|| view! { <p class="composer-note">"A command and attachments go with “Ask the agent”."</p> })}
        </div>
    }
    .into_any()
}

//! What the servers turned on in the thread's workspace offer the person
//! (`GET /v1/threads/{th}/offers`): read when the composer shows, and again
//! each time the person reaches for it, so a server turned on or off
//! meanwhile shows.

use lattice_wire::ServerOffers;
use leptos::prelude::*;

use crate::data::api_client;
use crate::data::paths::record_path;

#[derive(Clone, Copy)]
pub(super) struct Offered {
    thread: StoredValue<String>,
    pub(super) offers: RwSignal<Option<ServerOffers>>,
    pub(super) failed: RwSignal<Option<String>>,
    /// The latest read's number: an earlier read answering after it is
    /// not taken over what it said.
    asked: StoredValue<u32>,
}

impl Offered {
    pub(super) fn new(thread: String) -> Self {
        Self { thread: StoredValue::new(thread), offers: RwSignal::new(None), failed: RwSignal::new(None), asked: StoredValue::new(0) }
    }

    /// Reads the offers again; what was read stays shown meanwhile.
    pub(super) fn read(self) {
        let n = self.asked.get_value().wrapping_add(1);
        self.asked.set_value(n);
        let path = format!("{}/offers", record_path(&self.thread.get_value()));
        leptos::task::spawn_local(async move {
            let read = api_client::get::<ServerOffers>(&path).await;
            if self.asked.try_get_value() != Some(n) {
                return;
            }
            match read {
                Ok(offers) => {
                    self.offers.try_set(Some(offers));
                    self.failed.try_set(None);
                }
                Err(e) => {
                    self.failed.try_set(Some(e.message()));
                }
            }
        });
    }
}

/// A line for each server that could not be asked, and one if the offers
/// could not be read at all: what is missing from the list, and why.
pub(super) fn notes(offered: Offered) -> impl IntoView {
    move || {
        let failed = offered.failed.get().map(|why| view! { <p class="offers-note">"What the servers offer could not be read: "{why}</p> });
        let unavailable = offered.offers.with(|o| {
            // A server asked for its prompts and for its resources may fail
            // twice: once is enough to say.
            let mut said = Vec::new();
            o.iter()
                .flat_map(|o| &o.unavailable)
                .filter(|u| {
                    let first = !said.contains(&&u.server);
                    said.push(&u.server);
                    first
                })
                .map(|u| view! { <p class="offers-note">{format!("{} could not be asked: {}", u.server, u.reason)}</p> })
                .collect_view()
        });
        (failed, unavailable)
    }
}

//! What waits for the signed-in person's answer, followed live
//! (`GET /v1/me/waiting/stream`: the whole list at once, and again whenever
//! it changed): one stream for the page, read by the side list (its count
//! and its marks) and by `/waiting` (the list).
//!
//! The side list needs only where each item waits, so the first load reads
//! only that much of each `lattice_wire::WaitingItem` ([`Place`]); the
//! list is kept as it came, for `/waiting` (a chunk of its own) to read
//! whole.

use lattice_wire::WaitingThread;
use leptos::prelude::*;
use serde::Deserialize;

use crate::data::request::Failure;
use crate::data::stream;

/// The stream's message that carries the list.
const LIST: &str = "waiting";

/// Where an item of the list waits: the part of a `WaitingItem` the side
/// list reads.
#[derive(Clone, Deserialize)]
pub struct Place {
    pub thread: WaitingThread,
}

/// The list as last heard: where each item waits, and the list's JSON as it
/// came (`[WaitingItem]`). `None` until the stream first says it; an error
/// in words once the stream was refused or ended for good.
#[derive(Clone)]
pub struct Heard {
    pub places: Vec<Place>,
    pub json: String,
}

#[derive(Clone, Copy)]
pub struct Waiting(pub RwSignal<Option<Result<Heard, String>>>);

impl Default for Waiting {
    fn default() -> Self {
        Self(RwSignal::new(None))
    }
}

impl Waiting {
    /// Follows the list until the returned stream is closed.
    pub fn follow(self) -> stream::Handle {
        // Nothing of whoever was signed in before.
        self.0.set(None);
        stream::follow(
            |_| "/v1/me/waiting/stream".to_owned(),
            move |event| {
                if event.name != LIST {
                    return;
                }
                if let Ok(places) = lattice_core::json::from_str::<Vec<Place>>(&event.data) {
                    self.0.try_set(Some(Ok(Heard { places, json: event.data })));
                }
            },
            move |failure| {
                let said = match failure {
                    // The waiting stream ends only at a sign-out.
                    Failure::Ended(_) => "You were signed out. Sign in again to see what waits for you".to_owned(),
                    other => other.message(),
                };
                self.0.try_set(Some(Err(said)));
            },
        )
    }

    /// How many things wait, once known.
    pub fn count(self) -> Option<usize> {
        self.0.with(|heard| heard.as_ref().and_then(|h| h.as_ref().ok()).map(|h| h.places.len()))
    }

    /// Whether something waits in `thread`.
    pub fn in_thread(self, thread: &str) -> bool {
        self.0.with(|heard| heard.as_ref().and_then(|h| h.as_ref().ok()).is_some_and(|h| h.places.iter().any(|p| p.thread.id == thread)))
    }
}

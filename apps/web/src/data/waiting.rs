//! What waits for the signed-in person's answer, followed live
//! (`GET /v1/me/waiting/stream`: the whole list at once, and again whenever
//! it changed): one stream for the page, read by the side list (its count
//! and its marks) and by `/waiting` (the list).

use lattice_wire::WaitingItem;
use leptos::prelude::*;

use crate::data::request::Failure;
use crate::data::stream;

/// The stream's message that carries the list.
const LIST: &str = "waiting";

/// The list as last heard: `None` until the stream first says it; an error
/// in words once the stream was refused or ended for good.
#[derive(Clone, Copy)]
pub struct Waiting(pub RwSignal<Option<Result<Vec<WaitingItem>, String>>>);

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
                if let Ok(list) = lattice_core::json::from_str::<Vec<WaitingItem>>(&event.data) {
                    self.0.try_set(Some(Ok(list)));
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
        self.0.with(|list| list.as_ref().and_then(|l| l.as_ref().ok()).map(Vec::len))
    }

    /// Whether something waits in `thread`.
    pub fn in_thread(self, thread: &str) -> bool {
        self.0.with(|list| list.as_ref().and_then(|l| l.as_ref().ok()).is_some_and(|l| l.iter().any(|i| i.thread.id == thread)))
    }
}

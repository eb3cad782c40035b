//! What a person was writing in a thread's composer, kept in this browser
//! until it is sent: switching threads, or reloading, loses nothing.

use crate::data::token::storage;

pub struct Draft(String);

impl Draft {
    pub fn of(thread: &str) -> Self {
        Self(format!("lattice.draft.{thread}"))
    }

    pub fn read(&self) -> String {
        storage().and_then(|s| s.get_item(&self.0).ok().flatten()).unwrap_or_default()
    }

    /// Keeps `text`; an empty text forgets the draft.
    pub fn keep(&self, text: &str) {
        if let Some(s) = storage() {
            let _ = if text.is_empty() { s.remove_item(&self.0) } else { s.set_item(&self.0, text) };
        }
    }
}

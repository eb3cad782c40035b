//! What a run is asked with beside its prompt, as the composer holds it: a
//! connected server's command with its arguments, and the resources
//! attached. The first load's part of the offers: choosing them is the
//! chunk's ([`super::lazy_offers`]), sending them the composer's. One
//! signal holds it all: each signal's type is code of its own in the first
//! load.

use lattice_wire::{OfferedPrompt, OfferedResource, RunAttachment, RunCommand};
use leptos::prelude::*;
use serde_json::{Map, Value};

/// The composer's textarea, where the focus goes back to.
pub(in crate::pages::thread) const TEXT: &str = "composer-text";

/// The composer's "Ask the agent", which Enter in an argument's field
/// presses.
pub(in crate::pages::thread) const ASK: &str = "composer-ask";

/// The most a run takes, the command counted (`lattice_core::run::CONTEXT_MAX_ITEMS`).
pub(in crate::pages::thread) const MOST: usize = 8;

#[derive(Default)]
pub(in crate::pages::thread) struct Chosen {
    pub(in crate::pages::thread) command: Option<OfferedPrompt>,
    /// The command's arguments as their fields hold them, by name: written
    /// untracked, so a key typed in a field draws nothing again.
    pub(in crate::pages::thread) values: Map<String, Value>,
    pub(in crate::pages::thread) attachments: Vec<OfferedResource>,
}

#[derive(Clone, Copy)]
pub(in crate::pages::thread) struct Picks(pub(in crate::pages::thread) RwSignal<Chosen>);

impl Picks {
    pub(in crate::pages::thread) fn new() -> Self {
        Self(RwSignal::new(Chosen::default()))
    }

    /// Whether a command or an attachment is chosen (tracked).
    pub(in crate::pages::thread) fn any(self) -> bool {
        self.0.with(|c| c.command.is_some() || !c.attachments.is_empty())
    }

    pub(in crate::pages::thread) fn clear(self) {
        self.0.set(Chosen::default());
    }

    /// A refusal's words with each attachment's name beside its place in
    /// the request (`attachments.0 (notes.md): … max_result_bytes`): the
    /// place alone names nothing the person sees.
    pub(in crate::pages::thread) fn named(self, refusal: String) -> String {
        self.0.with_untracked(|c| {
            c.attachments
                .iter()
                .enumerate()
                .fold(refusal, |words, (i, r)| words.replace(&format!("attachments.{i}:"), &format!("attachments.{i} ({}):", r.name)))
        })
    }

    /// The command and attachments as a run is started with them; a
    /// required argument left empty refuses, with the number of its field.
    pub(in crate::pages::thread) fn for_run(self) -> Result<(Option<RunCommand>, Vec<RunAttachment>), (String, usize)> {
        // Read in place: a copy of what is chosen would be code of its own.
        self.0.with_untracked(|Chosen { command, values, attachments }| {
            let attachments = attachments.iter().map(|r| RunAttachment { server: r.server.clone(), uri: r.uri.clone() }).collect();
            let Some(prompt) = command else {
                return Ok((None, attachments));
            };
            let mut arguments = Map::new();
            for (i, a) in prompt.arguments.iter().enumerate() {
                // Left empty, an optional argument is not sent: the server's default stands.
                match values.get(&a.name).filter(|v| v.as_str().is_some_and(|v| !v.trim().is_empty())) {
                    Some(value) => {
                        arguments.insert(a.name.clone(), value.clone());
                    }
                    None if a.required => return Err((format!("{} needs its argument {}.", prompt.command, a.name), i)),
                    None => {}
                }
            }
            Ok((Some(RunCommand { server: prompt.server.clone(), prompt: prompt.name.clone(), arguments }), attachments))
        })
    }
}

/// The field of the command's argument number `i`.
pub(in crate::pages::thread) fn argument_id(i: usize) -> String {
    format!("composer-argument-{i}")
}

//! What every part of a thread's page reads: the thread, its fold, the
//! switches as pushed, the pinned view and the reader's role, and what
//! each of those allows.

use lattice_core::SwitchKey;
use lattice_core::policy::{self, Action};
use leptos::prelude::*;

use crate::data::thread_fold::Thread;

/// Each key's effective value: enabled, and why.
pub(super) type Switches = lattice_wire::Effective;

#[derive(Clone, Copy)]
pub(super) struct Ctx {
    pub(super) thread: StoredValue<String>,
    pub(super) state: RwSignal<Thread>,
    pub(super) switches: RwSignal<Option<Switches>>,
    /// Set while the switch stream has gone quiet for longer than three of
    /// its heartbeats: what the switches govern is off until it speaks.
    pub(super) deaf: RwSignal<bool>,
    /// The dashboard or app pinned beside the thread, if any.
    pub(super) pinned: RwSignal<Option<String>>,
    /// The viewer's role in the thread's workspace, once known: what the
    /// page offers follows it (the server decides either way).
    pub(super) role: RwSignal<Option<String>>,
    /// Whether the viewer may answer forms, once the role is known; a
    /// memo, so the role read again leaves a drawn form standing.
    pub(super) answering: Memo<Option<bool>>,
}

/// Why governed UI is off while the switch cannot be heard.
const DEAF: &str = "lattice cannot hear the kill switch right now: this is paused until it can";

impl Ctx {
    /// Whether a key is on; unknown until the first answer, taken as on
    /// (the server refuses what is off either way). Off while the switch
    /// cannot be heard.
    pub(super) fn off_because(self, key: SwitchKey) -> Memo<Option<String>> {
        Memo::new(move |_| {
            if self.deaf.get() {
                return Some(DEAF.to_owned());
            }
            self.switches.with(|s| s.as_ref().and_then(|m| m.get(key.as_str())).filter(|e| !e.enabled).map(|e| e.because.clone()))
        })
    }

    /// Mini apps fail closed (REQUIREMENTS.md I4): nothing runs until the switch has
    /// said they are on, and nothing while it can't be heard. A connected
    /// server's app needs its server's key (`mcp:<name>`) on as well.
    pub(super) fn apps_off_because(self, server: Option<String>) -> Memo<Option<String>> {
        let server_key = server.map(|name| format!("{}{name}", lattice_core::ServerKey::PREFIX));
        Memo::new(move |_| {
            if self.deaf.get() {
                return Some(DEAF.to_owned());
            }
            self.switches.with(|s| {
                let keys = std::iter::once(SwitchKey::MiniApps.as_str()).chain(server_key.as_deref());
                keys.map(|key| match s.as_ref().and_then(|m| m.get(key)) {
                    None => Some(format!("{key} has not answered yet")),
                    Some(e) if !e.enabled => Some(e.because.clone()),
                    Some(_) => None,
                })
                .find_map(|off| off)
            })
        })
    }
}

/// Whether the reader's role here (as the server said it) lets them do
/// `action`: the server's own policy, so the chat offers exactly what the
/// server allows.
pub(super) fn may(role: &str, action: Action) -> bool {
    lattice_core::Role::parse(role).is_some_and(|r| policy::allows(r, action))
}

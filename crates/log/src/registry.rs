//! What the service was built with: the artifact kinds it knows and the
//! checks registered for each command type (L5). Fixed once the service
//! starts, and read by authorization, the gate, the checks and prepare.

use std::collections::BTreeMap;

use lattice_core::kind::{SharedCheck, SharedKind};
use lattice_core::{CommandType, Error};

#[derive(Default)]
pub(crate) struct Registry {
    kinds: BTreeMap<String, SharedKind>,
    checks: BTreeMap<CommandType, Vec<SharedCheck>>,
}

impl Registry {
    /// Registers an artifact kind; a later registration of the same name wins.
    pub fn add_kind(&mut self, kind: SharedKind) {
        self.kinds.insert(kind.name().to_owned(), kind);
    }

    /// Adds a check for one command type; checks run in the order added.
    pub fn add_check(&mut self, command: CommandType, check: SharedCheck) {
        self.checks.entry(command).or_default().push(check);
    }

    /// A registered kind, or a refusal that lists the known ones.
    pub fn kind(&self, kind: &str) -> Result<&SharedKind, Error> {
        self.kinds.get(kind).ok_or_else(|| {
            let known: Vec<&str> = self.kinds.keys().map(String::as_str).collect();
            Error::field("kind", "enum", format!("unknown kind {kind:?}; known kinds: {}", known.join(", ")))
        })
    }

    /// The switch that governs a registered kind, if any.
    pub fn kind_switch(&self, kind: &str) -> Option<lattice_core::SwitchKey> {
        self.kinds.get(kind).and_then(|k| k.switch())
    }

    /// A registered kind, if there is one of that name.
    pub fn find(&self, kind: &str) -> Option<&SharedKind> {
        self.kinds.get(kind)
    }

    /// The checks registered for a command type, in order.
    pub fn checks(&self, command: CommandType) -> &[SharedCheck] {
        self.checks.get(&command).map_or(&[], Vec::as_slice)
    }
}

//! The integration gate (I3): a command that uses a governed kind of UI is
//! refused while its switch is off, before any check looks at it.

use std::sync::Arc;

use lattice_core::{ArtifactId, Command, Error, Integrations, Principal, SwitchKey, WorkspaceView};

use crate::registry::Registry;
use crate::scope::Scope;
use crate::switches::SwitchStore;
use crate::view::ScopedView;

/// Reads the registry (which kinds and checks name a switch), the switch
/// store, and an artifact's parent as the caller sees it.
pub(crate) struct Gate {
    registry: Arc<Registry>,
    switches: SwitchStore,
}

impl Gate {
    pub fn new(registry: Arc<Registry>, switches: SwitchStore) -> Self {
        Self { registry, switches }
    }

    /// Refuses the command with `NotEnabled` if a switch it uses is off in
    /// the workspace it acts in.
    pub async fn check(&self, p: &Principal, scope: &Scope, view: Option<&ScopedView>, command: &Command) -> Result<(), Error> {
        let (Some(access), Some(view)) = (scope.access.as_ref(), view) else { return Ok(()) };
        let registry = &self.registry;
        let mut keys: Vec<SwitchKey> = Vec::new();
        let kind = match command {
            Command::CreateArtifact { kind, .. } => Some(kind.as_str()),
            Command::EditArtifact { .. } | Command::SetAppContext { .. } => scope.artifact.as_ref().map(|a| a.kind.as_str()),
            _ => None,
        };
        keys.extend(kind.and_then(|kind| registry.find(kind)).and_then(|spec| spec.switch()));
        // What belongs to another artifact (a submission to an app) is
        // governed by that artifact's switch as well: sending to an app is
        // using the app. Read as the caller sees it: a parent they may
        // not see is one that is not there (the checks say so), not a
        // switch that tells its kind.
        if let Command::CreateArtifact { kind, data, .. } = command
            && let Some(parent) = registry.find(kind).and_then(|spec| spec.parent(data))
            && let Ok(parent) = ArtifactId::parse("parent", &parent)
            && let Some(row) = view.artifact(&parent, None).await?
        {
            keys.extend(registry.find(&row.kind).and_then(|spec| spec.switch()));
        }
        // What registered checks say governs the command (an answer to an
        // ask_form is using a form).
        for check in registry.checks(command.command_type()) {
            keys.extend(check.switches(view, command).await?);
        }
        keys.sort();
        keys.dedup();
        for key in keys {
            let effective = self.switches.effective(&p.tenant, &access.workspace, key).await?;
            if !effective.enabled {
                return Err(Error::NotEnabled { key: key.as_str().to_owned() });
            }
        }
        Ok(())
    }
}

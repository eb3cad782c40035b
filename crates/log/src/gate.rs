//! The integration gate (I3): a command that uses a governed kind of UI is
//! refused while its switch is off, before any check looks at it.

use lattice_core::{ArtifactId, Command, Error, Integrations, Principal, SwitchKey};

use crate::authorize::Scope;
use crate::service::LogService;
use crate::view::ScopedView;

impl LogService {
    pub(crate) async fn gate(&self, p: &Principal, scope: &Scope, view: Option<&ScopedView>, command: &Command) -> Result<(), Error> {
        let (Some(access), Some(view)) = (scope.access.as_ref(), view) else { return Ok(()) };
        let mut keys: Vec<SwitchKey> = Vec::new();
        let kind = match command {
            Command::CreateArtifact { kind, .. } => Some(kind.as_str()),
            Command::EditArtifact { .. } | Command::SetAppContext { .. } => scope.artifact.as_ref().map(|a| a.kind.as_str()),
            _ => None,
        };
        keys.extend(kind.and_then(|kind| self.inner.kinds.get(kind)).and_then(|spec| spec.switch()));
        // What belongs to another artifact (a submission to an app) is
        // governed by that artifact's switch as well: sending to an app is
        // using the app.
        if let Command::CreateArtifact { kind, data, .. } = command
            && let Some(parent) = self.inner.kinds.get(kind).and_then(|spec| spec.parent(data))
            && let Ok(parent) = ArtifactId::parse("parent", &parent)
            && let Some(row) = crate::store::load_artifact(&self.inner.db, &p.tenant, &parent, None).await?
        {
            keys.extend(self.inner.kinds.get(&row.kind).and_then(|spec| spec.switch()));
        }
        // What registered checks say governs the command (an answer to an
        // ask_form is using a form).
        for check in self.inner.checks.get(&command.command_type()).into_iter().flatten() {
            keys.extend(check.switches(view, command).await?);
        }
        keys.sort();
        keys.dedup();
        for key in keys {
            let effective = self.inner.switches.effective(&p.tenant, &access.workspace, key).await?;
            if !effective.enabled {
                return Err(Error::NotEnabled { key: key.as_str().to_owned() });
            }
        }
        Ok(())
    }
}

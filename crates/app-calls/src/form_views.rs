//! A form's answer sent through a host that is not lattice's chat: an MCP
//! host's view of the form (`submit_form`, let in by [`AppCalls::granted`],
//! the check of every app-only call), or the host's own form that asked the
//! person (elicitation). Either is the caller's submission through the
//! log's one write path, whose gate refuses it while forms are switched off
//! where the form lives; its receipt proves it as an app's submission's does.

use lattice_core::{ArtifactId, Command, Error, ThreadId};
use lattice_log::{ArtifactRow, Authenticated};
use lattice_ui::SUBMISSION;
use lattice_ui::form::Form;
use lattice_ui::submission::Submission;
use serde_json::Value;

use crate::{AppCalls, server_nonce};

impl AppCalls {
    /// Sends `values`, filled against `version` of `form`, as the caller's
    /// submission, with the id the form's policy derives: its receipt, with
    /// its sealed proof once sealed.
    pub async fn submit_form(&self, who: &Authenticated, form: &ArtifactRow, version: u64, values: Value) -> Result<Value, Error> {
        let policy = serde_json::from_value::<Form>(form.data.clone()).map(|f| f.submissions).unwrap_or_default();
        let (id, submission) = Submission::to_form(&form.id, version, policy, who.principal().user.as_str(), values, server_nonce);
        let command = Command::CreateArtifact {
            thread: ThreadId::from_trusted(form.thread.clone()),
            id: Some(ArtifactId::from_trusted(id)),
            kind: SUBMISSION.into(),
            data: submission.data(),
        };
        let done = self.log.execute(who, command).await?;
        let mut receipt = done.receipt();
        self.prove(who, &mut receipt).await?;
        Ok(receipt)
    }
}

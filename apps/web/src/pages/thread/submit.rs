//! Sending a submission to a form: from the form drawn in the thread, or
//! from a dashboard's action button.

use lattice_ui::form::{Form, Submissions};
use lattice_wire::{Artifact, CreateArtifact, Versioned};
use leptos::prelude::*;
use serde_json::{Value, json};

use super::ctx::Ctx;
use super::nonces::nonce;
use crate::data::api_client;
use crate::data::request::Failure;

/// A submission, sent without its id: the write path derives it from the
/// form's policy, so a retry is the same artifact.
pub(super) async fn submit(thread: String, form_id: String, version: u64, policy: Submissions, values: Value) -> Result<(), Failure> {
    let submission = lattice_ui::submission::Submission::new(&form_id, version, policy, values, nonce);
    let body = CreateArtifact { id: None, kind: lattice_ui::SUBMISSION.into(), data: submission.data() };
    api_client::post::<Versioned>(&format!("/v1/threads/{thread}/artifacts"), &body).await.map(|_| ())
}

/// A dashboard's action button: a submission with no values to its form.
pub(super) fn press_action(ctx: Ctx, form_id: String) {
    let thread = ctx.thread.get_value();
    leptos::task::spawn_local(async move {
        let Ok(form) = api_client::get::<Artifact>(&format!("/v1/artifacts/{form_id}")).await else { return };
        let policy = lattice_core::json::from_value::<Form>(form.data).map(|f| f.submissions).unwrap_or_default();
        let version = form.version;
        let _ = submit(thread, form_id, version, policy, json!({})).await;
    });
}

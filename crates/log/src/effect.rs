//! A command's effect, worked out before the transaction opens: where its
//! envelope goes, and the store writer that makes it (one per effect).

use std::sync::Arc;

use lattice_core::directory::{NewApiKey, ProvisionedGroup, ProvisionedPerson, SignedInPerson};
use lattice_core::envelope::DEPLOYMENT_TENANT;
use lattice_core::event::CredentialKind;
use lattice_core::event::{AppContextSet, AppEvent, Event, MessagePosted};
use lattice_core::identity::GroupRules;
use lattice_core::{Actor, ArtifactId, Asking, Audit, Error, Level, Role, RunId, RunStep, SwitchKey, SwitchState, ThreadId, WorkspaceId};
use serde_json::Value;
use sqlx::AnyConnection;

use crate::store::{self, ArtifactRow, NewEnvelope, Writing};

pub(crate) enum Effect {
    Workspace { id: WorkspaceId, name: String },
    Member { user: String, role: Role },
    Thread { id: ThreadId, title: String, restricted: bool },
    Shared { user: String, role: Role },
    MemberRemoved { user: String },
    Unshared { user: String },
    SessionsEnded { user: String, session: Option<String> },
    PersonProvisioned { user: String, person: ProvisionedPerson, create: bool, expected_version: Option<u64>, rules: Arc<GroupRules> },
    SignedIn { person: SignedInPerson, rules: Arc<GroupRules> },
    PersonRemoved { user: String },
    GroupProvisioned { id: String, group: ProvisionedGroup, create: bool, expected_version: Option<u64>, rules: Arc<GroupRules> },
    GroupRemoved { id: String, rules: Arc<GroupRules> },
    KeyIssued(NewApiKey),
    ScimTokenIssued { id: String, digest: String },
    Revoked { id: String, kind: CredentialKind },
    Message { text: String },
    Created { id: ArtifactId, kind: String, data: Value, digest: String, parent: Option<String>, asks: Option<Asking> },
    Changed { head: ArtifactRow, data: Value, digest: String, patch: json_patch::Patch, asks: Option<Asking> },
    Archived { head: ArtifactRow },
    Switch { level: Level, key: SwitchKey, state: SwitchState, reason: String },
    RunStarted { id: RunId, prompt: String, model: String, chain: Option<String>, context: Vec<lattice_core::RunContext> },
    Answered(store::Answering),
    Step { run: String, step: RunStep },
    AppEvent { namespace: String, name: String, data: Value },
    AppContext { artifact: String, text: String, structured: Option<Value> },
    Audit(Audit),
}

/// Where an envelope goes: its tenant, workspace, thread and run columns.
#[derive(Clone)]
pub(crate) struct Place {
    pub tenant: String,
    pub workspace: Option<String>,
    pub thread: Option<String>,
    pub run: Option<String>,
}

impl Place {
    /// The envelope of `event`, placed here.
    pub fn envelope<'a>(&'a self, id: &'a str, event: &'a Event, actor: &'a Actor, at: i64, traceparent: Option<&'a str>) -> NewEnvelope<'a> {
        NewEnvelope {
            id,
            tenant: &self.tenant,
            workspace: self.workspace.as_deref(),
            thread: self.thread.as_deref(),
            run: self.run.as_deref(),
            actor,
            at,
            event,
            traceparent,
        }
    }
}

impl Effect {
    /// An effect that is one row (the envelope) commits as one statement,
    /// without a transaction around it.
    pub fn is_one_row(&self) -> bool {
        matches!(
            self,
            Self::Message { .. }
                | Self::AppEvent { .. }
                | Self::AppContext { .. }
                | Self::Audit(Audit { once: None, .. })
                | Self::Step { step: RunStep::ModelReplied { .. } | RunStep::ToolReturned { .. }, .. }
        )
    }

    /// Where this effect's envelope goes, from where the command acts.
    pub fn place(&self, acting: &Place) -> Place {
        let mut place = acting.clone();
        match self {
            Self::Workspace { id, .. } => place.workspace = Some(id.to_string()),
            Self::Thread { id, .. } => place.thread = Some(id.to_string()),
            Self::AppEvent { .. } => place.thread = None,
            Self::Switch { level, .. } => {
                (place.tenant, place.workspace) = match level {
                    Level::Deployment => (DEPLOYMENT_TENANT.to_owned(), None),
                    Level::Tenant(t) => (t.to_string(), None),
                    Level::Workspace(w) => (acting.tenant.clone(), Some(w.to_string())),
                };
                place.thread = None;
            }
            Self::RunStarted { id, .. } => place.run = Some(id.to_string()),
            Self::Answered(store::Answering { run, .. }) | Self::Step { run, .. } => place.run = Some(run.clone()),
            _ => {}
        }
        place
    }

    /// Writes the read models this effect changes; returns its event.
    pub async fn write(self, conn: &mut AnyConnection, w: &Writing<'_>) -> Result<Event, Error> {
        match self {
            Self::Workspace { id, name } => store::create_workspace(conn, w, &id, &name).await,
            Self::Member { user, role } => store::add_member(conn, w, &user, role).await,
            Self::Thread { id, title, restricted } => store::create_thread(conn, w, &id, &title, restricted).await,
            Self::Shared { user, role } => store::share_thread(conn, w, &user, role).await,
            Self::MemberRemoved { user } => store::remove_member(conn, w, &user).await,
            Self::Unshared { user } => store::unshare_thread(conn, w, &user).await,
            Self::SessionsEnded { user, session } => store::end_sessions(conn, w, &user, session.as_deref()).await,
            Self::PersonProvisioned { user, person, create, expected_version, rules } => {
                store::provision_person(conn, w, &rules, &user, &person, create, expected_version).await
            }
            Self::SignedIn { person, rules } => store::record_sign_in(conn, w, &rules, &person).await,
            Self::PersonRemoved { user } => store::remove_person(conn, w, &user).await,
            Self::GroupProvisioned { id, group, create, expected_version, rules } => {
                store::groups::provision_group(conn, w, &rules, &id, &group, create, expected_version).await
            }
            Self::GroupRemoved { id, rules } => store::groups::remove_group(conn, w, &rules, &id).await,
            Self::KeyIssued(key) => store::credentials::issue_key(conn, w, &key).await,
            Self::ScimTokenIssued { id, digest } => store::credentials::issue_scim_token(conn, w, &id, &digest).await,
            Self::Revoked { id, kind } => store::credentials::revoke(conn, w, &id, kind).await,
            Self::Message { text } => Ok(MessagePosted { thread: w.thread.expect("a message is posted in a thread").to_owned(), text }.into()),
            Self::Created { id, kind, data, digest, parent, asks } => {
                store::create_artifact(conn, w, &id, &kind, data, digest, store::Derived { parent: parent.as_deref(), asks: asks.as_ref() }).await
            }
            Self::Changed { head, data, digest, patch, asks } => store::change_artifact(conn, w, &head, &data, digest, patch, asks.as_ref()).await,
            Self::Archived { head } => store::archive_artifact(conn, w, &head).await,
            Self::Switch { level, key, state, reason } => store::set_switch(conn, &level, key, state, &reason).await,
            Self::Audit(audit) => store::record_audit(conn, w, &audit).await,
            Self::AppEvent { namespace, name, data } => Ok(AppEvent { namespace, name, data }.into()),
            Self::AppContext { artifact, text, structured } => Ok(AppContextSet { artifact_id: artifact, text, structured }.into()),
            Self::RunStarted { id, prompt, model, chain, context } => store::start_run(conn, w, &id, &prompt, &model, chain, context).await,
            Self::Answered(answering) => store::answer_request(conn, w, answering).await,
            Self::Step { run, step } => store::record_step(conn, w, &run, step).await,
        }
    }
}
